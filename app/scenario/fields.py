"""Reading scenario values (numbers, params, profiles, vectors, points) and registry entries.

``FieldReader`` turns one TOML value into what the runtime takes, or raises a one-line
ConfigError naming the file, the line and the field; ``entry`` reads a whole ``[[loads]]`` or
``[[proximities]]`` table as ``mjrig.scenario.kinds`` describes it. Nothing here is evaluated as code.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.errors import one_line as _oneline
from mjrig.runtime.points import Point, Site, closest_names, parse_point
from mjrig.runtime.values import Chirp, Constant, NamedValue, Profile, Ramp, Sine, Step, Table
from mjrig.scenario.kinds import POINT_TYPES, REGISTRY, EntryError, Field, Registry, Section

__all__ = ["FieldReader", "model_points", "model_elements", "PROFILE_FIELDS"]

PROFILE_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "constant": ({"value"}, set()),
    "step": ({"time", "before", "after"}, set()),
    "ramp": ({"start", "end", "from", "to"}, set()),
    "sine": ({"amplitude", "frequency"}, {"phase", "offset"}),
    "table": ({"time", "value"}, set()),
    "chirp": ({"amplitude", "f0", "f1", "duration"}, set()),
}
"""Each time profile's (required, optional) keys besides ``profile``."""


class Locator(Protocol):
    def where(self, *path: str | int) -> str: ...


