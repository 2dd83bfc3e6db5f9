"""Small one-shot queries, where Spark's per-job cost used to dominate: graphical models and matrix chains.

Two families, each against a baseline measured in the same run and checked
against it:

* **Bayesian networks**: posterior marginals (sum-product, ``real``) and
  max-marginals (``max_product``) of a few variables given evidence, through
  ``faq.query`` in one warm process, the network's tables given as Spark
  DataFrames (as the ``semirings`` notebook does), as pandas tables, and as
  CSV files' paths (``--given path``: the library reads them).  The
  networks: Asia (8 variables, ``tests/data/asia.json``) and random networks
  of 20, 30 and 37 variables (seeded: each variable gets up to 3 earlier
  variables as parents, 2 or 3 states, random conditional tables).
  Baseline: a plain numpy variable elimination (dense arrays, min-degree order,
  sum or max per eliminated axis), in :func:`numpy_elimination`.
* **Matrix chains**: ``faq.matrix_chain`` of the bundled SuiteSparse files
  (bcsstk21 · bcsstm21 · bcsstk21, 3,600²; dwt_2680³, 2,680²) on faq's own
  clock (reading included), against scipy's ``mmread`` and ``@``.
* **Fixpoints**: ``faq.shortest_paths`` and ``faq.connected_components`` of
  edges given as a Spark DataFrame (a four-edge graph; wiki-Vote, 103,689
  edges, unit weights), placed by faq (on the driver while they fit) and as
  Spark rounds (``executors``: :mod:`faq.recursive.seminaive`), against
  scipy.sparse.csgraph from numpy arrays (``dijkstra``, ``connected_components``).

Each figure is the median of ``--repeat`` warm runs, with the minimum and
maximum beside it; the first (cold) run is reported apart.

Run from the repository root::

    python -m bench.bench_small --out bench/results/small_queries.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import string
from typing import Any, Callable

import numpy as np

from bench.common import GENERATED, TEST_DATA, Run, cold_and_warm, log

PLACEMENTS = ("auto", "executors")


# --- Bayesian networks ----------------------------------------------------------------------


def asia() -> dict[str, Any]:
    """The Asia network: {"cards": {variable: states}, "cpts": [(variables (parents..., v), array)]}."""
    network = json.loads((TEST_DATA / "asia.json").read_text())
    code = {s: i for i, s in enumerate(network["states"])}
    cpts = []
    for cpt in network["cpts"]:
        variables = cpt["columns"][:-1]
        array = np.zeros((2,) * len(variables))
        for row in cpt["rows"]:
            array[tuple(code[s] for s in row[:-1])] = row[-1]
        cpts.append((tuple(variables), array))
    return {"name": "asia", "cards": {v: 2 for v in network["variables"]}, "cpts": cpts}


def random_network(n: int, seed: int) -> dict[str, Any]:
    """A random Bayesian network of ``n`` variables: up to 3 parents each among the earlier ones."""
    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(n)]
    cards = {v: int(rng.integers(2, 4)) for v in names}
    cpts = []
    for i, v in enumerate(names):
        parents = sorted(rng.choice(i, size=min(i, int(rng.integers(0, 4))), replace=False).tolist()) if i else []
        variables = tuple([names[p] for p in parents] + [v])
        table = rng.random(tuple(cards[u] for u in variables)) + 0.05
        cpts.append((variables, table / table.sum(axis=-1, keepdims=True)))
    return {"name": f"random{n}", "cards": cards, "cpts": cpts}


def queries(network: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Five questions per network: marginals and max-marginals of 2 variables given 2-3 observations."""
    rng = np.random.default_rng(seed)
    names = list(network["cards"])
    out = []
    for k in range(5):
        chosen = rng.choice(len(names), size=min(len(names), 5), replace=False)
        seen = {names[i]: int(rng.integers(0, network["cards"][names[i]])) for i in chosen[:3]}
        asked = [names[i] for i in chosen[3:5]]
        out.append({"asked": asked, "evidence": seen, "semiring": "real" if k % 2 == 0 else "max_product"})
    return out


