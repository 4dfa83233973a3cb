"""Tracers: the recent path of a point, drawn as a trail of line segments that fade with age.

A tracer samples its point's world position at most every ``duration / SAMPLES`` seconds of
simulated time into a fixed ring buffer, so its memory is bounded whatever the run's length;
``trail`` turns the samples younger than ``duration`` into a ``Trail`` of segments whose alpha
falls linearly from the colour's own alpha (newest) to 0 (``duration`` old). The viewer, videos
and screenshots all draw them through ``RuntimeManager.visuals``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from mjrig.runtime.drawing.visuals import LineConfig, Trail, rgba_of
from mjrig.runtime.points import AnySite, Point, parse_point

__all__ = ["Tracer", "SAMPLES", "DEFAULT_TRACER_COLOR"]

SAMPLES = 200
"""Samples a tracer keeps over its ``duration`` (the ring holds one more)."""
DEFAULT_TRACER_COLOR = (0.055, 0.647, 0.914, 1.0)
"""Sky blue (Tailwind sky-500), opaque."""


@dataclass(eq=False, kw_only=True)
class Tracer:
    """The trail of point ``at`` over the last ``duration`` seconds (s, > 0), in ``color`` RGBA.

    Threading: ``sample`` and ``lines`` run on the stepping thread.
    """

    name: str
    at: AnySite
    duration: float = 2.0
    color: Sequence[float] = DEFAULT_TRACER_COLOR
    active: bool = True

    def __post_init__(self) -> None:
        if not self.duration > 0:
            raise ValueError(f"tracer '{self.name}': duration must be positive, got {self.duration:g}")
        self.at = parse_point(self.at)
        self._rgba = rgba_of(self.color)
        self._times = np.full(SAMPLES + 1, np.nan)
        self._pos = np.zeros((SAMPLES + 1, 3))
        self._head = 0  # next slot to write
        self._count = 0
        self._next = -np.inf  # simulated time (s) of the next sample

    @property
    def point(self) -> Point:
        return self.at

    @property
    def interval(self) -> float:
        """Simulated seconds between samples."""
        return self.duration / SAMPLES

    def clear(self) -> None:
        """Forget the trail (a reset or restore)."""
        self._times[:] = np.nan
        self._head = self._count = 0
        self._next = -np.inf

    def sample(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData, *, time: float | None = None) -> None:
        """Take a sample of the point's world position if one is due (``time``: the time the
        kinematics describe, default ``data.time``)."""
        t = mj_data.time if time is None else time
        if self._count and t < self._times[(self._head - 1) % len(self._times)]:
            self.clear()  # time went back: a reset or a restored snapshot
        if t < self._next:
            return
        self._next = t + self.interval
        self._times[self._head] = t
        self._pos[self._head] = self.point.rt_pos(mj_model, mj_data)
        self._head = (self._head + 1) % len(self._times)
        self._count = min(self._count + 1, len(self._times))

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(times (n,), positions (n, 3)), oldest first."""
        n, size = self._count, len(self._times)
        idx = (np.arange(self._head - n, self._head)) % size
        return self._times[idx].copy(), self._pos[idx].copy()

    def trail(self, now: float | None = None) -> Trail | None:
        """The segments between consecutive samples younger than ``duration``, fading with age
        (None: fewer than two samples, or inactive)."""
        if not self.active or self._count < 2:
            return None
        times, pos = self.samples()
        now = float(times[-1]) if now is None else now
        ages = now - times[1:]
        young = np.flatnonzero(ages <= self.duration)
        if len(young) == 0:
            return None
        first = int(young[0])  # the ring is oldest first: the young segments are its end
        rgba = np.tile(self._rgba, (len(ages) - first, 1))
        rgba[:, 3] *= np.maximum(0.0, 1.0 - ages[first:] / self.duration)
        return Trail(points=pos[first:], rgba=rgba)

    def lines(self, now: float | None = None) -> list[LineConfig]:
        """``trail`` as single segments (oldest first)."""
        trail = self.trail(now)
        return [] if trail is None else trail.segments()
