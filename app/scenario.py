"""Scenario files (TOML) <-> rig description, with every validation and its one-line errors.

A scenario is data: it is parsed with ``tomllib`` and nothing in it is evaluated, imported or
unpickled. Errors name the file, the line and the field (``loads[2].at``) and, for unknown
names, the closest valid ones.
"""
from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.errors import one_line as _oneline
from mjrig.runtime.manager import RuntimeManager
from mjrig.runtime.loads import (GeneralLoad, Load, PointToPointForce, ScalarForce, ScalarTorque, SPRING_KINDS,
                               VectorForce, VectorTorque)
from mjrig.runtime.points import Geom, Point, Site, closest_names, parse_point
from mjrig.runtime.proximity import Proximity
from mjrig.runtime.signals import SIGNAL_GROUPS
from mjrig.runtime.values import Constant, NamedValue, Profile, Ramp, Sine, Step, Table

__all__ = ["Scenario", "RecordingSettings", "VideoSettings", "load_scenario", "parse_scenario",
           "LOAD_KINDS", "ScenarioLocator"]

_SPRING_FIELDS = {"name", "kind", "at", "to", "stiffness", "damping", "rest_length"}
_STROKE_FIELDS = {"name", "kind", "at", "to", "stiffness", "damping", "preload", "max_stroke"}
LOAD_KINDS: dict[str, set[str]] = {
    "force": {"name", "kind", "at", "vector", "frame", "to"},
    "torque": {"name", "kind", "at", "vector", "frame", "to"},
    "general": {"name", "kind", "at", "force", "torque", "frame", "to"},
    "scalar_force": {"name", "kind", "at", "magnitude", "to"},
    "scalar_torque": {"name", "kind", "at", "magnitude", "to"},
    "ideal_spring": _SPRING_FIELDS,
    "compression_spring": _SPRING_FIELDS,
    "tension_spring": _SPRING_FIELDS,
    "stroke_compression_spring": _STROKE_FIELDS,
}
_REQUIRED = {k: {"name", "kind", "at"} | ({"to"} if k in SPRING_KINDS else set()) for k in LOAD_KINDS}
_PROFILE_FIELDS = {
    "constant": ({"value"}, set()),
    "step": ({"time", "before", "after"}, set()),
    "ramp": ({"start", "end", "from", "to"}, set()),
    "sine": ({"amplitude", "frequency"}, {"phase", "offset"}),
    "table": ({"time", "value"}, set()),
}
_TOP = {"model", "simulation", "params", "loads", "proximities", "recording", "video"}
_SIM = {"duration", "timestep", "speed"}
_REC = {"path", "rate", "signals"}
_VID = {"path", "camera", "fps", "width", "height", "show_loads", "show_proximities", "show_contacts",
        "show_net_force"}
_PARAM = {"value", "min", "max", "unit"}


@dataclass
class RecordingSettings:
    """Where and what to record: ``rate`` in samples per simulated second (None: every step)."""

    path: Path | None = None
    rate: float | None = None
    signals: tuple[str, ...] = SIGNAL_GROUPS


@dataclass
class VideoSettings:
    """Offscreen video: ``fps`` frames per simulated second, size in pixels."""

    path: Path
    camera: str | None = None
    fps: int = 30
    width: int = 640
    height: int = 480
    show_loads: bool = True
    show_proximities: bool = True
    show_contacts: bool = False
    show_net_force: bool = False