class FieldReader:
    """Reads and checks scenario values; every check raises ConfigError via ``fail``.

    ``params`` are the scenario's params by name (a number field may name one); ``base`` is the
    folder relative paths resolve against; ``registry`` says what each section holds.
    """

    def __init__(self, locator: Locator, base: Path, *, registry: Registry = REGISTRY) -> None:
        self.loc = locator
        self.base = base
        self.registry = registry
        self.params: dict[str, NamedValue] = {}

    def fail(self, path: tuple, msg: str) -> ConfigError:
        return ConfigError(_oneline(f"{self.loc.where(*path)}: {msg}"))

    def keys(self, table: Any, allowed: set[str], path: tuple) -> dict:
        if not isinstance(table, dict):
            raise self.fail(path, f"must be a table, got {typename(table)}")
        for key in table:
            if key not in allowed:
                raise self.fail((*path, key), f"unknown field '{key}'{closest_names(key, sorted(allowed))}")
        return table

    def number(self, value: Any, path: tuple, *, positive: bool = False, nonneg: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"must be a number, got {show(value)}")
        try:
            v = float(value)
        except OverflowError:  # a TOML integer beyond float range
            raise self.fail(path, f"must be a finite number, got {show(value)}") from None
        if not math.isfinite(v):
            raise self.fail(path, f"must be a finite number, got {value}")
        if positive and v <= 0:
            raise self.fail(path, f"must be positive, got {value:g}")
        if nonneg and v < 0:
            raise self.fail(path, f"must not be negative, got {value:g}")
        return v

    def whole(self, value: Any, path: tuple, *, least: int) -> int:
        """A whole number (a TOML integer, not a bool) of at least ``least``."""
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise self.fail(path, f"must be a whole number >= {least}, got {value!r}")
        return value

    def choice(self, value: Any, path: tuple, options: Sequence[str], *, noun: str) -> str:
        """One of ``options`` (a ``noun``: "unknown sampler 'x'" with the closest names, in the
        order given)."""
        if not isinstance(value, str) or value not in options:
            raise self.fail(path, f"unknown {noun} {value!r}{closest_names(str(value), list(options))}")
        return value

    def string(self, value: Any, path: tuple) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"must be a non-empty string, got {show(value)}")
        return value.strip()

    def path_value(self, value: Any, path: tuple) -> Path:
        try:
            p = Path(self.string(value, path)).expanduser()
        except RuntimeError:  # '~user' with no such user
            raise self.fail(path, f"cannot expand '~' in {show(value)}") from None
        # absolute and without '..' (symlinks kept): the path a person reads in the panel and metadata
        return Path(os.path.abspath(p if p.is_absolute() else self.base / p))

    def param_or_number(self, value: Any, path: tuple, *, allow_profile: bool = False) -> Any:
        if isinstance(value, str):
            name = value.strip()
            if name not in self.params:
                raise self.fail(path, f"unknown param '{name}'{closest_names(name, sorted(self.params))}")
            return self.params[name]
        if isinstance(value, dict):
            if not allow_profile:
                raise self.fail(
                    path,
                    "takes a number or a param name (time profiles are for magnitude, "
                    "vector, force and torque components)",
                )
            return self.profile(value, path)
        return self.number(value, path)

    def profile(self, spec: dict, path: tuple) -> Profile:
        kind = spec.get("profile")
        if not isinstance(kind, str) or kind not in PROFILE_FIELDS:
            raise self.fail(
                (*path, "profile"), f"unknown profile {show(kind)}{closest_names(str(kind), sorted(PROFILE_FIELDS))}"
            )
        required, optional = PROFILE_FIELDS[kind]
        self.keys(spec, required | optional | {"profile"}, path)
        missing = sorted(required - set(spec))
        if missing:
            raise self.fail(path, f"{kind} profile needs '{missing[0]}'")
        if kind == "table":
            ts, vs = spec["time"], spec["value"]
            if not isinstance(ts, list) or not isinstance(vs, list) or not ts or len(ts) != len(vs):
                raise self.fail(path, "table profile needs 'time' and 'value' lists of the same, non-zero length")
            t = tuple(self.number(x, (*path, "time")) for x in ts)
            v = tuple(self.number(x, (*path, "value")) for x in vs)
            if any(b <= a for a, b in zip(t, t[1:])):
                raise self.fail((*path, "time"), "table times must increase strictly")
            return Table(t, v)
        n = {k: self.number(spec[k], (*path, k)) for k in required | (optional & set(spec))}
        if kind == "constant":
            return Constant(n["value"])
        if kind == "step":
            return Step(n["time"], n["before"], n["after"])
        if kind == "ramp":
            if n["end"] <= n["start"]:
                raise self.fail(path, "ramp 'end' must be after 'start'")
            return Ramp(n["start"], n["end"], n["from"], n["to"])
        if kind == "chirp":
            for key in ("f0", "f1", "duration"):
                if not n[key] > 0:
                    raise self.fail((*path, key), f"chirp '{key}' must be positive, got {n[key]:g}")
            return Chirp(n["amplitude"], n["f0"], n["f1"], n["duration"])
        return Sine(n["amplitude"], n["frequency"], n.get("phase", 0.0), n.get("offset", 0.0))

    def vector(self, value: Any, path: tuple) -> list:
        if not isinstance(value, list) or len(value) != 3:
            raise self.fail(path, f"must be a list of 3 components, got {show(value)}")
        return [self.param_or_number(x, path, allow_profile=True) for x in value]

    def color(self, value: Any, path: tuple) -> tuple[float, ...]:
        if not isinstance(value, list) or len(value) not in (3, 4):
            raise self.fail(path, f"must be [r, g, b] or [r, g, b, a], got {show(value)}")
        rgba = tuple(self.number(x, path) for x in value)
        if not all(0.0 <= c <= 1.0 for c in rgba):
            raise self.fail(path, f"colour components must be between 0 and 1, got {show(value)}")
        return rgba if len(rgba) == 4 else (*rgba, 1.0)

    def point(self, value: Any, path: tuple, *, allow_geom: bool = False, site_only: bool = False) -> Point:
        text = self.string(value, path)
        try:
            p = parse_point(text, allow_geom=allow_geom)
        except ConfigError as exc:
            raise self.fail(path, str(exc)) from None
        if site_only and not isinstance(p, Site):
            raise self.fail(path, f"'{text}' must be a site name (the force acts along the site's x-axis)")
        return p

    # --- registry entries ------------------------------------------------------------------------
    def field(self, field: Field, value: Any, path: tuple) -> Any:
        """One field's value, read as its type says (``mjrig.scenario.kinds.FIELD_TYPES``)."""
        t = field.type
        if t == "text":
            return self.string(value, path)
        if t in POINT_TYPES:
            return self.point(value, path, allow_geom=t == "point_or_geom", site_only=t == "site")
        if t == "number":
            return self.number(value, path)
        if t in ("number_or_param", "profile"):
            return self.param_or_number(value, path, allow_profile=t == "profile")
        if t == "vector":
            return self.vector(value, path)
        if t == "color":
            return self.color(value, path)
        raise TypeError(f"no reader for field type {t!r}")  # a registry entry with a new type

    def entry(self, section: Section, spec: Any, path: tuple) -> Any:
        """One table of ``section`` (e.g. ``loads[2]``) as its kind's runtime object."""
        if section.kind_key is None:
            kind = section.kinds[0]
        else:
            if not isinstance(spec, dict):
                raise self.fail(path, f"must be a table, got {typename(spec)}")
            name = spec.get(section.kind_key)
            if name is None:
                raise self.fail(path, f"missing required field '{section.kind_key}'")
            found = section.kind(name) if isinstance(name, str) else None
            if found is None:
                raise self.fail(
                    (*path, section.kind_key),
                    f"unknown {section.noun} kind {show(name)}{closest_names(str(name), section.kind_names)}",
                )
            kind = found
        allowed = section.allowed(kind)
        for key in spec if isinstance(spec, dict) else ():
            owners = [k.name for k in section.kinds if key not in allowed and key in section.allowed(k)]
            if owners:  # a field of another kind: say which
                raise self.fail((*path, key), f"'{key}' goes with {' or '.join(owners)}, not {kind.name}")
        self.keys(spec, allowed, path)
        missing = sorted(section.required(kind) - set(spec))
        if missing:
            raise self.fail(path, f"{kind.name} needs '{missing[0]}'")
        values = {
            f.name: self.field(f, spec[f.name], (*path, f.name)) if f.name in spec else f.default for f in kind.fields
        }
        for f in kind.fields:
            v = values[f.name]
            if f.nonneg and isinstance(v, float) and v < 0:  # a param may go anywhere
                raise self.fail((*path, f.name), f"must not be negative, got {v:g}")
            if f.positive and isinstance(v, float) and v <= 0:
                raise self.fail((*path, f.name), f"must be positive, got {v:g}")
        try:
            return kind.build(values)
        except EntryError as exc:
            raise self.fail((*path, exc.field) if exc.field else path, str(exc)) from None


