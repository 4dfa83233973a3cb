"""A requirement observed over many trials of a lock-step batch at once, with arrays.

``BatchWatch`` holds, for each of ``n`` trials, what ``Requirement.state`` holds for one (passed,
decided, the first violation, the extremes, the last value) and folds a block of recorded steps
into them as that many calls of ``Requirement.update`` would; where a block reaches the end of
the requirement's window it lets ``Requirement`` itself decide each trial (``restore``,
``finish``), so a window's end and a ``stop_on`` are decided exactly as a trial run alone decides
them. ``mjrig.campaign.lockstep`` steps the batch and records the signals; a trial's row is
built by ``TrialRunner.row`` once each requirement is restored to the trial's ``BatchWatch.state``.

Threads: the lock-step driver's (the caller's) only; MuJoCo's C threads never see it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mjrig.runtime.analysis.requirements import FAILED, PASSED, Requirement

__all__ = ["BatchWatch"]


class BatchWatch:
    """One requirement observed over ``n`` trials at once: the arrays of ``Requirement.state``.

    ``field``/``index``: where the batch records its signal; ``before``: a state field, whose
    value at a step is the one before it (else a field the step computes at the state it
    started from, as ``mj_step`` leaves it)."""

    def __init__(self, r: Requirement, n: int, *, field: str, index: int, before: bool) -> None:
        self.r, self.field, self.index, self.before = r, field, index, before
        self.t0, self.t1, self.last_from = r.window()
        self.passed = np.ones(n, bool)
        self.decided = np.zeros(n, bool)
        self.n = np.zeros(n, np.int64)
        self.lo, self.hi = np.full(n, math.inf), np.full(n, -math.inf)
        self.last, self.last_t = np.full(n, math.nan), np.full(n, math.nan)
        self.first_violation: list[float | None] = [None] * n
        self.violation_value: list[float | None] = [None] * n
        self.failed_bound = [""] * n

    def state(self, s: int) -> dict[str, Any]:
        """Trial ``s``'s observation, as ``Requirement.state`` gives it."""
        n = int(self.n[s])
        return {
            "passed": bool(self.passed[s]),
            "decided": bool(self.decided[s]),
            "first_violation": self.first_violation[s],
            "violation_value": self.violation_value[s],
            "lo": float(self.lo[s]),
            "hi": float(self.hi[s]),
            "last": float(self.last[s]),
            "last_t": float(self.last_t[s]) if n else None,
            "n": n,
            "failed_bound": self.failed_bound[s],
        }

    def fold(self, v: np.ndarray, t: np.ndarray, live: np.ndarray) -> np.ndarray:
        """Observe values ``v`` (n, K) at step times ``t`` (K,) (s) in the ``live`` trials, as K
        calls of ``Requirement.update`` would; returns the trials whose ``stop_on`` fired in the
        block (a stop takes effect after its step: blocks are one step long when one can fire)."""
        n, k = v.shape
        r, stop = self.r, np.zeros(n, bool)
        window = (t >= self.t0) & (t <= self.t1)
        rows = live & ~self.decided
        if not window.any() or not rows.any():
            return stop
        ends = np.flatnonzero(window & (t >= self.last_from))
        decide = int(ends[0]) if ends.size else k  # the step that decides the window
        window[decide + 1 :] = False
        ok = rows[:, None] & window[None, :] & (v == v)  # NaN: the signal does not exist then
        self.n += ok.sum(axis=1)
        np.minimum(self.lo, np.where(ok, v, math.inf).min(axis=1), out=self.lo)
        np.maximum(self.hi, np.where(ok, v, -math.inf).max(axis=1), out=self.hi)
        bad = np.zeros_like(ok)
        if r.min is not None:
            bad |= v < r.min
        if r.max is not None:
            bad |= v > r.max
        bad &= ok & self.passed[:, None]
        for s in np.flatnonzero(bad.any(axis=1)):  # the first violation (once a trial)
            j = int(bad[s].argmax())
            self.passed[s] = False
            self.first_violation[s], self.violation_value[s] = float(t[j]), float(v[s, j])
            self.failed_bound[s] = "min" if r.min is not None and v[s, j] < r.min else "max"
            stop[s] |= r.stop_on == "fail"
        seen = np.flatnonzero(ok.any(axis=1))
        last = k - 1 - ok[seen, ::-1].argmax(axis=1)
        self.last[seen], self.last_t[seen] = v[seen, last], t[last]
        if decide < k:
            for s in np.flatnonzero(rows):
                r.restore(self.state(int(s)))
                event = r.finish()
                after = r.state()
                self.passed[s], self.decided[s] = after["passed"], after["decided"]
                self.first_violation[s], self.violation_value[s] = after["first_violation"], after["violation_value"]
                self.failed_bound[s] = after["failed_bound"]
                stop[s] |= (event == FAILED and r.stop_on == "fail") or (event == PASSED and r.stop_on == "pass")
        return stop
