"""Loads: forces, torques and point-to-point springs acting on a model.

The classes are descriptions (data) with the reference runtime's names and fields. Each can
compute its world-frame force and torque on its own (``calculate``: the general, per-load path).
Point-to-point loads whose model was compiled by the rig are also evaluated together, array-wise,
by ``mjrig.runtime.engine.LoadEngine``; both paths share one spring law (``spring_tension``).

Sign conventions: forces in N and torques in N·m in the world frame unless a ``rel_to_site``
frame is given. A point-to-point load's scalar is a *tension* along the line between its points:
positive pushes the points apart; a stretched spring therefore has a negative scalar and pulls
``at`` toward ``to``. The reaction on ``to`` is always equal and opposite.
"""
from __future__ import annotations

import math
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Sequence

import mujoco
import numpy as np

from mjrig.runtime.points import AnySite, Point, parse_point
from mjrig.runtime.values import NamedValue, Scalar, value_at
from mjrig.runtime.visuals import ArrowConfig, Color

__all__ = [
    "Load", "VectorForce", "VectorTorque", "GeneralLoad", "ScalarForce", "ScalarTorque",
    "PointToPointForce", "SpringLaw", "spring_tension", "SPRING_KINDS",
]

SPRING_KINDS = ("ideal_spring", "compression_spring", "tension_spring", "stroke_compression_spring")
_INF = math.inf


def spring_tension(s: np.ndarray, v: np.ndarray, k: np.ndarray, c: np.ndarray, p: np.ndarray,
                   tmin: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, out: np.ndarray,
                   tmp: np.ndarray, mask: np.ndarray, mask2: np.ndarray) -> np.ndarray:
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
    """A built-in spring-damper: stiffness (N/m), damping (N·s/m), lengths (m), preload (N)."""

    kind: str
    stiffness: Scalar = 0.0
    damping: Scalar = 0.0
    rest_length: Scalar = 0.0
    preload: Scalar = 0.0
    max_stroke: Scalar = 0.1

    def coefficients(self, r0: float, t: float) -> tuple[float, float, float, float, float, float, float]:
        """(reference length, preload, k, c, minimum tension, window lo, window hi) at time t.

        ``r0`` is the distance between the points when the rig was resolved (m).
        """
        k = value_at(self.stiffness, t)
        c = value_at(self.damping, t)
        if self.kind == "stroke_compression_spring":
            return r0, value_at(self.preload, t), k, c, 0.0, 0.0, value_at(self.max_stroke, t)
        rest = value_at(self.rest_length, t)
        lo, hi = {"ideal_spring": (-_INF, _INF), "tension_spring": (0.0, _INF),
                  "compression_spring": (-_INF, 0.0)}[self.kind]
        return rest, 0.0, k, c, -_INF, lo, hi

    def tension(self, d: float, v: float, r0: float, t: float) -> float:
        """Tension (N) at distance ``d`` (m) and rate ``v`` (m/s), one spring at a time."""
        ref, p, k, c, tmin, lo, hi = self.coefficients(r0, t)
        one = lambda x: np.array([x], dtype=float)  # noqa: E731
        out, tmp = np.zeros(1), np.zeros(1)
        m1, m2 = np.zeros(1, bool), np.zeros(1, bool)
        spring_tension(one(d - ref), one(v), one(k), one(c), one(p), one(tmin), one(lo), one(hi),
                       out=out, tmp=tmp, mask=m1, mask2=m2)
        return float(out[0])

    def params(self) -> list[NamedValue]:
        """The params this law reads (so the engine can listen to them)."""
        return [x for x in (self.stiffness, self.damping, self.rest_length, self.preload, self.max_stroke)
                if isinstance(x, NamedValue)]


