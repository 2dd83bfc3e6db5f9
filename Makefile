# faq: two entry points, both usable on a fresh clone (see README.md).
#
#   make demo   set up .venv, then count triangles on two SNAP graphs and multiply a
#               SuiteSparse matrix chain (bundled in tests/data), printing the results
#   make test   set up .venv, then run the whole test suite
#
# Both check for Java 17+ first (Spark needs it) and create .venv with $(PYTHON) -m venv;
# the package is (re)installed only when pyproject.toml changes, and its numba kernels are compiled
# into numba's on-disk cache right after (python -m faq.warm, which a pip install's user runs once),
# not inside the first job.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Stamp of the kernel warm-up, kept in the directory numba caches the kernels in (faq/joins/__pycache__,
# the clone being installed editable): removing that directory removes the stamp too, and the next
# make compiles again.  Also redone when the loop or what chooses its argument types changes (numba
# keys its cache by compiled_loop.py's content, so an edit would otherwise compile in the first job).
WARM := faq/joins/__pycache__/.faq-warm
WARM_SOURCES := faq/joins/compiled_loop.py faq/joins/compiled.py faq/joins/warm.py \
	faq/incremental/delta_loop.py faq/incremental/rule_kernel.py faq/incremental/rows.py faq/incremental/level_merge.py \
	faq/incremental/warm.py faq/asof/kernel.py \
	faq/asof/side.py faq/asof/search_loop.py faq/asof/search_step.py faq/asof/warm.py faq/graphs/truss.py faq/graphs/truss_index.py \
	faq/graphs/truss_repair.py faq/warm.py faq/calibration.py
DEMO_OUT := build/demo

.PHONY: help demo test java venv bench-deps clean distclean

help:
	@echo "make demo       triangle counts (email-Eu-core, wiki-Vote) and a matrix chain (bcsstk21·bcsstm21·bcsstk21)"
	@echo "make test       the whole test suite"
	@echo "make venv       only create .venv and install faq with its test dependencies"
	@echo "make bench-deps also install the benchmarks' baselines (DuckDB, python-graphblas, igraph, networkit, polars)"
	@echo "make docs       the documentation site (Sphinx, warnings as errors) into build/docs"
	@echo "make clean      remove build/ (demo output)"
	@echo "make distclean  also remove .venv"

demo: java $(WARM) bytecode
	@mkdir -p $(DEMO_OUT)
	@echo "== undirected triangles of SNAP email-Eu-core (SNAP publishes 105461)"
	$(BIN)/faq triangles tests/data/email-Eu-core.txt.gz --undirected
	@echo "== feed-forward (directed) triangles of SNAP wiki-Vote"
	$(BIN)/faq triangles tests/data/wiki-Vote.txt.gz --directed
	@echo "== SuiteSparse bcsstk21 · bcsstm21 · bcsstk21 (real), the planner picks the order"
	$(BIN)/faq matrix-chain tests/data/bcsstk21.mtx tests/data/bcsstm21.mtx tests/data/bcsstk21.mtx --out $(DEMO_OUT)/kmk.mtx

# Two test processes (pytest-xdist), each file's tests in one of them: much of the suite waits on
# JVM starts, child processes and notebook kernels, which the other process overlaps.
# --durations=40: the slowest tests close every run's report (where the suite's time goes).
TEST_WORKERS ?= 2

test: java $(WARM) bytecode
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=40

# The hypothesis property tests with the `thorough` profile: 10x the examples, Spark path included (tests/conftest.py).
.PHONY: thorough
thorough: java $(WARM)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --hypothesis-profile thorough \
	    tests/test_insideout.py tests/test_generic_join.py tests/test_generic_join_semirings.py tests/test_track.py \
	    tests/test_incremental.py tests/test_recursive.py tests/test_motifs.py

java:
	@scripts/check_java.sh

# The Sphinx site of docs/ (pages, the API reference from the docstrings, the notebooks as committed) into
# build/docs; a warning fails it, as in tests/test_docs.py. Sphinx comes with the test extra (and the docs one).
.PHONY: docs
DOCS_OUT := build/docs

docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -q -b html -d build/doctrees docs $(DOCS_OUT)
	@echo "== built $(DOCS_OUT)/index.html"

venv: java $(WARM) bytecode

# faq's modules compiled to bytecode beside their sources (an editable install compiles none, and where
# PYTHONDONTWRITEBYTECODE is set -- as on this project's machines -- no process writes any, so every
# `faq ...` command, test subprocess and Spark Python worker compiled the ~70 modules it imports again:
# 0.2-0.3 s a process). Only changed files are recompiled: ~0.1 s when nothing changed.
.PHONY: bytecode
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q faq > /dev/null

# The baselines some benchmarks time beside faq (pyproject's bench extra); the test suite needs none.
bench-deps: venv
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'

$(STAMP): pyproject.toml | java
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	    echo "faq needs Python 3.11 or newer as '$(PYTHON)' (pyspark 4.3 does); install it or run: make PYTHON=/path/to/python3.11 ..." >&2; \
	    exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	    echo "could not create $(VENV) with '$(PYTHON) -m venv'; on Debian/Ubuntu: apt-get install python3-venv" >&2; \
	    rm -rf $(VENV); exit 1; }
	@echo "== installing faq and its dependencies into $(VENV) (first run downloads PySpark, ~450 MB)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

# numba compiles the broadcast tasks' loop once per argument type signature (four, 3-14 s each on two
# cores); done here, the demo's and the tests' first jobs load it from the cache (~0.5 s a process).
# python -m faq.warm runs each kernel's warm-up module in turn (faq.warm.ENTRY_POINTS: the broadcast
# loop, the delta rules' loop, the as-of searches, the truss loops). A failure to compile is printed
# and setup goes on: the first job then compiles.
$(WARM): $(STAMP) $(WARM_SOURCES)
	@echo "== compiling faq's numba kernels into numba's cache (once, about 1 min)"
	@# the delta loop calls compiled_loop's helpers, and numba's cache follows a function's own file
	@# only: drop the delta loop's entries so they are compiled against the helpers as they are now
	@# (here, before faq.warm: nothing it runs before faq.incremental.warm reads them)
	rm -f faq/incremental/__pycache__/delta_loop.*
	$(BIN)/python -m faq.warm
	@mkdir -p $(@D) && touch $@

clean:
	rm -rf build

distclean: clean
	rm -rf $(VENV)
