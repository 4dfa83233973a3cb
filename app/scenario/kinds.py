"""The one registry of what a scenario can attach: sections, their kinds, and each kind's fields.

A *section* is a scenario array of tables (``[[loads]]``, ``[[proximities]]``); a *kind* is one
sort of entry in it (``ideal_spring``, ``proximity``); a *field* is one key of that table with
its type, unit, default and help. From this data alone:

- the scenario parser knows the allowed and required keys and how to read and check each value
  (``mjrig.scenario.fields``), and turns a validated table into a runtime object with the
  kind's ``build`` function;
- the panel's forms know which inputs to show (``mjrig.widgets.kit.forms``);
- the manual's table of load kinds (docs/scenario.md) is generated
  (``python -m mjrig.scenario.kinds_table`` prints it; a test compares the two).

Adding a load kind is one ``Kind`` in the loads section; a new section (controls, tracers,
requirements) is one ``Section`` plus the ``Scenario`` field of the same name that holds its
objects. The classes (``Field``, ``Kind``, ``Section``, ``Registry``) are in
``mjrig.scenario.registry``; this module is the data. GUI-free: imports only the runtime.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from mjrig.runtime.controls import Control
from mjrig.runtime.drawing.tracers import Tracer
from mjrig.runtime.forces.joint_loads import (
    DEFAULT_COULOMB_VELOCITY,
    DEFAULT_STRIBECK_VELOCITY,
    JointFriction,
    JointTorque,
)
from mjrig.runtime.forces.load_base import Load
from mjrig.runtime.forces.loads import (
    GeneralLoad,
    PointToPointForce,
    ScalarForce,
    ScalarTorque,
    SpringLaw,
    VectorForce,
    VectorTorque,
)
from mjrig.runtime.forces.proximity import Proximity
from mjrig.runtime.points import Geom
from mjrig.scenario.kinds_checks import METRICS, REQUIREMENTS, SIGNALS

__all__ = [
    "Field",
    "Kind",
    "Section",
    "Registry",
    "EntryError",
    "FIELD_TYPES",
    "POINT_TYPES",
    "REGISTRY",
    "SPRING_KINDS",
    "name_field",
]

from mjrig.scenario.registry import (
    FIELD_TYPES,
    POINT_TYPES,
    EntryError,
    Field,
    Kind,
    Registry,  # noqa: F401
    Section,
    name_field,
)

# --- the entries ----------------------------------------------------------------------------------

_AT = Field("at", "point", required=True, help="where it acts")
_AT_SITE = Field("at", "site", required=True, help="the site whose x-axis it acts along")
_TO = Field("to", "point", help="where the reaction acts (left out: the world)")
_TO_SPRING = Field("to", "point", required=True, help="the other end (the reaction acts there)")


def _frame(what: str) -> Field:
    return Field("frame", "site", help=f"site whose frame the {what} in (left out: the world frame)")


def _vector_load(cls: type) -> Callable[[Mapping[str, Any]], Any]:
    def build(v: Mapping[str, Any]) -> Any:
        return cls(name=v["name"], at=v["at"], vector=v["vector"], rel_to_site=v["frame"], to=v["to"])

    return build


def _general(v: Mapping[str, Any]) -> GeneralLoad:
    return GeneralLoad(
        name=v["name"],
        action_site=v["at"],
        force=v["force"],
        torque=v["torque"],
        rel_to_site=v["frame"],
        xtion_body=v["to"],
    )


def _scalar(cls: type) -> Callable[[Mapping[str, Any]], Any]:
    def build(v: Mapping[str, Any]) -> Any:
        return cls(name=v["name"], at=v["at"], magnitude=v["magnitude"], to=v["to"])

    return build


_LAW_DEFAULTS = {f.name: f.default for f in dataclasses.fields(SpringLaw) if f.name in SpringLaw.numbers}


def _law(name: str, unit: str, help: str, *, initial: float | None = None) -> Field:
    """A spring-law field; its default is SpringLaw's (one place for the law's numbers)."""
    return Field(name, "number_or_param", unit, _LAW_DEFAULTS[name], help=help, initial=initial, nonneg=True)


_STIFFNESS = _law("stiffness", "N/m", "spring rate k", initial=100.0)
_DAMPING = _law("damping", "N·s/m", "damping c, times the rate of change of length")
_REST = _law("rest_length", "m", "length at which the spring is relaxed")


def _load(kind: str, doc: str, build: Callable[[Mapping[str, Any]], Load], *fields: Field) -> Kind:
    def named(v: Mapping[str, Any]) -> Load:  # the load carries its kind's name (``Load.kind``)
        load = build(v)
        load.kind = kind
        return load

    return Kind(kind, (name_field("load"), *fields), named, doc)


def _spring_kind(kind: str, doc: str, behaviour: Mapping[str, bool], law: tuple[Field, ...]) -> Kind:
    numbers = [f.name for f in (_STIFFNESS, _DAMPING, *law)]

    def build(v: Mapping[str, Any]) -> PointToPointForce:
        return PointToPointForce(
            name=v["name"],
            action_site=v["at"],
            xtion_site=v["to"],
            law=SpringLaw(**{k: v[k] for k in numbers}, **behaviour),
        )

    return _load(kind, doc, build, _AT, _TO_SPRING, _STIFFNESS, _DAMPING, *law)


_SPRINGS: tuple[
    tuple[str, str, dict[str, bool], tuple[Field, ...]], ...
] = (  # every spring kind, once: name, what it does, its law's behaviour, the law's other fields
    (
        "ideal_spring",
        "linear spring-damper along the line between the points, in tension and compression",
        {},
        (_REST,),
    ),
    (
        "compression_spring",
        "as `ideal_spring`, acting only while the distance is below `rest_length`",
        {"compression_only": True},
        (_REST,),
    ),
    (
        "tension_spring",
        "as `ideal_spring`, acting only while the distance is above `rest_length`",
        {"tension_only": True},
        (_REST,),
    ),
    (
        "stroke_compression_spring",
        "acts while the distance d is between the initial distance r0 and r0 + "
        "`max_stroke`, pushing apart with max(0, preload − k(d − r0) − c·v)",
        {"stroke_limited": True},
        (_law("preload", "N", "push at the start of the stroke"), _law("max_stroke", "m", "length of the stroke")),
    ),
)

SPRING_KINDS: tuple[str, ...] = tuple(row[0] for row in _SPRINGS)  # SpringLaw's behaviours as scenarios name them


def _proximity(v: Mapping[str, Any]) -> Proximity:
    a, b = v["a"], v["b"]
    if isinstance(a, Geom) != isinstance(b, Geom):
        raise EntryError(f"both ends must be geoms, or neither (got '{a}' and '{b}')")
    return Proximity(name=v["name"], a=a, b=b, threshold=v["threshold"])


def _joint_torque(v: Mapping[str, Any]) -> JointTorque:
    return JointTorque(name=v["name"], joint=v["joint"], magnitude=v["magnitude"])


_FRICTION = ("coulomb", "breakaway", "stribeck_velocity", "viscous", "coulomb_velocity", "mu", "pin_radius")


def _joint_friction(v: Mapping[str, Any]) -> JointFriction:
    try:
        return JointFriction(name=v["name"], joint=v["joint"], **{k: v[k] for k in _FRICTION if v[k] is not None})
    except ValueError as exc:
        raise EntryError(str(exc)) from None


_JOINT = Field("joint", "text", required=True, names="joint", help="the hinge or slide joint it acts on")


def _coefficient(name: str, unit: str, help: str, default: Any = None, *, positive: bool = False) -> Field:
    return Field(name, "number_or_param", unit, default, help=help, nonneg=not positive, positive=positive)


_END = "a site, body:NAME, body:NAME@x,y,z or geom:NAME (both ends geoms: surface clearance)"

_IN_FRAME = "in the world frame or in the frame of site `frame`"

LOADS = Section(
    "loads",
    "load",
    "load",
    default_kind="ideal_spring",
    readout="applies",
    kinds=(
        _load(
            "force",
            f"a force on `at`, {_IN_FRAME}",
            _vector_load(VectorForce),
            _AT,
            Field("vector", "vector", "N", required=True, help="force [fx, fy, fz]", initial=(0.0, 0.0, 10.0)),
            _frame("vector is"),
            _TO,
        ),
        _load(
            "torque",
            f"a torque on the body of `at`, {_IN_FRAME}",
            _vector_load(VectorTorque),
            _AT,
            Field("vector", "vector", "N·m", required=True, help="torque [tx, ty, tz]", initial=(0.0, 0.0, 1.0)),
            _frame("vector is"),
            _TO,
        ),
        _load(
            "general",
            f"a force and a torque on `at`, {_IN_FRAME}",
            _general,
            _AT,
            Field("force", "vector", "N", (0.0, 0.0, 0.0), help="force [fx, fy, fz]"),
            Field("torque", "vector", "N·m", (0.0, 0.0, 0.0), help="torque [tx, ty, tz]"),
            _frame("vectors are"),
            _TO,
        ),
        _load(
            "scalar_force",
            "a force along the local x-axis of site `at`",
            _scalar(ScalarForce),
            _AT_SITE,
            Field("magnitude", "profile", "N", required=True, help="force along the site's x-axis", initial=10.0),
            _TO,
        ),
        _load(
            "scalar_torque",
            "a torque about the local x-axis of site `at`",
            _scalar(ScalarTorque),
            _AT_SITE,
            Field("magnitude", "profile", "N·m", required=True, help="torque about the site's x-axis", initial=1.0),
            _TO,
        ),
        *(_spring_kind(*row) for row in _SPRINGS),
        _load(
            "joint_torque",
            "a generalized force on a hinge (N·m) or slide (N) joint",
            _joint_torque,
            _JOINT,
            Field("magnitude", "profile", "N·m or N", required=True, help="the generalized force", initial=1.0),
        ),
        _load(
            "joint_friction",
            "friction opposing the joint's velocity v: −[(Fc + (breakaway − Fc)·exp(−(v/vs)²))·"
            "tanh(v/vc) + b·v]; Fc = `coulomb`, or `mu`·`pin_radius`·‖R‖ with R the force the joint carries",
            _joint_friction,
            _JOINT,
            _coefficient("coulomb", "N·m or N", "Coulomb level Fc (or give mu + pin_radius)"),
            _coefficient("breakaway", "N·m or N", "peak at low speed (Stribeck), >= coulomb; default = coulomb"),
            _coefficient(
                "stribeck_velocity",
                "rad/s or m/s",
                "vs: how fast the breakaway excess decays",
                DEFAULT_STRIBECK_VELOCITY,
                positive=True,
            ),
            _coefficient("viscous", "N·m·s/rad or N·s/m", "viscous coefficient b", 0.0),
            _coefficient(
                "coulomb_velocity",
                "rad/s or m/s",
                "vc: width of the smooth zone around v = 0",
                DEFAULT_COULOMB_VELOCITY,
                positive=True,
            ),
            _coefficient("mu", "", "friction coefficient of a pin (with pin_radius, instead of coulomb)"),
            _coefficient("pin_radius", "m", "radius of the pin (with mu)"),
        ),
    ),
)
"""Forces, torques and springs; the reaction on ``to`` is always equal and opposite."""

PROXIMITIES = Section(
    "proximities",
    "proximity",
    "monitor",
    kind_key=None,
    default_kind="proximity",
    readout="distance",
    kinds=(
        Kind(
            "proximity",
            (
                name_field("proximity"),
                Field("a", "point_or_geom", required=True, help=_END),
                Field("b", "point_or_geom", required=True, help=_END),
                Field("threshold", "number", "m", help="below it the line turns red and an event is logged"),
            ),
            _proximity,
            "distance between two points, or clearance between two geoms",
        ),
    ),
)
"""Distance monitors."""

CONTROLS = Section(
    "controls",
    "control",
    "load",
    kind_key=None,
    default_kind="control",
    name_key="actuator",
    kinds=(
        Kind(
            "control",
            (
                Field("actuator", "text", required=True, names="actuator", help="the actuator it drives"),
                Field(
                    "value", "profile", required=True, help="its input (data.ctrl), clamped to ctrlrange", initial=0.0
                ),
            ),
            lambda v: Control(v["actuator"], value=v["value"]),
            "holds an actuator's input (data.ctrl)",
        ),
    ),
)
"""Actuator inputs, one per actuator."""


def _tracer(v: Mapping[str, Any]) -> Tracer:
    return Tracer(name=v["name"], at=v["at"], duration=v["duration"], color=v["color"])


TRACERS = Section(
    "tracers",
    "tracer",
    "monitor",
    kind_key=None,
    default_kind="tracer",
    kinds=(
        Kind(
            "tracer",
            (
                name_field("tracer"),
                Field("at", "point", required=True, help="the point whose path is drawn"),
                Field(
                    "duration",
                    "number",
                    "s",
                    required=True,
                    positive=True,
                    initial=2.0,
                    help="seconds of trail shown, fading with age",
                ),
                Field("color", "color", default=(0.055, 0.647, 0.914, 1.0), help="RGBA, each 0..1"),
            ),
            _tracer,
            "the recent path of a point, drawn as a fading trail",
        ),
    ),
)
"""Trails of points (drawn only)."""


REGISTRY = Registry((LOADS, PROXIMITIES, CONTROLS, TRACERS, REQUIREMENTS, METRICS, SIGNALS))
"""Every section and kind mjrig knows, in scenario order."""
