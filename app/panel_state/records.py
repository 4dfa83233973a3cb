"""The small records the panel state holds: the run state, a rig's entries, params, actuators,
requirements and metrics as the panel lists them, the model, the timeline, a job under way, the
recording compared with. Immutable; part of the command channel (``mjrig.commands`` re-exports
every name)."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mjrig.runtime.telemetry.units import DisplayUnits

__all__ = [
    "SI_UNITS",
    "RunState",
    "EntryInfo",
    "ParamInfo",
    "ActuatorInfo",
    "JobInfo",
    "job_text",
    "TimelineInfo",
    "ComparedSignals",
    "NO_COMPARISON",
    "COMPARED_ROWS",
    "RequirementInfo",
    "bound_text",
    "MetricInfo",
    "ModelInfo",
]


SI_UNITS = DisplayUnits()
"""Values as the scenario has them (SI): the default of every readout."""


class RunState(str, enum.Enum):
    """The one run-state machine: commands only request transitions."""

    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"  # no model loaded
    ERROR = "error"  # diverged or failed; paused until reset


@dataclass(frozen=True)
class EntryInfo:
    """One entry of the rig, of any section of the registry (a load, a proximity, a requirement,
    a control, a tracer): its scenario table and what it does now.

    ``section`` is the scenario section (``"loads"``), ``kind`` the entry's kind (the section's
    only kind when it has no kind key), ``spec`` the table as the scenario holds it. ``active``
    is None for entries that cannot be switched off. ``readout``: (magnitude, unit) pairs of what
    it applies or measures now, e.g. ((2.5, "N*m"),) for a hinge torque or ((0.012, "m"),) for a
    proximity; ``alarm``: it is past its threshold (a proximity below its limit)."""

    section: str
    name: str
    kind: str
    spec: dict
    active: bool | None = None
    readout: tuple[tuple[float, str], ...] = ()
    alarm: bool = False

    def readout_text(self, units: DisplayUnits = SI_UNITS) -> str:
        """The readout as a person reads it, in ``units``: "12.3 N", "2.5 N·m", "3 N, 0.2 N·m"."""
        return ", ".join(units.text(v, u, fmt=".3g") for v, u in self.readout)


@dataclass(frozen=True)
class ParamInfo:
    """A param of the rig: its value, range and unit (SI); ``choices`` or ``grid`` when the
    scenario's ``[optimize.params]`` or ``[sweep.params]`` keep it on a catalogue or a step's grid,
    which its slider snaps to."""

    name: str
    value: float
    min: float | None
    max: float | None
    unit: str
    choices: tuple[float, ...] = ()
    """A catalogue (``{ choices = [...] }``): the values the param takes."""
    grid: tuple[float, float, float] | None = None
    """(low, step, high) of ``step = ...``: the values low + i·step within [low, high]."""

    @property
    def whole(self) -> bool:
        """Whether every value it snaps to is a whole number (a coil count, a gear ratio)."""
        values = self.choices or (self.grid[:2] if self.grid else ())
        return bool(values) and all(float(v).is_integer() for v in values)

    def snap(self, value: float) -> float:
        """``value`` moved to the nearest allowed one (itself when the param takes any)."""
        if self.choices:
            return min(self.choices, key=lambda c: (abs(c - value), c))
        if self.grid is not None:
            low, step, high = self.grid
            top = low + math.floor((high - low) / step + 1e-9) * step
            return min(max(low + round((value - low) / step) * step, low), top)
        return value


@dataclass(frozen=True)
class ActuatorInfo:
    """An actuator of the model: its input now, its ctrlrange (None: unlimited) and what drives it
    (``control``: the scenario value, e.g. a param's name; None: nothing of the rig)."""

    name: str
    ctrl: float
    range: tuple[float, float] | None
    control: str | None = None


@dataclass(frozen=True)
class JobInfo:
    """A long job under way (a fit, modes, an export): ``what`` it is, how far (``fraction`` 0..1
    when known) and a ``note`` ("12 evaluations")."""

    what: str
    fraction: float | None = None
    note: str = ""


def job_text(jobs: Sequence[JobInfo]) -> str:
    """What the long jobs under way are and how far they got: "a fit: 12 evaluations", "saving
    run.parquet: 62 % (84.2 MB)"."""

    def far(j: JobInfo) -> str:
        if j.fraction is None:
            return j.note or "running"
        return f"{100 * j.fraction:.0f} %" + (f" ({j.note})" if j.note else "")

    return "; ".join(f"{j.what}: {far(j)}" for j in jobs)


@dataclass(frozen=True)
class TimelineInfo:
    """What a timeline slider needs: the kept range ``start``..``end`` and the ``cursor`` (s,
    simulated); ``scrubbed``: the view shows a past instant (Play branches from it); ``branches``
    counts branches so far and ``branch_time`` is the last one's time (plots drop their rows after
    it); ``replay``: the session plays a recording (``mjrig RECORDING.parquet``), ``start``..``end``
    is then the recording's range."""

    start: float = 0.0
    end: float = 0.0
    cursor: float = 0.0
    scrubbed: bool = False
    rows: int = 0
    nbytes: int = 0
    max_seconds: float = 0.0
    max_megabytes: float = 0.0
    branches: int = 0
    branch_time: float | None = None
    replay: bool = False
    recording: str = ""  # the recording replayed
    compare: str = ""  # the recording compared with ("": none)
    ghost: bool = False  # the compared one is of the same model: draw its bodies too


@dataclass(frozen=True, eq=False)
class ComparedSignals:
    """The recording compared with (``OpenComparison``) as the live plots draw it: read once by
    the session, off the GUI thread, and published for the plotted signals it has. ``path``: its
    file ("": none); ``times`` (s, shape (rows,)) and ``values`` (signal -> shape (rows,), SI),
    every row of a short recording, evenly thinned out beyond ``COMPARED_ROWS``. The same object
    is published while neither the comparison nor the plotted signals change (compare by ``is``)."""

    path: str = ""
    times: np.ndarray = field(default_factory=lambda: np.empty(0))
    values: Mapping[str, np.ndarray] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        """Whether signal ``name`` of the compared recording is here (it has it, and it is plotted)."""
        return name in self.values

    def at(self, name: str, times: np.ndarray) -> np.ndarray:
        """Signal ``name`` at ``times`` (s), linear between its rows, NaN outside them (KeyError:
        not ``has(name)``)."""
        return np.interp(times, self.times, self.values[name], left=np.nan, right=np.nan)


NO_COMPARISON = ComparedSignals()
"""Nothing compared: the one object every panel state without a comparison holds."""

COMPARED_ROWS = 20000
"""Rows of a compared recording the panel gets at most (as many as the live plots keep)."""


@dataclass(frozen=True)
class RequirementInfo:
    """A requirement's live state: ``passed`` so far (final once ``decided``), the observed
    ``value`` that decides it and its ``limit``, and the first violation (simulated s, and the
    signal's value then) or None."""

    name: str
    signal: str
    bound: str
    passed: bool
    decided: bool
    value: float | None
    limit: float | None
    first_violation: float | None
    violation_value: float | None
    bounds: tuple[float | None, float | None, float | None, float | None] = (None, None, None, None)
    """(min, max, final, tolerance) as the scenario has them, in the signal's SI unit."""

    def wanted(self, unit: str, units: DisplayUnits = SI_UNITS) -> str:
        """The bound in ``units`` (the signal is in SI ``unit``): ">= -5 mm <= 20 mm", "final 0 ± 1 deg"."""
        if self.bounds[:3] == (None, None, None):
            return self.bound
        return bound_text(self.bounds, unit, units)


def bound_text(
    bounds: tuple[float | None, float | None, float | None, float | None],
    unit: str = "",
    units: DisplayUnits = SI_UNITS,
) -> str:
    """A requirement's (min, max, final, tolerance), values in SI ``unit``, as read in ``units``:
    ">= -0.005 <= 0.02" (no unit), ">= -5 mm <= 20 mm", "final 0 ± 1 deg"."""
    lo, hi, final, tol = bounds
    show = lambda x: units.text(x, unit, fmt="g")  # noqa: E731
    return " ".join(
        x
        for x in (
            f">= {show(lo)}" if lo is not None else "",
            f"<= {show(hi)}" if hi is not None else "",
            f"final {show(final)} ± {show(tol or 0.0)}" if final is not None else "",
        )
        if x
    )


@dataclass(frozen=True)
class MetricInfo:
    """A metric's value over the run so far (None before it has one: NaN) and its unit."""

    name: str
    signal: str
    kind: str
    window: str
    value: float | None
    unit: str


@dataclass(frozen=True)
class ModelInfo:
    """Names of the model's entities (rig helpers excluded) and its timestep (s)."""

    path: str = ""
    bodies: tuple[str, ...] = ()
    joints: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    geoms: tuple[str, ...] = ()
    sensors: tuple[str, ...] = ()
    cameras: tuple[str, ...] = ()  # view choices: "free", "tracking", then the model's cameras
    timestep: float = 0.0
    nq: int = 0
    nv: int = 0
    nu: int = 0
