"""Params bound to model fields: ``model = "body:block.mass"`` writes the param into the model.

A binding writes its param's value when the rig is resolved and again whenever the value changes;
a change only flags the binding, and the write happens on the stepping thread at the next step
boundary (never mid-step). Supported paths (SI units):

=========================  ===========================================================
``body:NAME.mass``         kg; the body's inertia is scaled by the same factor, so its
                           radius of gyration stays (a heavier body of the same shape)
``joint:NAME.damping``     N·s/m or N·m·s/rad, every dof of the joint
``joint:NAME.stiffness``   N/m or N·m/rad
``joint:NAME.frictionloss``  N or N·m, every dof of the joint
``joint:NAME.armature``    kg or kg·m², every dof of the joint
``geom:NAME.friction``     the sliding friction coefficient (first of the three)
``actuator:NAME.gear``     the first gear component
``tendon:NAME.stiffness``  N/m
``tendon:NAME.damping``    N·s/m
``opt.timestep``           s
``opt.gravity_z``          m/s², the z component of gravity
=========================  ===========================================================

After a mass, armature or gear change ``mj_setConst`` refreshes the constants MuJoCo derives from
them (subtree masses, inverse weights, ``actuator_acc0``...) on a scratch MjData, so the running
state is untouched.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names, find_id
from mjrig.runtime.values import NamedValue

__all__ = ["ModelField", "ModelBinding", "BindingSet", "parse_model_field", "MODEL_FIELDS", "WRITTEN", "needs_setconst"]

MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "body": ("mass",),
    "joint": ("damping", "stiffness", "frictionloss", "armature"),
    "geom": ("friction",),
    "actuator": ("gear",),
    "tendon": ("stiffness", "damping"),
    "opt": ("timestep", "gravity_z"),
}
"""Each entity kind's writable attributes."""

_OBJ = {
    "body": (mujoco.mjtObj.mjOBJ_BODY, "nbody"),
    "joint": (mujoco.mjtObj.mjOBJ_JOINT, "njnt"),
    "geom": (mujoco.mjtObj.mjOBJ_GEOM, "ngeom"),
    "actuator": (mujoco.mjtObj.mjOBJ_ACTUATOR, "nu"),
    "tendon": (mujoco.mjtObj.mjOBJ_TENDON, "ntendon"),
}
_SETCONST = {("body", "mass"), ("joint", "armature"), ("actuator", "gear")}
WRITTEN = (
    "body_mass",
    "body_inertia",
    "jnt_stiffness",
    "dof_damping",
    "dof_frictionloss",
    "dof_armature",
    "geom_friction",
    "actuator_gear",
    "tendon_stiffness",
    "tendon_damping",
    "opt.gravity",
    "opt.timestep",
)
"""Every MjModel field a binding writes (``BindingSet._write``; ``opt.*`` for MjOption's), besides
what ``mj_setConst`` derives after a ``_SETCONST`` write: a lock-step sweep gives each trial these."""


def needs_setconst(bindings: list[ModelBinding]) -> bool:
    """Whether writing ``bindings`` makes ``mj_setConst`` run (masses, armatures, gears)."""
    return any((b.field.kind, b.field.attr) in _SETCONST for b in bindings)


def _all_paths() -> list[str]:
    return [f"{k}.{a}" if k == "opt" else f"{k}:NAME.{a}" for k, attrs in MODEL_FIELDS.items() for a in attrs]


@dataclass(frozen=True)
class ModelField:
    """A parsed field path: entity kind, entity name ('' for opt) and attribute."""

    kind: str
    name: str
    attr: str

    def __str__(self) -> str:
        return f"opt.{self.attr}" if self.kind == "opt" else f"{self.kind}:{self.name}.{self.attr}"


def parse_model_field(text: str) -> ModelField:
    """Parse ``body:NAME.mass``, ``opt.timestep``...; ConfigError naming the closest valid forms."""
    text = text.strip()
    if text.startswith("opt."):
        attr = text[4:]
        if attr not in MODEL_FIELDS["opt"]:
            raise ConfigError(f"unknown model field '{text}'{closest_names(text, _all_paths())}")
        return ModelField("opt", "", attr)
    kind, sep, rest = text.partition(":")
    name, dot, attr = rest.rpartition(".")
    if not sep or kind not in _OBJ:
        raise ConfigError(
            f"unknown model field '{text}': it starts with one of "
            f"{', '.join(k + ':' for k in _OBJ)} or opt.{closest_names(kind, list(MODEL_FIELDS))}"
        )
    if not dot or not name:
        raise ConfigError(
            f"model field '{text}' must read {kind}:NAME.ATTRIBUTE (attributes: {', '.join(MODEL_FIELDS[kind])})"
        )
    if attr not in MODEL_FIELDS[kind]:
        raise ConfigError(
            f"unknown {kind} attribute '{attr}' in '{text}'{closest_names(attr, list(MODEL_FIELDS[kind]))}"
        )
    return ModelField(kind, name, attr)