def numpy_elimination(network: dict[str, Any], asked: list[str], evidence: dict[str, int], semiring: str) -> np.ndarray:
    """The answer over ``asked`` (an array, axes in that order) by variable elimination in numpy."""
    factors = []
    for variables, array in network["cpts"]:
        index = tuple(evidence[v] if v in evidence else slice(None) for v in variables)
        kept = tuple(v for v in variables if v not in evidence)
        factors.append((kept, np.asarray(array[index])))
    reduce = np.sum if semiring == "real" else np.max
    remaining = {v for vs, _ in factors for v in vs} - set(asked)
    while remaining:
        # min-degree: the variable whose factors span the fewest other variables
        def degree(x: str) -> int:
            return len({u for vs, _ in factors if x in vs for u in vs})

        x = min(sorted(remaining), key=degree)
        touching = [(vs, a) for vs, a in factors if x in vs]
        factors = [(vs, a) for vs, a in factors if x not in vs]
        variables, product = _product(touching)
        factors.append((tuple(u for u in variables if u != x), reduce(product, axis=variables.index(x))))
        remaining.discard(x)
    variables, product = _product(factors)
    order = [variables.index(v) for v in asked]
    return np.transpose(product, order) if order else product


def _product(factors: list[tuple[tuple[str, ...], np.ndarray]]) -> tuple[tuple[str, ...], np.ndarray]:
    variables = tuple(dict.fromkeys(v for vs, _ in factors for v in vs))
    letters = dict(zip(variables, string.ascii_letters))
    spec = ",".join("".join(letters[v] for v in vs) for vs, _ in factors) + "->" + "".join(letters[v] for v in variables)
    return variables, np.einsum(spec, *[a for _, a in factors])


def faq_tables(network: dict[str, Any]) -> dict[str, Any]:
    """The network's tables as pandas DataFrames named p_<variable>: (parents..., variable, value)."""
    import pandas as pd

    tables = {}
    for variables, array in network["cpts"]:
        index = np.indices(array.shape).reshape(len(variables), -1)
        columns = {v: index[k].astype(np.int64) for k, v in enumerate(variables)}
        columns["value"] = array.reshape(-1)
        tables[f"p_{variables[-1]}"] = pd.DataFrame(columns)
    return tables


def faq_answer(spark: Any, network: dict[str, Any], question: dict[str, Any], tables: dict[str, Any],
               as_spark: dict[str, Any], given: str, placement: str) -> tuple[np.ndarray, str]:
    """The question through ``faq.query``: the answer as an array over ``asked``, and where its steps ran."""
    import pandas as pd

    import faq

    asked, evidence = question["asked"], question["evidence"]
    seen = {f"seen_{v}": pd.DataFrame({v: [s], "value": [1.0]}) for v, s in evidence.items()}
    if given == "path":  # every table a CSV file's path: the network's (written once), the evidence's here
        folder = as_spark["__folder"]
        factors = {name: str(folder / f"{name}.csv") for name in tables}
        for k, t in seen.items():
            t.to_csv(folder / f"{k}.csv", index=False)
            factors[k] = str(folder / f"{k}.csv")
    else:
        factors = dict(tables if given == "pandas" else {k: v for k, v in as_spark.items() if k != "__folder"})
        factors.update(seen if given == "pandas" else {k: spark.createDataFrame(t) for k, t in seen.items()})
    joint = ", ".join(f"{name}({', '.join(t.columns[:-1])})" for name, t in tables.items())
    observed = ", ".join(f"seen_{v}({v})" for v in evidence)
    text = f"answer({', '.join(asked)}) := {joint}, {observed}"
    spark.conf.set("spark.faq.placement", placement)
    try:
        with faq.query(text, semiring=question["semiring"], **factors) as result:
            rows = result.df.toPandas() if result.held is None else pd.DataFrame(
                {**{v: result.held.keys[v] for v in asked}, "value": result.held.values})
            where = ",".join(sorted({s.placement for s in result.plan.steps}))
    finally:
        spark.conf.unset("spark.faq.placement")
    out = np.zeros(tuple(network["cards"][v] for v in asked))
    if question["semiring"] == "max_product":
        out[...] = 0.0
    for row in rows.itertuples(index=False):
        out[tuple(int(x) for x in row[:-1])] = row[-1]
    return out, where


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, list[float]]:
    """(result, the cold run's seconds, the warm runs' seconds)."""
    return cold_and_warm(fn, repeat, close_warm)


def close_warm(again: Any, value: Any) -> None:
    """Close a warm run's result that holds Spark caches (the cold one's is the caller's)."""
    if hasattr(again, "close"):
        again.close()


