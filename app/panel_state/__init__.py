"""What the panel shows: the immutable snapshot the simulation publishes about every frame
(``PanelState``), the small records inside it (``records``) and each feature's part of it
(``feature_parts``, ``mjrig.bench_state``; registered with ``mjrig.panel_parts.panel_part``). Part
of the command channel (``mjrig.commands`` re-exports every name), so the same objects cross a
thread queue or a process pipe."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mjrig.bench_state import BenchPart, MeasuredOffer, MeasuredSignals
from mjrig.panel_parts import PanelPart, default_part, registered_parts
from mjrig.panel_state.feature_parts import (
    ComparisonPart,
    EntriesPart,
    OutputsPart,
    ReportsPart,
    ResultsPart,
    ToolsPart,
)
from mjrig.panel_state.records import (
    COMPARED_ROWS,
    NO_COMPARISON,
    SI_UNITS,
    ActuatorInfo,
    ComparedSignals,
    EntryInfo,
    JobInfo,
    MetricInfo,
    ModelInfo,
    ParamInfo,
    RequirementInfo,
    RunState,
    TimelineInfo,
    bound_text,
    job_text,
)
from mjrig.panel_state.results import OpenedResults, SobolIndicesView, SobolValueView

__all__ = [
    "RunState",
    "JobInfo",
    "job_text",
    "PanelState",
    "EntryInfo",
    "ParamInfo",
    "ModelInfo",
    "ActuatorInfo",
    "RequirementInfo",
    "MetricInfo",
    "TimelineInfo",
    "ComparedSignals",
    "COMPARED_ROWS",
    "NO_COMPARISON",
    "SI_UNITS",
    "MeasuredSignals",
    "MeasuredOffer",
    "OpenedResults",
    "SobolIndicesView",
    "SobolValueView",
    "bound_text",
    "EntriesPart",
    "OutputsPart",
    "ToolsPart",
    "ReportsPart",
    "ResultsPart",
    "ComparisonPart",
    "BenchPart",
    "PanelPart",
]

P = TypeVar("P")


@dataclass(frozen=True)
class PanelState:
    """What the panel shows, published by the simulation about every frame. Immutable.

    The kernel's fields are declared here; each feature publishes its own part (a registered
    ``panel_part``), held in ``parts`` under the part's name: ``part(kind)`` gives it (its
    defaults when nothing was published), and the kernel's own features' parts have a property
    each (``state.outputs.recording_path``, ``state.tools.metrics``); ``of`` puts the parts in."""

    state: RunState = RunState.STOPPED
    time: float = 0.0
    realtime_factor: float = 0.0
    speed: float = 1.0
    model: ModelInfo = field(default_factory=ModelInfo)
    selection: str | None = None
    error: str | None = None
    messages: tuple[tuple[str, str], ...] = ()  # (level, text), newest last
    signals: tuple[str, ...] = ()
    steps: int = 0
    camera: str = "free"  # the 3D view's camera (one of ModelInfo.cameras)
    opened: int = 0
    """Rigs opened so far (a reload is not another rig): when it changes, a panel forgets what
    it kept for the previous rig (a filter or search typed, a frozen plot)."""
    source: str = ""  # the file opened: a scenario, or the bare model
    plots: tuple[str, ...] = ()
    """The rig's ``[plots] signals`` (CONTRACT 13): ticked in the plots when the rig opens."""
    plot_window: float | None = None  # the rig's ``[plots] window`` (s), None: the panel's own
    dirty: bool = False  # rig edits not saved in a scenario yet
    pending_open: str | None = None  # a file waiting for the unsaved-edits question
    pending_switch: tuple[str, str] | None = None
    """(what waits: "open NAME" or "reload NAME", the long jobs under way) while the panel asks
    whether to stop them or keep them running (``AnswerSwitch``)."""
    quit_question: bool = False  # the 3D view was closed with unsaved edits: ask
    units: Mapping[str, str] = field(default_factory=dict)  # signal -> unit (a read-only copy)
    events: tuple[tuple[float, str], ...] = ()  # (simulated time s, text): threshold crossings
    hot_reload: bool = False  # the model and scenario files are watched and reloaded on change
    timeline: TimelineInfo = field(default_factory=TimelineInfo)
    jobs: tuple[JobInfo, ...] = ()  # long jobs under way: shown beside Status with Cancel
    parts: Mapping[str, Any] = field(default_factory=dict)
    """The features' parts by name (``PanelPart.name``): read them with ``part``."""

    @classmethod
    def of(cls, parts: tuple[PanelPart, ...], **own: Any) -> PanelState:
        """The panel state of the kernel's ``own`` fields and the features' ``parts`` (one of each
        kind at most, each registered; a part left out keeps its defaults)."""
        known = registered_parts()
        held: dict[str, Any] = {}
        for p in parts:
            if known.get(p.name) is not type(p):
                raise TypeError(f"{type(p).__name__} is not a registered panel part (@panel_part)")
            if p.name in held:
                raise TypeError(f"one part of each kind: {type(p).__name__} twice")
            held[p.name] = p
        return cls(**own, parts=held)

    def part(self, kind: type[P]) -> P:
        """The feature's part of class ``kind`` (a registered ``panel_part``): as published, else
        its defaults."""
        held = self.parts.get(getattr(kind, "name", ""))
        return held if isinstance(held, kind) else default_part(kind)

    @property
    def entries(self) -> EntriesPart:
        return self.part(EntriesPart)

    @property
    def outputs(self) -> OutputsPart:
        return self.part(OutputsPart)

    @property
    def tools(self) -> ToolsPart:
        return self.part(ToolsPart)

    @property
    def reports(self) -> ReportsPart:
        return self.part(ReportsPart)

    @property
    def results(self) -> ResultsPart:
        return self.part(ResultsPart)

    @property
    def comparison(self) -> ComparisonPart:
        return self.part(ComparisonPart)

    @property
    def bench(self) -> BenchPart:
        return self.part(BenchPart)

    def section(self, key: str) -> tuple[EntryInfo, ...]:
        """The entries of one scenario section (``"loads"``, ``"proximities"``...)."""
        return tuple(e for e in self.entries.items if e.section == key)

    @property
    def loads(self) -> tuple[EntryInfo, ...]:
        return self.section("loads")

    @property
    def proximities(self) -> tuple[EntryInfo, ...]:
        return self.section("proximities")