def model_points(doc: dict, *, registry: Registry = REGISTRY) -> Iterator[tuple[tuple, Point]]:
    """Every model point a validated scenario document names, as (field path, Point), in order:
    e.g. (("loads", 0, "at"), Site("tip")). Tables of unknown kinds are skipped."""
    for section in registry.sections:
        for i, spec in enumerate(doc.get(section.key, [])):
            kind = section.kind_of(spec)
            for f in kind.fields if kind is not None else ():
                if f.type in POINT_TYPES and isinstance(spec.get(f.name), str):
                    yield (
                        (section.key, i, f.name),
                        parse_point(spec[f.name].strip(), allow_geom=f.type == "point_or_geom"),
                    )


def model_elements(doc: dict, *, registry: Registry = REGISTRY) -> Iterator[tuple[tuple, str, str]]:
    """Every other model element a validated scenario document names, as (field path, what, name):
    e.g. (("loads", 1, "joint"), "joint", "hinge"); ``what`` is the field's ``names``."""
    for section in registry.sections:
        for i, spec in enumerate(doc.get(section.key, [])):
            kind = section.kind_of(spec)
            for f in kind.fields if kind is not None else ():
                if f.names and isinstance(spec.get(f.name), str):
                    yield (section.key, i, f.name), f.names, spec[f.name].strip()


def typename(v: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(type(v), type(v).__name__)


def show(v: Any) -> str:
    """A value as an error message quotes it: its repr, cut at 40 characters."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
