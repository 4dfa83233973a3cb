"""Spring laws of the point-to-point loads: a spring-damper and the side it acts on, and its tension.

A law is data: its numbers (stiffness N/m, damping N·s/m, lengths m, preload N) and its
behaviour flags (``tension_only``, ``compression_only``, ``stroke_limited``; none of them: an
ideal spring acting both ways). The scenario kinds that name these behaviours are declared once,
in ``mjrig.scenario.kinds``. ``spring_tension`` evaluates many springs at once over arrays (the
engine's fast path); ``SpringLaw.tension`` evaluates one through the same code, so both paths
agree exactly. A positive tension pushes the two points apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from mjrig.runtime.values import NamedValue, Scalar, is_time_varying, value_at

__all__ = ["SpringLaw", "spring_tension"]

_INF = math.inf


def spring_tension(
    s: np.ndarray,
    v: np.ndarray,
    k: np.ndarray,
    c: np.ndarray,
    p: np.ndarray,
    tmin: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    out: np.ndarray,
    tmp: np.ndarray,
    mask: np.ndarray,
    mask2: np.ndarray,
) -> np.ndarray:
    """Tension (N, positive pushes apart) of many springs at once, into ``out``.

    ``s`` is the extension beyond the reference length (m), ``v`` the rate of change of length
    (m/s). tension = max(p - k s - c v, tmin), and zero outside the window lo <= s <= hi.
    Every argument is a float array of one length; ``tmp``/``mask``/``mask2`` are scratch.
    """
    np.multiply(k, s, out=out)
    np.subtract(p, out, out=out)
    np.multiply(c, v, out=tmp)
    np.subtract(out, tmp, out=out)
    np.maximum(out, tmin, out=out)
    np.greater_equal(s, lo, out=mask)
    np.less_equal(s, hi, out=mask2)
    np.logical_and(mask, mask2, out=mask)
    np.multiply(out, mask, out=out)
    return out


@dataclass(eq=False)
class SpringLaw:
    """A built-in spring-damper: stiffness (N/m), damping (N·s/m), lengths (m), preload (N).

    Where it acts is data, at most one flag: ``tension_only`` (only while longer than
    ``rest_length``: cables, bungees), ``compression_only`` (only while shorter: bumpers, end
    stops), ``stroke_limited`` (preloaded, from the initial distance r0 over ``max_stroke``,
    pushing apart only; ``rest_length`` unused); none: both ways (an ideal spring).
    """

    stiffness: Scalar = 0.0
    damping: Scalar = 0.0
    rest_length: Scalar = 0.0
    preload: Scalar = 0.0
    max_stroke: Scalar = 0.1
    tension_only: bool = field(default=False, kw_only=True)
    compression_only: bool = field(default=False, kw_only=True)
    stroke_limited: bool = field(default=False, kw_only=True)

    numbers: ClassVar[tuple[str, ...]] = ("stiffness", "damping", "rest_length", "preload", "max_stroke")
    """The law's numeric fields (each a number, a param or a profile)."""

    def __post_init__(self) -> None:
        if self.tension_only + self.compression_only + self.stroke_limited > 1:
            raise ValueError("a spring law is at most one of tension_only, compression_only, stroke_limited")

    def coefficients(self, r0: float, t: float) -> tuple[float, float, float, float, float, float, float]:
        """(reference length, preload, k, c, minimum tension, window lo, window hi) at time t.

        ``r0`` is the distance between the points when the rig was resolved (m).
        """
        k = value_at(self.stiffness, t)
        c = value_at(self.damping, t)
        if self.stroke_limited:
            return r0, value_at(self.preload, t), k, c, 0.0, 0.0, value_at(self.max_stroke, t)
        lo = 0.0 if self.tension_only else -_INF
        hi = 0.0 if self.compression_only else _INF
        return value_at(self.rest_length, t), 0.0, k, c, -_INF, lo, hi

    def native_band(self, t: float) -> tuple[float, float] | None:
        """MuJoCo's tendon dead band for this law, as (low, high) offsets from the rest length
        (m), when MuJoCo's tendon spring-damper computes exactly this law; else None.

        Exact are ideal springs (band of zero width) and tension-/compression-only springs
        without damping (MuJoCo's damping acts on both sides), with numbers that do not vary
        in time. A stroke window, a preload or a profile stays with mjrig's array path.
        """
        if self.stroke_limited or any(is_time_varying(x) for x in (self.stiffness, self.damping, self.rest_length)):
            return None
        if not (self.tension_only or self.compression_only):
            return 0.0, 0.0
        if value_at(self.damping, t) == 0.0:
            return (-_INF, 0.0) if self.tension_only else (0.0, _INF)
        return None

    def tension(self, d: float, v: float, r0: float, t: float) -> float:
        """Tension (N) at distance ``d`` (m) and rate ``v`` (m/s), one spring at a time."""
        ref, p, k, c, tmin, lo, hi = self.coefficients(r0, t)
        one = lambda x: np.array([x], dtype=float)  # noqa: E731
        out, tmp = np.zeros(1), np.zeros(1)
        m1, m2 = np.zeros(1, bool), np.zeros(1, bool)
        spring_tension(
            one(d - ref),
            one(v),
            one(k),
            one(c),
            one(p),
            one(tmin),
            one(lo),
            one(hi),
            out=out,
            tmp=tmp,
            mask=m1,
            mask2=m2,
        )
        return float(out[0])

    def varies_in_time(self) -> bool:
        """Whether any of its numbers is a profile (re-read every step)."""
        return any(is_time_varying(getattr(self, n)) for n in self.numbers)

    def params(self) -> list[NamedValue]:
        """The params this law reads (so the engine can listen to them)."""
        return [x for x in (getattr(self, n) for n in self.numbers) if isinstance(x, NamedValue)]
