"""The documentation: the Sphinx site in docs/ builds without a warning, and the code it shows runs.

* The site (``make docs``) is built here with warnings as errors (``sphinx-build -W --keep-going``),
  so a docstring in ``faq/`` that numpydoc or docutils cannot read, a broken link between pages or
  a page left out of the table of contents fails the suite, each warning named in the failure.
* The API reference documents every name of ``faq.__all__``.
* Every ```` ```python ```` block of every page (docs/*.md and the README) runs: each page in a
  fresh Python process, its blocks in order in one namespace, as a reader would paste them, from a
  scratch directory where ``tests/data`` is the repository's (so the pages read the bundled data by
  that relative path and write their state directories into the scratch directory); and every
  ```` ```text ```` block that follows a ```` ```python ```` block is what that block prints: the docs
  cannot drift from the code.  A block that cannot run standalone (it needs a cluster, a server or
  a file only the reader has) is marked by an HTML comment right before it,
  ``<!-- no-run: the reason -->``; the test lists them and holds their number under a ceiling
  (:data:`NO_RUN_CEILING`) that only goes down.
* The README starts with the two commands and its relative links point at files that exist.

To run a page's code by hand and see what each block prints (or, with ``--no-run``, list the
blocks every page marks as not run)::

    .venv/bin/python tests/test_docs.py docs/tour.md
    .venv/bin/python tests/test_docs.py --no-run
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]  # pages whose Python blocks run and whose output blocks are checked
NO_RUN_CEILING = 1  # blocks marked <!-- no-run: ... --> on all pages together: a ceiling that only goes down
BUILD_SECONDS = 60  # the build must stay well under a minute (about 6 s on a 2-core machine)
RUN_TIMEOUT = 600
PAGES_AT_ONCE = int(os.environ.get("FAQ_DOCS_PAGES_AT_ONCE", "2"))  # pages run side by side (each its own process)

FENCE = re.compile(r"^(`{3,})\s*([^\s`]*)")
NO_RUN = re.compile(r"<!--\s*no-run:\s*((?:(?!-->).)*?)\s*-->\s*$", re.S)  # the comment marking the block after it


@dataclass(frozen=True)
class Block:
    """A fenced ``python`` block of a Markdown page and the ``text`` block right after it, if any."""

    line: int  # 1-based line of the opening fence
    code: str
    expected: Optional[str]  # what it prints, from the following text block; None when there is none
    no_run: Optional[str] = None  # why it is not run, from a <!-- no-run: ... --> comment right before it


def code_blocks(markdown: str) -> list[Block]:
    """The page's python blocks, each with the text block that follows it (only blank lines between).

    >>> page = "Text\\n\\n```python\\nprint(1 + 1)\\n```\\n\\n```text\\n2\\n```\\n```sh\\nls\\n```\\n"
    >>> code_blocks(page)
    [Block(line=3, code='print(1 + 1)\\n', expected='2\\n', no_run=None)]
    >>> code_blocks("<!-- no-run: needs a cluster -->\\n```python\\nspark.stop()\\n```\\n")[0].no_run
    'needs a cluster'
    """
    lines = markdown.splitlines(keepends=True)
    fenced: list[tuple[int, int, str, str]] = []  # (opening line index, closing line index, tag, body)
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        ticks, tag = match.groups()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == ticks), len(lines))
        fenced.append((i, end, tag, "".join(lines[i + 1:end])))
        i = end + 1
    blocks = []
    for k, (start, end, tag, body) in enumerate(fenced):
        if tag != "python":
            continue
        following = fenced[k + 1] if k + 1 < len(fenced) else None
        adjacent = following is not None and following[2] == "text" and all(
            not line.strip() for line in lines[end + 1:following[0]])
        before = "".join(lines[fenced[k - 1][1] + 1 if k else 0:start])  # the text since the previous block
        marked = NO_RUN.search(before)
        no_run = " ".join(marked.group(1).split()) if marked else None
        blocks.append(Block(start + 1, body, following[3] if adjacent else None, no_run))
    return blocks


def runnable(page: Path) -> list[Block]:
    """The page's python blocks that run (those not marked no-run)."""
    return [block for block in code_blocks(page.read_text(encoding="utf-8")) if block.no_run is None]


