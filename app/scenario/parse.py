"""Scenario files (TOML) <-> rig description, with every validation and its one-line errors.

A scenario is data: it is parsed with ``tomllib`` and nothing in it is evaluated, imported or
unpickled. Errors name the file, the line and the field (``loads[2].at``) and, for unknown
names, the closest valid ones.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco

from mjrig.runtime.analysis.metrics import Metric
from mjrig.runtime.analysis.requirements import Requirement
from mjrig.runtime.controls import Control
from mjrig.runtime.drawing.tracers import Tracer
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.errors import one_line as _oneline
from mjrig.runtime.files.paths import RECORDING_SUFFIXES, VIDEO_SUFFIXES, suffix_problem
from mjrig.runtime.forces.joint_loads import joint_dof
from mjrig.runtime.forces.loads import Load
from mjrig.runtime.forces.proximity import Proximity
from mjrig.runtime.model_fields import ModelBinding, parse_model_field
from mjrig.runtime.points import Point, closest_names, find_id
from mjrig.runtime.telemetry.frame_signals import FrameSignal
from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS
from mjrig.runtime.telemetry.units import DisplayUnits, read_units
from mjrig.runtime.values import NamedValue
from mjrig.scenario.fields import FieldReader, model_elements, model_points
from mjrig.scenario.fields import show as _show
from mjrig.scenario.initial import InitialState, read_initial
from mjrig.scenario.kinds import REGISTRY, Registry
from mjrig.scenario.locator import ScenarioLocator, dotted
from mjrig.scenario.measured import Measured, link_metrics, parse_measured
from mjrig.scenario.plots import PlotSettings, read_plots
from mjrig.scenario.studies.fit import FitSpec, parse_fit
from mjrig.scenario.studies.optimize import OptimizeSpec, parse_optimize
from mjrig.scenario.studies.sweep import SweepSpec, parse_sweep

__all__ = [
    "Scenario",
    "RecordingSettings",
    "VideoSettings",
    "load_scenario",
    "parse_scenario",
    "LOAD_KINDS",
    "ScenarioLocator",
]

_LOADS = REGISTRY.section("loads")
LOAD_KINDS: dict[str, set[str]] = {k.name: _LOADS.allowed(k) for k in _LOADS.kinds}
"""Each load kind's allowed keys (from ``mjrig.scenario.kinds``)."""
_TOP = {
    "model",
    "simulation",
    "params",
    "recording",
    "video",
    "sweep",
    "optimize",
    "initial",
    "view",
    "units",
    "plots",
    "measured",
    "fit",
}
_VIEW = {"force_scale", "torque_scale"}
_SIM = {"duration", "timestep", "speed", "initial_key", "initial_state"}
_REC = {"path", "rate", "signals"}
_VID = {"path", "camera", "fps", "width", "height", "show_loads", "show_proximities", "show_contacts", "show_net_force"}
_PARAM = {"value", "min", "max", "unit", "model"}


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
    initial_key: str | None = None
    """A keyframe of the model to start from (and reset to)."""
    initial_state: Path | None = None
    """A snapshot file (.npz, ``mjrig.runtime.telemetry.snapshots``) to start from (and reset to)."""
    initial: InitialState = field(default_factory=InitialState)
    """``[initial]``: joint positions and velocities by name, over the keyframe or snapshot."""
    units: DisplayUnits = field(default_factory=DisplayUnits)
    """``[units]``: how values are shown (files stay SI)."""
    plots: PlotSettings = field(default_factory=PlotSettings)
    """``[plots]``: the signals the app plots at opening, and the window (s)."""
    arrow_scales: tuple[float | None, float | None] = (None, None)
    """``[view] force_scale`` (m/N) and ``torque_scale`` (m/(N·m)); None: automatic."""
    params: dict[str, NamedValue] = field(default_factory=dict)
    bindings: list[ModelBinding] = field(default_factory=list)
    """Params bound to model fields (``model = "body:block.mass"``)."""
    loads: list[Load] = field(default_factory=list)
    proximities: list[Proximity] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)
    tracers: list[Tracer] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    """Checks of signals, evaluated at every step (``mjrig.runtime.analysis.requirements``)."""
    metrics: list[Metric] = field(default_factory=list)
    """Signals reduced to numbers over every step's values (``mjrig.runtime.analysis.metrics``)."""
    signals: list[FrameSignal] = field(default_factory=list)
    """Telemetry in another frame (``[[signals]]``, ``mjrig.runtime.telemetry.frame_signals``)."""
    recording: RecordingSettings = field(default_factory=RecordingSettings)
    video: VideoSettings | None = None
    sweep: SweepSpec | None = None
    """The ``[sweep]`` section (``mjrig sweep``), or None."""
    optimize: OptimizeSpec | None = None
    """The ``[optimize]`` section (``mjrig optimize``), or None."""
    measured: list[Measured] = field(default_factory=list)
    """``[[measured]]``: bench data, each entry one experiment (``mjrig.scenario.measured``)."""
    fit: FitSpec | None = None  # the [fit] section (mjrig fit), or None
    source: Path | None = None
    text: str = ""
    locator: ScenarioLocator | None = None
    doc: dict = field(default_factory=dict)
    """The scenario as a TOML document (tables, lists, numbers, strings), as read."""

    def toml(self) -> str:
        """The scenario as TOML text: the file as read, or a document built in memory written out."""
        if not self.text:
            from mjrig.scenario.toml_writer import dumps

            self.text = dumps(self.doc)
        return self.text

    def where(self, *fieldpath: str | int) -> str:
        """'FILE:LINE: field' prefix for an error about ``fieldpath`` (e.g. 'loads', 2, 'at')."""
        if self.locator is None:
            return dotted(fieldpath)
        return self.locator.where(*fieldpath)

    def check_model(self, model: mujoco.MjModel) -> None:
        """Check every site/body/geom name against a compiled model (ConfigError if unknown)."""
        for path, point in model_points(self.doc):
            self._check_point(model, point, path)
        for path, what, name in model_elements(self.doc):
            self._checked(
                lambda name=name, what=what: (
                    joint_dof(model, name)
                    if what == "joint"
                    else find_id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name, kind="actuator", count=model.nu)
                ),
                path,
            )
        for b in self.bindings:
            self._checked(lambda b=b: b.check(model), ("params", b.param.name, "model"))
        if self.initial_key is not None:
            key = self.initial_key
            self._checked(
                lambda: find_id(model, mujoco.mjtObj.mjOBJ_KEY, key, kind="keyframe", count=model.nkey),
                ("simulation", "initial_key"),
            )
        self.initial.check(model, self.where)
        for i, sig in enumerate(self.signals):
            try:
                sig.check(model, [ld.name for ld in self.loads])
            except ConfigError as exc:
                field_name, _, text = str(exc).partition(": ")
                raise ConfigError(_oneline(f"{self.where('signals', i, field_name)}: {text}")) from None
        if self.video is not None and self.video.camera is not None:
            try:
                find_id(model, mujoco.mjtObj.mjOBJ_CAMERA, self.video.camera, kind="camera", count=model.ncam)
            except ConfigError as exc:
                raise ConfigError(_oneline(f"{self.where('video', 'camera')}: {exc}")) from None

    def _check_point(self, model: mujoco.MjModel, point: Point, path: tuple) -> None:
        self._checked(lambda: point.get_id(model), path)

    def _checked(self, check: Any, path: tuple) -> Any:
        """``check()``, its ConfigError prefixed with where ``path`` is in the file."""
        try:
            return check()
        except ConfigError as exc:
            raise ConfigError(_oneline(f"{self.where(*path)}: {exc}")) from None


