"""The real-time factor the panel shows: simulated over wall seconds, and right again at once
after a Reset (time going back used to read 0.00 for two seconds)."""

from __future__ import annotations

import time

import pytest

from mjrig.session.run_control import RunControl


class Physics:
    """A step source that always steps and never leaps."""

    def step(self) -> bool:
        return True

    def leap(self, target: float) -> bool:
        return False


def test_the_factor_follows_the_clock_and_restarts_after_time_goes_back() -> None:
    sim = [0.0]
    run = RunControl(lambda: Physics(), sim_time=lambda: sim[0])
    t0 = time.perf_counter()
    run.realtime_factor()
    time.sleep(0.05)
    sim[0] = 0.5 * (time.perf_counter() - t0)  # half real time
    assert run.realtime_factor() == pytest.approx(0.5, rel=0.2)
    sim[0] = 0.0  # a Reset
    assert run.realtime_factor() == pytest.approx(0.5, rel=0.2)  # the last factor, not 0
    t1 = time.perf_counter()
    time.sleep(0.05)
    sim[0] = 2.0 * (time.perf_counter() - t1)  # twice real time from the Reset on
    assert run.realtime_factor() == pytest.approx(2.0, rel=0.2)
