"""The ``faq paths`` and ``faq components`` commands, through ``faq.cli.main`` in-process."""

import csv
import json
import math

import pytest

from tests.helpers import error_lines
from tests.helpers import run as run_command


def run(capsys, spark, *argv):
    """Run the command -> (exit code, stdout, stderr); ``spark``: the test session the command uses."""
    return run_command(capsys, *argv)


def json_lines(out):
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def read_out(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], {int(r[0]): r[1] for r in rows[1:]}


@pytest.fixture
def weighted(tmp_path):
    """src,dst,weight,time like soc-sign-bitcoinotc; 0 -> 1 -> 2 -> 3 shorter than 0 -> 3; 9 -> 8 unreachable."""
    path = tmp_path / "w.csv"
    path.write_text("0,1,2,100\n1,2,2,101\n2,3,2,102\n0,3,9,103\n9,8,1,104\n")
    return path


@pytest.fixture
def updates(tmp_path):
    folder = tmp_path / "updates"
    folder.mkdir()
    (folder / "002.txt").write_text("# second batch: reach 8 via 9\n+ 3 9 1\n")
    (folder / "001.txt").write_text("+ 0 2 1\n\n+ 0 2 3\n")  # parallel insertions: the shorter counts
    return folder


def test_paths_default_weight_column_json_and_updates(capsys, spark, weighted, updates, tmp_path):
    out_csv = tmp_path / "dist.csv"
    code, out, err = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", updates, "--out", out_csv, "--json")
    assert code == 0, err
    initial, first, second, written = json_lines(out)
    assert initial["batch"] is None and initial["semiring"] == "min_plus" and initial["weight_column"] == 3
    assert initial["rows"] == 4 and initial["iterations"] >= 1
    assert first["batch"] == "001.txt" and first["changed"] == 2  # nodes 2 and 3 get shorter
    assert second["batch"] == "002.txt" and second["changed"] == 2  # 9 and 8 become reachable
    assert all(isinstance(b["seconds"], float) for b in (first, second))
    assert written == {"out": str(out_csv), "rows": 6}
    header, values = read_out(out_csv)
    assert header == ["node", "value"]
    assert {k: float(v) for k, v in values.items()} == {0: 0.0, 1: 2.0, 2: 1.0, 3: 3.0, 9: 4.0, 8: 5.0}
    assert any(line.startswith("[faq] iteration 1:") for line in err.splitlines())  # progress per iteration


def test_paths_unweighted_file_counts_hops(capsys, spark, tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("# hops\n1 2\n2 3\n1 3\n3 4\n")
    code, out, err = run(capsys, spark, "paths", graph, "--source", 1, "--quiet")
    assert code == 0, err
    assert "4 node(s) reached from 1 (min_plus)" in out
    table = [line.split() for line in out.splitlines()[2:6]]
    assert table == [["1", "0.0"], ["2", "1.0"], ["3", "1.0"], ["4", "2.0"]]


def test_paths_boolean_and_widest_out(capsys, spark, weighted, tmp_path):
    reach = tmp_path / "reach.csv"
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 1, "--semiring", "boolean", "--out", reach, "-q")
    assert code == 0, err
    assert read_out(reach) == (["node", "value"], {1: "true", 2: "true", 3: "true"})
    wide = tmp_path / "wide.csv"
    code, out, err = run(capsys, spark, "paths", weighted, "--source", 0, "--semiring", "max_min", "--out", wide, "-q")
    assert code == 0, err
    _, values = read_out(wide)
    assert {k: float(v) for k, v in values.items()} == {0: math.inf, 1: 2.0, 2: 2.0, 3: 9.0}
    assert f"wrote 4 rows to {wide}" in out


def test_components_with_updates(capsys, spark, tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n3 4\n4 5\n7 7\n")  # 7: a self-loop only -> its own component
    folder = tmp_path / "up"
    folder.mkdir()
    (folder / "a.txt").write_text("+ 2 5\n+ 10 11\n")
    code, out, err = run(capsys, spark, "components", graph, "--updates", folder, "-q")
    assert code == 0, err
    lines = out.splitlines()
    assert "6 node(s) in 3 connected component(s)" in lines[0]
    assert lines[1].startswith("batch a.txt: 5 value(s) changed")  # 3, 4, 5 relabelled; 10, 11 new
    table = {int(r.split()[0]): int(r.split()[1]) for r in lines[3:11]}
    assert table == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 7: 7, 10: 10, 11: 10}


