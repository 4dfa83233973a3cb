"""World-frame force and torque loads (``force``, ``torque``, ``general``) evaluated together.

Their vectors are data (numbers, params, time profiles), so a step needs no per-load Python
beyond the profiles themselves: the constant components are read once when something changes,
the varying ones at every evaluation, the points' world positions in one vectorised pass, and
then one ``mj_applyFT`` per load (and per reaction) adds them to ``qfrc_applied``, exactly as
each load's own ``apply_load`` would. Loads with a ``frame`` site, user callables or a subclass
of their own keep the general per-load path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.forces.loads import GeneralLoad, Load, VectorForce, VectorTorque
from mjrig.runtime.values import is_time_varying, value_at

__all__ = ["WrenchBank", "batchable"]

_TYPES = (VectorForce, VectorTorque, GeneralLoad)


def batchable(ld: Load) -> bool:
    """Whether ``ld`` is a plain world-frame force/torque load the bank can evaluate."""
    return (
        type(ld) in _TYPES
        and ld.rel_to_site is None
        and isinstance(getattr(ld, "force", None), list)
        and isinstance(getattr(ld, "torque", None), list)
    )


class WrenchBank:
    """n loads' wrenches (n, 6: fx fy fz N, tx ty tz N·m, world frame) and where they act.

    Each load reports its ``last_force``/``last_torque`` from its row of :attr:`values`.
    Threading: belongs to the stepping thread, like the engine that owns it.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        loads: list[Load],
        *,
        on_error: Callable[[Load, BaseException], None],
    ) -> None:
        n = len(loads)
        self.loads = loads
        self.on_error = on_error
        self.values = np.zeros((n, 6))
        self.negated = np.zeros((n, 6))
        for i, ld in enumerate(loads):
            ld.report_into(self.values[i, 0:3], self.values[i, 3:6])
        at = [ld.action_site.body_and_offset(model) for ld in loads]
        self.body = np.array([b for b, _ in at], dtype=np.intp)
        self.offset = np.array([o for _, o in at], dtype=float).reshape(n, 3)
        self.reacting = [i for i, ld in enumerate(loads) if ld.reaction is not None]
        rat = [loads[i].reaction.body_and_offset(model) for i in self.reacting]  # type: ignore[union-attr]
        self.rbody = np.array([b for b, _ in rat], dtype=np.intp)
        self.roffset = np.array([o for _, o in rat], dtype=float).reshape(len(rat), 3)
        self.points, self.rpoints = np.zeros((n, 3)), np.zeros((len(rat), 3))
        self.xpos, self.xmat = data.xpos, data.xmat.reshape(-1, 3, 3)
        self.varying: list[tuple[int, list[tuple[int, Any]]]] = []
        self.on: list[int] = []
        self.calls: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
        self.rcalls: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
        self.time_varying = False

    def keep_values_in(self, block: np.ndarray) -> None:
        """Keep the wrenches (n, 6) in ``block`` from now on (the compiled laws' table, which
        writes them at each evaluation); its values are copied over, the loads report from it."""
        block[...] = self.values
        self.values = block
        for i, ld in enumerate(self.loads):
            ld.report_into(block[i, 0:3], block[i, 3:6])
        self._build_calls(self.on)

    def refresh(self, t: float) -> None:
        """Re-read every load's numbers and which loads are on (after any change)."""
        self.varying = []
        self.values.fill(0.0)
        for i, ld in enumerate(self.loads):
            if not ld.active:
                continue
            comps = [*ld.force, *ld.torque]  # type: ignore[attr-defined]
            moving = [(j, x) for j, x in enumerate(comps) if is_time_varying(x)]
            for j, x in enumerate(comps):
                if not is_time_varying(x):
                    self.values[i, j] = value_at(x, t)
            if moving:
                self.varying.append((i, moving))
        self.time_varying = bool(self.varying)
        self._build_calls([i for i, ld in enumerate(self.loads) if ld.active])
        bad = np.flatnonzero(~np.isfinite(self.values).all(axis=1))
        for row in bad:  # a param set to NaN or inf
            self._fail(int(row), ValueError(f"load '{self.loads[row].name}': non-finite force or torque"))

    def _build_calls(self, on: list[int]) -> None:
        """The mj_applyFT arguments of the loads that are on (views, filled in place)."""
        self.on = on
        v, neg = self.values, self.negated
        self.calls = [(v[i, 0:3], v[i, 3:6], self.points[i], int(self.body[i])) for i in on]
        self.rcalls = [
            (neg[i, 0:3], neg[i, 3:6], self.rpoints[k], int(self.rbody[k]))
            for k, i in enumerate(self.reacting)
            if i in on
        ]

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, qfrc: np.ndarray) -> None:
        """Add every active load's wrench and reaction to ``qfrc`` at the current kinematics."""
        v = self.values
        if self.varying:
            t, total = data.time, 0.0
            try:
                for i, moving in self.varying:
                    for j, x in moving:
                        v[i, j] = value = x(t)
                        total += value
            except Exception:  # a user's profile callable failed: find whose and switch it off
                self._evaluate_one_by_one(t)
            else:
                if not math.isfinite(total):
                    self._evaluate_one_by_one(t)
        b = self.body
        np.einsum("nij,nj->ni", self.xmat[b], self.offset, out=self.points)
        self.points += self.xpos[b]
        apply_ft = mujoco.mj_applyFT
        for f, tq, p, body in self.calls:
            apply_ft(model, data, f, tq, p, body, qfrc)
        if self.rcalls:
            rb = self.rbody
            np.einsum("nij,nj->ni", self.xmat[rb], self.roffset, out=self.rpoints)
            self.rpoints += self.xpos[rb]
            np.negative(v, out=self.negated)
            for f, tq, p, body in self.rcalls:
                apply_ft(model, data, f, tq, p, body, qfrc)

    def _evaluate_one_by_one(self, t: float) -> None:
        for i, moving in list(self.varying):
            try:
                for j, x in moving:
                    self.values[i, j] = value = float(x(t))
                    if not math.isfinite(value):
                        raise ValueError(f"load '{self.loads[i].name}': non-finite force or torque")
            except Exception as exc:
                self._fail(i, exc)

    def _fail(self, i: int, exc: BaseException) -> None:
        ld = self.loads[i]
        self.values[i] = 0.0
        self.varying = [(k, m) for k, m in self.varying if k != i]
        self._build_calls([k for k in self.on if k != i])  # not applied from this evaluation on
        self.on_error(ld, exc)  # switches the load off (or raises LoadError without a handler)
