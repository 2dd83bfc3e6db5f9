"""A process-wide setting switched off by overlapping blocks of several threads (faq.process_switch) and
numpy's huge-page advice behind it (faq.huge_pages)."""

from __future__ import annotations

import threading

import numpy as np

from faq.huge_pages import huge_page_advice, plain_pages
from faq.process_switch import ProcessSwitch


def test_the_setting_comes_back_only_when_the_last_block_of_any_thread_ends():
    setting = {"value": "on"}
    switch = ProcessSwitch(lambda: setting["value"], lambda v: setting.update(value=v), off="off")
    first_inside, second_inside, release_first, first_done = (threading.Event() for _ in range(4))
    seen: dict[str, str] = {}

    def first() -> None:
        with switch.off():
            first_inside.set()
            second_inside.wait(5)
            release_first.wait(5)
        first_done.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_inside.wait(5)
    with switch.off():
        second_inside.set()
        release_first.set()
        first_done.wait(5)
        seen["after the first thread's block"] = setting["value"]
    seen["after both"] = setting["value"]
    thread.join(5)
    assert seen == {"after the first thread's block": "off", "after both": "on"}


def test_an_error_inside_the_block_still_restores_the_setting():
    setting = {"value": 1}
    switch = ProcessSwitch(lambda: setting["value"], lambda v: setting.update(value=v), off=0)
    try:
        with switch.off():
            raise ValueError("inside")
    except ValueError:
        pass
    assert setting["value"] == 1


def test_arrays_made_in_plain_pages_are_the_same_arrays():
    before = huge_page_advice()
    with plain_pages():
        inside = huge_page_advice()
        made = np.arange(1 << 20, dtype=np.int64) * 3  # 8 MiB: above numpy's 4 MiB advice threshold
    assert (inside, huge_page_advice()) == (False, before)
    assert int(made[-1]) == 3 * ((1 << 20) - 1) and int(made.sum()) == 3 * ((1 << 20) - 1) * (1 << 20) // 2