def test_components_with_deletions(capsys, spark, tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n2 3\n3 4\n")
    folder = tmp_path / "up"
    folder.mkdir()
    (folder / "a.txt").write_text("- 3 2\n+ 4 5\n")  # either direction deletes the undirected edge
    code, out, err = run(capsys, spark, "components", graph, "--updates", folder, "--json")
    assert code == 0, err
    initial, batch = json_lines(out)[:2]
    assert batch["deleted"] == 1 and not batch["recomputed"] and batch["changed"] == 3  # 3, 4 relabelled; 5 new
    code, out, err = run(capsys, spark, "components", graph, "--updates", folder, "-q")
    table = {int(r.split()[0]): int(r.split()[1]) for r in out.splitlines()[3:8]}
    assert table == {1: 1, 2: 1, 3: 3, 4: 3, 5: 3}


def test_malformed_batch_is_one_line_with_file_and_line(capsys, spark, weighted, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "001.txt").write_text("+ 0 5 1\n+ 0 x 1\n")
    code, out, err = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", folder, "-q")
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert "[MALFORMED_INPUT]" in line and f"{folder / '001.txt'}, line 2" in line


def test_deletions_and_worse_weights_are_applied_incrementally(capsys, spark, weighted, tmp_path):
    """'- src dst' lines and worse weights need no --recompute: trimmed and re-derived on the driver."""
    folder = tmp_path / "del"
    folder.mkdir()
    (folder / "001.txt").write_text("+ 0 5 1\n- 0 1\n")  # 1, 2 hang from 0 -> 1; 3 falls back to 0 -> 3
    (folder / "002.txt").write_text("+ 0 3 12\n")  # worse than 9: 3 is trimmed, unreachable but by it
    out_csv = tmp_path / "dist.csv"
    code, out, err = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", folder, "--out", out_csv,
                         "--json")
    assert code == 0, err
    initial, first, second, written = json_lines(out)
    assert initial["deletions"].startswith("trimming")
    assert first["deleted"] == 1 and first["trimmed"] == 3 and not first["recomputed"]
    assert first["changed"] == 4  # 1, 2 lost; 3: 6 -> 9; 5 new
    assert second["deleted"] == 0 and second["trimmed"] == 1 and second["changed"] == 1
    _, values = read_out(out_csv)
    assert {k: float(v) for k, v in values.items()} == {0: 0.0, 3: 12.0, 5: 1.0}
    code, out, _ = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", folder, "-q")
    assert code == 0 and "1 deletion(s), 3 node(s) trimmed" in out


def test_missing_weight_is_refused(capsys, spark, weighted, tmp_path):
    folder = tmp_path / "noweight"
    folder.mkdir()
    (folder / "001.txt").write_text("+ 0 5\n")  # the graph has weights: a weight is required
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", folder, "-q")
    assert code == 2 and "missing weight" in error_lines(err)[0]


def test_unknown_source_and_bad_options(capsys, spark, weighted, tmp_path):
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 42, "-q")
    assert code == 2 and "[UNKNOWN_NODE]" in error_lines(err)[0]
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 0, "--out", tmp_path / "x.txt", "-q")
    assert code == 2 and "--out" in error_lines(err)[0]
    code, _, err = run(capsys, spark, "paths", tmp_path / "missing.txt", "--source", 0, "-q")
    assert code == 2 and "[INPUT_NOT_FOUND]" in error_lines(err)[0]
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 0, "--weight-column", 2, "-q")
    assert code == 2 and "--weight-column" in error_lines(err)[0]


# --- --state: durable, resumable runs ---------------------------------------------------


def _paths_oracle(rows, source):
    """Shortest paths by networkx over (src, dst, weight) rows (parallel edges: the shortest)."""
    import networkx as nx

    graph = nx.DiGraph()
    for u, v, w in rows:
        if u != v:
            graph.add_edge(u, v, weight=min(w, graph[u][v]["weight"]) if graph.has_edge(u, v) else w)
    return {n: float(d) for n, d in nx.single_source_dijkstra_path_length(graph, source).items()}


