"""The mapped index (faq.joins.mapped): the file round-trips an index, its arrays are views of one
read-only mapping, and the broadcast strategy's tasks read the index that way."""

from __future__ import annotations

import os

import numpy as np
import pytest

from faq.io import scratch_path
from faq.joins import mapped
from faq.joins.mapped import ALIGN, KEEP_LOADED, MappedIndex, read_index, write_index


def test_round_trip_keeps_every_array_and_object():
    value = {
        "int64": np.arange(1000, dtype=np.int64),
        "float": np.linspace(0, 1, 7),
        "bool": np.array([True, False, True]),
        "empty": np.zeros(0, dtype=np.int64),
        "strided": np.arange(20, dtype=np.int64)[::3],  # not contiguous: pickled in the stream
        "nested": [(1, "a"), {"k": np.int64(5)}],
    }
    path = scratch_path("index.bin")
    size = write_index(value, path)
    assert size == os.path.getsize(path)
    back = read_index(path)
    assert set(back) == set(value)
    for key in ("int64", "float", "bool", "empty", "strided"):
        assert back[key].dtype == value[key].dtype and np.array_equal(back[key], value[key]), key
    assert back["nested"] == value["nested"]
    # Out-of-band arrays are aligned views of the read-only mapping, not copies.
    assert not back["int64"].flags.writeable and back["int64"].ctypes.data % ALIGN == 0
    with pytest.raises(ValueError):
        back["int64"][0] = 1


def test_a_file_that_is_not_an_index_is_refused():
    path = scratch_path("not-an-index.bin", "hello, this is text and long enough for a header")
    with pytest.raises(ValueError, match="not a faq mapped index"):
        read_index(path)


def test_a_worker_keeps_the_newest_indexes_only(monkeypatch):
    paths = {}
    for i in range(KEEP_LOADED + 2):
        paths[f"i{i}"] = scratch_path(f"i{i}.bin")
        write_index({"i": np.full(3, i)}, paths[f"i{i}"])
    import pyspark

    monkeypatch.setattr(pyspark.SparkFiles, "get", classmethod(lambda cls, name: paths[name]))
    monkeypatch.setattr(mapped, "_LOADED", type(mapped._LOADED)())
    first = MappedIndex("i0", 0).value
    assert MappedIndex("i0", 0).value is first  # mapped once per process
    for i in range(1, KEEP_LOADED + 2):
        assert int(MappedIndex(f"i{i}", 0).value["i"][0]) == i
    assert list(mapped._LOADED) == [f"i{i}" for i in range(2, KEEP_LOADED + 2)]


def test_tasks_read_the_shipped_index_from_a_mapping(spark):
    """What the broadcast strategy's tasks see: the file, mapped (read-only, in /proc/self/maps)."""
    import pyarrow as pa

    handle = mapped.ship(spark, {"comp": np.arange(100_000, dtype=np.int64)})

    def probe(batches, index=handle):
        comp = index.value["comp"]
        with open("/proc/self/maps") as maps:
            mapped_here = any(index.name in line for line in maps)
        for _ in batches:
            yield pa.RecordBatch.from_arrays(
                [pa.array([int(comp.sum())]), pa.array([comp.flags.writeable]), pa.array([mapped_here])],
                names=["total", "writeable", "mapped"])

    rows = spark.range(0, 4, 1, 2).mapInArrow(probe, "total long, writeable boolean, mapped boolean").collect()
    assert len(rows) == 2
    assert {(r.total, r.writeable, r.mapped) for r in rows} == {(sum(range(100_000)), False, True)}
