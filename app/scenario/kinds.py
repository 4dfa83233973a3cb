"""The one registry of what a scenario can attach: sections, their kinds, and each kind's fields.

A *section* is a scenario array of tables (``[[loads]]``, ``[[proximities]]``); a *kind* is one
sort of entry in it (``ideal_spring``, ``proximity``); a *field* is one key of that table with
its type, unit, default and help. From this data alone:

- the scenario parser knows the allowed and required keys and how to read and check each value
  (``mjrig.scenario.fields``), and turns a validated table into a runtime object with the
  kind's ``build`` function;
- the panel's forms know which inputs to show (``mjrig.widgets.forms``);
- the README's table of load kinds is generated (``python -m mjrig.scenario.kinds_table`` prints
  it; a test compares the two).

Adding a load kind is one ``Kind`` in the loads section; a new section (controls, tracers,
requirements) is one ``Section`` plus the ``Scenario`` field of the same name that holds its
objects. GUI-free: imports only the runtime.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, get_args

from mjrig.runtime.controls import Control
from mjrig.runtime.joint_loads import (DEFAULT_COULOMB_VELOCITY, DEFAULT_STRIBECK_VELOCITY, JointFriction,
                                       JointTorque)
from mjrig.runtime.load_base import Load
from mjrig.runtime.metrics import METRIC_KINDS, Metric, MetricError
from mjrig.runtime.loads import (GeneralLoad, PointToPointForce, ScalarForce, ScalarTorque, SpringLaw, VectorForce,
                                 VectorTorque)
from mjrig.runtime.points import Geom
from mjrig.runtime.proximity import Proximity
from mjrig.runtime.requirements import Requirement, RequirementError
from mjrig.runtime.tracers import Tracer

__all__ = ["Field", "Kind", "Section", "Registry", "EntryError", "FIELD_TYPES", "POINT_TYPES", "REGISTRY",
           "SPRING_KINDS", "name_field"]

FieldType = Literal["text", "point", "site", "point_or_geom", "number", "number_or_param", "profile", "vector",
                    "color"]
FIELD_TYPES: tuple[str, ...] = get_args(FieldType)
"""What a field holds. ``point``: a site, ``body:NAME`` or ``body:NAME@x,y,z``; ``site``: a site
name only; ``point_or_geom``: a point or ``geom:NAME``; ``number``: a finite number;
``number_or_param``: a number or a param's name; ``profile``: that or a time profile;
``vector``: 3 components, each a number, a param or a profile; ``color``: [r, g, b] or [r, g, b, a]
in 0..1."""

POINT_TYPES = frozenset({"point", "site", "point_or_geom"})
"""Field types that name something in the model (checked against it once compiled)."""


class EntryError(ValueError):
    """A builder's complaint about a table (e.g. two fields that do not go together); the parser
    reports it at the location of ``field`` when given, else at the table's."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Field:
    """One key of a scenario table.

    ``default`` is the value used when the key is left out (None: absent means "none", e.g. no
    reaction point); ``required`` keys have none. ``initial`` is what a new form suggests
    (default: ``default``). ``unit`` is SI (``N/m``); ``nonneg`` rejects negative numbers,
    ``positive`` zero too. ``names`` says what model element a text field names ("joint": a hinge
    or slide joint, "actuator"), checked against the compiled model.
    """

    name: str
    type: FieldType
    unit: str = ""
    default: Any = None
    required: bool = False
    help: str = ""
    initial: Any = None
    nonneg: bool = False
    positive: bool = False
    names: str = ""

    @property
    def optional(self) -> bool:
        """Left out means "none" (not a default value): a form leaves it out when empty."""
        return not self.required and self.default is None

    @property
    def suggested(self) -> Any:
        """The value a new form shows."""
        return self.default if self.initial is None else self.initial


