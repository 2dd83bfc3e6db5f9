"""This machine's calibration (faq.calibration): measured, stored whole, read back only where it was
measured, and scaling the cost models' constants so that a slower Spark or a slower driver moves the choice.
"""

from __future__ import annotations

import json
import math

import pytest

from faq import calibration
from faq.asof import costs as asof_costs
from faq.calibration import DEFAULT, REFERENCE, Calibration
from faq.errors import InvalidArgumentError
from faq.learning import costs as learning_costs


def _here(**rates: float) -> Calibration:
    return Calibration({**REFERENCE, **rates}, machine=calibration.machine_name(), spark="4.3.0",
                       measured="2026-11-29T12:00:00", load=1.0)


def test_a_stored_calibration_reads_back_whole_and_only_on_its_machine(tmp_path):
    path = str(tmp_path / "cal" / "calibration.json")
    stored = _here(spark_job=REFERENCE["spark_job"] * 3)
    assert calibration.save(stored, path) == path
    back = calibration.stored(path)
    assert back == stored and back.scale("spark_job") == pytest.approx(3.0) and back.scale("fetch") == 1.0
    assert calibration.stored(path, spark_version="3.5.0") is DEFAULT  # another Spark: not this calibration
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**stored.to_dict(), "machine": "elsewhere/x86_64/64 cores"}))
    assert calibration.stored(str(other)) is DEFAULT
    (tmp_path / "broken.json").write_text("{not json")
    assert calibration.stored(str(tmp_path / "broken.json")) is DEFAULT
    assert calibration.stored(str(tmp_path / "missing.json")) is DEFAULT
    assert not list((tmp_path / "cal").glob("*.tmp"))  # written through a temporary file, renamed


def test_an_empty_setting_turns_calibration_off(monkeypatch, tmp_path):
    monkeypatch.setenv("FAQ_CALIBRATION", "")
    assert calibration.stored() is DEFAULT
    with pytest.raises(InvalidArgumentError, match="FAQ_CALIBRATION is empty"):
        calibration.save(_here())
    path = str(tmp_path / "c.json")
    calibration.save(_here(fetch=REFERENCE["fetch"] / 2), path)
    monkeypatch.setenv("FAQ_CALIBRATION", path)
    assert calibration.current().scale("fetch") == pytest.approx(0.5)
    assert "constants calibrated 2026-11-29T12:00:00" in calibration.describe(calibration.current())
    assert calibration.describe(DEFAULT).startswith("constants as fitted")


def _star(scales=None) -> learning_costs.Sizes:
    T = learning_costs.TableSize
    return learning_costs.Sizes(tables=(T("lineitem", 2_000_000, 8, 4), T("orders", 200_000, 3, 2),
                                        T("part", 20_000, 3, 2)), join_rows=2_000_000, features=8, parallelism=2,
                                big="lineitem", scales=scales or {})


def test_a_slower_spark_moves_the_regressions_choice_off_spark_sql():
    assert learning_costs.chosen(learning_costs.priced(_star())).plan == "spark-sql"
    slow_spark = _here(spark_job=REFERENCE["spark_job"] * 10, spark_scan=REFERENCE["spark_scan"] * 10).scales()
    prices = learning_costs.priced(_star(slow_spark))
    assert learning_costs.chosen(prices).plan != "spark-sql"
    before = {p.plan: p.seconds for p in learning_costs.priced(_star())}
    assert prices[2].seconds == pytest.approx(before["spark-sql"] * 10)  # every Spark term scaled by 10
    # the driver's fetch and in-process work scale with theirs
    fast_driver = _here(fetch=REFERENCE["fetch"] / 4, in_process=REFERENCE["in_process"] / 4).scales()
    assert learning_costs.priced(_star(fast_driver))[0].seconds < before["driver"] / 2


def test_a_calibration_scales_the_as_of_prices_by_their_rates():
    plain = asof_costs.price(1_000_000, 1_000_000, 3, 3)
    assert asof_costs.cheapest(plain) == "executors"
    slow_kernel = asof_costs.price(1_000_000, 1_000_000, 3, 3, scales={"in_process": 3.0})
    assert asof_costs.cheapest(slow_kernel) != "executors"
    assert slow_kernel["driver"].seconds == plain["driver"].seconds
    assert slow_kernel["spark-window"].seconds == plain["spark-window"].seconds
    unknown = asof_costs.price(math.inf, 10, 2, 2, scales={"spark_job": 2.0})
    assert all(math.isinf(p.seconds) for p in unknown.values())


@pytest.mark.usefixtures("spark")
def test_measuring_gives_a_positive_rate_for_every_kind(spark):
    measured = calibration.measure(spark, repeat=1, rows=100_000)
    assert set(measured.rates) == set(calibration.RATES)
    assert all(v > 0 and math.isfinite(v) for v in measured.rates.values()), measured
    assert measured.machine == calibration.machine_name() and measured.spark == spark.version
    assert measured.calibrated and Calibration.from_dict(measured.to_dict()) == measured
