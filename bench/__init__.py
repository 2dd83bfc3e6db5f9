"""Benchmarks: each module runs as ``python -m bench.NAME`` from the repository root and writes
``bench/results/NAME.json`` with the command that produced it (see :mod:`bench.common`)."""
