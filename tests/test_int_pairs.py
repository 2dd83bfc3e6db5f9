"""The compiled edge-list parser (faq.io.int_pairs) against the checked Arrow path it stands in for: on random
texts -- plain ones it must take, and ones with a stray byte it must either read exactly as Arrow's path does or
leave to that path -- and on a real SNAP file, through read_edge_arrays, with the count SNAP publishes."""

from __future__ import annotations

import gzip
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faq.errors import MalformedInputError
from faq.io import int_pairs as parser
from faq.io.local_edges import read_edge_arrays

ids = st.integers(-2**63, 2**63 - 1) | st.integers(-50, 10**6)


@st.composite
def plain_texts(draw):
    """An edge list of the plain shape: ``fields`` integer fields a line, one separator, LF or CRLF, empty
    lines here and there, the last line with or without its break."""
    fields = draw(st.integers(2, 4))
    separator = draw(st.sampled_from([" ", "\t", ","]))
    lines = draw(st.lists(st.lists(ids, min_size=fields, max_size=fields), min_size=1, max_size=40))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    out = []
    for row in lines:
        out.append(separator.join(draw(st.sampled_from(["", "0", "00"])) + str(v) if 0 <= v < 10**17 else str(v)
                                  for v in row) + ending)  # zeros in front, up to the 19 digits ids may have
        if draw(st.integers(0, 9)) == 0:
            out.append(ending)  # an empty line
    text = "".join(out)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no break after the last line
    return text, separator, fields, lines


def _both_ways(text: str) -> tuple[object, object]:
    """What read_edge_arrays makes of ``text`` -- arrays as lists, None, or the error's message -- with the
    compiled parser tried at any size, then without it."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, newline="") as f:
        f.write(text)
    outcomes = []
    try:
        for compiled in (True, False):
            with pytest.MonkeyPatch.context() as m:
                if compiled:
                    m.setattr(parser, "MIN_BYTES", 0)
                else:
                    m.setattr(parser, "int_pairs", lambda *a, **k: None)
                try:
                    got = read_edge_arrays(f.name)
                    outcomes.append(None if got is None else [a.tolist() for a in got])
                except MalformedInputError as error:
                    outcomes.append(str(error))
    finally:
        os.unlink(f.name)
    return outcomes[0], outcomes[1]


@settings(max_examples=150, deadline=None)
@given(plain_texts())
def test_a_plain_text_is_taken_and_read_as_arrows_path_reads_it(case):
    text, separator, fields, lines = case
    got = parser.int_pairs(np.frombuffer(text.encode(), dtype=np.uint8), separator, fields, force=True)
    assert got is not None
    assert got[0].tolist() == [row[0] for row in lines] and got[1].tolist() == [row[1] for row in lines]
    compiled, checked = _both_ways(text)
    assert compiled == checked


@settings(max_examples=200, deadline=None)
@given(plain_texts(), st.data())
def test_a_stray_byte_changes_nothing_the_checked_path_would_say(case, data):
    text, separator, fields, _ = case
    at = data.draw(st.integers(0, len(text)))
    stray = data.draw(st.sampled_from(["x", "+", "#", " ", "\t", "-", "\r", ".", "1" * 20, separator * 2, "é"]))
    text = text[:at] + stray + text[at:]
    compiled, checked = _both_ways(text)
    assert compiled == checked


def test_ids_at_the_ends_of_int64_and_past_them():
    edge = f"{2**63 - 1} {-2**63}\n".encode()
    src, dst = parser.int_pairs(np.frombuffer(edge, dtype=np.uint8), " ", 2, force=True)
    assert (src.tolist(), dst.tolist()) == ([2**63 - 1], [-2**63])
    for text in (f"{2**63} 1\n", f"1 {-2**63 - 1}\n", "1 2\n3\n", "1 2\n3 4 5\n", "1  2\n", "1 2\r"):
        assert parser.int_pairs(np.frombuffer(text.encode(), dtype=np.uint8), " ", 2, force=True) is None, text


def test_small_texts_are_left_to_arrow_unless_numba_is_loaded_and_large_ones_split_on_line_breaks(monkeypatch):
    text = np.frombuffer(b"1 2\n", dtype=np.uint8)
    monkeypatch.setattr(parser.sys, "modules", {k: v for k, v in parser.sys.modules.items() if k != "numba"})
    assert parser.int_pairs(text, " ", 2) is None
    many = np.frombuffer(b"".join(b"%d %d\n" % (i, i + 1) for i in range(300_000)), dtype=np.uint8)
    ranges = parser._line_ranges(many, 2)
    assert len(ranges) == 2 and ranges[0][1] == ranges[1][0] and many[ranges[0][1] - 1] == ord("\n")
    src, dst = parser.int_pairs(many, " ", 2, force=True)
    assert src.tolist() == list(range(300_000)) and (dst - src == 1).all()


def test_a_real_graph_through_read_edge_arrays_counts_what_snap_publishes(monkeypatch, tmp_path):
    with gzip.open("tests/data/Email-Enron.txt.gz", "rb") as f:
        plain = tmp_path / "enron.txt"
        plain.write_bytes(f.read())  # uncompressed, with SNAP's comment lines
    monkeypatch.setattr(parser, "MIN_BYTES", 0)  # the compiled parser even for this 4 MB file
    import faq

    src, dst = read_edge_arrays(str(plain))
    assert len(src) == 367_662  # SNAP: 183,831 undirected edges, each listed both ways
    assert faq.count_triangles(str(plain)).count == 727_044  # SNAP's published count
    with monkeypatch.context() as m:
        m.setattr(parser, "int_pairs", lambda *a, **k: None)
        reference = read_edge_arrays(str(plain))
    assert np.array_equal(src, reference[0]) and np.array_equal(dst, reference[1])
    with pytest.raises(AssertionError):  # the check above can fail: a parser off by one line is seen
        assert np.array_equal(src[1:], reference[0][:-1])
