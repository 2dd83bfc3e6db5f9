"""Generated data for learning over joins: a Housing-shaped star join on ``postcode``, at any scale.

The shape is that of the *Housing* data set of F-IVM and AC/DC (Nikolic and
Olteanu, SIGMOD 2018; Khamis et al., DEEM 2018): six relations sharing one
join key, ``postcode``, each with a few numeric columns.  The values are
synthetic (numpy only, deterministic for a seed); the names follow the
original's.

==============  ====================================================================  =======================
relation        columns besides ``postcode``                                          rows per postcode
==============  ====================================================================  =======================
house           livingarea, nbbedrooms, nbbathrooms, kitchensize, garden, price       1 .. 2s-1 (mean s)
shop            openinghoursshop, pricerangeshop, supermarkets                        1 .. 2s-1 (mean s)
institution     typeeducation, sizeinstitution                                        0 .. s    (mean s/2)
restaurant      openinghoursrest, pricerangerest                                      1 .. 2s-1 (mean s)
demographics    averagesalary, crimesperyear, unemployment, nbhospitals               1
transport       nbbuslines, nbtrainstations, distancecitycentre                       1
==============  ====================================================================  =======================

``s`` is the *scale*.  Counts are drawn per postcode and relation,
independently, so a postcode contributes the *product* of its counts to the
join and the join of all six grows like ``postcodes · s⁴ / 2`` while the
input grows like ``postcodes · 3.5 s``: with 1,000 postcodes, 8× the input
at ``s = 4``, 15× at ``s = 5``, 69× at ``s = 8``, 620× at ``s = 16``.  A postcode with no institution (about
one in ``s + 1``) has houses that join nothing.  Rows come shuffled, not
grouped by postcode.

``house.price`` (thousands) is a known linear function of features from
three relations plus Gaussian noise (:data:`TRUE_PRICE`)::

    price = 40 + 2.5·livingarea + 15·nbbedrooms + 4·averagesalary − 3·distancecitycentre + N(0, 25²)

Shop, institution and restaurant columns vary within a postcode independently
of its houses, so their true weight is 0: least squares on the join recovers
the weights above and about 0 for those.  Every value is rounded to two
decimals (so a CSV copy reads back exactly); the noise is added before the
price is rounded.

:func:`housing` makes the tables, :func:`housing_task` names the query,
target and features of the regression, :func:`join_size` counts the join's
rows without listing it, :func:`materialise` lists it with pandas (the
oracle of tests and benchmarks).  ``python -m faq.learning.datasets --scale 5
--postcodes 20 --out DIR`` writes one CSV per relation.

Examples
--------
>>> from faq.learning.datasets import housing, housing_task, join_size, materialise
>>> tables = housing(3, seed=0, postcodes=10)
>>> sorted(tables)
['demographics', 'house', 'institution', 'restaurant', 'shop', 'transport']
>>> list(tables["house"].columns)
['postcode', 'livingarea', 'nbbedrooms', 'nbbathrooms', 'kitchensize', 'garden', 'price']
>>> join_size(tables) == len(materialise(tables)) > sum(len(t) for t in tables.values())
True
>>> housing(3, seed=0, postcodes=10)["house"].equals(tables["house"])   # deterministic for a seed
True
>>> task = housing_task()
>>> task.query
'house(postcode), shop(postcode), institution(postcode), restaurant(postcode), demographics(postcode), transport(postcode)'
>>> task.target, len(task.features)
('house.price', 7)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RELATIONS", "TRUE_PRICE", "HousingTask", "housing", "housing_task", "join_size", "materialise",
           "write_csv", "read_tables"]

RELATIONS = ("house", "shop", "institution", "restaurant", "demographics", "transport")
"""The six relations, in the order of the query."""

TRUE_PRICE: dict[str, float] = {
    "intercept": 40.0,
    "house.livingarea": 2.5,
    "house.nbbedrooms": 15.0,
    "demographics.averagesalary": 4.0,
    "transport.distancecitycentre": -3.0,
}
"""The weights ``house.price`` is made from (thousands); every other column has weight 0."""

NOISE_SD = 25.0
"""The standard deviation of the price's Gaussian noise (thousands)."""

DEFAULT_FEATURES = ("house.livingarea", "house.nbbedrooms", "shop.pricerangeshop", "institution.sizeinstitution",
                    "restaurant.pricerangerest", "demographics.averagesalary", "transport.distancecitycentre")


