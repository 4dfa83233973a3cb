"""Commands (GUI/keys -> simulation) and snapshots (simulation -> GUI).

Every command is a small frozen, picklable dataclass, so the same objects cross a thread queue
or a process pipe. Rig entries of every section (loads, proximities, requirements, controls,
tracers) travel as scenario-format tables (``dict``) in one command pair, ``PutEntry`` /
``RemoveEntry``, so the app validates them with exactly the code that validates scenario files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mjrig.bench_state import (
    AddMeasured,
    ComputeModes,
    FitProgress,
    FitVariable,
    ModeRow,
    ModesPart,
    OfferPart,
    RunFit,
    ShowMode,
    UseEstimate,
    WriteFittedModel,
)
from mjrig.output_commands import (
    ExportRecording,
    PathCommand,
    PlanRecording,
    RecoverRecording,
    RerunPart,
    SaveKeyframe,
    SavePlot,
    Screenshot,
    StartRecording,
    StopRecording,
    StreamToRerun,
    ToggleRecording,
    ToggleVideo,
    WriteReport,
)
from mjrig.panel_state import (
    ActuatorInfo,
    BenchPart,
    ComparedSignals,
    ComparisonPart,
    EntriesPart,
    EntryInfo,
    JobInfo,
    MeasuredOffer,
    MeasuredSignals,
    MetricInfo,
    ModelInfo,
    OpenedResults,
    OutputsPart,
    PanelPart,
    PanelState,
    ParamInfo,
    ReportsPart,
    RequirementInfo,
    ResultsPart,
    RunState,
    TimelineInfo,
    ToolsPart,
)
from mjrig.rig_edits import (
    AddParam,
    BindActuator,
    Command,
    PutEntry,
    Redo,
    RemoveEntry,
    SetArrowScale,
    SetEntryActive,
    SetParam,
    SetUnits,
    Undo,
    UseCurrentAsInitial,
    edit_label,
)

__all__ = [
    "RunState",
    "Command",
    "Undo",
    "Redo",
    "edit_label",
    "OpenModel",
    "KeepRig",
    "AnswerSwitch",
    "JobsOnSwitch",
    "KeepWorking",
    "Reload",
    "Play",
    "Pause",
    "TogglePause",
    "StepOnce",
    "Reset",
    "SetSpeed",
    "ChangeSpeed",
    "PutEntry",
    "RemoveEntry",
    "SetEntryActive",
    "SetParam",
    "AddParam",
    "StartRecording",
    "StopRecording",
    "ToggleRecording",
    "PlanRecording",
    "RecoverRecording",
    "SaveScenario",
    "SaveKeyframe",
    "Screenshot",
    "ToggleVideo",
    "StreamToRerun",
    "RerunPart",
    "SetCamera",
    "Quit",
    "CloseViewer",
    "PanelState",
    "EntryInfo",
    "ParamInfo",
    "ModelInfo",
    "SPEEDS",
    "BindActuator",
    "TakeSnapshot",
    "RestoreSnapshot",
    "ActuatorInfo",
    "JobInfo",
    "CancelJobs",
    "Scrub",
    "StepHistory",
    "SetHistoryLimit",
    "TimelineInfo",
    "OpenComparison",
    "ComparedSignals",
    "MeasuredSignals",
    "OpenedResults",
    "EntriesPart",
    "OutputsPart",
    "ToolsPart",
    "ReportsPart",
    "ResultsPart",
    "ComparisonPart",
    "PanelPart",
    "RequirementInfo",
    "MetricInfo",
    "ExportRecording",
    "WriteReport",
    "SavePlot",
    "UseCurrentAsInitial",
    "SetArrowScale",
    "SetHotReload",
    "SetUnits",
    "PlotSignals",
    "AddMeasured",
    "OfferPart",
    "MeasuredOffer",
    "BenchPart",
    "FitProgress",
    "FitVariable",
    "RunFit",
    "UseEstimate",
    "WriteFittedModel",
    "ComputeModes",
    "ShowMode",
    "ModeRow",
    "ModesPart",
]

SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 0.0)
"""Speed choices (real-time factor); 0.0 means as fast as possible."""


JobsOnSwitch = Literal["ask", "stop", "keep"]
"""What becomes of a rig's long jobs when another rig opens (or it is read again): see ``OpenModel``."""


@dataclass(frozen=True)
class OpenModel(Command):
    """Open an MJCF .xml, a .mjb, a scenario .toml, a recording or results .parquet (the previous
    model runs on on error); with unsaved rig edits, asks first (``pending_open``) unless ``discard``.
    ``params`` (name, value): a trial's values set once open (*Open best*), not an unsaved edit.
    ``jobs``: what becomes of the rig's long jobs under way (a fit, modes): "ask" (the panel asks,
    ``pending_switch``), "stop" them first, or "keep" them running (they report to Status only)."""

    path: str
    discard: bool = False
    params: tuple[tuple[str, float], ...] = ()
    jobs: JobsOnSwitch = "ask"