@dataclass
class Scenario:
    """Everything a user attached to a model. Paths are absolute (resolved against the file)."""

    model: Path
    duration: float = 5.0
    timestep: float | None = None
    speed: float = 1.0
    params: dict[str, NamedValue] = field(default_factory=dict)
    loads: list[Load] = field(default_factory=list)
    proximities: list[Proximity] = field(default_factory=list)
    recording: RecordingSettings = field(default_factory=RecordingSettings)
    video: VideoSettings | None = None
    source: Path | None = None
    text: str = ""
    locator: "ScenarioLocator | None" = None
    doc: dict = field(default_factory=dict)
    """The scenario as a TOML document (tables, lists, numbers, strings), as read."""

    def where(self, *fieldpath: str | int) -> str:
        """'FILE:LINE: field' prefix for an error about ``fieldpath`` (e.g. 'loads', 2, 'at')."""
        if self.locator is None:
            return _dotted(fieldpath)
        return self.locator.where(*fieldpath)

    def runtime(self, **options: Any) -> RuntimeManager:
        """A RuntimeManager over this scenario's loads, proximities and params (not yet resolved);
        ``options`` are RuntimeManager's other fields (playback_speed defaults to as fast as possible)."""
        options.setdefault("playback_speed", 0.0)
        return RuntimeManager(loads=self.loads, proximities=self.proximities, params=list(self.params.values()),
                              **options)

    def check_model(self, model: mujoco.MjModel) -> None:
        """Check every site/body/geom name against a compiled model (ConfigError if unknown)."""
        for i, ld in enumerate(self.loads):
            for key, point in (("at", ld.action_site), ("frame", ld.rel_to_site), ("to", ld.reaction)):
                if point is not None:
                    self._check_point(model, point, ("loads", i, key))
        for i, p in enumerate(self.proximities):
            self._check_point(model, p.a, ("proximities", i, "a"))
            self._check_point(model, p.b, ("proximities", i, "b"))
        if self.video is not None and self.video.camera is not None:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, self.video.camera) < 0:
                names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) or "" for i in range(model.ncam)]
                raise ConfigError(_oneline(f"{self.where('video', 'camera')}: unknown camera '{self.video.camera}'"
                                           f"{closest_names(self.video.camera, [n for n in names if n])}"))

    def _check_point(self, model: mujoco.MjModel, point: Point, path: tuple) -> None:
        try:
            point.get_id(model)
        except ConfigError as exc:
            raise ConfigError(_oneline(f"{self.where(*path)}: {exc}")) from None


def _dotted(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class ScenarioLocator:
    """Finds the line of a field in the TOML text, for error messages."""

    _header = re.compile(r"^\s*\[\[\s*([A-Za-z0-9_.\"-]+)\s*\]\]")
    _table = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"-]+)\s*\]")
    _key = re.compile(r"^\s*\"?([A-Za-z0-9_-]+)\"?\s*=")

    def __init__(self, text: str, source: Path | None) -> None:
        self.source = source
        self.lines: dict[tuple, int] = {}
        table: tuple = ()
        counters: dict[str, int] = {}
        for n, line in enumerate(text.splitlines(), start=1):
            m = self._header.match(line)
            if m:
                name = m.group(1)
                counters[name] = counters.get(name, -1) + 1
                table = (name, counters[name])
                self.lines.setdefault(table, n)
                continue
            m = self._table.match(line)
            if m:
                table = tuple(m.group(1).split("."))
                self.lines.setdefault(table, n)
                continue
            m = self._key.match(line)
            if m:
                self.lines.setdefault((*table, m.group(1)), n)

    def line(self, *path: str | int) -> int | None:
        """Line of the deepest known prefix of ``path``."""
        for k in range(len(path), 0, -1):
            n = self.lines.get(tuple(path[:k]))
            if n is not None:
                return n
        return None

    def where(self, *path: str | int) -> str:
        if self.source is None and not self.lines:
            return _dotted(path) if path else "scenario"
        name = str(self.source) if self.source else "<scenario>"
        n = self.line(*path)
        loc = f"{name}:{n}" if n else name
        return f"{loc}: {_dotted(path)}" if path else loc


