"""This machine's speeds, measured once, scaling the cost models' constants (``python -m faq.warm``).

faq chooses among the ways to run a step on Spark data (Spark's own
operators, faq's kernels in Spark's tasks, faq's kernels on the driver) by
estimated seconds (:mod:`faq.learning.costs`, :mod:`faq.asof.costs`).  Their
constants were fitted on one machine (2 cores, ``local[*]``; each constant
says how).  On another machine the *ratios* between the ways can differ --
a Spark job's fixed cost, the fetch through Arrow and numpy's speed do not
scale together -- so the choice may be wrong there.

A calibration measures four rates on this machine, each by a small job
taken a few times (the fastest run kept, as load only slows a run):

``spark_job``
    seconds of a trivial Spark job (a count over 1,000 rows in 2 tasks):
    what every Spark job costs before its first row;
``spark_scan``
    seconds per value Spark sums in one aggregation (a generated range of
    rows, several sums): the rate of Spark's code-generated operators;
``fetch``
    seconds per value collected to the driver through Arrow (``toArrow``);
``in_process``
    seconds per value of numpy's sort, search and add over int64 arrays: the
    rate of faq's in-process kernels.

Each rate divided by the same rate measured on the machine where the
constants were fitted (:data:`REFERENCE`) is a *scale*; a cost model
multiplies each constant by the scale of the rate it stands for.  With no
calibration stored every scale is 1 (the fitted constants as they are).
``python -m faq.warm`` measures and stores one (``make venv`` runs it);
``explain`` says which constants priced a plan (:func:`describe`).

The store is a JSON file (:func:`faq.settings.calibration_path`:
``$FAQ_CALIBRATION``, else the user's cache directory; an empty
``$FAQ_CALIBRATION`` turns calibration off, as the test suite does so that
the choices it checks do not depend on the machine).  A stored calibration
is used only on the machine and Spark version it was measured with.

Examples
--------
>>> c = Calibration({"spark_job": 0.05, "spark_scan": 4e-9, "fetch": 1e-8, "in_process": 4e-9},
...                 machine="m", spark="4.1.0", measured="2026-11-29T12:00:00", load=1.0)
>>> c.scale("spark_job") == 0.05 / REFERENCE["spark_job"], DEFAULT.scale("fetch")    # DEFAULT: no calibration
(True, 1.0)
>>> Calibration.from_dict(c.to_dict()) == c
True
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Optional

import numpy as np

from faq.errors import InvalidArgumentError

__all__ = ["RATES", "REFERENCE", "Calibration", "DEFAULT", "measure", "save", "stored", "current", "describe",
           "machine_name", "main"]

#: The rates a calibration measures (see the module notes).
RATES = ("spark_job", "spark_scan", "fetch", "in_process")

#: The rates measured by :func:`measure` on the machine where the cost models' constants were fitted (this
#: repository's development machine: 2 cores, ``local[*]``, Spark 4.3 classic): two runs of
#: ``python -m faq.calibration --repeat 7 --dry-run`` at load average 4.7-5.6 (other engineers' Spark jobs
#: running, as when most constants were fitted), each rate the mean of the two (they differed by 3-30 %).
REFERENCE: Mapping[str, float] = {
    "spark_job": 0.19,
    "spark_scan": 3.8e-9,
    "fetch": 1.2e-7,
    "in_process": 2.7e-7,
}


@dataclass(frozen=True)
class Calibration:
    """Rates measured on one machine (seconds per job or per value, by :data:`RATES`) and where and when.

    :meth:`scale` is a rate over its :data:`REFERENCE`: what multiplies a cost constant standing for it.
    """

    rates: Mapping[str, float]
    machine: str = ""
    spark: str = ""
    measured: str = ""  # ISO time, local
    load: float = float("nan")  # the 1-minute load average when measured
    notes: tuple[str, ...] = field(default=(), compare=False)

    def scale(self, rate: str) -> float:
        """``rates[rate] / REFERENCE[rate]`` (1 when this calibration lacks it)."""
        value = self.rates.get(rate)
        return 1.0 if not value else value / REFERENCE[rate]

    def scales(self) -> dict[str, float]:
        return {rate: self.scale(rate) for rate in RATES}

    @property
    def calibrated(self) -> bool:
        """False for :data:`DEFAULT` (no measurement: every scale 1)."""
        return bool(self.rates)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["rates"], out["notes"] = dict(self.rates), list(self.notes)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Calibration":
        rates = {k: float(v) for k, v in dict(data.get("rates", {})).items() if k in RATES and float(v) > 0}
        return cls(rates, str(data.get("machine", "")), str(data.get("spark", "")), str(data.get("measured", "")),
                   float(data.get("load", float("nan"))), tuple(data.get("notes", ())))


#: No calibration: every scale 1, the constants as fitted.
DEFAULT = Calibration({})


def machine_name() -> str:
    """What a calibration is valid for: host, processor and cores (a copy of a home directory to another
    machine does not carry its calibration along)."""
    return f"{platform.node()}/{platform.machine()}/{os.cpu_count()} cores"


def _fastest(run: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def _in_process_rate(values: int, repeat: int) -> float:
    """Seconds per value of a sort, a search and an add over ``values`` int64s (what faq's kernels do most)."""
    rng = np.random.default_rng(0)
    keys = rng.integers(0, values, values, dtype=np.int64)
    probes = rng.integers(0, values, values, dtype=np.int64)

    def run() -> None:
        ordered = np.sort(keys)
        where = np.searchsorted(ordered, probes)
        np.add(where, probes).sum()

    return _fastest(run, repeat) / values


def measure(spark: Any, repeat: int = 5, rows: int = 1_000_000) -> Calibration:
    """Measure :data:`RATES` in ``spark`` (several seconds on 2 cores; ``rows`` sets the sizes).

    The per-value rates are slopes -- the fastest run at ``2 × rows`` less the fastest at ``rows``, over
    the values between -- so a job's fixed cost does not count in them.  Column expressions and
    ``toArrow`` only: it runs on Spark Connect as on a classic session.
    """
    from pyspark.sql import functions as F

    spark.range(0, 1000, 1, 2).count()  # the first job of a session pays for more than a job's fixed cost
    job = _fastest(lambda: spark.range(0, 1000, 1, 2).count(), repeat)
    sums, columns = 4, 3

    def scan(n: int) -> float:
        frame = spark.range(0, n, 1, 2).select(*[(F.col("id") * (i + 1)).alias(f"c{i}") for i in range(sums)])
        return _fastest(lambda: frame.agg(*[F.sum(f"c{i}") for i in range(sums)]).collect(), repeat)

    def fetch(n: int) -> float:
        frame = spark.range(0, n, 1, 2).select(*[(F.col("id") + i).alias(f"c{i}") for i in range(columns)])
        return _fastest(frame.toArrow, repeat)

    big = 4 * rows  # Spark sums fast: a larger range, so the slope stands above the noise
    rates = {"spark_job": job,
             "spark_scan": (scan(2 * big) - scan(big)) / (big * sums),
             "fetch": (fetch(2 * rows) - fetch(rows)) / (rows * columns),
             "in_process": _in_process_rate(rows, repeat)}
    notes = tuple(f"{rate}: the slope was not positive (noise): the reference kept" for rate, value in rates.items()
                  if value <= 0)
    rates = {rate: value if value > 0 else REFERENCE[rate] for rate, value in rates.items()}
    return Calibration(rates, machine_name(), spark.version, time.strftime("%Y-%m-%dT%H:%M:%S"),
                       round(os.getloadavg()[0], 2), notes)


def save(calibration: Calibration, path: Optional[str] = None) -> str:
    """Write ``calibration`` to ``path`` (default :func:`faq.settings.calibration_path`) whole: a temporary file
    renamed over it, so a reader never sees half of one.  Returns the path."""
    from faq.settings import calibration_path

    path = path or calibration_path()
    if not path:
        raise InvalidArgumentError(argument="path", value=path,
                                   reason="$FAQ_CALIBRATION is empty (calibration off): give a path to store one")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as out:
        json.dump(calibration.to_dict(), out, indent=1)
    os.replace(partial, path)
    return path


def stored(path: Optional[str] = None, spark_version: Optional[str] = None) -> Calibration:
    """The calibration stored at ``path`` when it was measured on this machine (and ``spark_version``, when
    given), else :data:`DEFAULT`.  An unreadable file is no calibration (the constants as fitted)."""
    from faq.settings import calibration_path

    path = path or calibration_path()
    if not path:
        return DEFAULT
    try:
        with open(path, encoding="utf-8") as f:
            found = Calibration.from_dict(json.load(f))
    except (OSError, ValueError, TypeError, AttributeError):
        return DEFAULT
    if found.machine != machine_name() or (spark_version and found.spark and found.spark != spark_version):
        return DEFAULT
    return found


_current: dict[str, Calibration] = {}  # a cache: path -> the calibration read there (once a process)


def current(path: Optional[str] = None) -> Calibration:
    """:func:`stored`, read once a process (the cost models ask at every plan)."""
    from faq.settings import calibration_path

    path = path or calibration_path()
    if path not in _current:
        _current[path] = stored(path)
    return _current[path]


def describe(calibration: Calibration) -> str:
    """One line for ``explain``: which constants priced the plan.

    >>> describe(DEFAULT)
    'constants as fitted (no calibration of this machine: python -m faq.warm)'
    >>> describe(Calibration({"spark_job": 2 * REFERENCE["spark_job"]}, measured="2026-11-29T12:00:00"))
    'constants calibrated 2026-11-29T12:00:00: spark_job x2.00, spark_scan x1.00, fetch x1.00, in_process x1.00'
    """
    if not calibration.calibrated:
        return "constants as fitted (no calibration of this machine: python -m faq.warm)"
    shown = ", ".join(f"{rate} x{calibration.scale(rate):.2f}" for rate in RATES)
    return f"constants calibrated {calibration.measured}: {shown}"


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m faq.calibration``: measure, store and print this machine's rates."""
    import argparse

    from faq.spark import get_session

    parser = argparse.ArgumentParser(prog="python -m faq.calibration", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measurement (the fastest kept)")
    parser.add_argument("--path", default=None, help="where to store it (default: faq.settings.calibration_path)")
    parser.add_argument("--dry-run", action="store_true", help="measure and print, store nothing")
    args = parser.parse_args(argv)
    calibration = measure(get_session(), repeat=args.repeat)
    print(json.dumps(calibration.to_dict(), indent=1))
    if not args.dry_run:
        print(f"faq: calibration stored in {save(calibration, args.path)}; {describe(calibration)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