@dataclass(frozen=True)
class KeepRig(Command):
    """Answer "cancel" to the unsaved-edits or the running-jobs question: the pending open (or
    reload) is dropped."""


@dataclass(frozen=True)
class Reload(Command):
    """Re-read the model file, keeping the rig. ``changed``: why the file watcher asks ("model": it
    or a file it includes changed; "scenario": the rig is read again unless it has unsaved edits).
    ``jobs``: as ``OpenModel``'s (a job under way works on the model as it was)."""

    changed: str = ""
    jobs: JobsOnSwitch = "ask"


@dataclass(frozen=True)
class AnswerSwitch(Command):
    """Answer the question asked before opening or reloading while the rig's long jobs run:
    "stop" them and go on, or "keep" them running and go on (``KeepRig``: cancel)."""

    jobs: JobsOnSwitch


@dataclass(frozen=True)
class SetHotReload(Command):
    """Reload the model or scenario when its file changes on disk (``on``), or not."""

    on: bool = True


@dataclass(frozen=True)
class Play(Command):
    """Run on (from a past instant: a branch)."""


@dataclass(frozen=True)
class Pause(Command):
    """Stop stepping; the state stays."""


@dataclass(frozen=True)
class TogglePause(Command):
    """Play when paused, else Pause."""


@dataclass(frozen=True)
class StepOnce(Command):
    """Advance ``steps`` timesteps while paused."""

    steps: int = 1


@dataclass(frozen=True)
class Reset(Command):
    """Back to the model's initial state (as when opened); leaves an error state."""


@dataclass(frozen=True)
class SetSpeed(Command):
    """Real-time factor to pace to; 0 or less: as fast as possible."""

    speed: float


@dataclass(frozen=True)
class ChangeSpeed(Command):
    """One notch slower (-1) or faster (+1) through SPEEDS."""

    direction: int


@dataclass(frozen=True)
class TakeSnapshot(PathCommand):
    """Save the full physics state to ``path`` (None: a new file next to the scenario, or in runs/)."""


@dataclass(frozen=True)
class RestoreSnapshot(PathCommand):
    """Put back the state saved in ``path`` (None: the last snapshot taken or restored)."""


@dataclass(frozen=True)
class Scrub(Command):
    """Pause and show the newest kept instant at or before ``time`` (s): state restored, the
    view and plots' cursor there. Play or Step from a past instant branches (``mjrig.session.timeline``)."""

    time: float


@dataclass(frozen=True)
class StepHistory(Command):
    """One kept instant back (-1) or forward (+1); forward from the newest steps the physics once."""

    direction: int


@dataclass(frozen=True)
class SetHistoryLimit(Command):
    """Keep at most ``seconds`` of simulated time and ``megabytes`` (MiB) of history, whichever is less."""

    seconds: float
    megabytes: float


@dataclass(frozen=True)
class OpenComparison(Command):
    """Draw a recording (``path``) over the replay or the live run: its signals on the plots
    (dashed) and, when of the same model, a translucent ghost of its bodies in the 3D view;
    ``path`` "" stops comparing."""

    path: str


@dataclass(frozen=True)
class SaveScenario(Command):
    """Write the current rig as a scenario TOML the headless runner accepts; ``then_quit``: close
    the app once it is written (the quit question's "save first"; a failed save keeps it open)."""

    path: str
    then_quit: bool = False


@dataclass(frozen=True)
class PlotSignals(Command):
    """The live plots show ``names`` (in the order ticked) over ``window`` simulated s: the session
    hands the panel their rows (those just ticked: what it kept); a saved scenario's ``[plots]``."""

    names: tuple[str, ...] = ()
    window: float | None = None


@dataclass(frozen=True)
class SetCamera(Command):
    """Point the 3D view: "fit" frames the model, "next" cycles, else one of ``ModelInfo.cameras``."""

    choice: str = "fit"


@dataclass(frozen=True)
class Quit(Command):
    """Close the app (``confirmed``: the user chose to lose unsaved rig edits)."""

    confirmed: bool = False


@dataclass(frozen=True)
class CloseViewer(Command):
    """The 3D view's close button (from the viewer's render thread): quit, or with unsaved rig edits
    ask first (``PanelState.quit_question``); the window stays open until the session quits."""


@dataclass(frozen=True)
class KeepWorking(Command):
    """Answer "keep working" to the quit question."""


@dataclass(frozen=True)
class CancelJobs(Command):
    """Stop every long job under way (a fit, modes, an export: ``PanelState.jobs``)."""
