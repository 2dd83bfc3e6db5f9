"""The query commands: ``faq triangles``, ``faq matrix-chain``, ``faq query`` and ``faq explain``.

::

    faq triangles PATH [--directed | --undirected] [--json]
    faq matrix-chain A.mtx B.mtx [C.mtx ...] --out OUT.mtx [--semiring real|boolean|min_plus ...]
    faq query 'TEXT' --factor NAME=PATH ... [--semiring NAME] [--plan PLAN.json] [--out PATH.csv|.parquet] [--json]
    faq explain 'TEXT' --factor NAME=PATH ... [--maintained [--budget SIZE]] [--json]

:func:`add_commands` adds the four to ``faq``'s parser; each sets ``run``
(the handler) and ``check_early`` (its checks that need no Spark), as
:mod:`faq.cli.entry` describes.

Examples
--------
>>> from faq.cli import build_parser
>>> args = build_parser().parse_args(["query", "p(a) := e(a,b)", "-f", "e=e.csv", "--out", "p.csv"])
>>> args.factors, args.out, args.run is run_query, args.plan
([('e', 'e.csv')], 'p.csv', True, None)
>>> build_parser().parse_args(["triangles", "g.txt"]).directed
False
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from faq.cli.inputs import METHODS, check_semiring, check_table_out, factor_spec, require_file, require_folder
from faq.cli.output import jsonable, preview, print_json, print_table, write_table
from faq.errors import FAQValueError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from faq.factor import Factor
    from faq.insideout.planner import Plan
    from faq.progress import Reporter

__all__ = ["add_commands", "run_triangles", "run_matrix_chain", "run_query", "run_explain",
           "check_triangles", "check_matrix_chain", "check_query"]

_QUERY_SYNTAX = (
    "The query is written as 'head(free vars) := factor(vars), ...', e.g. "
    "\"count() := edge(a,b), edge(a,c), edge(b,c)\". Variables not in the head are aggregated "
    "with the semiring's ⊕. Factors are read by file extension: .csv (header row; the column "
    "'value' holds values, if present), .parquet, .mtx, anything else as an edge list."
)
_EXPLAIN = (
    "Show the InsideOut plan of a query (elimination order, bags, ρ* per bag, faqw, AGM bound, "
    "join method per bag and, for bags joined by the generic join, the attribute order and the "
    "estimated work: Σ of smallest proposals per attribute, with an upper bound) without running it; "
    "the factors are read only to gather statistics (rows, and per key column distinct values and "
    "largest degree: one Spark job per factor)"
)


# --- parser ----------------------------------------------------------------------------------


def add_commands(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser) -> None:
    """Add ``triangles``, ``matrix-chain``, ``query`` and ``explain`` to ``commands``.

    ``common`` is the parent parser of the options every command takes
    (:func:`faq.cli.inputs.common_options`).
    """
    tri = commands.add_parser(
        "triangles",
        parents=[common],
        help="count the triangles of a graph (SNAP edge list)",
        description=(
            "Count triangles of a graph given as an edge list (SNAP format: one 'src dst' pair per line, "
            "'#' comments, tabs/spaces/commas, .gz ok). Self-loops and repeated edges are ignored."
        ),
    )
    tri.add_argument("path", metavar="PATH", help="edge list file (.txt, .tsv, .gz, ...)")
    mode = tri.add_mutually_exclusive_group()
    mode.add_argument(
        "--undirected",
        dest="directed",
        action="store_false",
        help="count each triangle of the simple undirected graph once (the default)",
    )
    mode.add_argument(
        "--directed",
        dest="directed",
        action="store_true",
        help="count feed-forward triangles: ordered triples a, b, c with edges a->b, a->c, b->c",
    )
    tri.set_defaults(directed=False, run=run_triangles, check_early=check_triangles, in_process=True)

    chain = commands.add_parser(
        "matrix-chain",
        parents=[common],
        help="multiply a chain of Matrix Market matrices",
        description=(
            "Multiply matrices A·B·C·... read from Matrix Market files, in a semiring; the planner "
            "chooses the order of the products. The product is written as Matrix Market."
        ),
    )
    chain.add_argument("matrices", nargs="+", metavar="MATRIX.mtx", help="the matrices, in product order")
    chain.add_argument("--out", required=True, metavar="OUT.mtx", help="where to write the product")
    chain.add_argument(
        "--semiring", default="real", metavar="NAME", help="semiring of the product (default: %(default)s)"
    )
    chain.add_argument("--method", choices=METHODS, default="auto", help="order search (default: %(default)s)")
    chain.set_defaults(run=run_matrix_chain, check_early=check_matrix_chain, in_process=True)

    query = _query_parser(commands, common, "query", "answer a query over factors read from files", "Answer a query")
    query.add_argument(
        "--out", metavar="PATH", help="write the result to PATH (.csv or .parquet) instead of printing it"
    )
    query.add_argument(
        "--plan", metavar="PLAN.json",
        help="run this plan instead of planning: what 'faq explain --json' (or 'faq query --json') printed for "
        "the query; refused (exit code 2) if made for another query, other key types, or factor sizes beyond "
        "its margin (twice or half the rows it was made for)",
    )
    query.set_defaults(run=run_query, in_process=True)

    explain = _query_parser(
        commands, common, "explain", "show a query's plan (order, bags, widths) without running it", _EXPLAIN
    )
    explain.add_argument(
        "--maintained", action="store_true",
        help="show how a maintained query would keep the answer current: where its indexes live "
        "(driver or executors, against the budget), their views and estimated sizes, and the "
        "attribute order of every delta rule",
    )
    explain.add_argument("--budget", metavar="SIZE",
                         help="the driver's index budget for --maintained (e.g. 512m, 4g; default "
                              "spark.faq.localMemory, the in-process memory one-shot queries use)")
    explain.set_defaults(run=run_explain, in_process=True)


def _query_parser(commands: "argparse._SubParsersAction", common: argparse.ArgumentParser, name: str, what: str,
                  description: str) -> argparse.ArgumentParser:
    """A subparser taking a query text and its factors (what ``query`` and ``explain`` share)."""
    sub = commands.add_parser(name, parents=[common], help=what, description=f"{description}. {_QUERY_SYNTAX}")
    sub.add_argument("text", metavar="TEXT", help="the query")
    sub.add_argument(
        "--factor",
        "-f",
        dest="factors",
        action="append",
        type=factor_spec,
        default=[],
        metavar="NAME=PATH",
        help="a factor the query names, and its file (repeat for each factor)",
    )
    sub.add_argument(
        "--semiring",
        metavar="NAME",
        help="semiring of the factors and the query (default: each file loader's own: "
        "counting for edge lists and tables, real for .mtx)",
    )
    sub.add_argument("--method", choices=METHODS, default="auto", help="order search (default: %(default)s)")
    sub.set_defaults(check_early=check_query)
    return sub


# --- checks before Spark -----------------------------------------------------------------------


def check_triangles(args: argparse.Namespace) -> None:
    """``faq triangles``: the edge list exists."""
    require_file(args.path)


def check_matrix_chain(args: argparse.Namespace) -> None:
    """``faq matrix-chain``: a known semiring, the matrices exist, ``--out`` is a .mtx in an existing folder."""
    check_semiring(args.semiring)
    if not args.out.lower().endswith((".mtx", ".mtx.gz")):
        raise FAQValueError(error_class="OUTPUT_NOT_MTX", path=args.out)
    for path in args.matrices:
        require_file(path)
    _chain_shape(args.matrices)  # headers only: bad or too large for memory -> exit 2 before Spark starts
    require_folder(args.out)


def check_query(args: argparse.Namespace) -> None:
    """``faq query`` and ``faq explain``: the text parses, every factor is given once and exists, --out is
    writable, and a ``--plan`` is a plan of this query."""
    from faq.language import parse_query

    check_semiring(args.semiring)
    query = parse_query(args.text)
    given: dict[str, str] = {}
    for name, path in args.factors:
        if name in given:
            raise FAQValueError(error_class="FACTOR_GIVEN_TWICE", name=name, first=given[name], second=path)
        given[name] = path
        require_file(path)
        if path.lower().endswith((".mtx", ".mtx.gz", ".mtx.bz2")):  # what read_factor reads as Matrix Market
            from faq.io import matrix_shape

            matrix_shape(path)  # its header: a matrix too large for memory is refused before Spark starts
    missing = [n for n in query.factor_names if n not in given]
    if missing:
        raise FAQValueError(error_class="FACTORS_NOT_GIVEN", missing=missing)
    check_table_out(getattr(args, "out", None))  # explain has no --out
    if getattr(args, "plan", None):  # read and checked against the query before Spark starts
        from faq.insideout.staleness import check_query as check_plan_query, load_plan
        from faq.semirings import get_semiring

        require_file(args.plan)
        ring = args.semiring or query.semiring  # else the factors' (checked when they are read)
        check_plan_query(load_plan(args.plan), query, get_semiring(ring).name if ring else None)


# --- handlers ------------------------------------------------------------------------------------


def run_triangles(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq triangles``: the count, the cleaned edge count, the plan's order and width."""
    from faq.graphs import triangle_count

    kind = "feed-forward (directed)" if args.directed else "undirected"
    reporter.note(f"reading {args.path} and counting {kind} triangles")
    # The job reads the path itself (on the driver when it can) and reports "loaded N edges".
    result = triangle_count(args.path, directed=args.directed, progress=reporter, spark=spark)
    if args.json:
        print_json({"path": args.path, **result.to_dict()})
        return
    print(f"{args.path}: {result.count} {kind} triangles")
    print(
        f"  {result.edges} edges after cleaning; order {', '.join(result.plan.order)}; "
        f"faqw {result.plan.faqw}; {result.seconds:.1f} s "
        f"(load {result.load_seconds:.1f} s, join {result.join_seconds:.1f} s)"
    )


