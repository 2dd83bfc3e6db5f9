"""A new state for the ``faq`` sink: a maintained query or tracked motif over empty inputs, made without Spark.

The sink (:mod:`faq.data_sink`) makes its state at the first micro-batch, in
the Python worker where Spark runs a stream writer's ``commit``: a process
with no Spark session (and none must be started there).  A maintained
query computes its first answer with Spark and a tracker counts its
pattern with Spark; over empty inputs both answers are known without
asking: no rows (the sum over no binding).  So the objects are made here
from empty Arrow factors, with that empty first answer; everything else --
the indexes, the delta rules, the manifest, the version 0 saved -- is the
objects' own code.

Examples
--------
>>> import tempfile, pyarrow as pa
>>> root = tempfile.mkdtemp()
>>> keys = pa.schema([("src", pa.int64()), ("dst", pa.int64())])
>>> q = empty_query("deg(a) := edge(a,b)", keys, None, root + "/q")
>>> q.version, q.placement
(0, 'driver')
>>> _ = q.apply(edge=pa.table({"src": [1, 1], "dst": [2, 3]}))
>>> from faq.data_source import answer_table
>>> answer_table(q.path).to_pydict()
{'a': [1], 'value': [2]}
>>> q.close()
>>> t = empty_tracker("(a)->(b); (b)->(c)", root + "/t")
>>> _ = t.apply(pa.table({"src": [1, 2], "dst": [2, 3], "diff": [1, 1]}))
>>> t.count, t.version
(1, 1)
>>> t.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional

from faq.errors import InvalidArgumentError
from faq.incremental.maintained import MaintainedQuery

if TYPE_CHECKING:
    import pyarrow as pa

    from faq.factor import Factor
    from faq.graphs.maintained_truss import MaintainedTruss
    from faq.graphs.track import MotifTracker

__all__ = ["empty_query", "empty_tracker", "empty_truss"]

# Spark's simple value types as Arrow's, for an empty first answer (its values are cast to the state's anyway).
_ARROW_VALUES = {"bigint": "int64", "int": "int32", "double": "float64", "float": "float32", "boolean": "bool_"}


class _EmptyStart(MaintainedQuery):
    """A maintained query whose factors are all empty: its first answer is empty, known without Spark."""

    KIND = MaintainedQuery.KIND  # saved as a maintained query, reopened by MaintainedQuery.open

    def _evaluate(self, factors: Mapping[str, "Factor"]) -> "pa.Table":
        import pyarrow as pa

        if any(f.count() for f in factors.values()):  # only ever made empty: a guard, not a path
            raise InvalidArgumentError("factors", sorted(factors), "a sink's new state starts empty")
        types = {}
        for atom in self.query.atoms:
            arrays = factors[atom.factor].relation.arrays
            for variable, column in zip(atom.variables, factors[atom.factor].variables):
                types.setdefault(variable, pa.array(arrays[column]).type)
        value = getattr(pa, _ARROW_VALUES.get(self.state_semiring.value_type, "int64"))()
        from faq.factor import VALUE

        return pa.table({**{v: pa.array([], types[v]) for v in self.query.free}, VALUE: pa.array([], value)})


def empty_query(text: str, keys: "pa.Schema", semiring: Optional[str], path: str) -> MaintainedQuery:
    """The maintained query ``text`` over empty factors, saved in ``path`` at version 0 (no Spark).

    Parameters
    ----------
    text : str
        The query.
    keys : pyarrow.Schema
        The stream's key columns: each factor's variables (in order) and their types.
    semiring : str, optional
        Default the query's (else ``counting``).
    path : str
        A new or empty directory.

    Raises
    ------
    InvalidArgumentError
        A factor whose arity is not the number of key columns (make such a
        state with :func:`faq.maintain` first, then feed it).
    """
    import pyarrow as pa

    from faq.inputs import factors_of
    from faq.language import parse_query

    query = parse_query(text)
    arity = {a.factor: len(a.variables) for a in query.atoms}
    wrong = {name: n for name, n in arity.items() if n != len(keys)}
    if wrong:
        raise InvalidArgumentError("query", text, f"a new state takes each factor's variables from the stream's "
                                                  f"columns ({', '.join(keys.names) or 'none'}), but "
                                                  f"{', '.join(f'{k} has {n}' for k, n in wrong.items())}: make the "
                                                  "state with faq.maintain(..., state=DIR) first, close it, then "
                                                  "stream into it")
    empty = pa.table({f.name: pa.array([], f.type) for f in keys})
    factors = factors_of({name: empty for name in arity}, {}, semiring)
    return _EmptyStart(query, factors, semiring=semiring, path=path, placement="driver")


def empty_tracker(pattern: str, path: str) -> "MotifTracker":
    """A tracker of ``pattern`` over the empty graph (count 0), saved in ``path`` at version 0 (no Spark).

    The state is what :class:`~faq.graphs.MotifTracker` builds from edges
    (the simple digraph ``edge``, and its symmetric closure ``sym`` for a
    pattern with an undirected edge), with no rows.
    """
    import pyarrow as pa

    from faq.graphs.pattern import parse_pattern
    from faq.graphs.track import MotifTracker
    from faq.incremental.index import KeyedRows, ResidentRelation
    from faq.incremental.state import ResidentState
    from faq.incremental.store import Store
    from faq.semirings import INTEGER

    Store(path).check_new()
    parsed = parse_pattern(pattern)
    state = ResidentState(INTEGER)
    edge = state.add("edge", ("src", "dst"), pa.table({"src": pa.array([], pa.int64()),
                                                        "dst": pa.array([], pa.int64())}), None)
    if any(not e.directed for e in parsed.edges):  # as MotifTracker keeps its closure: 0/1 rows, no values
        state.hold("sym", ResidentRelation("sym", ("src", "dst"), KeyedRows(edge.current().keys, None), state.ops))
        state.key_types["sym"] = dict(state.key_types["edge"])
    tracker = MotifTracker(None, parsed, _restored=(state, {"count": 0}))
    state.attach(path, {"kind": MotifTracker.KIND, "pattern": str(parsed), "count": 0})
    return tracker


def empty_truss(path: str) -> "MaintainedTruss":
    """A maintained truss decomposition of the empty graph, saved in ``path`` at version 0.

    (A truss decomposes its edges on the driver, with no Spark job: made by
    :func:`faq.truss` itself.)

    >>> import tempfile, pyarrow as pa
    >>> t = empty_truss(tempfile.mkdtemp() + "/truss")
    >>> _ = t.apply(pa.table({"src": [1, 2, 1], "dst": [2, 3, 3], "diff": [1, 1, 1]}))
    >>> t.table().to_pydict()
    {'src': [1, 1, 2], 'dst': [2, 3, 3], 'trussness': [3, 3, 3]}
    >>> t.close()
    """
    import pyarrow as pa

    from faq.graphs.trusses import truss

    empty = pa.table({"src": pa.array([], pa.int64()), "dst": pa.array([], pa.int64())})
    return truss(empty, maintained=True, state=path)