@dataclass(eq=False, kw_only=True)
class Load(ABC):
    """Base class of every load: a named force/torque acting at ``action_site``.

    ``action_site``, ``rel_to_site`` (the frame its vectors are given in; None: world) and the
    reaction point accept Point objects or the contract's strings ("tip", "body:arm@0,0,0.1").
    Setting any field while the rig runs takes effect at the next step.
    """

    name: str
    action_site: AnySite
    active: bool = True
    rel_to_site: AnySite | None = None

    kind: ClassVar[str] = ""
    is_point_to_point: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "_listeners", [])
        self.action_site = parse_point(self.action_site)
        if self.rel_to_site is not None:
            self.rel_to_site = parse_point(self.rel_to_site)
        self._last_f = np.zeros(3)
        self._last_t = np.zeros(3)

    def __setattr__(self, key: str, value: Any) -> None:
        object.__setattr__(self, key, value)
        if not key.startswith("_"):
            for fn in getattr(self, "_listeners", ()):
                fn(self)

    def subscribe(self, fn: Callable[["Load"], None]) -> None:
        """Call ``fn(self)`` whenever a public field changes."""
        if fn not in self._listeners:
            self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[["Load"], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    @property
    def reaction(self) -> Point | None:
        """Where the reaction acts (None: the world)."""
        return None

    def points(self) -> list[Point]:
        """Every point this load names (for validation)."""
        pts = [self.action_site]
        if self.rel_to_site is not None:
            pts.append(self.rel_to_site)
        if self.reaction is not None:
            pts.append(self.reaction)
        return pts

    def params(self) -> list[NamedValue]:
        """Params this load reads."""
        return []

    def resolve_ids(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Check every point against the compiled model (raises ConfigError naming the bad one)."""
        for p in self.points():
            p.get_id(mj_model)

    def _frame(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> np.ndarray | None:
        return None if self.rel_to_site is None else self.rel_to_site.rt_mat(mj_model, mj_data)

    @abstractmethod
    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """World-frame (force N (3,), torque N·m (3,)) on the action point at the current state."""

    def get_visuals(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> list[ArrowConfig]:
        """Arrows for the last computed force (action colour), torque and reaction."""
        if not self.active:
            return []
        out: list[ArrowConfig] = []
        pos = self.action_site.rt_pos(mj_model, mj_data)
        f, t = np.array(self._last_f, float), np.array(self._last_t, float)
        if np.linalg.norm(f) > 1e-4:
            out.append(ArrowConfig(pos=pos, vec=f, color=Color.ACTION))
        if np.linalg.norm(t) > 1e-4:
            out.append(ArrowConfig(pos=pos, vec=t, color=Color.TORQUE, is_torque=True))
        react = self.reaction
        if react is not None and np.linalg.norm(f) > 1e-4:
            out.append(ArrowConfig(pos=react.rt_pos(mj_model, mj_data), vec=-f, color=Color.REACTION))
        return out


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


@dataclass(eq=False, kw_only=True)
class GeneralLoad(Load):
    """A 6-DOF load: ``force`` [fx,fy,fz] (N) and ``torque`` [tx,ty,tz] (N·m).

    Components take numbers, params or profiles; or pass a callable ``f(t, model, data) -> (3,)``.
    Vectors are in the world frame, or in the frame of ``rel_to_site``. The reaction (−F, −T)
    acts on ``xtion_body`` when given.
    """

    force: Any = field(default_factory=lambda: [0.0, 0.0, 0.0])
    torque: Any = field(default_factory=lambda: [0.0, 0.0, 0.0])
    xtion_body: AnySite | None = None
    kind: ClassVar[str] = "general"
    _vector_of: ClassVar[str] = ""  # VectorForce/VectorTorque: the field their `vector` stands for

    def __setattr__(self, key: str, value: Any) -> None:
        if key == "vector" and self._vector_of and "_listeners" in self.__dict__:  # a live edit
            value = _vec3(value, f"load '{self.name}' vector")
            object.__setattr__(self, self._vector_of, value)
        super().__setattr__(key, value)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.force = _vec3(self.force, f"load '{self.name}' force")
        self.torque = _vec3(self.torque, f"load '{self.name}' torque")
        if self.xtion_body is not None:
            self.xtion_body = parse_point(self.xtion_body)

    @property
    def reaction(self) -> Point | None:
        return self.xtion_body

    def params(self) -> list[NamedValue]:
        return _params_of([*(self.force if isinstance(self.force, list) else []),
                           *(self.torque if isinstance(self.torque, list) else [])])

    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        t = mj_data.time
        f = _eval3(self.force, t, mj_model, mj_data)
        tq = _eval3(self.torque, t, mj_model, mj_data)
        frame = self._frame(mj_model, mj_data)
        if frame is not None:
            f, tq = frame @ f, frame @ tq
        return f, tq


@dataclass(eq=False, kw_only=True)
class _VectorLoad(GeneralLoad):
    """A GeneralLoad whose one ``vector`` stands for its force or its torque (``_vector_of``)."""

    vector: Any = field(default_factory=lambda: [0.0, 0.0, 0.0])
    _vector_of: ClassVar[str] = "force"

    def __post_init__(self) -> None:
        setattr(self, self._vector_of, self.vector)
        super().__post_init__()
        object.__setattr__(self, "vector", getattr(self, self._vector_of))


@dataclass(eq=False, kw_only=True)
class VectorForce(_VectorLoad):
    """A force ``vector`` [fx,fy,fz] (N) at the action point; world frame or ``rel_to_site``'s."""

    kind: ClassVar[str] = "force"
    _vector_of: ClassVar[str] = "force"


@dataclass(eq=False, kw_only=True)
class VectorTorque(_VectorLoad):
    """A torque ``vector`` [tx,ty,tz] (N·m) on the action point's body; world or ``rel_to_site`` frame."""

    kind: ClassVar[str] = "torque"
    _vector_of: ClassVar[str] = "torque"


def _site_axis(load: Load, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> np.ndarray:
    frame = load.rel_to_site or load.action_site
    return frame.rt_mat(mj_model, mj_data)[:, 0]


@dataclass(eq=False, kw_only=True)
class ScalarForce(Load):
    """A force along the local x-axis of the action site: ``magnitude`` (N).

    ``magnitude`` takes a number, param or profile; ``scalar_func(t, x_axis, model, data)`` (the
    reference's form) overrides it when given. The reaction acts on ``xtion_body`` when given.
    """

    magnitude: Scalar = 0.0
    scalar_func: Callable[[float, np.ndarray, mujoco.MjModel, mujoco.MjData], float] | None = None
    xtion_body: AnySite | None = None
    kind: ClassVar[str] = "scalar_force"
    _is_torque: ClassVar[bool] = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.xtion_body is not None:
            self.xtion_body = parse_point(self.xtion_body)

    @property
    def reaction(self) -> Point | None:
        return self.xtion_body

    def params(self) -> list[NamedValue]:
        return _params_of([self.magnitude])

    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        axis = _site_axis(self, mj_model, mj_data)
        t = mj_data.time
        mag = (float(self.scalar_func(t, axis, mj_model, mj_data)) if self.scalar_func is not None
               else value_at(self.magnitude, t))
        zero = np.zeros(3)
        return (zero, mag * axis) if self._is_torque else (mag * axis, zero)


@dataclass(eq=False, kw_only=True)
class ScalarTorque(ScalarForce):
    """A torque about the local x-axis of the action site: ``magnitude`` (N·m)."""

    kind: ClassVar[str] = "scalar_torque"
    _is_torque: ClassVar[bool] = True


@dataclass(eq=False, kw_only=True)
class PointToPointForce(Load):
    """A tension along the line between ``action_site`` and ``xtion_site``.

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
        self._last_d = 0.0
        self._last_v = 0.0

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.law.kind if self.law is not None else "point_to_point"

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
        pa = self.action_site.rt_pos(mj_model, mj_data)
        pb = self.xtion_site.rt_pos(mj_model, mj_data)
        delta = pb - pa
        d = float(np.linalg.norm(delta))
        u = delta / d if d > 1e-12 else np.zeros(3)
        v = float(u @ (self.xtion_site.rt_vel(mj_model, mj_data) - self.action_site.rt_vel(mj_model, mj_data)))
        self._last_d, self._last_v = d, v
        return -self.tension(d, v, mj_model, mj_data) * u, np.zeros(3)

    @classmethod
    def _spring(cls, kind: str, name: str, action_site: AnySite, xtion_site: AnySite, **law: Any) -> "PointToPointForce":
        return cls(name=name, action_site=action_site, xtion_site=xtion_site, law=SpringLaw(kind, **law))

    @classmethod
    def ideal_spring(cls, name: str, action_site: AnySite, xtion_site: AnySite, stiffness: Scalar = 0.0,
                     damping: Scalar = 0.0, rest_length: Scalar = 0.0) -> "PointToPointForce":
        """Linear spring-damper, in tension and compression: k (N/m), c (N·s/m), rest length (m)."""
        return cls._spring("ideal_spring", name, action_site, xtion_site, stiffness=stiffness,
                           damping=damping, rest_length=rest_length)

    @classmethod
    def compression_spring(cls, name: str, action_site: AnySite, xtion_site: AnySite, stiffness: Scalar = 0.0,
                           damping: Scalar = 0.0, rest_length: Scalar = 0.0) -> "PointToPointForce":
        """Spring-damper acting only while the distance is below ``rest_length`` (bumpers, end stops)."""
        return cls._spring("compression_spring", name, action_site, xtion_site, stiffness=stiffness,
                           damping=damping, rest_length=rest_length)

    @classmethod
    def tension_spring(cls, name: str, action_site: AnySite, xtion_site: AnySite, stiffness: Scalar = 0.0,
                       damping: Scalar = 0.0, rest_length: Scalar = 0.0) -> "PointToPointForce":
        """Spring-damper acting only while the distance is above ``rest_length`` (cables, bungees)."""
        return cls._spring("tension_spring", name, action_site, xtion_site, stiffness=stiffness,
                           damping=damping, rest_length=rest_length)

    @classmethod
    def stroke_compression_spring(cls, name: str, action_site: AnySite, xtion_site: AnySite,
                                  stiffness: Scalar = 0.0, damping: Scalar = 0.0, preload: Scalar = 0.0,
                                  max_stroke: Scalar = 0.1) -> "PointToPointForce":
        """Preloaded spring with a limited stroke: pushes apart with max(0, preload − k(d−r0) − c v)
        while r0 <= d <= r0 + max_stroke, r0 being the initial distance (m)."""
        return cls._spring("stroke_compression_spring", name, action_site, xtion_site, stiffness=stiffness,
                           damping=damping, preload=preload, max_stroke=max_stroke)