@dataclass(frozen=True)
class HousingTask:
    """The regression over the Housing join: what to pass to :func:`faq.linear_regression`.

    Attributes
    ----------
    query : str
        The natural join of the six relations on ``postcode``.
    target : str
        ``"house.price"``.
    features : tuple of str
        ``"table.column"`` names, at least one from every relation.
    weights : dict
        The true weights of ``features`` (0 where the price does not depend
        on a column) and ``"intercept"``.
    """

    query: str
    target: str
    features: tuple[str, ...]
    weights: dict[str, float] = field(default_factory=dict)


def housing_task(features: Optional[Sequence[str]] = None) -> HousingTask:
    """The query, target and features of the Housing regression (default: one or two features per relation).

    Parameters
    ----------
    features : sequence of str, optional
        ``"table.column"`` names; default :data:`DEFAULT_FEATURES` (seven: two
        of house, one of every other relation).

    Returns
    -------
    HousingTask

    Examples
    --------
    >>> task = housing_task(["house.livingarea", "shop.pricerangeshop"])
    >>> task.weights
    {'intercept': 40.0, 'house.livingarea': 2.5, 'shop.pricerangeshop': 0.0}
    """
    chosen = tuple(DEFAULT_FEATURES if features is None else features)
    query = ", ".join(f"{name}(postcode)" for name in RELATIONS)
    weights = {"intercept": TRUE_PRICE["intercept"], **{f: TRUE_PRICE.get(f, 0.0) for f in chosen}}
    return HousingTask(query, "house.price", chosen, weights)


def _counts(rng: np.random.Generator, postcodes: int, low: int, high: int) -> np.ndarray:
    return rng.integers(low, high + 1, postcodes)


def housing(scale: int, seed: int = 0, postcodes: int = 1000) -> dict[str, "pd.DataFrame"]:
    """The six Housing relations at ``scale`` (about ``scale`` rows per postcode in four of them).

    Parameters
    ----------
    scale : int
        ``s ≥ 1``: house, shop and restaurant hold 1 .. 2s-1 rows per postcode
        (uniform, mean s), institution 0 .. s, demographics and transport one.
    seed : int
        The generator's seed: the same ``(scale, seed, postcodes)`` give the
        same tables.
    postcodes : int
        Distinct postcodes (``0 .. postcodes-1``).

    Returns
    -------
    dict of str to pandas.DataFrame
        By relation name (:data:`RELATIONS`); ``postcode`` is int64, every
        other column float64.

    Examples
    --------
    >>> t = housing(1, seed=7, postcodes=4)
    >>> {name: len(df) for name, df in t.items()}
    {'house': 4, 'shop': 4, 'institution': 2, 'restaurant': 4, 'demographics': 4, 'transport': 4}
    >>> t["demographics"].dtypes.tolist()
    [dtype('int64'), dtype('float64'), dtype('float64'), dtype('float64'), dtype('float64')]
    """
    import pandas as pd

    if int(scale) < 1 or int(postcodes) < 1:
        from faq.errors import InvalidArgumentError

        bad, value = ("scale", scale) if int(scale) < 1 else ("postcodes", postcodes)
        raise InvalidArgumentError(argument=bad, value=value, reason="must be ≥ 1")
    s, n = int(scale), int(postcodes)
    rng = np.random.default_rng([seed, s, n])
    codes = np.arange(n, dtype=np.int64)

    def keys(count: np.ndarray) -> np.ndarray:
        return np.repeat(codes, count)

    def r2(x: np.ndarray) -> np.ndarray:
        return np.round(np.asarray(x, dtype=np.float64), 2)

    # per postcode: one row of demographics and of transport
    demographics = pd.DataFrame({
        "postcode": codes,
        "averagesalary": r2(rng.normal(32.0, 6.0, n)),          # thousands a year
        "crimesperyear": rng.poisson(40, n).astype(np.float64),
        "unemployment": r2(rng.uniform(2.0, 12.0, n)),          # per cent
        "nbhospitals": rng.integers(0, 5, n).astype(np.float64),
    })
    transport = pd.DataFrame({
        "postcode": codes,
        "nbbuslines": rng.integers(1, 21, n).astype(np.float64),
        "nbtrainstations": rng.integers(0, 4, n).astype(np.float64),
        "distancecitycentre": r2(rng.uniform(0.5, 30.0, n)),    # km
    })

    k = keys(_counts(rng, n, 1, 2 * s - 1))
    rows = len(k)
    house = pd.DataFrame({
        "postcode": k,
        "livingarea": r2(rng.uniform(3.0, 25.0, rows)),          # tens of m²
        "nbbedrooms": rng.integers(1, 6, rows).astype(np.float64),
        "nbbathrooms": rng.integers(1, 4, rows).astype(np.float64),
        "kitchensize": r2(rng.uniform(0.5, 3.0, rows)),          # tens of m²
        "garden": rng.integers(0, 2, rows).astype(np.float64),
    })
    w = TRUE_PRICE
    price = (w["intercept"] + w["house.livingarea"] * house["livingarea"].to_numpy()
             + w["house.nbbedrooms"] * house["nbbedrooms"].to_numpy()
             + w["demographics.averagesalary"] * demographics["averagesalary"].to_numpy()[k]
             + w["transport.distancecitycentre"] * transport["distancecitycentre"].to_numpy()[k]
             + rng.normal(0.0, NOISE_SD, rows))
    house["price"] = r2(price)

    k = keys(_counts(rng, n, 1, 2 * s - 1))
    shop = pd.DataFrame({
        "postcode": k,
        "openinghoursshop": rng.integers(6, 25, len(k)).astype(np.float64),
        "pricerangeshop": rng.integers(1, 6, len(k)).astype(np.float64),
        "supermarkets": rng.integers(0, 4, len(k)).astype(np.float64),
    })
    k = keys(_counts(rng, n, 0, s))
    institution = pd.DataFrame({
        "postcode": k,
        "typeeducation": rng.integers(1, 5, len(k)).astype(np.float64),
        "sizeinstitution": r2(rng.uniform(0.5, 20.0, len(k))),  # hundreds of pupils
    })
    k = keys(_counts(rng, n, 1, 2 * s - 1))
    restaurant = pd.DataFrame({
        "postcode": k,
        "openinghoursrest": rng.integers(8, 25, len(k)).astype(np.float64),
        "pricerangerest": rng.integers(1, 6, len(k)).astype(np.float64),
    })
    made = {"house": house, "shop": shop, "institution": institution, "restaurant": restaurant,
            "demographics": demographics, "transport": transport}
    return {name: made[name].iloc[rng.permutation(len(made[name]))].reset_index(drop=True) for name in RELATIONS}