def summary(times: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(times), 4), "min": round(min(times), 4), "max": round(max(times), 4)}


def bench_networks(spark: Any, sizes: list[int], repeat: int, placements: list[str], givens: list[str]) -> list[dict]:
    networks = [asia()] + [random_network(n, seed=n) for n in sizes]
    records = []
    for network in networks:
        tables = faq_tables(network)
        as_spark = {name: spark.createDataFrame(t) for name, t in tables.items()} if "spark" in givens else {}
        if "path" in givens:  # the tables as CSV files, as a user's would be
            folder = GENERATED / "networks-csv" / network["name"]
            folder.mkdir(parents=True, exist_ok=True)
            for name, t in tables.items():
                t.to_csv(folder / f"{name}.csv", index=False)
            as_spark["__folder"] = folder
        for q, question in enumerate(queries(network, seed=len(network["cards"]))):
            expected, _, base = timed(lambda: numpy_elimination(network, question["asked"], question["evidence"],
                                                                question["semiring"]), repeat)
            record = {"network": network["name"], "variables": len(network["cards"]), "question": q,
                      "semiring": question["semiring"], "asked": question["asked"],
                      "evidence": question["evidence"], "numpy_seconds": summary(base)}
            for given in givens:
                for placement in placements:
                    if placement == "executors" and (given != "spark" or q > 0):
                        continue  # the executors' figure once per network, from Spark DataFrames: it is slow
                    (got, where), cold, warm = timed(
                        lambda: faq_answer(spark, network, question, tables, as_spark, given, placement),
                        repeat if placement != "executors" else 1)
                    error = float(np.max(np.abs(got - expected)) / max(1e-300, float(np.max(np.abs(expected)))))
                    if error > 1e-9:
                        raise SystemExit(f"{network['name']} question {q} ({given}, {placement}): relative error {error}")
                    record[f"faq_{given}_{placement}"] = {"cold": round(cold, 4), **summary(warm), "steps": where,
                                                          "relative_error": error}
            log(f"{network['name']} q{q} {question['semiring']}: numpy {record['numpy_seconds']['median']} s; "
                + "; ".join(f"{k} {v['median']} s ({v['steps']})" for k, v in record.items() if k.startswith("faq_")))
            records.append(record)
    return records


def bench_chains(repeat: int, placements: list[str]) -> list[dict]:
    import scipy.io

    import faq
    from faq.io.convert import to_scipy

    chains = {
        "bcsstk21*bcsstm21*bcsstk21": ["bcsstk21.mtx", "bcsstm21.mtx", "bcsstk21.mtx"],
        "dwt_2680^3": ["dwt_2680.mtx"] * 3,
    }
    records = []
    spark = faq.get_session()
    for name, files in chains.items():
        paths = [str(TEST_DATA / f) for f in files]

        def with_scipy():
            matrices = [scipy.io.mmread(p).tocsr() for p in paths]
            product = matrices[0]
            for m in matrices[1:]:
                product = product @ m
            return product

        expected, _, base = timed(with_scipy, repeat)
        record = {"chain": name, "scipy_seconds": summary(base), "nnz_scipy": int(expected.count_nonzero())}
        for placement in placements:
            spark.conf.set("spark.faq.placement", placement)
            try:
                def with_faq():  # the product read, multiplied and held (in-process) or cached (Spark)
                    result = faq.matrix_chain(paths)
                    result.factor.count()
                    return result

                result, cold, warm = timed(with_faq, repeat if placement != "executors" else 1)
                with result:
                    got = to_scipy(result.factor, shape=expected.shape)
                    where = ",".join(sorted({s.placement for s in result.plan.steps}))
            finally:
                spark.conf.unset("spark.faq.placement")
            scale = float(abs(expected).max())
            error = float(abs(got - expected).max()) / scale
            if error > 1e-12:
                raise SystemExit(f"{name} ({placement}): relative error {error}")
            record[f"faq_{placement}"] = {"cold": round(cold, 4), **summary(warm), "steps": where,
                                          "relative_error": error}
            record[f"ratio_{placement}_to_scipy"] = round(statistics.median(warm) / statistics.median(base), 2)
        log(f"{name}: scipy {record['scipy_seconds']['median']} s; "
            + "; ".join(f"{k} {v['median']} s ({v['steps']})" for k, v in record.items() if k.startswith("faq_")))
        records.append(record)
    return records


