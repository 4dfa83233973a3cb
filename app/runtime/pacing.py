"""Pacing simulated time to wall time: the one pacer of the headless API and the app."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Pacer"]


class Pacer:
    """Keeps simulated time in step with wall time at a real-time factor ``speed``.

    ``speed`` 1.0 is real time, 2.0 twice as fast; 0 or less means as fast as possible. The pacer
    anchors at the first simulated time it sees (wall clock, sim time) and measures from there;
    ``restart()`` re-anchors (after a pause, a reset or a speed change).

    Threading: use from one thread.
    """

    def __init__(self, *, speed: float = 1.0, clock: Callable[[], float] = time.perf_counter) -> None:
        self.speed = speed
        self._clock = clock
        self._anchor: tuple[float, float] | None = None  # (wall s, simulated s)

    def restart(self) -> None:
        """Measure from the next simulated time seen."""
        self._anchor = None

    def start(self, sim_time: float) -> None:
        """Anchor at ``sim_time`` (s) now, unless already anchored."""
        if self._anchor is None:
            self._anchor = (self._clock(), sim_time)

    def target(self, sim_time: float) -> float:
        """The simulated time (s) that should have been reached by now (``inf`` when unpaced)."""
        self.start(sim_time)
        if self.speed <= 0:
            return float("inf")
        wall0, sim0 = self._anchor  # type: ignore[misc]
        return sim0 + (self._clock() - wall0) * self.speed

    def wait(self, sim_time: float) -> None:
        """Sleep until wall time has caught up with ``sim_time`` (s); returns at once when
        unpaced or behind."""
        self.start(sim_time)
        if self.speed <= 0:
            return
        wall0, sim0 = self._anchor  # type: ignore[misc]
        sleep = wall0 + (sim_time - sim0) / self.speed - self._clock()
        if sleep > 0:
            time.sleep(sleep)

    def keep_up(self, sim_time: float, *, slack_wall_s: float = 0.25) -> None:
        """Re-anchor when the simulation lags the target by more than ``slack_wall_s`` of wall
        time: a model too heavy for its speed slows down instead of spiralling to catch up."""
        if self.speed > 0 and sim_time < self.target(sim_time) - slack_wall_s * self.speed:
            self._anchor = (self._clock(), sim_time)