def join_size(tables: Mapping[str, "pd.DataFrame"]) -> int:
    """Rows of the natural join of ``tables`` on ``postcode``, counted per postcode without listing it.

    >>> import pandas as pd
    >>> join_size({"a": pd.DataFrame({"postcode": [1, 1, 2]}), "b": pd.DataFrame({"postcode": [1, 1, 3]})})
    4
    """
    counts = None
    for df in tables.values():
        c = df["postcode"].value_counts()
        counts = c if counts is None else counts.mul(c, fill_value=0)
    return 0 if counts is None else int(counts.fillna(0).astype(np.int64).sum())


def materialise(tables: Mapping[str, "pd.DataFrame"]) -> "pd.DataFrame":
    """The natural join of ``tables`` on ``postcode``, listed with pandas merges.

    Columns keep their names (the relations' non-key columns are distinct).
    """
    frames = list(tables.values())
    out = frames[0]
    for df in frames[1:]:
        out = out.merge(df, on="postcode")
    return out


def write_csv(tables: Mapping[str, "pd.DataFrame"], directory: str | Path) -> list[Path]:
    """One ``<relation>.csv`` per table in ``directory`` (created), with a header; the paths written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, df in tables.items():
        path = out / f"{name}.csv"
        df.to_csv(path, index=False, lineterminator="\n")
        paths.append(path)
    return paths


def read_tables(directory: str | Path) -> dict[str, "pd.DataFrame"]:
    """The tables :func:`write_csv` wrote, by relation (postcode int64, other columns float64)."""
    import pandas as pd

    tables = {}
    for name in RELATIONS:
        df = pd.read_csv(Path(directory) / f"{name}.csv")
        tables[name] = df.astype({c: (np.int64 if c == "postcode" else np.float64) for c in df.columns})
    return tables


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``python -m faq.learning.datasets --scale S [--postcodes N] [--seed K] --out DIR``: write the CSVs."""
    parser = argparse.ArgumentParser(description="Write the generated Housing relations as CSV files.")
    parser.add_argument("--scale", type=int, required=True)
    parser.add_argument("--postcodes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.scale < 1 or args.postcodes < 1:  # before anything is written
        parser.error("--scale and --postcodes must be ≥ 1")  # exits with code 2
    tables = housing(args.scale, seed=args.seed, postcodes=args.postcodes)
    write_csv(tables, args.out)
    inputs = sum(len(t) for t in tables.values())
    joined = join_size(tables)
    print(f"wrote {len(tables)} relations, {inputs} rows, to {args.out}; the join has {joined} rows "
          f"({joined / inputs:.1f}x the input)")


if __name__ == "__main__":
    main()