class ModelBinding:
    """``param`` written into model field ``field`` (``"body:block.mass"`` or a ModelField)."""

    def __init__(self, param: NamedValue, *, field: str | ModelField) -> None:
        self.param = param
        self.field = field if isinstance(field, ModelField) else parse_model_field(field)
        self.reference: tuple[mujoco.MjModel, float, np.ndarray] | None = None
        """(model, mass, inertia) of a body as first bound on that model: every later write scales
        from it, so re-binding the same model (a rebuilt rig, the next sweep trial) never drifts."""

    def body_reference(self, model: mujoco.MjModel, i: int) -> tuple[float, np.ndarray]:
        """The mass (kg) and inertia (kg·m²) body ``i`` of ``model`` had when first bound here."""
        if self.reference is None or self.reference[0] is not model:
            self.reference = (model, float(model.body_mass[i]), model.body_inertia[i].copy())
        return self.reference[1], self.reference[2]

    def check(self, model: mujoco.MjModel) -> int:
        """The entity's id in ``model`` (-1 for opt); ConfigError naming the closest names."""
        f = self.field
        if f.kind == "opt":
            return -1
        obj, count = _OBJ[f.kind]
        return find_id(model, obj, f.name, kind=f.kind, count=getattr(model, count))

    def __repr__(self) -> str:
        return f"ModelBinding({self.param.name!r}, '{self.field}')"


class BindingSet:
    """The bindings of one rig on one model: written at resolve and at step boundaries after a change.

    Threading: params may change from any thread (``_changed`` only flags); ``apply`` runs on the
    stepping thread.
    """

    def __init__(self, model: mujoco.MjModel, bindings: list[ModelBinding]) -> None:
        self.model = model
        self.bindings = list(bindings)
        self.ids = [b.check(model) for b in self.bindings]
        # Mass and inertia as bound: the inertia keeps its ratio to the mass (radius of gyration).
        refs = {i: b.body_reference(model, i) for b, i in zip(self.bindings, self.ids) if b.field.kind == "body"}
        self.mass0 = {i: m for i, (m, _) in refs.items()}
        self.inertia0 = {i: inertia for i, (_, inertia) in refs.items()}
        self.dirty = set(range(len(self.bindings)))
        self.lock = threading.Lock()  # params change on any thread; writes happen on the stepping one
        self.scratch: mujoco.MjData | None = None
        for b in self.bindings:
            b.param.subscribe(self._changed)

    def _changed(self, nv: NamedValue) -> None:
        with self.lock:
            self.dirty.update(k for k, b in enumerate(self.bindings) if b.param is nv)

    def detach(self) -> None:
        """Stop listening to the params (the rig is being replaced)."""
        for b in self.bindings:
            b.param.unsubscribe(self._changed)

    def apply(self) -> None:
        """Write every changed binding into the model (call at a step boundary)."""
        if not self.dirty:
            return
        with self.lock:
            todo, self.dirty = self.dirty, set()
        setconst = False
        for k in sorted(todo):
            b = self.bindings[k]
            self._write(b.field, self.ids[k], b.param.value)
            setconst |= (b.field.kind, b.field.attr) in _SETCONST
        if setconst:
            if self.scratch is None:
                self.scratch = mujoco.MjData(self.model)
            mujoco.mj_setConst(self.model, self.scratch)

    def _write(self, f: ModelField, i: int, v: float) -> None:
        m = self.model
        if f.kind == "opt":
            if f.attr == "timestep":
                m.opt.timestep = v
            else:
                m.opt.gravity[2] = v
        elif f.kind == "body":
            m.body_mass[i] = v
            m0 = self.mass0[i]
            if m0 > 0:
                m.body_inertia[i] = self.inertia0[i] * (v / m0)
        elif f.kind == "joint":
            if f.attr == "stiffness":
                m.jnt_stiffness[i] = v
            else:
                adr = int(m.jnt_dofadr[i])
                n = {0: 6, 1: 3}.get(int(m.jnt_type[i]), 1)  # free, ball, else one dof
                getattr(m, f"dof_{f.attr}")[adr : adr + n] = v
        elif f.kind == "geom":
            m.geom_friction[i, 0] = v
        elif f.kind == "actuator":
            m.actuator_gear[i, 0] = v
        else:
            getattr(m, f"tendon_{f.attr}")[i] = v