class _Parser:
    """Turns the TOML dict into a Scenario; every check raises ConfigError via ``fail``."""

    def __init__(self, doc: dict, locator: ScenarioLocator, base: Path) -> None:
        self.doc = doc
        self.loc = locator
        self.base = base
        self.params: dict[str, NamedValue] = {}

    def fail(self, path: tuple, msg: str) -> ConfigError:
        return ConfigError(_oneline(f"{self.loc.where(*path)}: {msg}"))

    def keys(self, table: Any, allowed: set[str], path: tuple) -> dict:
        if not isinstance(table, dict):
            raise self.fail(path, f"must be a table, got {_typename(table)}")
        for key in table:
            if key not in allowed:
                raise self.fail((*path, key), f"unknown field '{key}'{closest_names(key, sorted(allowed))}")
        return table

    def number(self, value: Any, path: tuple, *, positive: bool = False, nonneg: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"must be a number, got {_show(value)}")
        try:
            v = float(value)
        except OverflowError:  # a TOML integer beyond float range
            raise self.fail(path, f"must be a finite number, got {_show(value)}") from None
        if not math.isfinite(v):
            raise self.fail(path, f"must be a finite number, got {value}")
        if positive and v <= 0:
            raise self.fail(path, f"must be positive, got {value:g}")
        if nonneg and v < 0:
            raise self.fail(path, f"must not be negative, got {value:g}")
        return v

    def string(self, value: Any, path: tuple) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"must be a non-empty string, got {_show(value)}")
        return value.strip()

    def path_value(self, value: Any, path: tuple) -> Path:
        try:
            p = Path(self.string(value, path)).expanduser()
        except RuntimeError:  # '~user' with no such user
            raise self.fail(path, f"cannot expand '~' in {_show(value)}") from None
        return p if p.is_absolute() else (self.base / p)

    def param_or_number(self, value: Any, path: tuple, *, allow_profile: bool = False) -> Any:
        if isinstance(value, str):
            name = value.strip()
            if name not in self.params:
                raise self.fail(path, f"unknown param '{name}'{closest_names(name, sorted(self.params))}")
            return self.params[name]
        if isinstance(value, dict):
            if not allow_profile:
                raise self.fail(path, "takes a number or a param name (time profiles are for magnitude, "
                                      "vector, force and torque components)")
            return self.profile(value, path)
        return self.number(value, path)

    def profile(self, spec: dict, path: tuple) -> Profile:
        kind = spec.get("profile")
        if not isinstance(kind, str) or kind not in _PROFILE_FIELDS:
            raise self.fail((*path, "profile"), f"unknown profile {_show(kind)}"
                            f"{closest_names(str(kind), sorted(_PROFILE_FIELDS))}")
        required, optional = _PROFILE_FIELDS[kind]
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
        return Sine(n["amplitude"], n["frequency"], n.get("phase", 0.0), n.get("offset", 0.0))

    def vector(self, value: Any, path: tuple) -> list:
        if not isinstance(value, list) or len(value) != 3:
            raise self.fail(path, f"must be a list of 3 components, got {_show(value)}")
        return [self.param_or_number(x, path, allow_profile=True) for x in value]

    def point(self, value: Any, path: tuple, *, allow_geom: bool = False, site_only: bool = False) -> Point:
        text = self.string(value, path)
        try:
            p = parse_point(text, allow_geom=allow_geom)
        except ConfigError as exc:
            raise self.fail(path, str(exc)) from None
        if site_only and not isinstance(p, Site):
            raise self.fail(path, f"'{text}' must be a site name (the force acts along the site's x-axis)")
        return p

    # --- sections ------------------------------------------------------------------------------
    def scenario(self) -> Scenario:
        doc = self.keys(self.doc, _TOP, ())
        if "model" not in doc:
            raise self.fail(("model",), "missing required field 'model' (the MJCF/.mjb file)")
        model = self.path_value(doc["model"], ("model",))
        try:
            found = model.is_file()
        except OSError as exc:  # e.g. a name too long for the file system
            raise self.fail(("model",), f"model file cannot be used: {exc.strerror or exc}") from None
        if not found:
            raise self.fail(("model",), f"model file not found: {model}")
        sc = Scenario(model=model)
        sim = self.keys(doc.get("simulation", {}), _SIM, ("simulation",))
        if "duration" in sim:
            sc.duration = self.number(sim["duration"], ("simulation", "duration"), positive=True)
        if "timestep" in sim:
            sc.timestep = self.number(sim["timestep"], ("simulation", "timestep"), positive=True)
        if "speed" in sim:
            sc.speed = self.number(sim["speed"], ("simulation", "speed"), positive=True)
        params = doc.get("params", {})
        if not isinstance(params, dict):
            raise self.fail(("params",), "must be a table")
        for name, spec in params.items():
            self.params[name] = self.param(name, spec)
        sc.params = dict(self.params)
        loads = doc.get("loads", [])
        if not isinstance(loads, list):
            raise self.fail(("loads",), "must be an array of tables ([[loads]])")
        names: set[str] = set()
        for i, spec in enumerate(loads):
            ld = self.load(spec, ("loads", i))
            if ld.name in names:
                raise self.fail(("loads", i, "name"), f"duplicate load name '{ld.name}'")
            names.add(ld.name)
            sc.loads.append(ld)
        proxs = doc.get("proximities", [])
        if not isinstance(proxs, list):
            raise self.fail(("proximities",), "must be an array of tables ([[proximities]])")
        pnames: set[str] = set()
        for i, spec in enumerate(proxs):
            p = self.proximity(spec, ("proximities", i))
            if p.name in pnames:
                raise self.fail(("proximities", i, "name"), f"duplicate proximity name '{p.name}'")
            pnames.add(p.name)
            sc.proximities.append(p)
        if "recording" in doc:
            sc.recording = self.recording(doc["recording"])
        if "video" in doc:
            sc.video = self.video(doc["video"])
        return sc

    def param(self, name: str, spec: Any) -> NamedValue:
        path = ("params", name)
        if not isinstance(spec, dict):
            return NamedValue(name, self.number(spec, path))
        self.keys(spec, _PARAM, path)
        if "value" not in spec:
            raise self.fail(path, "missing required field 'value'")
        value = self.number(spec["value"], (*path, "value"))
        lo = self.number(spec["min"], (*path, "min")) if "min" in spec else None
        hi = self.number(spec["max"], (*path, "max")) if "max" in spec else None
        if lo is not None and hi is not None and lo > hi:
            raise self.fail(path, f"min ({lo:g}) is above max ({hi:g})")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail((*path, "value"), f"value {value:g} is outside [min, max]")
        unit = spec.get("unit", "")
        if not isinstance(unit, str):
            raise self.fail((*path, "unit"), "must be a string")
        return NamedValue(name, value, min=lo, max=hi, unit=unit)

    def load(self, spec: Any, path: tuple) -> Load:
        if not isinstance(spec, dict):
            raise self.fail(path, "must be a table")
        kind = spec.get("kind")
        if kind is None:
            raise self.fail(path, "missing required field 'kind'")
        if not isinstance(kind, str) or kind not in LOAD_KINDS:
            raise self.fail((*path, "kind"), f"unknown load kind {_show(kind)}{closest_names(str(kind), list(LOAD_KINDS))}")
        self.keys(spec, LOAD_KINDS[kind], path)
        missing = sorted(_REQUIRED[kind] - set(spec))
        if missing:
            raise self.fail(path, f"{kind} needs '{missing[0]}'")
        name = self.string(spec["name"], (*path, "name"))
        scalar = kind in ("scalar_force", "scalar_torque")
        at = self.point(spec["at"], (*path, "at"), site_only=scalar)
        to = self.point(spec["to"], (*path, "to")) if "to" in spec else None
        frame = self.point(spec["frame"], (*path, "frame"), site_only=True) if "frame" in spec else None
        num = lambda key, default=0.0: (self.param_or_number(spec[key], (*path, key))  # noqa: E731
                                        if key in spec else default)
        if kind in SPRING_KINDS:
            law = dict(stiffness=num("stiffness"), damping=num("damping"))
            if kind == "stroke_compression_spring":
                law.update(preload=num("preload"), max_stroke=num("max_stroke", 0.1))
                for key in ("stiffness", "damping", "preload", "max_stroke"):
                    self._nonneg(law[key], (*path, key))
            else:
                law.update(rest_length=num("rest_length"))
                for key in ("stiffness", "damping", "rest_length"):
                    self._nonneg(law[key], (*path, key))
            return getattr(PointToPointForce, kind)(name, at, to, **law)
        if scalar:
            if "magnitude" not in spec:
                raise self.fail(path, f"{kind} needs 'magnitude'")
            mag = self.param_or_number(spec["magnitude"], (*path, "magnitude"), allow_profile=True)
            cls = ScalarForce if kind == "scalar_force" else ScalarTorque
            return cls(name=name, action_site=at, magnitude=mag, xtion_body=to)
        if kind == "general":
            force = self.vector(spec.get("force", [0, 0, 0]), (*path, "force"))
            torque = self.vector(spec.get("torque", [0, 0, 0]), (*path, "torque"))
            return GeneralLoad(name=name, action_site=at, force=force, torque=torque, rel_to_site=frame,
                               xtion_body=to)
        if "vector" not in spec:
            raise self.fail(path, f"{kind} needs 'vector'")
        vec = self.vector(spec["vector"], (*path, "vector"))
        cls2 = VectorForce if kind == "force" else VectorTorque
        return cls2(name=name, action_site=at, vector=vec, rel_to_site=frame, xtion_body=to)

    def _nonneg(self, value: Any, path: tuple) -> None:
        if isinstance(value, float) and value < 0:
            raise self.fail(path, f"must not be negative, got {value:g}")

    def proximity(self, spec: Any, path: tuple) -> Proximity:
        self.keys(spec, {"name", "a", "b", "threshold"}, path)
        for key in ("name", "a", "b"):
            if key not in spec:
                raise self.fail(path, f"proximity needs '{key}'")
        name = self.string(spec["name"], (*path, "name"))
        a = self.point(spec["a"], (*path, "a"), allow_geom=True)
        b = self.point(spec["b"], (*path, "b"), allow_geom=True)
        if isinstance(a, Geom) != isinstance(b, Geom):
            raise self.fail(path, f"both ends must be geoms, or neither (got '{a}' and '{b}')")
        thr = self.number(spec["threshold"], (*path, "threshold")) if "threshold" in spec else None
        return Proximity(name=name, a=a, b=b, threshold=thr)

    def recording(self, spec: Any) -> RecordingSettings:
        path = ("recording",)
        self.keys(spec, _REC, path)
        rec = RecordingSettings()
        if "path" in spec:
            rec.path = self.path_value(spec["path"], (*path, "path"))
            if rec.path.suffix.lower() != ".parquet":
                raise self.fail((*path, "path"), f"must end in .parquet, got '{rec.path.name}'")
        if "rate" in spec:
            rec.rate = self.number(spec["rate"], (*path, "rate"), positive=True)
        if "signals" in spec:
            sig = spec["signals"]
            if not isinstance(sig, list) or not all(isinstance(s, str) for s in sig):
                raise self.fail((*path, "signals"), "must be a list of signal group names")
            for s in sig:
                if s not in SIGNAL_GROUPS:
                    raise self.fail((*path, "signals"), f"unknown signal group '{s}'"
                                    f"{closest_names(s, list(SIGNAL_GROUPS))}")
            rec.signals = tuple(sig)
        return rec

    def video(self, spec: Any) -> VideoSettings:
        path = ("video",)
        self.keys(spec, _VID, path)
        if "path" not in spec:
            raise self.fail(path, "missing required field 'path' (.mp4 or .gif)")
        vp = self.path_value(spec["path"], (*path, "path"))
        if vp.suffix.lower() not in (".mp4", ".gif"):
            raise self.fail((*path, "path"), f"must end in .mp4 or .gif, got '{vp.name}'")
        v = VideoSettings(path=vp)
        if "camera" in spec:
            v.camera = self.string(spec["camera"], (*path, "camera"))
        for key in ("fps", "width", "height"):
            if key in spec:
                val = spec[key]
                if isinstance(val, bool) or not isinstance(val, int) or val <= 0:
                    raise self.fail((*path, key), f"must be a positive whole number, got {_show(val)}")
                setattr(v, key, val)
        for key in ("show_loads", "show_proximities", "show_contacts", "show_net_force"):
            if key in spec:
                if not isinstance(spec[key], bool):
                    raise self.fail((*path, key), f"must be true or false, got {_show(spec[key])}")
                setattr(v, key, spec[key])
        return v