class _Parser(FieldReader):
    """Turns the TOML dict into a Scenario; every check raises ConfigError via ``fail``."""

    def __init__(self, doc: dict, locator: ScenarioLocator, base: Path, *, registry: Registry = REGISTRY) -> None:
        super().__init__(locator, base, registry=registry)
        self.doc = doc
        self.bindings: list[ModelBinding] = []

    # --- sections ------------------------------------------------------------------------------
    def scenario(self) -> Scenario:
        doc = self.keys(self.doc, _TOP | {s.key for s in self.registry.sections}, ())
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
        if "initial_key" in sim and "initial_state" in sim:
            raise self.fail(("simulation", "initial_state"), "give 'initial_key' or 'initial_state', not both")
        if "initial_key" in sim:
            sc.initial_key = self.string(sim["initial_key"], ("simulation", "initial_key"))
        if "initial_state" in sim:
            sc.initial_state = self.path_value(sim["initial_state"], ("simulation", "initial_state"))
            if not sc.initial_state.is_file():
                raise self.fail(("simulation", "initial_state"), f"snapshot file not found: {sc.initial_state}")
        if "initial" in doc:
            sc.initial = read_initial(self, doc["initial"])
        if "units" in doc:
            sc.units = read_units(
                doc["units"], lambda key, msg: self.fail(("units",) if key is None else ("units", key), msg)
            )
        if "plots" in doc:
            sc.plots = read_plots(
                doc["plots"], lambda key, msg: self.fail(("plots",) if key is None else ("plots", key), msg)
            )
        view = self.keys(doc.get("view", {}), _VIEW, ("view",))
        sc.arrow_scales = tuple(
            self.number(view[k], ("view", k), positive=True) if k in view else None  # type: ignore[assignment]
            for k in ("force_scale", "torque_scale")
        )
        params = doc.get("params", {})
        if not isinstance(params, dict):
            raise self.fail(("params",), "must be a table")
        for name, spec in params.items():
            self.params[name] = self.param(name, spec)
        sc.params = dict(self.params)
        sc.bindings = list(self.bindings)
        for section in self.registry.sections:
            entries = doc.get(section.key, [])
            if not isinstance(entries, list):
                raise self.fail((section.key,), f"must be an array of tables ([[{section.key}]])")
            names: set[str] = set()
            for i, spec in enumerate(entries):
                item = self.entry(section, spec, (section.key, i))
                if item.name in names:
                    raise self.fail(
                        (section.key, i, section.name_key), f"duplicate {section.noun} {section.name_key} '{item.name}'"
                    )
                names.add(item.name)
                getattr(sc, section.key).append(item)
        sc.measured = parse_measured(doc.get("measured", []), self, sc.params, duration=sc.duration)
        link_metrics(sc.metrics, sc.measured, self)
        sc.fit = parse_fit(doc["fit"], self, sc.params, sc.measured) if "fit" in doc else None
        if "recording" in doc:
            sc.recording = self.recording(doc["recording"])
        if "video" in doc:
            sc.video = self.video(doc["video"])
        if "sweep" in doc:
            sc.sweep = parse_sweep(doc["sweep"], self, sc.params)
        if "optimize" in doc:
            sc.optimize = parse_optimize(doc["optimize"], self, sc.params, sc.metrics)
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
        nv = NamedValue(name, value, min=lo, max=hi, unit=unit)
        if "model" in spec:
            text = self.string(spec["model"], (*path, "model"))
            try:
                self.bindings.append(ModelBinding(nv, field=parse_model_field(text)))
            except ConfigError as exc:
                raise self.fail((*path, "model"), str(exc)) from None
        return nv

    def recording(self, spec: Any) -> RecordingSettings:
        path = ("recording",)
        self.keys(spec, _REC, path)
        rec = RecordingSettings()
        if "path" in spec:
            rec.path = self.path_value(spec["path"], (*path, "path"))
            problem = suffix_problem(rec.path, RECORDING_SUFFIXES)
            if problem:
                raise self.fail((*path, "path"), problem)
        if "rate" in spec:
            rec.rate = self.number(spec["rate"], (*path, "rate"), positive=True)
        if "signals" in spec:
            sig = spec["signals"]
            if not isinstance(sig, list) or not all(isinstance(s, str) for s in sig):
                raise self.fail((*path, "signals"), "must be a list of signal group names")
            for s in sig:
                if s not in SIGNAL_GROUPS:
                    raise self.fail(
                        (*path, "signals"), f"unknown signal group '{s}'{closest_names(s, list(SIGNAL_GROUPS))}"
                    )
            rec.signals = tuple(sig)
        return rec

    def video(self, spec: Any) -> VideoSettings:
        path = ("video",)
        self.keys(spec, _VID, path)
        if "path" not in spec:
            raise self.fail(path, "missing required field 'path' (.mp4 or .gif)")
        vp = self.path_value(spec["path"], (*path, "path"))
        problem = suffix_problem(vp, VIDEO_SUFFIXES)
        if problem:
            raise self.fail((*path, "path"), problem)
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


