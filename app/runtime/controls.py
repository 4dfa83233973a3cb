"""Actuator inputs held by the rig: ``data.ctrl`` set to a number, a param or a time profile.

The value is written at every step boundary, before the physics reads it (MuJoCo reads ``ctrl``
once per step, in every integrator, RK4 included). A value outside the ``ctrlrange`` of a
``ctrllimited`` actuator is clamped into it, as MuJoCo would clamp it, and is written clamped so
``Actuators/<actuator>:ctrl`` shows the input that acts; the first time a control is clamped
(at resolve for its initial value or a profile's range, or later when a param moves out of the
range) one warning line is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np

from mjrig.runtime.points import find_id
from mjrig.runtime.values import Chirp, Constant, NamedValue, Ramp, Scalar, Sine, Step, Table, value_at

__all__ = ["Control", "ControlSet", "profile_range", "ctrl_limited"]


@dataclass(eq=False)
class Control:
    """``data.ctrl`` of ``actuator`` held at ``value`` (the actuator's own unit: a motor's ctrl
    times its gear is the generalized force)."""

    actuator: str
    value: Scalar = field(default=0.0, kw_only=True)
    warned: bool = field(default=False, repr=False, kw_only=True)
    """Whether its clamping was reported (once per control, across rig rebuilds)."""

    @property
    def name(self) -> str:
        """A control is named by its actuator (one control per actuator)."""
        return self.actuator

    def params(self) -> list[NamedValue]:
        return [self.value] if isinstance(self.value, NamedValue) else []


def profile_range(value: Scalar) -> tuple[float, float] | None:
    """(lowest, highest) a number, param (its current value) or profile can take; None if unknown."""
    if isinstance(value, (int, float, NamedValue)):
        v = float(value)
        return v, v
    if isinstance(value, Constant):
        return value.value, value.value
    if isinstance(value, Step):
        return min(value.before, value.after), max(value.before, value.after)
    if isinstance(value, Ramp):
        return min(value.from_, value.to), max(value.from_, value.to)
    if isinstance(value, Sine):
        a = abs(value.amplitude)
        return value.offset - a, value.offset + a
    if isinstance(value, Table):
        return min(value.value), max(value.value)
    if isinstance(value, Chirp):
        return -abs(value.amplitude), abs(value.amplitude)
    return None


class ControlSet:
    """The controls of one rig on one model: ids resolved, ranges known.

    ``on_warning(text)`` receives the one-line clamping warnings.

    Threading: ``apply`` runs on the stepping thread; params may change from anywhere.
    """

    def __init__(self, model: mujoco.MjModel, controls: list[Control], *, on_warning: Callable[[str], None]) -> None:
        self.controls = list(controls)
        self.ids = [
            find_id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, c.actuator, kind="actuator", count=model.nu)
            for c in self.controls
        ]
        self.on_warning = on_warning
        self.ranges: list[tuple[float, float] | None] = [
            (float(model.actuator_ctrlrange[i, 0]), float(model.actuator_ctrlrange[i, 1]))
            if ctrl_limited(model, i)
            else None
            for i in self.ids
        ]
        for k, c in enumerate(self.controls):
            span = profile_range(c.value)
            if span is not None:
                self._check(k, span[0], span[1])

    def _check(self, k: int, lo: float, hi: float) -> None:
        rng = self.ranges[k]
        c = self.controls[k]
        if rng is None or c.warned or (lo >= rng[0] and hi <= rng[1]):
            return
        c.warned = True
        bad = lo if lo < rng[0] else hi
        self.on_warning(
            f"control of actuator '{self.controls[k].actuator}': value {bad:g} is outside its "
            f"ctrlrange [{rng[0]:g}, {rng[1]:g}]; it is clamped"
        )

    def apply(self, data: mujoco.MjData) -> None:
        """Write every control's value at ``data.time`` into ``data.ctrl`` (clamped to ctrlrange)."""
        t = data.time
        ctrl = data.ctrl
        for k, c in enumerate(self.controls):
            v = value_at(c.value, t)
            if not math.isfinite(v):
                continue  # a profile cannot give one; a callable might: keep the last input
            rng = self.ranges[k]
            if rng is not None and not rng[0] <= v <= rng[1]:
                self._check(k, v, v)
                v = min(max(v, rng[0]), rng[1])
            ctrl[self.ids[k]] = v


def ctrl_limited(model: mujoco.MjModel, i: int) -> bool:
    """Whether MuJoCo clamps actuator ``i``'s ctrl (``ctrllimited``, or "auto" with a range)."""
    if model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL:
        return False
    lo, hi = model.actuator_ctrlrange[i]
    return bool(model.actuator_ctrllimited[i]) and bool(np.isfinite(lo) and np.isfinite(hi)) and lo < hi