def bench_fixpoints(spark: Any, repeat: int, placements: list[str]) -> list[dict]:
    import pandas as pd
    import scipy.sparse
    from scipy.sparse.csgraph import connected_components, dijkstra

    import faq
    from faq.recursive import seminaive
    from faq.recursive.edge_input import edge_table

    tiny = pd.DataFrame({"src": [1, 2, 1, 4], "dst": [2, 3, 3, 1], "weight": [4.0, 1.0, 7.0, 1.0]})
    wiki = pd.read_csv(TEST_DATA / "wiki-Vote.txt.gz", sep="\t", comment="#", header=None, names=["src", "dst"])
    wiki["weight"] = 1.0
    records = []
    for name, edges in (("four edges", tiny), ("wiki-Vote", wiki)):
        df = spark.createDataFrame(edges).cache()
        df.count()
        src, dst, weight = edge_table(edges)
        n = int(max(src.max(), dst.max())) + 1
        matrix = scipy.sparse.csr_matrix((weight, (src, dst)), shape=(n, n))
        source = int(edges["src"].iloc[0])
        for problem in ("shortest_paths", "connected_components"):
            def with_scipy():
                if problem == "shortest_paths":
                    dist = dijkstra(matrix, indices=source)
                    reached = np.flatnonzero(np.isfinite(dist))
                    return dict(zip(reached.tolist(), dist[reached].tolist()))
                _, labels = connected_components(matrix, directed=False)
                seen = np.unique(np.concatenate([src, dst]))
                smallest = np.full(labels.max() + 1, n)
                np.minimum.at(smallest, labels[seen], seen)
                return {int(v): int(smallest[labels[v]]) for v in seen}

            expected, _, base = timed(with_scipy, repeat)
            record = {"graph": name, "edges": len(edges), "problem": problem, "scipy_seconds": summary(base)}
            for placement in placements:
                def with_faq():
                    if placement == "auto":
                        result = faq.shortest_paths(df, source) if problem == "shortest_paths" else \
                            faq.connected_components(df)
                    else:
                        factor = faq.edge_factor(df, weight="weight")
                        result = seminaive.shortest_paths_on_spark(factor, source) if problem == "shortest_paths" else \
                            seminaive.components_on_spark(factor)
                    table = result.df.toArrow()  # the answer read back: both placements hand a DataFrame
                    return result, dict(zip(table.column(0).to_pylist(), table.column(1).to_pylist()))

                (result, got), cold, warm = timed(with_faq, repeat if placement == "auto" else 2)
                with result:
                    if got != expected:
                        raise SystemExit(f"{name} {problem} ({placement}): differs from scipy")
                    record[f"faq_{placement}"] = {"cold": round(cold, 4), **summary(warm),
                                                  "placement": result.placement, "iterations": result.iterations}
            if "auto" in placements and "executors" in placements:
                record["executors_over_auto"] = round(record["faq_executors"]["median"] / record["faq_auto"]["median"], 1)
            log(f"{name} {problem}: scipy {record['scipy_seconds']['median']} s; "
                + "; ".join(f"{k} {v['median']} s ({v['placement']})" for k, v in record.items() if k.startswith("faq_")))
            records.append(record)
        df.unpersist()
    return records


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[20, 30, 37], help="random networks' variables")
    parser.add_argument("--repeat", type=int, default=5, help="warm runs per figure")
    parser.add_argument("--placements", nargs="*", default=list(PLACEMENTS), choices=PLACEMENTS)
    parser.add_argument("--given", nargs="*", default=["spark", "pandas"], choices=["spark", "pandas", "path"])
    parser.add_argument("--skip", nargs="*", default=[], choices=["networks", "chains", "fixpoints"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import faq

    spark = faq.get_session()
    record = Run("bench_small", argv)
    if "networks" not in args.skip:
        record["networks"] = bench_networks(spark, args.sizes, args.repeat, args.placements, args.given)
    if "chains" not in args.skip:
        record["chains"] = bench_chains(args.repeat, args.placements)
    if "fixpoints" not in args.skip:
        record["fixpoints"] = bench_fixpoints(spark, args.repeat, args.placements)
    path = record.save(None if args.out is None else __import__("pathlib").Path(args.out))
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