def test_paths_state_resumes_after_an_interruption(capsys, spark, weighted, tmp_path):
    """A run stops at a bad batch file (after two good ones); the rerun skips those, never applies one twice."""
    folder = tmp_path / "batches"
    folder.mkdir()
    (folder / "001.txt").write_text("+ 0 2 1\n")
    (folder / "002.txt").write_text("+ 3 9 1\n")
    (folder / "003.txt").write_text("+ 9 10 1\n+ 3 0 -20\n")  # 0 -> 2 -> 3 -> 0: a negative cycle
    state = tmp_path / "state"
    out_csv = tmp_path / "dist.csv"
    argv = ["paths", weighted, "--source", 0, "--updates", folder, "--state", state, "--out", out_csv, "--json"]
    code, out, err = run(capsys, spark, *argv)
    assert code == 2 and "[NEGATIVE_CYCLE]" in error_lines(err)[0]
    first, one, two = json_lines(out)  # the run got through two batches before the error
    assert first["batch"] is None and first["resumed"] is False and first["skipped"] == 0 and first["version"] == 0
    assert first["placement"] == "driver"
    assert (one["batch"], one["version"], two["batch"], two["version"]) == ("001.txt", 1, "002.txt", 2)
    assert not out_csv.exists()

    (folder / "003.txt").write_text("+ 9 10 1\n+ 0 1 1.5\n")  # fixed: now an improvement
    code, out, err = run(capsys, spark, *argv)
    assert code == 0, err
    first, three, written = json_lines(out)
    assert first["resumed"] is True and first["skipped"] == 2 and first["version"] == 2 and first["rows"] == 6
    assert three["batch"] == "003.txt" and three["version"] == 3 and three["changed"] == 2  # node 1 and the new 10
    assert not any(line.startswith("[faq] reading") for line in err.splitlines())  # the graph was not read again
    rows = [(0, 1, 2.0), (1, 2, 2.0), (2, 3, 2.0), (0, 3, 9.0), (9, 8, 1.0), (0, 2, 1.0), (3, 9, 1.0), (9, 10, 1.0),
            (0, 1, 1.5)]
    expected = _paths_oracle(rows, 0)
    _, values = read_out(out_csv)
    assert {k: float(v) for k, v in values.items()} == expected and written["rows"] == len(expected)

    # everything applied: a third run skips all three and changes nothing
    code, out, err = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", folder, "--state", state, "-q")
    assert code == 0, err
    assert out.splitlines()[0].endswith("3 batch file(s) applied already, 0 to go")
    assert "resumed at version 3, 7 node(s) reached from 0 (min_plus)" in out.splitlines()[0]

    # the state holds paths from 0: another source (or a renamed batch file) is refused, not guessed
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 1, "--updates", folder, "--state", state, "-q")
    assert code == 2 and "[STATE_JOB_MISMATCH]" in error_lines(err)[0] and "source was 0, now 1" in err
    (folder / "001.txt").rename(folder / "000.txt")
    code, _, err = run(capsys, spark, "paths", weighted, "--source", 0, "--updates", folder, "--state", state, "-q")
    assert code == 2 and "[STATE_DIRECTORY]" in error_lines(err)[0]


def test_components_state_resumes_with_fewer_files_first(capsys, spark, tmp_path):
    """First run over a copy holding only the first batch file (as if interrupted), then the full directory."""
    import networkx as nx

    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n3 4\n4 5\n7 7\n")
    full, partial = tmp_path / "full", tmp_path / "partial"
    full.mkdir()
    partial.mkdir()
    batches = {"a.txt": "+ 2 5\n+ 10 11\n", "b.txt": "+ 11 7\n", "c.txt": "+ 12 12\n+ 5 13\n"}
    for name, text in batches.items():
        (full / name).write_text(text)
    (partial / "a.txt").write_text(batches["a.txt"])
    state = tmp_path / "state"
    code, out, err = run(capsys, spark, "components", graph, "--updates", partial, "--state", state, "--json", "-q")
    assert code == 0, err
    first, a = json_lines(out)
    assert first["components"] == 3 and first["resumed"] is False and a["batch"] == "a.txt" and a["version"] == 1
    out_csv = tmp_path / "labels.csv"
    code, out, err = run(capsys, spark, "components", graph, "--updates", full, "--state", state, "--out", out_csv,
                         "--json", "-q")
    assert code == 0, err
    first, b, c, written = json_lines(out)
    assert first["resumed"] is True and first["skipped"] == 1 and first["nodes"] == 8 and first["components"] == 3
    assert [b["batch"], b["version"], c["batch"], c["version"]] == ["b.txt", 2, "c.txt", 3]
    expected = nx.Graph()
    expected.add_nodes_from([7, 12])
    expected.add_edges_from([(1, 2), (3, 4), (4, 5), (2, 5), (10, 11), (11, 7), (5, 13)])
    labels = {n: min(c) for c in nx.connected_components(expected) for n in c}
    _, values = read_out(out_csv)
    assert {k: int(v) for k, v in values.items()} == labels and written["rows"] == len(labels)
