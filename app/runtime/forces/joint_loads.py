"""Joint loads: generalized forces on one hinge (N·m) or slide (N) joint.

``JointTorque`` applies a given generalized force; ``JointFriction`` opposes the joint's velocity
v (rad/s or m/s) with a smooth Coulomb + Stribeck + viscous law::

    f = -[(Fc + (Fb - Fc)·exp(-(v/vs)²))·tanh(v/vc) + b·v]

where Fc is the Coulomb level, Fb the breakaway level (>= Fc), vs the Stribeck velocity, vc the
width of the smooth zone around v = 0 and b the viscous coefficient. For a pin or bearing, Fc
may instead be ``mu·pin_radius·|R|`` with R the force the joint transmits to its body (the force
part of MuJoCo's ``cfrc_int`` of the joint's body, after ``mj_rnePostConstraint``). R is taken at
the end of every step and used in the next (one step of lag: exact for a loaded pin at rest or
turning steadily; ``update_reaction`` at resolve gives the first step its value).

Both write ``qfrc_applied[dof]`` on the engine's general path, so they add to every other load
and to mouse perturbations, and RK4 evaluates them at each of its stages (the friction sees each
stage's velocity). Each records ``Loads/<name>:value``, the generalized force it applied.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import mujoco
import numpy as np

from mjrig.runtime.drawing.visuals import ArrowConfig, Color
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.load_base import Load
from mjrig.runtime.points import find_id
from mjrig.runtime.values import NamedValue, Scalar, value_at

__all__ = [
    "JointLoad",
    "JointTorque",
    "JointFriction",
    "friction_force",
    "joint_dof",
    "update_pin_reactions",
    "DEFAULT_STRIBECK_VELOCITY",
    "DEFAULT_COULOMB_VELOCITY",
]

DEFAULT_STRIBECK_VELOCITY = 0.1
"""vs (rad/s or m/s) when left out: the breakaway excess is gone at a few tenths of a unit per second."""
DEFAULT_COULOMB_VELOCITY = 1e-3
"""vc (rad/s or m/s) when left out: the friction reaches 76 % of its level at 1 mm/s or 1 mrad/s.
Smaller is closer to ideal Coulomb friction but stiffer: keep ``Fc·timestep/(vc·inertia)`` below ~1."""

_TINY = 1e-12
"""Smallest velocity scale (rad/s or m/s) a param may set (a param can go anywhere)."""

_KINDS = {
    int(mujoco.mjtJoint.mjJNT_HINGE): ("hinge", "N*m"),
    int(mujoco.mjtJoint.mjJNT_SLIDE): ("slide", "N"),
    int(mujoco.mjtJoint.mjJNT_BALL): ("ball", ""),
    int(mujoco.mjtJoint.mjJNT_FREE): ("free", ""),
}


def joint_dof(model: mujoco.MjModel, name: str) -> tuple[int, int, str]:
    """(joint id, dof address, unit) of hinge or slide joint ``name``; ConfigError naming the
    closest joints when unknown, or the joint's type when it is a ball or free joint."""
    j = find_id(model, mujoco.mjtObj.mjOBJ_JOINT, name, kind="joint", count=model.njnt)
    kind, unit = _KINDS[int(model.jnt_type[j])]
    if not unit:
        raise ConfigError(f"joint '{name}' is a {kind} joint: joint loads act on hinge or slide joints")
    return j, int(model.jnt_dofadr[j]), unit


def friction_force(
    v: float, *, coulomb: float, breakaway: float, stribeck_velocity: float, viscous: float, coulomb_velocity: float
) -> float:
    """The friction law (N·m or N) at joint velocity ``v`` (rad/s or m/s); see the module docstring."""
    level = coulomb + (breakaway - coulomb) * math.exp(-((v / stribeck_velocity) ** 2))
    return -(level * math.tanh(v / coulomb_velocity) + viscous * v)