def _typename(v: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(type(v), type(v).__name__)


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_scenario(text: str, *, source: Path | None = None, base: Path | None = None,
                   locate: bool = True) -> Scenario:
    """Parse scenario TOML ``text``; relative paths resolve against ``base`` (default: cwd).

    ``locate=False`` names fields only (no file:line), for documents edited in the app."""
    name = str(source) if source else "<scenario>"
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        where = f"{name}:{m.group(1)}" if m else name
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise ConfigError(_oneline(f"{where}: TOML syntax error: {reason}")) from None
    except (ValueError, RecursionError) as exc:  # over-long integers, absurdly deep nesting
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ConfigError(_oneline(f"{name}: TOML syntax error: {reason}")) from None
    locator = ScenarioLocator(text if locate else "", source if locate else None)
    sc = _Parser(doc, locator, base or Path.cwd()).scenario()
    sc.source, sc.text, sc.locator, sc.doc = source, text, locator, doc
    return sc


def scenario_from_doc(doc: dict, *, base: Path, source: Path | None = None) -> Scenario:
    """Validate a scenario document (as ``tomllib`` returns it) built in memory, e.g. by the app."""
    from mjrig.scenario_toml import dumps
    text = dumps(doc)
    return parse_scenario(text, source=source, base=base, locate=False)


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Read and validate a scenario file (fields only; ``Scenario.check_model`` checks names)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: scenario file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the scenario: {exc}") from None
    return parse_scenario(text, source=path, base=path.resolve().parent)
