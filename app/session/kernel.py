"""The session kernel: one loaded model, its rig and its run state; takes commands, steps,
publishes the panel state.

The kernel owns the rig (``mjrig.scenario.builder``: every rig is built as ``mjrig run`` builds
it), the run-state machine (``run_control``) and the document (the rig as a scenario document,
``document``). Features plug in, each with one ``RigContext`` and no sibling (``feature`` states
the contract): ``entries`` (editing any section of the rig), ``outputs`` (recordings, videos,
screenshots, scenarios, keyframes), ``reports`` (exports, HTML reports, plot pictures),
``timeline`` (history, scrubbing, branching: the live step source), ``replayer`` (recordings
replayed, comparisons), ``results`` (a sweep's or study's results opened), ``tools`` (reload,
actuator sliders, snapshots, verdicts), ``bench`` (bench data offered, fits), ``plot_feed`` (the
live plots' rows), ``rerun`` (those rows to a Rerun viewer), then every analysis window's feature
registered in ``mjrig.session.analyses``
(the rig's modes). The features are one tuple, ``features``, looped over for their commands (one
table, a command claimed twice refused at start), ``rig_opened``, ``publish``, the 3D view's
frames (``view``: ``view_link``) and ``close``. Each command goes to the feature that registered it (the
step source first); the panel state is the kernel's fields and each feature's part
(``mjrig.panel_state``: ``state.outputs.recording_path``, ``state.part(kind)``).
Threading: ``submit``, ``latest``, ``drain_rows`` and ``log`` may be called from any thread
(MuJoCo's warnings reach ``log`` on whichever thread runs MuJoCo); everything else runs on the
simulation thread (the only one touching MjModel/MjData). Background jobs report back through
``outputs.jobs`` and ``reports.jobs``, drained on the simulation thread; long ones (a fit, modes, an
export) are listed in ``PanelState.jobs`` and stopped by ``CancelJobs`` or the session closing. GUI-free.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import mujoco
import numpy as np

from mjrig import commands as C
from mjrig.model_info import describe_model
from mjrig.runtime.errors import MjrigError
from mjrig.runtime.forces.loads import Load
from mjrig.runtime.manager import RuntimeManager
from mjrig.runtime.telemetry.signals import SignalManager
from mjrig.scenario.builder import Rig, build_rig, keep_switched_off, rebuild_rig
from mjrig.scenario.parse import scenario_from_doc
from mjrig.session import jobs
from mjrig.session.bench import Bench
from mjrig.session.context import RigContext
from mjrig.session.core.inbox import Inbox
from mjrig.session.core.status_log import StatusLog
from mjrig.session.core.unsaved import UnsavedQuestions
from mjrig.session.core.view_link import ViewLink
from mjrig.session.document import RigDocument, read_document
from mjrig.session.entries import NOT_EDITS, RigEntries
from mjrig.session.feature import Feature, analyses, handler_table
from mjrig.session.file_watch import FileWatch, model_files, watching
from mjrig.session.outputs import Outputs
from mjrig.session.plot_rows import PlotFeed
from mjrig.session.replay_mode import ReplayMode, ReplaySource
from mjrig.session.reports import Reports
from mjrig.session.rerun_live import RerunStream
from mjrig.session.results_files import ResultsFiles, is_results
from mjrig.session.run_control import RunControl
from mjrig.session.scope import RigScope
from mjrig.session.switch_gate import SwitchGate
from mjrig.session.timeline import Timeline
from mjrig.session.tools import RigTools

__all__ = ["Session"]

PLOT_RATE = 200.0  # live-plot samples per simulated second (the recording has its own rate)
PLOT_ROWS = 20000  # rows of recent telemetry kept for the plots (older rows are dropped)

_NO_MODEL_NEEDED = (
    C.OpenModel,
    C.Quit,
    C.CloseViewer,
    C.SetSpeed,
    C.ChangeSpeed,
    C.SetCamera,
    C.KeepRig,
    C.KeepWorking,
    C.PlotSignals,
)
OFF_LOCK = (C.OpenModel, C.Reload, C.AnswerSwitch)
"""Commands that compile a new model and data and never write the current ones: they may run
without the viewer's lock (the viewer draws its own references to the old ones until the
viewer loop swaps the new model in), so opening a large model does not freeze the view."""


class Session:
    """A model + rig + run state, driven by commands (see ``mjrig.commands``)."""

    def __init__(self, *, plot_rate: float = PLOT_RATE, watch_files: bool = False) -> None:
        self.rig: Rig | None = None
        self.status = StatusLog()  # the status area's messages, the plots' time-axis marks (any thread)
        self.scope = RigScope(0)
        """The opened rig's scope: every feature's state of that rig (made anew for each rig opened)."""
        self.run = RunControl(lambda: self.source, sim_time=lambda: self.data.time if self.data is not None else 0.0)
        self.document = RigDocument()
        self.context = RigContext(
            rig=lambda: self.rig,
            document=self.document,
            run=self.run,
            log=self.log,
            note_event=self.note_event,
            rebuild=self.edit,
            load=self.load,
            push_rows=self.push_rows,
            camera=lambda: self.view.camera,
            source=lambda: self.source,
            use_source=self._use_source,
            plotted=lambda: self.plot_feed.plotted,
            plot_history=lambda fetch: self.plot_feed.history_from(fetch),
            scope=lambda: self.scope,
        )
        # the features: each sees the context, none another
        self.entries = RigEntries(self.context)
        self.outputs = Outputs(self.context)
        self.tools = RigTools(self.context)
        self.timeline = Timeline(self.context)
        self.replayer = ReplayMode(self.context)
        self.reports = Reports(self.context)  # exports, reports, plot pictures
        self.results = ResultsFiles(self.context, open_target=self.open)
        self.bench = Bench(self.context)  # bench data offered to the rig, fits to it
        self.plot_feed = PlotFeed(PLOT_ROWS)  # every signal's recent rows; the plotted ones to the panel
        self.rerun = RerunStream(self.context)  # the same rows to a Rerun viewer, when asked
        self.features: tuple[Feature, ...] = (
            self.outputs,  # first: its recordings are finished first on close (an export may wait)
            self.entries,
            self.tools,
            self.timeline,
            self.replayer,
            self.reports,
            self.results,
            self.bench,
            self.plot_feed,
            self.rerun,
            *(make(self.context) for make in analyses()),  # the analysis windows (the rig's modes)
        )
        """The session's features, each with its commands, its part of the panel state, what it
        forgets when another rig opens, draws in the 3D view and finishes on close (``Feature``)."""
        self.switch = SwitchGate(self.features, self.log)  # leaving the rig while its jobs run: asked
        self.context.branched.append(lambda t: self.outputs.branch_recording(time=t))
        self.source: Timeline | ReplaySource = self.timeline  # where steps come from: the live rig
        # Shared with the viewer loop, which runs on this (the simulation) thread too: it owns
        # the window and the camera; its render thread's callbacks only submit commands.
        self.view = ViewLink(features=lambda: self.features, model_data=self._model_data)
        self.opened = 0  # rigs opened so far (C.PanelState.opened)
        self.inbox = Inbox(off_lock=OFF_LOCK)  # commands from any thread, run on this one
        self.unsaved = UnsavedQuestions(
            document=self.document,
            switch=self.switch,
            busy=lambda: bool(jobs.running(self.features)),
            log=self.log,
            open_file=self.open,
            handle=self.handle,
            save=self._save_scenario,
            offer_bench=self.bench.offered,
        )
        self.files = FileWatch(self.submit) if watch_files else None  # hot reload (the app's session)
        self._plot_rate = plot_rate
        self._moved = False
        self._live = self._new_live()
        self._snapshot = C.PanelState()
        self._info: tuple[mujoco.MjModel, C.ModelInfo] | None = None
        self._handlers = handler_table(
            {
                C.AnswerSwitch: lambda cmd: self.switch.answer(cmd, then=self.handle),
                **self.run.handlers(),  # play, pause, step, the speed
                C.Reset: self._reset,
                C.SetCamera: lambda cmd: setattr(self.view, "request", cmd.choice),  # the viewer loop's camera
                **self.unsaved.handlers(),  # opening or quitting with unsaved edits: asked first
                C.CancelJobs: lambda cmd: jobs.cancel(self.features),
                C.SetHotReload: lambda cmd: watching(self.files, on=cmd.on, log=self.log),
            },
            self.features,
        )

    # --- the current rig ---------------------------------------------------------------------------
    @property
    def model(self) -> mujoco.MjModel | None:
        return self.rig.model if self.rig is not None else None

    @property
    def data(self) -> mujoco.MjData | None:
        return self.rig.data if self.rig is not None else None

    def _model_data(self) -> tuple[mujoco.MjModel, mujoco.MjData] | None:
        return None if self.rig is None else (self.rig.model, self.rig.data)

    @property
    def rm(self) -> RuntimeManager | None:
        return self.rig.runtime if self.rig is not None else None

    @property
    def state(self) -> C.RunState:
        return self.run.state

    @property
    def error(self) -> str | None:
        return self.run.error

    @property
    def steps(self) -> int:
        return self.run.steps

    def _new_live(self) -> SignalManager:
        """A fresh file-less monitor for the live plots: its columns are exactly the current
        model's and rig's signals (switching models or removing a load drops theirs)."""
        live = SignalManager(None, rate=self._plot_rate, batch_size=16)
        live.on_rows = self.push_rows
        return live

    # --- cross-thread API ------------------------------------------------------------------
    def submit(self, cmd: C.Command) -> None:
        """Queue a command; it runs at the next step boundary."""
        self.inbox.submit(cmd)

    def latest(self) -> C.PanelState:
        """The last published snapshot."""
        return self._snapshot

    def drain_rows(self) -> list[tuple[list[str], np.ndarray]]:
        """Telemetry blocks for the live plots since the last call (oldest first; see
        ``mjrig.session.plot_rows`` for the mark a newly opened model puts between them)."""
        return self.plot_feed.drain()

    def push_rows(self, columns: list[str], block: np.ndarray) -> None:
        """Hand a block of telemetry rows to the live plots (``PlotFeed``: the plotted columns go on)
        and to a stream to Rerun (``RerunStream``)."""
        self.plot_feed.push(columns, block)
        self.rerun.push(columns, block)

    def log(self, level: str, text: str) -> None:
        """Add a message for the status area ('info', 'warning' or 'error'); any thread."""
        self.status.log(level, text)

    def note_event(self, t: float, text: str, *, level: str = "warning") -> None:
        """Mark simulated time ``t`` (s) on the plots' time axis with ``text``, and log it."""
        self.status.note_event(t, text, level=level)

    def warn(self, text: str) -> None:
        """A rig's one-line warning (a control clamped to its ctrlrange), as a 'warning' message."""
        self.log("warning", text)

    # --- opening and building --------------------------------------------------------------
    def open(self, path: str | os.PathLike) -> None:
        """Open an .xml/.urdf/.mjb model, a .toml scenario, a .parquet recording to replay or a sweep's or
        study's results (on failure the current model stays)."""
        path = Path(path).expanduser().resolve()
        if path.suffix.lower() == ".parquet":
            return self.results.open(path) if is_results(path) else self.replayer.open(path)
        doc, speed = read_document(path)
        if speed is not None:
            self.run.speed = speed
        self.load(doc, base=path.parent, source=path, reload=False)
        self.log("info", f"opened {path.name}")
        self.outputs.interrupted = self.outputs.find_interrupted()
        for found in self.outputs.interrupted:
            self.log("warning", f"an interrupted recording was found: {found} (Recording > Recover)")

    def load(self, doc: dict, *, base: Path, source: Path | None, reload: bool) -> None:
        """Build ``doc`` on a freshly compiled model; ``reload`` keeps the state and switches."""
        live = self._new_live()
        sc = scenario_from_doc(doc, base=base, source=source)
        rig = build_rig(
            sc,
            monitors=[live],
            on_load_error=self._load_failed,
            start_from=self.data if reload else None,
            on_warning=self.warn,
        )
        if reload and self.rig is not None:
            keep_switched_off(self.rig.runtime, rig.runtime)
        self.outputs.stop_video()  # a video shows one model
        if self.rig is not None:
            rig.runtime.set_recorder(self.rig.runtime.set_recorder(None))
            self.rig.runtime.close()
        self.rig, self._live = rig, live
        self.plot_feed.rig_plots(sc.plots, columns=live.columns, log=None if reload else self.log)
        self.source = self.timeline  # a replay opens its model, then swaps itself in
        self.document.opened(doc, base=base, source=source, model_path=sc.model, fresh=not reload)
        if not reload:  # another rig: nothing the previous one left behind carries over
            self.plot_feed.mark_new_model(str(sc.model))
            self.status.events.clear()
            self.view.selection = None
            self.opened += 1
            self.scope.close()
            self.scope = RigScope(self.opened, source=source.name if source is not None else "")
            for feature in self.features:
                feature.rig_opened()
        else:
            for feature in self.features:
                feature.model_changed()
        self.view.model_changed = True
        self.run.opened(fresh=not reload)
        if self.files is not None:
            self.files.follow(
                model_files(sc.model), source if source is not None and source.suffix == ".toml" else None
            )

    def edit(self, doc: dict) -> None:
        """Make ``doc`` the rig on the current model and data (state kept); refused: unchanged."""
        assert self.rig is not None
        live = self._new_live()
        self.rig = rebuild_rig(
            self.document.scenario(doc),
            on=self.rig,
            monitors=[live],
            kept=self.plot_feed.values,
            on_load_error=self._load_failed,
            on_warning=self.warn,
        )
        self._live = live
        self.document.edited(doc)

    def _load_failed(self, load: Load, exc: BaseException) -> None:
        # It stays off across rig edits (keep_switched_off); "active" is not a scenario field,
        # so it must not go into the doc (every later edit would fail to validate).
        self.log("error", f"load '{load.name}' raised {type(exc).__name__}: {exc}; it was disabled")

    # --- commands --------------------------------------------------------------------------
    def process_commands(self, *, off_lock: bool = False) -> None:
        """Run every queued command (call at a step boundary), then report finished jobs.
        ``off_lock``: only those at the head of the queue that need no viewer lock (``OFF_LOCK``)."""
        self.inbox.run(self.handle, log=self.log, off_lock=off_lock)
        self.outputs.jobs.finish()
        self.reports.jobs.finish()

    def commands_waiting(self) -> bool:
        """Whether a command waits to be run (at the next ``process_commands``)."""
        return self.inbox.waiting()

    def handle(self, cmd: C.Command) -> None:
        """Carry out one command now."""
        handler = self.source.handlers().get(type(cmd)) or self._handlers.get(type(cmd))
        if handler is None:
            raise MjrigError(f"unknown command {type(cmd).__name__}")
        if self.rig is None and not isinstance(cmd, _NO_MODEL_NEEDED):
            raise MjrigError(f"{type(cmd).__name__}: no model is open")
        if not self.switch.allows(cmd):  # leaving the rig while its jobs run: the panel asks
            return
        scope, before = self.scope, None if isinstance(cmd, NOT_EDITS) else copy.deepcopy(self.document.doc)
        handler(cmd)
        if before is not None and self.scope is scope:  # a change of this rig's document: a step Undo takes back
            self.entries.edited(cmd, before)

    def _save_scenario(self, cmd: C.SaveScenario) -> None:
        self.plot_feed.into(self.document.doc)  # CONTRACT 13: the scenario keeps what is plotted
        self.outputs.save_scenario(cmd)  # raises when not written: no quitting, no opening

    def _reset(self, cmd: C.Reset) -> None:
        assert self.rig is not None
        self.rig.reset()  # the scenario's start state (initial_key/initial_state), else the model's own
        self.run.reset(recount=True)
        self.log("info", "reset")

    # --- stepping --------------------------------------------------------------------------
    def _use_source(self, source: Timeline | ReplaySource) -> None:
        """Take steps (and Scrub / StepHistory) from ``source`` until another rig is loaded."""
        self.source = source

    def advance(self, *, budget_s: float = 0.014) -> int:
        """Step while running, paced to the speed (or as fast as possible within ``budget_s``
        of wall time). Returns the number of steps taken."""
        if self.rig is None:
            return 0
        n = self.run.advance(budget_s=budget_s)
        self._moved = self._moved or n > 0
        if self._moved and self.run.state != C.RunState.RUNNING:
            # A step leaves the kinematics one step behind the state (mj_step integrates last):
            # bring them up to date once, so a paused view and screenshot show the state itself.
            mujoco.mj_forward(self.rig.model, self.rig.data)
            self._moved = False
        return n

    # --- snapshots ---------------------------------------------------------------------------
    def publish(self) -> C.PanelState:
        """Build and store the snapshot for the panel."""
        rtf = self.run.realtime_factor()
        rm, doc = self.rm, self.document
        if rm is not None:
            self.status.note_proximities(rm.proximities)
        parts = tuple(part for feature in self.features if (part := feature.publish()) is not None)
        self._snapshot = C.PanelState.of(
            parts,
            state=self.run.state,
            time=self.data.time if self.data is not None else 0.0,
            realtime_factor=rtf,
            speed=self.run.speed,
            model=self._model_info(),
            selection=self.view.selection,
            error=self.run.error,
            messages=tuple(self.status.messages),
            signals=self.source.signals() or self.plot_feed.names(self._live.columns),
            steps=self.run.steps,
            camera=self.view.camera_choice,
            opened=self.opened,
            source=str(doc.source or ""),
            dirty=doc.dirty,
            pending_open=self.unsaved.pending_open,
            pending_switch=self.switch.question(),
            quit_question=self.unsaved.quit_question,
            plots=self.plot_feed.at_opening.signals,
            plot_window=self.plot_feed.at_opening.window,
            units=self._live.units_view(),
            events=tuple(self.status.events),
            hot_reload=self.files is not None and self.files.enabled,
            timeline=self.replayer.on_timeline(self.source.info()),
            jobs=jobs.infos(self.features),
        )
        return self._snapshot

    def _model_info(self) -> C.ModelInfo:
        if (m := self.model) is None:
            return C.ModelInfo()
        if self._info is None or self._info[0] is not m:
            self._info = (m, describe_model(m, path=self.document.model_path))
        return self._info[1]

    def close(self) -> None:
        """Finalize any recording and video and wait for them (a fit, modes or export under way is
        stopped: its result would have nowhere to go); safe twice."""
        jobs.cancel(self.features)
        for feature in self.features:  # the outputs first: an export may wait for a recording
            feature.close()
        if self.files is not None:
            self.files.close()
        if self.rm is not None:
            self.rm.close()