def no_run_blocks() -> list[str]:
    """Every block marked no-run, as ``page, line N: reason``."""
    return [f"{page.relative_to(ROOT)}, line {block.line}: {block.no_run}"
            for page in PAGES for block in code_blocks(page.read_text(encoding="utf-8")) if block.no_run is not None]


def run_page(page: Path, out: Path) -> None:
    """Run the page's python blocks in order in one namespace; write each block's output (or error) as JSON.

    Runs in the child process :func:`run_in_child` starts, from its working directory.
    """
    namespace: dict = {"__name__": "__main__"}
    results = []
    for block in runnable(page):
        printed = io.StringIO()
        started = time.perf_counter()
        error = None
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(block.code, f"{page.name}, block at line {block.line}", "exec"), namespace)
        except BaseException:  # noqa: BLE001 -- reported to the test, which fails on it
            error = traceback.format_exc()
        results.append({"line": block.line, "printed": printed.getvalue(), "error": error,
                        "seconds": round(time.perf_counter() - started, 2)})
        if error:
            break
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")


def run_in_child(page: Path, workdir: Path) -> list[dict]:
    """:func:`run_page` in a fresh Python process (this interpreter, this checkout first), from ``workdir``.

    ``workdir/tests/data`` is made a link to the repository's, the bundled data the pages read.
    """
    out = workdir / "blocks.json"
    (workdir / "tests").mkdir(exist_ok=True)
    if not (workdir / "tests" / "data").exists():
        (workdir / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(page), str(out)], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0 and out.exists(), f"running {page.name} failed:\n{done.stdout}\n{done.stderr[-5000:]}"
    return json.loads(out.read_text(encoding="utf-8"))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


# -- the site ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path, float]:
    """The HTML site built from docs/ with warnings as errors: (the run, its output directory, seconds)."""
    pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[test]') is not installed")
    out = tmp_path_factory.mktemp("docs") / "html"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(out.parent / "doctrees"),
         str(DOCS), str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    return done, out, time.perf_counter() - started


def test_the_docs_build_without_a_warning(site):
    done, out, seconds = site
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert done.returncode == 0, ("sphinx-build -W failed; its warnings:\n" + "\n".join(warnings or [done.stderr[-5000:]]))
    assert (out / "index.html").exists() and (out / "tour.html").exists()
    assert seconds < BUILD_SECONDS, f"the docs took {seconds:.0f} s to build"


def test_the_api_reference_documents_every_public_name(site):
    import faq

    done, out, _ = site
    assert done.returncode == 0, "the site did not build (see test_the_docs_build_without_a_warning)"
    page = (out / "api.html").read_text(encoding="utf-8")
    missing = [name for name in faq.__all__ if f'id="faq.{name}"' not in page]
    assert not missing, f"names of faq.__all__ missing from docs/api.rst: {missing}"


def test_the_notebooks_are_pages_of_the_site(site):
    done, out, _ = site
    assert done.returncode == 0, "the site did not build (see test_the_docs_build_without_a_warning)"
    notebooks = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks and [n for n in notebooks if not (out / "notebooks" / f"{n}.html").exists()] == []


# -- the code the pages show --------------------------------------------------------------------


class PageRuns:
    """The selected pages' runs (:func:`run_in_child`), ``at_once`` child processes at a time.

    Asked for a page's results, it starts that page's run and the next ones' up to ``at_once`` in
    flight, in the order the tests ask: each page's process spends much of its time starting Spark,
    and two at a time overlap that on two cores.
    """

    def __init__(self, pages: list[Path], at_once: int, workdirs: pytest.TempPathFactory) -> None:
        self.pages, self.at_once, self.workdirs = pages, max(1, at_once), workdirs
        self.pool = ThreadPoolExecutor(max_workers=self.at_once)
        self.futures: dict = {}

    def results(self, page: Path) -> list[dict]:
        ahead = self.pages[self.pages.index(page):][:self.at_once] if page in self.pages else [page]
        for each in ahead:
            if each not in self.futures:
                self.futures[each] = self.pool.submit(run_in_child, each, self.workdirs.mktemp(each.stem))
        return self.futures[page].result()


