"""Each feature's part of the panel state (``mjrig.session``: its feature's ``publish()``),
registered where it is defined (``mjrig.panel_parts.panel_part``): the rig's entries, the
outputs, the tools, the reports, the results opened, the recording compared with. Immutable;
part of the command channel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from mjrig.bench_state import NO_MEASURED, MeasuredSignals
from mjrig.panel_parts import panel_part
from mjrig.panel_state.records import (
    NO_COMPARISON,
    ActuatorInfo,
    ComparedSignals,
    EntryInfo,
    JobInfo,
    MetricInfo,
    ParamInfo,
    RequirementInfo,
)
from mjrig.panel_state.results import OpenedResults
from mjrig.runtime.telemetry.units import DisplayUnits

__all__ = ["EntriesPart", "OutputsPart", "ToolsPart", "ReportsPart", "ResultsPart", "ComparisonPart"]


@panel_part
@dataclass(frozen=True)
class EntriesPart:
    """The rig's entries and params (``session.entries``)."""

    name: ClassVar[str] = "entries"  # its field of the panel state (``state.entries.params``)
    items: tuple[EntryInfo, ...] = ()
    """Every entry of the rig, section by section in the registry's order."""
    params: tuple[ParamInfo, ...] = ()
    undo: str = ""
    """The edit Undo would take back ("remove load 'extra'"), "" when there is none."""
    redo: str = ""
    """The edit Redo would do again, "" when there is none."""


@panel_part
@dataclass(frozen=True)
class OutputsPart:
    """The recording being made, its plan, the video, the interrupted recordings (``session.outputs``)."""

    name: ClassVar[str] = "outputs"

    recording_path: str | None = None
    recording_rows: int = 0
    recording_bytes: int = 0
    recording_error: str | None = None
    saving: tuple[JobInfo, ...] = ()
    """Recordings stopped whose files are being finished: "saving NAME", how far (``fraction``),
    the megabytes on disk so far (``note``); gone once the file exists."""
    video_path: str | None = None
    interrupted: tuple[str, ...] = ()  # recordings a crash left unfinished (recoverable)
    recording_plan: dict[str, Any] = field(default_factory=dict)
    """What Start and Ctrl+E record: the Recording form's ``path``, ``rate`` (samples/s, None:
    every step) and ``signals`` (groups, None: all); a rig opens with its [recording]."""
    plan_revision: int = 0
    """Changes when the session sets ``recording_plan`` itself (a rig opened, a recording
    started): the form then shows the plan again. The form's own edits leave it alone, so a
    path being typed is never overwritten by its echo."""


@panel_part
@dataclass(frozen=True)
class ToolsPart:
    """Actuators, requirement verdicts, metrics, the last snapshot, the view's settings (``session.tools``)."""

    name: ClassVar[str] = "tools"

    actuators: tuple[ActuatorInfo, ...] = ()
    requirements: tuple[RequirementInfo, ...] = ()
    metrics: tuple[MetricInfo, ...] = ()
    snapshot_path: str | None = None  # the last state snapshot taken or restored
    force_scale: float | None = None  # [view] force_scale, m of arrow per N (None: automatic)
    shown_units: DisplayUnits = field(default_factory=DisplayUnits)
    """The rig's ``[units]``: what the plots, values at the cursor, sliders and tables show."""


@panel_part
@dataclass(frozen=True)
class ReportsPart:
    """What an export or report without a source reads (``session.reports``)."""

    name: ClassVar[str] = "reports"

    export_source: str | None = None
    """The recording File > Export and File > Report read now: the one replayed, else the one
    being finished or the last one finished (None: none yet)."""


@panel_part
@dataclass(frozen=True)
class ResultsPart:
    """The sweep's or study's results opened (``session.results_files``)."""

    name: ClassVar[str] = "results"
    shown: OpenedResults | None = None
    """The results the session opened last (it read the file): the results view shows them."""
    opened: int = 0  # results files opened so far (the view is made again for each)


@panel_part
@dataclass(frozen=True)
class ComparisonPart:
    """The recording compared with, as the plots draw it (``session.replay_mode``)."""

    name: ClassVar[str] = "comparison"

    compared: ComparedSignals = NO_COMPARISON
    """The compared recording's plotted signals (``timeline.compare`` names its file)."""
    measured: MeasuredSignals = NO_MEASURED
    """Bench data the plots draw dotted beside the signals they measure."""