@dataclass(frozen=True)
class Kind:
    """One sort of entry: its fields (in display order, ``name`` included) and its builder.

    ``build`` receives every field's value (read and checked; left-out ones at their default)
    and returns the runtime object; it may raise EntryError. ``doc`` says what it does.
    """

    name: str
    fields: tuple[Field, ...]
    build: Callable[[Mapping[str, Any]], Any]
    doc: str = ""


@dataclass(frozen=True)
class Section:
    """A scenario array of tables. ``kind_key`` names the key that picks the kind (None: the
    section has one kind and no such key); ``noun`` is how errors call one entry; ``role`` is
    'load' (acts on the model) or 'monitor' (only measures); ``name_key`` is the field that must
    be unique among the entries (a control is named by its actuator); ``readout`` heads the
    panel's column of what each entry applies or measures now."""

    key: str
    noun: str
    role: Literal["load", "monitor"]
    kinds: tuple[Kind, ...]
    kind_key: str | None = "kind"
    default_kind: str = ""
    name_key: str = "name"
    readout: str = "now"

    @property
    def kind_names(self) -> list[str]:
        return [k.name for k in self.kinds]

    def kind(self, name: str) -> Kind | None:
        return next((k for k in self.kinds if k.name == name), None)

    def kind_of(self, spec: Mapping[str, Any]) -> Kind | None:
        """The kind a table is (None when it names no known kind)."""
        if self.kind_key is None:
            return self.kinds[0]
        name = spec.get(self.kind_key)
        return self.kind(name) if isinstance(name, str) else None

    def allowed(self, kind: Kind) -> set[str]:
        """Every key a table of this kind may have."""
        return {f.name for f in kind.fields} | ({self.kind_key} if self.kind_key else set())

    def required(self, kind: Kind) -> set[str]:
        return {f.name for f in kind.fields if f.required} | ({self.kind_key} if self.kind_key else set())


@dataclass(frozen=True)
class Registry:
    """Every section, in scenario order. Immutable: ``with_kind`` returns an extended copy."""

    sections: tuple[Section, ...]

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)

    def with_kind(self, section: str, kind: Kind) -> "Registry":
        """A copy with ``kind`` added to ``section`` (e.g. a test's own registry)."""
        return Registry(tuple(dataclasses.replace(s, kinds=(*s.kinds, kind)) if s.key == section else s
                              for s in self.sections))


# --- the entries ----------------------------------------------------------------------------------

def name_field(noun: str) -> Field:
    """The ``name`` every entry has: unique within its section."""
    return Field("name", "text", required=True, help=f"unique name of the {noun}")


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
    return GeneralLoad(name=v["name"], at=v["at"], force=v["force"], torque=v["torque"], rel_to_site=v["frame"],
                       to=v["to"])


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
        return PointToPointForce(name=v["name"], at=v["at"], to=v["to"],
                                 law=SpringLaw(**{k: v[k] for k in numbers}, **behaviour))
    return _load(kind, doc, build, _AT, _TO_SPRING, _STIFFNESS, _DAMPING, *law)