@pytest.fixture(scope="module")
def page_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """:class:`PageRuns` of the pages this session selected, :data:`PAGES_AT_ONCE` at a time.

    Under pytest-xdist's ``--dist load`` (tests, not files, dealt to workers) one at a time, so that
    no worker runs a page another one was given.
    """
    selected = [item.callspec.params["page"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_every_page_prints_what_it_shows"]
    per_test = request.config.getoption("dist", "no") not in ("no", "loadfile", "loadscope")
    runs = PageRuns(selected, 1 if per_test else PAGES_AT_ONCE, tmp_path_factory)
    yield runs
    runs.pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("page", [page for page in PAGES if runnable(page)], ids=lambda page: page.name)
def test_every_page_prints_what_it_shows(page, page_runs):
    blocks = runnable(page)
    results = page_runs.results(page)
    failures = []
    for block, result in zip(blocks, results):
        where = f"{page.relative_to(ROOT)}, block at line {block.line}"
        if result["error"]:
            failures.append(f"{where} raised:\n{result['error']}")
        elif block.expected is not None and _lines(result["printed"]) != _lines(block.expected):
            failures.append(f"{where} printed:\n{result['printed']}\ninstead of:\n{block.expected}")
    assert not failures, "\n\n".join(failures)
    assert len(results) == len(blocks)


def test_the_tour_and_the_readme_show_python_that_runs():
    assert runnable(DOCS / "tour.md") and runnable(README)


def test_few_blocks_are_marked_not_to_run():
    """Blocks marked ``<!-- no-run: reason -->`` are listed here; their number only goes down."""
    marked = no_run_blocks()
    listing = "\n".join(marked)
    assert len(marked) <= NO_RUN_CEILING, (
        f"{len(marked)} python blocks are marked no-run, more than the ceiling {NO_RUN_CEILING}:\n{listing}\n"
        "make the new one run (bundled data in tests/data, a scratch directory) rather than raise the ceiling")
    reasons = [line.split(": ", 1)[1] for line in marked]
    assert all(reasons), f"a no-run mark without a reason:\n{listing}"
    if len(marked) < NO_RUN_CEILING:
        pytest.fail(f"only {len(marked)} blocks are marked no-run now: lower NO_RUN_CEILING to it\n{listing}")


def test_the_readme_starts_with_the_two_commands():
    first = code_blocks_any(README.read_text(encoding="utf-8"))[0]
    assert [line.split()[:2] for line in first.splitlines() if line.strip()] == [["make", "demo"], ["make", "test"]]


def test_relative_links_of_the_readme_and_the_pages_point_at_files():
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # links in code are not links
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#", 1)[0]
            if path and ":" not in path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken


def code_blocks_any(markdown: str) -> list[str]:
    """The bodies of every fenced block, whatever its language, in order."""
    return [body for _, body in re.findall(r"^(`{3,})[^\n]*\n(.*?)^\1\s*$", markdown, flags=re.S | re.M)]


if __name__ == "__main__":
    # python tests/test_docs.py PAGE.md [OUT.json]: run the page's python blocks (OUT.json: as the test does)
    # python tests/test_docs.py --no-run: list the blocks marked not to run
    if sys.argv[1] == "--no-run":
        print("\n".join(no_run_blocks()) or "no block is marked no-run")
        sys.exit(0)
    page = Path(sys.argv[1]).resolve()
    if len(sys.argv) > 2:
        run_page(page, Path(sys.argv[2]))
    else:
        namespace: dict = {"__name__": "__main__"}
        for block in code_blocks(page.read_text(encoding="utf-8")):
            skipped = f": not run ({block.no_run})" if block.no_run else ""
            print(f"--- block at line {block.line}{skipped}", flush=True)
            if block.no_run is None:
                exec(compile(block.code, f"{page.name}, block at line {block.line}", "exec"), namespace)
