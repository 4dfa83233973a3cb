"""Numbers that change: live-tunable params (NamedValue) and time profiles.

Any numeric field of a load takes a plain float, a NamedValue, or (where the contract allows)
a Profile. ``value_at(x, t)`` reads any of them at simulated time ``t`` (s).
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "NamedValue",
    "Profile",
    "Constant",
    "Step",
    "Ramp",
    "Sine",
    "Table",
    "Scalar",
    "value_at",
    "is_time_varying",
]

T = TypeVar("T", float, int)


class NamedValue(Generic[T]):
    """A named, live-changeable number (a "param") that any numeric field accepts.

    Setting ``value`` clamps it to ``[min, max]`` and tells every listener, so the stepping
    engine refreshes its arrays once at the next step instead of reading params every step.

    Threading: ``value`` may be set from any thread; listeners run on the setter's thread and
    must only flag work for the stepping thread.
    """

    def __init__(
        self, name: str, value: T, *, min: float | None = None, max: float | None = None, unit: str = ""
    ) -> None:
        self.name = name
        self.min = min
        self.max = max
        self.unit = unit
        self._listeners: list[Callable[[NamedValue], None]] = []
        self._lock = threading.Lock()
        self._value: float = float(value)
        self._value = self._clamp(float(value))

    def _clamp(self, v: float) -> float:
        if self.min is not None and v < self.min:
            v = float(self.min)
        if self.max is not None and v > self.max:
            v = float(self.max)
        return v

    @property
    def value(self) -> float:
        """The current value (in ``unit``)."""
        return self._value

    @value.setter
    def value(self, v: float) -> None:
        v = float(v)
        if not math.isfinite(v):
            raise ValueError(f"param '{self.name}': value must be finite, got {v}")
        with self._lock:
            self._value = self._clamp(v)
            listeners = list(self._listeners)
        for fn in listeners:
            fn(self)

    def subscribe(self, fn: Callable[[NamedValue], None]) -> None:
        """Call ``fn(self)`` after every change of ``value``."""
        with self._lock:
            if fn not in self._listeners:
                self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[[NamedValue], None]) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    def __float__(self) -> float:
        return self._value

    def __repr__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"NamedValue({self.name!r}, {self._value:g}{unit})"


class Profile:
    """A value that is a function of simulated time. Profiles are data, never code."""

    kind: str = ""

    def __call__(self, t: float) -> float:
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The scenario form, e.g. ``{"profile": "sine", "amplitude": 2.0, ...}``."""
        raise NotImplementedError


@dataclass(frozen=True)
class Constant(Profile):
    value: float
    kind = "constant"

    def __call__(self, t: float) -> float:
        return self.value

    def to_dict(self) -> dict:
        return {"profile": "constant", "value": self.value}


@dataclass(frozen=True)
class Step(Profile):
    """``before`` until ``time`` (s), ``after`` from then on."""

    time: float
    before: float
    after: float
    kind = "step"

    def __call__(self, t: float) -> float:
        return self.after if t >= self.time else self.before

    def to_dict(self) -> dict:
        return {"profile": "step", "time": self.time, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Ramp(Profile):
    """Linear from ``from_`` at ``start`` (s) to ``to`` at ``end`` (s), held outside."""

    start: float
    end: float
    from_: float
    to: float
    kind = "ramp"

    def __call__(self, t: float) -> float:
        if t <= self.start:
            return self.from_
        if t >= self.end:
            return self.to
        return self.from_ + (self.to - self.from_) * (t - self.start) / (self.end - self.start)

    def to_dict(self) -> dict:
        return {"profile": "ramp", "start": self.start, "end": self.end, "from": self.from_, "to": self.to}


@dataclass(frozen=True)
class Sine(Profile):
    """``offset + amplitude * sin(2π frequency t + phase)``; frequency in Hz, phase in rad."""

    amplitude: float
    frequency: float
    phase: float = 0.0
    offset: float = 0.0
    kind = "sine"

    def __call__(self, t: float) -> float:
        return self.offset + self.amplitude * math.sin(2.0 * math.pi * self.frequency * t + self.phase)

    def to_dict(self) -> dict:
        return {
            "profile": "sine",
            "amplitude": self.amplitude,
            "frequency": self.frequency,
            "phase": self.phase,
            "offset": self.offset,
        }


@dataclass(frozen=True)
class Table(Profile):
    """Linear interpolation through (time, value) pairs, held at the ends."""

    time: tuple[float, ...]
    value: tuple[float, ...]
    kind = "table"

    def __call__(self, t: float) -> float:
        ts, vs = self.time, self.value
        if t <= ts[0]:
            return vs[0]
        if t >= ts[-1]:
            return vs[-1]
        i = bisect.bisect_right(ts, t)
        t0, t1 = ts[i - 1], ts[i]
        return vs[i - 1] + (vs[i] - vs[i - 1]) * (t - t0) / (t1 - t0)

    def to_dict(self) -> dict:
        return {"profile": "table", "time": list(self.time), "value": list(self.value)}


@dataclass(frozen=True)
class Chirp(Profile):
    """A linear frequency sweep: ``amplitude * sin(2π (f0 t + (f1 - f0) t² / (2 duration)))``
    from t = 0 to ``duration`` (s), its frequency going from ``f0`` to ``f1`` (Hz); 0 after it."""

    amplitude: float
    f0: float
    f1: float
    duration: float
    kind = "chirp"

    def __call__(self, t: float) -> float:
        if t < 0.0 or t > self.duration:
            return 0.0
        return self.amplitude * math.sin(
            2.0 * math.pi * (self.f0 * t + (self.f1 - self.f0) * t * t / (2.0 * self.duration))
        )

    def to_dict(self) -> dict:
        return {
            "profile": "chirp",
            "amplitude": self.amplitude,
            "f0": self.f0,
            "f1": self.f1,
            "duration": self.duration,
        }


Scalar = float | int | NamedValue | Profile | Callable[[float], float]
"""A numeric field: a number, a param, a time profile, or a Python callable of time (s)."""


def value_at(x: Scalar, t: float) -> float:
    """Read a numeric field at simulated time ``t`` (s)."""
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, NamedValue):
        return x.value
    return float(x(t))


def is_time_varying(x: Scalar) -> bool:
    """True when the field can change without a param being set (a profile or a callable)."""
    return not isinstance(x, (int, float, NamedValue, Constant))