_SPRINGS = (  # every spring kind, once: name, what it does, its law's behaviour, the law's other fields
    ("ideal_spring", "linear spring-damper along the line between the points, in tension and compression",
     {}, (_REST,)),
    ("compression_spring", "as `ideal_spring`, acting only while the distance is below `rest_length`",
     {"compression_only": True}, (_REST,)),
    ("tension_spring", "as `ideal_spring`, acting only while the distance is above `rest_length`",
     {"tension_only": True}, (_REST,)),
    ("stroke_compression_spring", "acts while the distance d is between the initial distance r0 and r0 + "
     "`max_stroke`, pushing apart with max(0, preload − k(d − r0) − c·v)", {"stroke_limited": True},
     (_law("preload", "N", "push at the start of the stroke"), _law("max_stroke", "m", "length of the stroke"))),
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

LOADS = Section("loads", "load", "load", default_kind="ideal_spring", readout="applies", kinds=(
    _load("force", f"a force on `at`, {_IN_FRAME}", _vector_load(VectorForce), _AT,
          Field("vector", "vector", "N", required=True, help="force [fx, fy, fz]", initial=(0.0, 0.0, 10.0)),
          _frame("vector is"), _TO),
    _load("torque", f"a torque on the body of `at`, {_IN_FRAME}", _vector_load(VectorTorque), _AT,
          Field("vector", "vector", "N·m", required=True, help="torque [tx, ty, tz]", initial=(0.0, 0.0, 1.0)),
          _frame("vector is"), _TO),
    _load("general", f"a force and a torque on `at`, {_IN_FRAME}", _general, _AT,
          Field("force", "vector", "N", (0.0, 0.0, 0.0), help="force [fx, fy, fz]"),
          Field("torque", "vector", "N·m", (0.0, 0.0, 0.0), help="torque [tx, ty, tz]"),
          _frame("vectors are"), _TO),
    _load("scalar_force", "a force along the local x-axis of site `at`", _scalar(ScalarForce), _AT_SITE,
          Field("magnitude", "profile", "N", required=True, help="force along the site's x-axis", initial=10.0),
          _TO),
    _load("scalar_torque", "a torque about the local x-axis of site `at`", _scalar(ScalarTorque), _AT_SITE,
          Field("magnitude", "profile", "N·m", required=True, help="torque about the site's x-axis", initial=1.0),
          _TO),
    *(_spring_kind(*row) for row in _SPRINGS),
    _load("joint_torque", "a generalized force on a hinge (N·m) or slide (N) joint", _joint_torque, _JOINT,
          Field("magnitude", "profile", "N·m or N", required=True, help="the generalized force", initial=1.0)),
    _load("joint_friction", "friction opposing the joint's velocity v: −[(Fc + (breakaway − Fc)·exp(−(v/vs)²))·"
          "tanh(v/vc) + b·v]; Fc = `coulomb`, or `mu`·`pin_radius`·‖R‖ with R the force the joint carries",
          _joint_friction, _JOINT,
          _coefficient("coulomb", "N·m or N", "Coulomb level Fc (or give mu + pin_radius)"),
          _coefficient("breakaway", "N·m or N", "peak at low speed (Stribeck), >= coulomb; default = coulomb"),
          _coefficient("stribeck_velocity", "rad/s or m/s", "vs: how fast the breakaway excess decays",
                       DEFAULT_STRIBECK_VELOCITY, positive=True),
          _coefficient("viscous", "N·m·s/rad or N·s/m", "viscous coefficient b", 0.0),
          _coefficient("coulomb_velocity", "rad/s or m/s", "vc: width of the smooth zone around v = 0",
                       DEFAULT_COULOMB_VELOCITY, positive=True),
          _coefficient("mu", "", "friction coefficient of a pin (with pin_radius, instead of coulomb)"),
          _coefficient("pin_radius", "m", "radius of the pin (with mu)")),
))
"""Forces, torques and springs; the reaction on ``to`` is always equal and opposite."""

PROXIMITIES = Section("proximities", "proximity", "monitor", kind_key=None, default_kind="proximity",
                      readout="distance", kinds=(
    Kind("proximity", (name_field("proximity"), Field("a", "point_or_geom", required=True, help=_END),
                       Field("b", "point_or_geom", required=True, help=_END),
                       Field("threshold", "number", "m", help="below it the line turns red and an event is logged")),
         _proximity, "distance between two points, or clearance between two geoms"),
))
"""Distance monitors."""

CONTROLS = Section("controls", "control", "load", kind_key=None, default_kind="control", name_key="actuator",
                   kinds=(Kind("control", (
                       Field("actuator", "text", required=True, names="actuator", help="the actuator it drives"),
                       Field("value", "profile", required=True, help="its input (data.ctrl), clamped to ctrlrange",
                             initial=0.0)),
                       lambda v: Control(v["actuator"], value=v["value"]), "holds an actuator's input (data.ctrl)"),))
"""Actuator inputs, one per actuator."""


def _tracer(v: Mapping[str, Any]) -> Tracer:
    return Tracer(name=v["name"], at=v["at"], duration=v["duration"], color=v["color"])


TRACERS = Section("tracers", "tracer", "monitor", kind_key=None, default_kind="tracer", kinds=(
    Kind("tracer", (name_field("tracer"), Field("at", "point", required=True, help="the point whose path is drawn"),
                    Field("duration", "number", "s", required=True, positive=True, initial=2.0,
                          help="seconds of trail shown, fading with age"),
                    Field("color", "color", default=(0.055, 0.647, 0.914, 1.0), help="RGBA, each 0..1")),
         _tracer, "the recent path of a point, drawn as a fading trail"),
))
"""Trails of points (drawn only)."""


def _requirement(v: Mapping[str, Any]) -> Requirement:
    try:
        return Requirement(**{k: v[k] for k in ("name", "signal", "min", "max", "final", "tolerance", "start", "end",
                                                "stop_on")})
    except RequirementError as exc:
        raise EntryError(str(exc), field=exc.field) from None


REQUIREMENTS = Section("requirements", "requirement", "monitor", kind_key=None, default_kind="requirement", kinds=(
    Kind("requirement", (
        name_field("requirement"),
        Field("signal", "text", required=True, help="the telemetry column it checks (recorded or not)"),
        Field("min", "number", help="the signal must stay >= min over the window"),
        Field("max", "number", help="the signal must stay <= max over the window"),
        Field("final", "number", help="its value at the window's end must be within final ± tolerance"),
        Field("tolerance", "number", nonneg=True, help="half-width of the band around final (default 0)"),
        Field("start", "number", "s", 0.0, nonneg=True, help="the window's start (simulated time)"),
        Field("end", "number", "s", help="the window's end (left out: the run's end)"),
        Field("stop_on", "text", help='"fail" or "pass": end a headless run when it fails or has passed')),
         _requirement, "a bound on one telemetry signal over a window of simulated time"),
))
"""Pass/fail checks of signals (measure only)."""

_METRIC_SETTINGS = {
    "level": Field("level", "number", required=True, help="the level whose first crossing (either way) it times"),
    "band": Field("band", "number", positive=True, help="half-width of the settled band, as a fraction of abs(final)"),
    "band_abs": Field("band_abs", "number", positive=True, help="half-width of the settled band, in the signal's unit"),
}


def _metric(kind: str) -> Callable[[Mapping[str, Any]], Metric]:
    def build(v: Mapping[str, Any]) -> Metric:
        try:
            return Metric(kind=kind, **{k: v[k] for k in ("name", "signal", "start", "end", "level", "band", "band_abs")
                                        if k in v})
        except MetricError as exc:
            raise EntryError(str(exc), field=exc.field) from None
    return build


METRICS = Section("metrics", "metric", "monitor", default_kind="max", readout="value", kinds=tuple(
    Kind(kind, (
        name_field("metric"),
        Field("signal", "text", required=True, help="the telemetry column it reduces (recorded or not)"),
        Field("start", "number", "s", 0.0, nonneg=True, help="the window's start (simulated time)"),
        Field("end", "number", "s", help="the window's end (left out: the run's end)"),
        *(_METRIC_SETTINGS[k] for k in settings)), _metric(kind), f"the signal's {kind.replace('_', ' ')} over the window")
    for kind, settings in METRIC_KINDS.items()))
"""Numbers read off a run: a signal reduced over a window (``mjrig.runtime.metrics``)."""

REGISTRY = Registry((LOADS, PROXIMITIES, CONTROLS, TRACERS, REQUIREMENTS, METRICS))
"""Every section and kind mjrig knows, in scenario order."""
