"""Regressions over foreign-key joins of pandas tables: faq in-process against DuckDB summing the products.

Issue 49's check "the same regressions in-process from pandas within 2x DuckDB summing the products".
The tables are :mod:`bench.bench_regression_spark`'s (seeded, numpy): the FK star
``lineitem ⋈ orders ⋈ part`` and the TPC-H-shaped snowflake ``lineitem ⋈ orders ⋈ customer, lineitem ⋈
part``, as pandas DataFrames in this process.  Per join, in rounds (one run of each method a round,
so the shared machine's load falls on both alike), after one cold run each:

* ``faq``: ``faq.covariance(query, features + [target], placement="driver", **tables)`` -- the
  cofactor aggregate ``(n, Σx, Σxxᵀ)`` (faq.learning.star's flat plan when the keys allow it; the
  plan that ran is recorded);
* ``duckdb``: one SQL statement over the registered pandas tables joining them and taking
  ``COUNT(*)``, ``SUM(x_i)`` and ``SUM(x_i * x_j)`` (i ≤ j), in an in-memory database with its default
  threads.

Both answers must agree (count exactly, sums and products to 1e-9 relative), or the run stops.
``faq_over_duckdb`` is faq's median over DuckDB's (target: at most 2).

Run from the repository root (DuckDB is in the ``bench`` extra of pyproject.toml)::

    python -m bench.bench_star_duckdb                       # FK star 300K and 2M
    python -m bench.bench_star_duckdb --snowflake-scales 6000000

Results: ``bench/results/star_duckdb.json`` (``--out``), with the command, the commit and the load.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_regression_spark import (FK_FEATURES, FK_QUERY, FK_TARGET, SF_FEATURES, SF_QUERY, fk_tables,
                                          snowflake_tables, timed)
from bench.common import RESULTS, Run, log


def with_faq(tables: dict[str, Any], query: str, names: list[str]) -> tuple[float, np.ndarray, np.ndarray, str]:
    import faq

    c = faq.covariance(query, names, placement="driver", **tables)
    return c.count, np.asarray(c.sums), np.asarray(c.products), str(c.plan).splitlines()[0]


def with_duckdb(connection: Any, query: str, names: list[str]) -> tuple[float, np.ndarray, np.ndarray]:
    from faq.language import parse_query

    atoms = parse_query(f"count() := {query}").atoms
    joined, seen = atoms[0].factor, set(atoms[0].variables)
    for atom in atoms[1:]:
        on = " AND ".join(f"{atom.factor}.{v} = {next(a.factor for a in atoms if v in a.variables)}.{v}"
                          for v in atom.variables if v in seen)
        joined += f" JOIN {atom.factor} ON {on}"
        seen |= set(atom.variables)
    m = len(names)
    pairs = [(i, j) for i in range(m) for j in range(i, m)]
    sql = (f"SELECT COUNT(*), {', '.join(f'SUM({n})' for n in names)}, "
           f"{', '.join(f'SUM({names[i]} * {names[j]})' for i, j in pairs)} FROM {joined}")
    row = connection.execute(sql).fetchone()
    sums = np.array(row[1:1 + m], dtype=np.float64)
    products = np.empty((m, m))
    for k, (i, j) in enumerate(pairs):
        products[i, j] = products[j, i] = row[1 + m + k]
    return float(row[0]), sums, products


def bench(name: str, tables: dict[str, Any], query: str, features: list[str], repeat: int) -> dict[str, Any]:
    import duckdb

    connection = duckdb.connect()
    for table, frame in tables.items():
        connection.register(table, frame)
    names = [*features, FK_TARGET]
    log(f"{name}: faq, duckdb")
    methods = {"faq": lambda: with_faq(tables, query, names),
               "duckdb": lambda: with_duckdb(connection, query, [n.split(".")[1] for n in names])}
    values, times = timed(methods, dict.fromkeys(methods, repeat))
    (count, sums, products, plan), (d_count, d_sums, d_products) = values["faq"], values["duckdb"]
    if count != d_count:
        raise SystemExit(f"{name}: faq joined {count} rows, DuckDB {d_count}")
    np.testing.assert_allclose(sums, d_sums, rtol=1e-9)
    np.testing.assert_allclose(products, d_products, rtol=1e-9)
    record = {"join": name, "rows": {t: len(f) for t, f in tables.items()}, "join_rows": int(count), **times,
              "faq_over_duckdb": round(times["faq"]["median"] / times["duckdb"]["median"], 3), "faq_plan": plan,
              "agree": "count equal; sums and products to 1e-9 relative"}
    log(f"{name}: {record}")
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fk-scales", type=int, nargs="*", default=[300_000, 2_000_000], help="lineitem rows")
    parser.add_argument("--snowflake-scales", type=int, nargs="*", default=[], help="lineitem rows (6000000: SF1)")
    parser.add_argument("--repeat", type=int, default=5, help="warm rounds")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    run = Run("bench_star_duckdb", argv)
    rows = [bench(f"fk_star_{s}", fk_tables(s), FK_QUERY, FK_FEATURES, args.repeat) for s in args.fk_scales]
    rows += [bench(f"fk_snowflake_{s}", snowflake_tables(s), SF_QUERY, SF_FEATURES, args.repeat)
             for s in args.snowflake_scales]
    run["rows"] = rows
    for r in rows:
        print(f"{r['join']:<24}{r['join_rows']:>10}  faq {r['faq']['median']:>7}  duckdb {r['duckdb']['median']:>7}"
              f"  faq/duckdb {r['faq_over_duckdb']}")
    path = run.save(Path(args.out) if args.out else RESULTS / "star_duckdb.json")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