class JointLoad(Load):
    """Base of the joint loads: a generalized force on ``joint``'s dof, no attachment point.

    Subclasses implement ``generalized_force(model, data)`` (N·m for a hinge, N for a slide).
    """

    action_site: Any = None
    joint: str = ""
    reports_wrench: ClassVar[bool] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self._value = np.zeros(1)  # the generalized force last applied, read in place by telemetry
        self._jnt, self._dof, self._unit = -1, -1, "N*m"

    @property
    def value(self) -> float:
        """The generalized force last applied (N·m for a hinge, N for a slide)."""
        return float(self._value[0])

    @property
    def dof(self) -> int:
        """The joint's dof in ``qvel``/``qfrc_applied`` (-1 until resolved)."""
        return self._dof

    def keep_value_in(self, cell: np.ndarray) -> None:
        """Keep the generalized force last applied in ``cell`` (one float64; the compiled
        laws' table, which writes it) from now on."""
        cell[0] = self._value[0]
        self._value = cell

    def points(self) -> list:
        return []

    def readout(self) -> tuple[tuple[float, str], ...]:
        """The generalized force last applied, signed (a friction opposes the motion)."""
        return ((self.value, self._unit),)

    def resolve_ids(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Find the joint (ConfigError if unknown or not a hinge/slide)."""
        self._jnt, self._dof, self._unit = joint_dof(mj_model, self.joint)

    def signals(self) -> list[tuple[np.ndarray, list[tuple[str, int, str]]]]:
        return [(self._value, [(f"Loads/{self.name}:value", 0, self._unit)])]

    def generalized_force(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> float:
        raise NotImplementedError

    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(3), np.zeros(3)  # no force at a point: see generalized_force

    def apply_load(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData, *, qfrc: np.ndarray | None = None) -> None:
        """Add the generalized force to ``qfrc`` (default ``qfrc_applied``) at the joint's dof."""
        if not self.active:
            self._value[0] = 0.0
            return
        if self._dof < 0 or self._jnt >= mj_model.njnt:
            self.resolve_ids(mj_model, mj_data)
        f = float(self.generalized_force(mj_model, mj_data))
        if not math.isfinite(f):
            raise ValueError(f"load '{self.name}': non-finite generalized force")
        self._value[0] = f
        target = mj_data.qfrc_applied if qfrc is None else qfrc
        target[self._dof] += f

    def get_visuals(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> list[ArrowConfig]:
        """An arrow along the joint axis at its anchor: a torque (amber) or a force (emerald)."""
        if not self.active or self._jnt < 0 or abs(self._value[0]) < 1e-4:
            return []
        hinge = self._unit == "N*m"
        vec = mj_data.xaxis[self._jnt] * self._value[0]
        color = Color.AMBER_500.rgba if hinge else Color.EMERALD_500.rgba
        return [ArrowConfig(pos=mj_data.xanchor[self._jnt].copy(), vec=vec, color=color, is_torque=hinge)]


class JointTorque(JointLoad):
    """A generalized force ``magnitude`` (N·m on a hinge, N on a slide): number, param or profile."""

    magnitude: Scalar = 0.0

    def params(self) -> list[NamedValue]:
        return [self.magnitude] if isinstance(self.magnitude, NamedValue) else []

    def generalized_force(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> float:
        return value_at(self.magnitude, mj_data.time)


class JointFriction(JointLoad):
    """Friction in a hinge or slide joint (see the module docstring for the law).

    Give ``coulomb`` (Fc, N·m or N), or ``mu`` and ``pin_radius`` (m) for a pin whose Coulomb
    level follows the force it carries. ``breakaway`` (default: Fc) must be >= Fc; velocities
    (rad/s or m/s) must be positive; ``viscous`` b in N·m·s/rad or N·s/m. Every coefficient takes
    a number or a param (a param below zero acts as zero).
    """

    coulomb: Scalar | None = None
    breakaway: Scalar | None = None
    stribeck_velocity: Scalar = DEFAULT_STRIBECK_VELOCITY
    viscous: Scalar = 0.0
    coulomb_velocity: Scalar = DEFAULT_COULOMB_VELOCITY
    mu: Scalar | None = None
    pin_radius: Scalar | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        pin = (self.mu is not None, self.pin_radius is not None)
        if pin[0] != pin[1]:
            raise ValueError("'mu' and 'pin_radius' go together")
        if self.coulomb is not None and pin[0]:
            raise ValueError("give either 'coulomb' or 'mu' + 'pin_radius', not both")
        if self.coulomb is None and not pin[0]:
            raise ValueError("needs 'coulomb' (the Coulomb level) or 'mu' + 'pin_radius' (a pin)")
        if pin[0] and self.breakaway is not None:
            raise ValueError(
                "'breakaway' goes with 'coulomb' (with 'mu' + 'pin_radius' the Coulomb level follows the pin's load)"
            )
        numbers = {k: getattr(self, k) for k in ("coulomb", "breakaway", "viscous", "mu", "pin_radius")}
        for k, v in numbers.items():
            if isinstance(v, (int, float)) and v < 0:
                raise ValueError(f"'{k}' must not be negative, got {v:g}")
        for k in ("stribeck_velocity", "coulomb_velocity"):
            v = getattr(self, k)
            if isinstance(v, (int, float)) and not v > 0:
                raise ValueError(f"'{k}' must be positive, got {v:g}")
        c, b = self.coulomb, self.breakaway
        if isinstance(c, (int, float)) and isinstance(b, (int, float)) and b < c:
            raise ValueError(f"'breakaway' ({b:g}) must be at least 'coulomb' ({c:g})")
        self._reaction = 0.0

    @property
    def uses_pin(self) -> bool:
        """Whether the Coulomb level follows the joint's reaction (mu + pin_radius)."""
        return self.mu is not None

    @property
    def pin_load(self) -> float:
        """|R|: the force (N) the joint carried at the end of the last step."""
        return self._reaction

    @pin_load.setter
    def pin_load(self, newtons: float) -> None:
        self._reaction = float(newtons)

    def params(self) -> list[NamedValue]:
        return [
            v
            for v in (
                self.coulomb,
                self.breakaway,
                self.stribeck_velocity,
                self.viscous,
                self.coulomb_velocity,
                self.mu,
                self.pin_radius,
            )
            if isinstance(v, NamedValue)
        ]

    def update_reaction(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Read |R| from ``cfrc_int`` of the joint's body (call after ``mj_rnePostConstraint``)."""
        if self._jnt < 0:
            self.resolve_ids(mj_model, mj_data)
        body = int(mj_model.jnt_bodyid[self._jnt])
        self._reaction = float(np.linalg.norm(mj_data.cfrc_int[body, 3:6]))

    def coulomb_level(self, t: float) -> float:
        """Fc (N·m or N) at time ``t`` (s): ``coulomb``, or mu·pin_radius·|R|."""
        if self.mu is not None:
            assert self.pin_radius is not None  # mu and pin_radius go together (__post_init__)
            return max(0.0, value_at(self.mu, t)) * max(0.0, value_at(self.pin_radius, t)) * self._reaction
        assert self.coulomb is not None  # without a pin, coulomb is given (__post_init__)
        return max(0.0, value_at(self.coulomb, t))

    def generalized_force(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> float:
        t = mj_data.time
        fc = self.coulomb_level(t)
        fb = fc if self.breakaway is None else max(fc, value_at(self.breakaway, t))
        return friction_force(
            float(mj_data.qvel[self._dof]),
            coulomb=fc,
            breakaway=fb,
            stribeck_velocity=max(_TINY, value_at(self.stribeck_velocity, t)),
            viscous=max(0.0, value_at(self.viscous, t)),
            coulomb_velocity=max(_TINY, value_at(self.coulomb_velocity, t)),
        )


def update_pin_reactions(mj_model: mujoco.MjModel, mj_data: mujoco.MjData, loads: list[JointFriction]) -> None:
    """Refresh every pin friction's |R| from MuJoCo's interaction forces (one RNE pass for all)."""
    if loads:
        mujoco.mj_rnePostConstraint(mj_model, mj_data)
        for ld in loads:
            ld.update_reaction(mj_model, mj_data)
