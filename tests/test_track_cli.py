"""The ``faq track`` command: per batch, the change in count and the running count."""

import json

import pytest

from tests.helpers import bindings, run

pytestmark = pytest.mark.usefixtures("spark")  # even a bad batch line is found after Spark starts


def write_case(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("# a small graph\n1 2\n2 3\n3 4\n")
    updates = tmp_path / "updates"
    updates.mkdir()
    (updates / "001.txt").write_text("# close 1-2-3 and 2-3-4\n+ 1 3\n+ 2 4\n")
    (updates / "002.txt").write_text("- 2 3\n+ 5 6\n- 5 6\n")  # the last line about 5->6 wins
    return graph, updates


def test_track_json_lines(capsys, tmp_path):
    graph, updates = write_case(tmp_path)
    code, out, err = run(capsys, "track", "(a)->(b); (a)->(c); (b)->(c)", graph, updates, "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["batch"] is None and lines[0]["count"] == 0
    assert [(x["batch"], x["delta"], x["count"]) for x in lines[1:]] == [("001.txt", 2, 2), ("002.txt", -2, 0)]
    assert all({"seconds", "version", "appeared", "disappeared"} <= set(x) for x in lines[1:])
    assert lines[1]["bindings"] == [{"a": 1, "b": 2, "c": 3, "version": 1, "diff": 1},
                                    {"a": 2, "b": 3, "c": 4, "version": 1, "diff": 1}]
    assert "[faq] batch 1/2 001.txt" in err  # progress per batch


def test_track_count_only_human_output(capsys, tmp_path):
    graph, updates = write_case(tmp_path)
    code, out, err = run(capsys, "track", "(a)->(b); (b)->(c); !(a)->(c)", graph, updates, "--count-only",
                         "--quiet")
    assert code == 0, err
    lines = out.splitlines()
    pattern = "(a)->(b); (b)->(c); !(a)->(c)"
    graphs = [{(1, 2), (2, 3), (3, 4)}, {(1, 2), (2, 3), (3, 4), (1, 3), (2, 4)}, {(1, 2), (3, 4), (1, 3), (2, 4)}]
    counts = [bindings(g, pattern) for g in graphs]  # the brute-force oracle
    assert lines[0].startswith(f"{graph}: {len(counts[0])} bindings of {pattern}")
    for k in (1, 2):
        up, down = len(counts[k] - counts[k - 1]), len(counts[k - 1] - counts[k])
        delta = up - down
        assert lines[k].startswith(f"batch 00{k}.txt: {'+' if delta >= 0 else ''}{delta} (+{up} -{down}), "
                                   f"count {len(counts[k])}, "), lines[k]
    assert len(lines) == 3


def test_track_reports_a_bad_batch_line_before_spark_work(capsys, tmp_path):
    graph, updates = write_case(tmp_path)
    (updates / "003.txt").write_text("+ 1\n")
    code, out, err = run(capsys, "track", "(a)->(b)", graph, updates)
    assert code == 2
    assert "003.txt" in err and "line 1" in err
    assert out == ""


def test_track_resumes_from_its_state_and_never_applies_a_batch_twice(capsys, tmp_path):
    """An interrupted run (here: a first run that saw only the first batch file) resumes from --state."""
    import shutil

    graph, updates = write_case(tmp_path)
    first_only = tmp_path / "first"
    first_only.mkdir()
    shutil.copy(updates / "001.txt", first_only / "001.txt")
    state = tmp_path / "state"
    pattern = "(a)->(b); (a)->(c); (b)->(c)"
    code, out, err = run(capsys, "track", pattern, graph, first_only, "--state", state, "--json", "--count-only")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["batch"], x["count"]) for x in lines] == [(None, 0), ("001.txt", 2)]
    assert lines[0]["resumed"] is False

    code, out, err = run(capsys, "track", pattern, graph, updates, "--state", state, "--json", "--count-only")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["resumed"] is True and lines[0]["skipped"] == 1 and lines[0]["count"] == 2
    assert [(x["batch"], x["version"], x["delta"], x["count"]) for x in lines[1:]] == [("002.txt", 2, -2, 0)]
    final = {(1, 2), (3, 4), (1, 3), (2, 4)}
    assert lines[-1]["count"] == len(bindings(final, pattern))

    # Everything applied: a third run skips both files and changes nothing.
    code, out, err = run(capsys, "track", pattern, graph, updates, "--state", state, "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 1 and lines[0]["skipped"] == 2 and lines[0]["version"] == 2

    # Another pattern, or a directory whose first files are not the ones applied, is refused (exit 2).
    code, out, err = run(capsys, "track", "(a)->(b)", graph, updates, "--state", state)
    assert code == 2 and "STATE_JOB_MISMATCH" in err and "its pattern was" in err
    other = tmp_path / "other"
    other.mkdir()
    (other / "000.txt").write_text("+ 7 8\n")
    code, out, err = run(capsys, "track", pattern, graph, other, "--state", state)
    assert code == 2 and "not the first" in err