def parse_scenario(
    text: str,
    *,
    source: Path | None = None,
    base: Path | None = None,
    locate: bool = True,
    registry: Registry = REGISTRY,
) -> Scenario:
    """Parse scenario TOML ``text``; relative paths resolve against ``base`` (default: cwd).

    ``locate=False`` names fields only (no file:line), for documents edited in the app;
    ``registry`` says which kinds each section holds (``mjrig.scenario.kinds``)."""
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
    sc = _Parser(doc, locator, base or Path.cwd(), registry=registry).scenario()
    sc.source, sc.text, sc.locator, sc.doc = source, text, locator, doc
    return sc


def scenario_from_doc(doc: dict, *, base: Path, source: Path | None = None, registry: Registry = REGISTRY) -> Scenario:
    """Validate a scenario document built in memory (e.g. by the app's edits), as ``tomllib``
    would return it, directly: no TOML text is written and parsed back. Errors name fields
    only (there is no file line to point at)."""
    doc = _plain(doc)
    locator = ScenarioLocator("", None)
    sc = _Parser(doc, locator, base, registry=registry).scenario()
    sc.source, sc.text, sc.locator, sc.doc = source, "", locator, doc
    return sc


def _plain(value: Any) -> Any:
    """A deep copy of a document with tuples as lists (what ``tomllib`` gives for arrays)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Read and validate a scenario file (fields only; ``Scenario.check_model`` checks names)."""
    path = Path(path)
    if path.exists() and not path.is_file():  # a pipe would block the read for ever
        raise ConfigError(f"{path}: not a regular file: a scenario is a .toml file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: scenario file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the scenario: {exc}") from None
    return parse_scenario(text, source=path, base=path.resolve().parent)
