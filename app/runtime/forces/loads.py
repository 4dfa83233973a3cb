"""Loads: forces, torques and point-to-point springs acting on a model.

The classes are keyword-only dataclasses (every ``Load`` subclass is made one) describing loads
with the reference runtime's names, fields and bases:
``Load`` → ``BodyReactionForce`` (a reaction on ``xtion_body``) → ``VectorForce``,
``VectorTorque`` (→ ``GeneralLoad``), ``ScalarForce``, ``ScalarTorque``; and
``Load`` → ``PointToPointForce`` (a reaction on ``xtion_site``); every constructor also takes the
scenario's words ``at=`` / ``to=`` for ``action_site`` / the reaction point. Each computes its world-frame
force and torque on its own (``calculate``) and applies it (``apply_load``): the general,
per-load path. Point-to-point loads whose model was compiled by the rig are also evaluated
together, array-wise, by ``mjrig.runtime.forces.engine.LoadEngine``; both paths share one spring law
(``mjrig.runtime.forces.springs``).

Sign conventions: forces in N and torques in N·m in the world frame unless a ``rel_to_site``
frame is given. A point-to-point load's scalar is a *tension* along the line between its points:
positive pushes the points apart; a stretched spring therefore has a negative scalar and pulls
``at`` toward ``to``. The reaction on ``to`` is always equal and opposite.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any, ClassVar

import mujoco
import numpy as np

from mjrig.runtime.forces.load_base import BodyReactionForce, Load
from mjrig.runtime.forces.springs import SpringLaw, spring_tension
from mjrig.runtime.points import AnySite, Point, parse_point
from mjrig.runtime.values import NamedValue, Scalar, value_at

__all__ = [
    "Load",
    "BodyReactionForce",
    "VectorForce",
    "VectorTorque",
    "GeneralLoad",
    "ScalarForce",
    "ScalarTorque",
    "PointToPointForce",
    "SpringLaw",
    "spring_tension",
]


def _vec3(value: Any, what: str) -> Any:
    if callable(value) and not isinstance(value, (NamedValue,)) and not hasattr(value, "to_dict"):
        return value
    seq = list(value)
    if len(seq) != 3:
        raise ValueError(f"{what} needs 3 components, got {len(seq)}")
    return seq


def _eval3(value: Any, t: float, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    if callable(value) and not isinstance(value, list):
        return np.asarray(value(t, model, data), dtype=float).reshape(3)
    return np.array([value_at(x, t) for x in value], dtype=float)


def _params_of(values: Sequence[Any]) -> list[NamedValue]:
    return [x for x in values if isinstance(x, NamedValue)]


def _no_vector(self: Any) -> Any:
    raise AttributeError(f"{type(self).__name__} has 'force' and 'torque', no single 'vector'")


class _WrenchLoad(BodyReactionForce):
    """Shared by the vector loads: a ``force`` [fx,fy,fz] (N) and a ``torque`` [tx,ty,tz] (N·m).

    Components take numbers, params or profiles; or pass a callable ``f(t, model, data) -> (3,)``.
    Vectors are in the world frame, or in the frame of ``rel_to_site``. A subclass with a single
    ``vector`` field names the field it stands for in ``_vector_of``.
    """

    force: Any = field(default_factory=lambda: [0.0, 0.0, 0.0])
    torque: Any = field(default_factory=lambda: [0.0, 0.0, 0.0])
    _vector_of: ClassVar[str] = ""

    def __setattr__(self, key: str, value: Any) -> None:
        if key == "vector" and self._vector_of and "_listeners" in self.__dict__:  # a live edit
            value = _vec3(value, f"load '{self.name}' vector")
            object.__setattr__(self, self._vector_of, value)
        super().__setattr__(key, value)

    def __post_init__(self) -> None:
        if self._vector_of:
            vector = self.__dict__.get("vector")
            if vector is None:  # no vector given: the force/torque field is it
                vector = getattr(self, self._vector_of)
                object.__setattr__(self, "vector", vector)
            setattr(self, self._vector_of, vector)
        super().__post_init__()
        self.force = _vec3(self.force, f"load '{self.name}' force")
        self.torque = _vec3(self.torque, f"load '{self.name}' torque")
        if self._vector_of:
            object.__setattr__(self, "vector", getattr(self, self._vector_of))

    def params(self) -> list[NamedValue]:
        return _params_of(
            [
                *(self.force if isinstance(self.force, list) else []),
                *(self.torque if isinstance(self.torque, list) else []),
            ]
        )

    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        t = mj_data.time
        f = _eval3(self.force, t, mj_model, mj_data)
        tq = _eval3(self.torque, t, mj_model, mj_data)
        frame = self._frame(mj_model, mj_data)
        if frame is not None:
            f, tq = frame @ f, frame @ tq
        return f, tq


class VectorForce(_WrenchLoad):
    """A force ``vector`` [fx,fy,fz] (N) at the action point; world frame or ``rel_to_site``'s.

    ``vector`` and ``force`` are the same field; the reaction (−F) acts on ``xtion_body``.
    """

    vector: Any = None
    _vector_of: ClassVar[str] = "force"


class VectorTorque(_WrenchLoad):
    """A torque ``vector`` [tx,ty,tz] (N·m) on the action point's body; world or ``rel_to_site`` frame.

    ``vector`` and ``torque`` are the same field; the reaction (−T) acts on ``xtion_body``.
    """

    vector: Any = None
    _vector_of: ClassVar[str] = "torque"

    def readout(self) -> tuple[tuple[float, str], ...]:
        t = self.last_torque
        return ((float(np.sqrt(t @ t)), "N*m"),)


class GeneralLoad(VectorForce, VectorTorque):
    """A 6-DOF load: ``force`` [fx,fy,fz] (N) and ``torque`` [tx,ty,tz] (N·m) at the action point.

    Components take numbers, params or profiles; or pass a callable ``f(t, model, data) -> (3,)``.
    Vectors are in the world frame, or in the frame of ``rel_to_site``. The reaction (−F, −T)
    acts on ``xtion_body`` when given. A vector force and a vector torque at once (hence its
    bases), so it has no single ``vector``.
    """

    # No `vector` field: a ClassVar annotation takes the one inherited from the bases out of the
    # dataclass's fields and __init__ (the dataclasses module's own rule), which mypy does not model:
    # it only sees an instance variable redeclared as a class variable.
    vector: ClassVar[property] = property(_no_vector)  # type: ignore[misc]
    _vector_of: ClassVar[str] = ""

    def readout(self) -> tuple[tuple[float, str], ...]:
        f, t = self.last_force, self.last_torque
        return ((float(np.sqrt(f @ f)), "N"), (float(np.sqrt(t @ t)), "N*m"))


def _site_axis(load: Load, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> np.ndarray:
    frame = load.rel_to_site or load.action_site
    return frame.rt_mat(mj_model, mj_data)[:, 0]


class _ScalarLoad(BodyReactionForce):
    """Shared by the scalar loads: a value along the local x-axis of the action site.

    ``magnitude`` takes a number, param or profile; ``scalar_func(t, x_axis, model, data)`` (the
    reference's form; t in s, x_axis a world unit vector) overrides it when given. The subclass
    says whether the value is a force (N) or a torque (N·m) in ``_is_torque``.
    """

    magnitude: Scalar = 0.0
    scalar_func: Callable[[float, np.ndarray, mujoco.MjModel, mujoco.MjData], float] | None = None
    _is_torque: ClassVar[bool] = False

    def params(self) -> list[NamedValue]:
        return _params_of([self.magnitude])

    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        axis = _site_axis(self, mj_model, mj_data)
        t = mj_data.time
        mag = (
            float(self.scalar_func(t, axis, mj_model, mj_data))
            if self.scalar_func is not None
            else value_at(self.magnitude, t)
        )
        zero = np.zeros(3)
        return (zero, mag * axis) if self._is_torque else (mag * axis, zero)


class ScalarForce(_ScalarLoad):
    """A force along the local x-axis of the action site: ``magnitude`` (N), or
    ``scalar_func(t, x_axis, model, data) -> N``. The reaction acts on ``xtion_body`` when given."""

    _is_torque: ClassVar[bool] = False


class ScalarTorque(_ScalarLoad):
    """A torque about the local x-axis of the action site: ``magnitude`` (N·m), or
    ``scalar_func(t, x_axis, model, data) -> N·m``. The reaction acts on ``xtion_body`` when given."""

    _is_torque: ClassVar[bool] = True

    def readout(self) -> tuple[tuple[float, str], ...]:
        t = self.last_torque
        return ((float(np.sqrt(t @ t)), "N*m"),)


class PointToPointForce(Load):
    """A tension along the line between ``action_site`` (``at=``) and ``xtion_site`` (``to=``).

    Either a built-in ``law`` (see the factories) or ``magnitude_func(d, v, r0, model, data)``
    returning the tension in N (positive pushes the points apart), where d is the distance (m),
    v its rate of change (m/s) and r0 the distance when the rig was resolved (m).
    """

    xtion_site: AnySite
    magnitude_func: Callable[[float, float, float, mujoco.MjModel, mujoco.MjData], float] | None = None
    law: SpringLaw | None = None
    is_point_to_point: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self.xtion_site = parse_point(self.xtion_site)
        self._r0_mag = math.nan
        self._r0_data: weakref.ref | None = None  # the MjData r0 was taken on
        self.last_length = 0.0
        """Distance between the points at the last evaluation (m)."""
        self.last_velocity = 0.0
        """Rate of change of that distance at the last evaluation (m/s)."""
        self.last_tension = 0.0
        """Tension at the last evaluation (N, positive pulling the points together)."""

    @property
    def r0(self) -> float:
        """Distance between the points when the run started (m); NaN before the first resolve."""
        return self._r0_mag

    def keep_r0(self, r0: float, mj_data: mujoco.MjData) -> None:
        """Use ``r0`` (m) as the initial distance for the run on ``mj_data`` (a rig rebuilt
        mid-run keeps the stroke window where it was)."""
        self._r0_mag = r0
        self._r0_data = weakref.ref(mj_data)

    @property
    def reaction(self) -> Point | None:
        return self.xtion_site

    def params(self) -> list[NamedValue]:
        return self.law.params() if self.law is not None else []

    def resolve_ids(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Check the points and take the initial distance r0 (m) from the current state.

        r0 is taken once per MjData (a run): re-resolving the same run after an edit (a load
        attached, recording started) keeps it, so a stroke window never moves mid-run.
        """
        super().resolve_ids(mj_model, mj_data)
        if self._r0_data is None or self._r0_data() is not mj_data:
            self._r0_mag = self.action_site.rt_dm(self.xtion_site, mj_model, mj_data)
            self._r0_data = weakref.ref(mj_data)

    def tension(self, d: float, v: float, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> float:
        """Tension (N) at distance d (m) and rate v (m/s)."""
        if self.magnitude_func is not None:
            return float(self.magnitude_func(d, v, self._r0_mag, mj_model, mj_data))
        assert self.law is not None
        return self.law.tension(d, v, self._r0_mag, mj_data.time)

    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        if self._r0_data is None:  # used on its own (apply_load) before any resolve: r0 is now
            self.resolve_ids(mj_model, mj_data)
        pa = self.action_site.rt_pos(mj_model, mj_data)
        pb = self.xtion_site.rt_pos(mj_model, mj_data)
        delta = pb - pa
        d = float(np.linalg.norm(delta))
        u = delta / d if d > 1e-12 else np.zeros(3)
        v = float(u @ (self.xtion_site.rt_vel(mj_model, mj_data) - self.action_site.rt_vel(mj_model, mj_data)))
        self.last_length, self.last_velocity = d, v
        self.last_tension = -self.tension(d, v, mj_model, mj_data)
        return self.last_tension * u, np.zeros(3)

    @classmethod
    def _spring(cls, name: str, action_site: AnySite, xtion_site: AnySite, law: SpringLaw) -> PointToPointForce:
        return cls(name=name, action_site=action_site, xtion_site=xtion_site, law=law)

    @classmethod
    def ideal_spring(
        cls,
        name: str,
        action_site: AnySite,
        xtion_site: AnySite,
        stiffness: Scalar = 0.0,
        damping: Scalar = 0.0,
        rest_length: Scalar = 0.0,
    ) -> PointToPointForce:
        """Linear spring-damper, in tension and compression: k (N/m), c (N·s/m), rest length (m)."""
        return cls._spring(name, action_site, xtion_site, SpringLaw(stiffness, damping, rest_length))

    @classmethod
    def compression_spring(
        cls,
        name: str,
        action_site: AnySite,
        xtion_site: AnySite,
        stiffness: Scalar = 0.0,
        damping: Scalar = 0.0,
        rest_length: Scalar = 0.0,
    ) -> PointToPointForce:
        """Spring-damper acting only while the distance is below ``rest_length`` (bumpers, end stops)."""
        law = SpringLaw(stiffness, damping, rest_length, compression_only=True)
        return cls._spring(name, action_site, xtion_site, law)

    @classmethod
    def tension_spring(
        cls,
        name: str,
        action_site: AnySite,
        xtion_site: AnySite,
        stiffness: Scalar = 0.0,
        damping: Scalar = 0.0,
        rest_length: Scalar = 0.0,
    ) -> PointToPointForce:
        """Spring-damper acting only while the distance is above ``rest_length`` (cables, bungees)."""
        return cls._spring(name, action_site, xtion_site, SpringLaw(stiffness, damping, rest_length, tension_only=True))

    @classmethod
    def stroke_compression_spring(
        cls,
        name: str,
        action_site: AnySite,
        xtion_site: AnySite,
        stiffness: Scalar = 0.0,
        damping: Scalar = 0.0,
        preload: Scalar = 0.0,
        max_stroke: Scalar = 0.1,
    ) -> PointToPointForce:
        """Preloaded spring with a limited stroke: pushes apart with max(0, preload − k(d−r0) − c v)
        while r0 <= d <= r0 + max_stroke, r0 being the initial distance (m)."""
        law = SpringLaw(stiffness, damping, preload=preload, max_stroke=max_stroke, stroke_limited=True)
        return cls._spring(name, action_site, xtion_site, law)