def run_matrix_chain(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq matrix-chain``: multiply, write ``--out``, print the parenthesization and the estimates."""
    from faq.graphs import chain_product
    from faq.io import read_matrix_market, write_matrix_market
    from faq.semirings import get_semiring

    semiring = get_semiring(args.semiring)
    shape = _chain_shape(args.matrices)
    started = time.perf_counter()
    matrices = []
    for path in args.matrices:
        reporter.note(f"reading {path}")
        matrices.append(read_matrix_market(path, spark=spark, semiring=semiring))
    with chain_product(matrices, semiring, method=args.method, progress=reporter) as result:
        nnz = result.factor.count()
        reporter.note(f"writing {args.out}")
        write_matrix_market(result.factor, args.out, shape=shape)
        the_plan = result.plan
    seconds = time.perf_counter() - started
    estimates = [s.estimated_rows for s in the_plan.steps]
    estimated = None if any(e is None for e in estimates) else float(sum(estimates))
    summary = {
        "matrices": list(args.matrices),
        "semiring": semiring.name,
        "shape": list(shape),
        "order": list(the_plan.order),
        "parenthesization": _parenthesization(the_plan),
        "estimated_rows": estimated,
        "faqw": str(the_plan.faqw),
        "nnz": nnz,
        "out": args.out,
        "seconds": round(seconds, 3),
    }
    if args.json:
        print_json(summary)
        return
    print(f"product {summary['parenthesization']} ({semiring.name}), {shape[0]}×{shape[1]}: nnz {nnz}")
    est = "unknown" if estimated is None else f"{estimated:.3g}"
    print(
        f"  order {', '.join(the_plan.order) or '(none)'}; estimated intermediate rows {est}; "
        f"faqw {the_plan.faqw}; written to {args.out}; {seconds:.1f} s"
    )


def _chain_shape(paths: list[str]) -> tuple[int, int]:
    """The product's shape, from the files' headers; inner dimensions must agree (checked before Spark work)."""
    from faq.io import matrix_shape

    shapes = [matrix_shape(p) for p in paths]
    for k in range(1, len(shapes)):
        if shapes[k - 1][1] != shapes[k][0]:
            raise FAQValueError(error_class="MATRIX_SHAPES", index=k, paths=paths, shapes=shapes)
    return shapes[0][0], shapes[-1][1]


def _parenthesization(the_plan: "Plan") -> str:
    """``(M1·M2)·M3`` from a chain plan's steps (``Mk`` is the k-th matrix).

    Each step multiplies its inputs; they are shown in chain order (by the
    first matrix each covers), not in the step's join order.
    """
    expr = {rel.id: (k, factor) for k, (rel, factor) in enumerate(the_plan.inputs)}
    for step in the_plan.steps:
        parts = sorted(expr.get(r, (len(expr), r)) for r in step.inputs)
        text = "·".join(t for _, t in parts)
        expr[step.output.id] = (parts[0][0], f"({text})" if len(parts) > 1 else text)
    text = expr.get(the_plan.result.id, (0, ""))[1]
    return text[1:-1] if text.startswith("(") and _balanced(text[1:-1]) else text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _read_factors(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> dict[str, "Factor"]:
    """The ``--factor NAME=PATH`` files, by name, in ``--semiring`` when given."""
    from faq.io import read_factor

    factors = {}
    for name, path in args.factors:
        reporter.note(f"reading {name} from {path}")
        kw: dict[str, Any] = {"spark": spark, "name": name}
        if args.semiring:
            kw["semiring"] = args.semiring
        started = time.perf_counter()
        factors[name] = read_factor(path, **kw)
        # Edge lists read on the driver are read here in full; Spark readers only check the file
        # here and read it again in the first job (statistics or the join).
        reporter.note(f"read {name} in {time.perf_counter() - started:.1f} s")
    return factors


def run_query(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq query``: the scalar, a preview table, or ``--out``; the plan's order and width on stderr."""
    from faq.insideout import evaluate
    from faq.language import parse_query

    query = parse_query(args.text)
    factors = _read_factors(args, spark, reporter)
    given = getattr(args, "plan", None)  # a kept plan runs as it is (checked against the factors first)
    with evaluate(query, factors, semiring=args.semiring, method=args.method, progress=reporter,
                  plan=given) as result:
        factor = result.factor
        out: dict[str, Any]
        if args.out:
            rows = factor.count()
            write_table(factor, args.out, reporter)
            out = {"rows": rows, "out": args.out}
        elif not factor.variables:
            out = {"rows": 1, "value": jsonable(result.scalar())}
        else:
            out = {"rows": factor.count(), "preview": preview(factor.df, factor.variables, factor.columns())}
        seconds = result.seconds
        the_plan = result.plan
    if args.json:
        print_json({**out, "seconds": round(seconds, 3), "plan": the_plan.to_dict()})
        return
    if args.out:
        print(f"wrote {out['rows']} rows to {args.out}")
    elif "value" in out:
        print(out["value"])
    else:
        print_table(out["preview"], factor.columns())
        shown = len(out["preview"])
        more = f" (first {shown} shown)" if shown < out["rows"] else ""
        print(f"({out['rows']} rows{more})")
    if not args.quiet:
        reporter.note(f"order {', '.join(the_plan.order) or '(none)'}; faqw {the_plan.faqw}; join {seconds:.1f} s")


def run_explain(args: argparse.Namespace, spark: "SparkSession", reporter: "Reporter") -> None:
    """``faq explain``: the plan from the factors' statistics, or with ``--maintained`` the maintenance plan."""
    from faq.insideout.binding import plan_for
    from faq.language import parse_query

    query = parse_query(args.text)
    factors = _read_factors(args, spark, reporter)
    if args.maintained:  # how `maintain` would keep the answer: placement, index views and sizes, delta rules
        from faq.incremental.maintained import MaintainedQuery

        reporter.note("counting the factors' rows (index sizes are estimated from them)")
        maintenance = MaintainedQuery.plan_for(query, factors, semiring=args.semiring, budget=args.budget)
        if args.json:
            print_json(maintenance.to_dict())
        else:
            print(maintenance)
        return
    reporter.note("gathering factor statistics (rows, distinct values and largest degree per column)")
    # The same checks and facts a run uses; the plan also shows, per bag joined by the generic
    # join, its strategy and estimated work from these statistics.
    the_plan = plan_for(query, factors, semiring=args.semiring, method=args.method, detailed=True)
    if args.json:
        print_json(the_plan.to_dict())
    else:
        print(the_plan)
