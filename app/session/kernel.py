"""One loaded model, its rig and its run state: takes commands, steps, publishes snapshots.

A Session is made of parts with one job each: ``run`` (the run-state machine and pacing,
``mjrig.session.run_control``), ``document`` (the rig as a scenario document and its edits,
``mjrig.session.document``), ``outputs`` (recordings, videos, screenshots, scenarios and
keyframes, ``mjrig.session.outputs``) and ``timeline`` (history, scrubbing, branching,
``mjrig.session.timeline``). Every rig it runs is built by ``mjrig.scenario.builder``, as
``mjrig run`` builds it. GUI-free: the simulation thread owns a Session; the panel only submits
commands and reads snapshots.

Threading: ``submit``, ``latest``, ``drain_rows`` and ``log`` may be called from any thread
(MuJoCo's warnings reach ``log`` on whichever thread runs MuJoCo); everything else runs on the
simulation thread (the only one touching MjModel/MjData). Background jobs report back through
``outputs.jobs``, drained on the simulation thread.
"""
from __future__ import annotations

import collections
import copy
import os
import queue
from pathlib import Path
from typing import Any, Callable

import mujoco
import numpy as np

from mjrig import commands as C
from mjrig.model_info import describe_model
from mjrig.scenario.builder import Rig, build_rig, keep_switched_off, rebuild_rig
from mjrig.session.document import RigDocument
from mjrig.session.run_control import RunControl
from mjrig.runtime.errors import ConfigError, DivergenceError, MjrigError
from mjrig.runtime.loads import Load
from mjrig.runtime.manager import RuntimeManager
from mjrig.runtime.signals import SignalManager
from mjrig.scenario.parse import load_scenario, scenario_from_doc
from mjrig.session.outputs import Outputs
from mjrig.session.plot_rows import RowQueue
from mjrig.session.replay_mode import ReplayMode
from mjrig.session.timeline import Timeline
from mjrig.session.tools import RigTools

__all__ = ["Session"]

PLOT_RATE = 200.0
"""Live-plot samples per simulated second (the recording has its own rate)."""
PLOT_ROWS = 20000
"""Rows of recent telemetry kept for the plots (older rows are dropped)."""

_NO_MODEL_NEEDED = (C.OpenModel, C.Quit, C.SetSpeed, C.ChangeSpeed, C.SetCamera, C.KeepRig, C.KeepWorking)


class Session:
    """A model + rig + run state, driven by commands (see ``mjrig.commands``)."""

    def __init__(self, *, plot_rate: float = PLOT_RATE) -> None:
        self.rig: Rig | None = None
        self.run = RunControl(self._step, sim_time=lambda: self.data.time if self.data is not None else 0.0)
        self.document = RigDocument()
        self.outputs = Outputs(self)
        self.tools = RigTools(self)
        self.timeline = Timeline(self)
        self.replayer = ReplayMode(self)
        # the viewer loop's side of the session (it owns the window and the camera)
        self.model_changed = False             # the viewer must load the new model
        self.view_request: str | None = None   # a SetCamera choice for the viewer loop
        self.camera_choice = "free"            # set by the viewer loop
        self.camera: mujoco.MjvCamera | None = None  # the viewer's camera (videos follow it)
        self.selection: str | None = None
        self.opened = 0                        # rigs opened so far (C.PanelState.opened)
        # leaving, and the unsaved-edits questions
        self.quit = False
        self.quit_question = False             # the viewer was closed with unsaved edits: ask
        self.quit_confirmed = False            # the user said to quit without saving
        self.pending_open: str | None = None   # waits for the unsaved-edits answer
        self.on_message: Callable[[str, str], None] | None = None
        self._commands: "queue.Queue[C.Command]" = queue.Queue()
        self._messages: collections.deque[tuple[str, str]] = collections.deque(maxlen=200)
        self._events: collections.deque[tuple[float, str]] = collections.deque(maxlen=200)
        self._rows = RowQueue(PLOT_ROWS)
        self._plot_rate = plot_rate
        self._moved = False
        self._live = self._new_live()
        self._snapshot = C.PanelState()
        self._info: tuple[mujoco.MjModel, C.ModelInfo] | None = None
        self._handlers: dict[type[C.Command], Callable[[Any], None]] = {
            C.OpenModel: self._open_model, C.KeepRig: self._keep_rig,
            C.Play: lambda cmd: self.run.play(), C.Pause: lambda cmd: self.run.pause(),
            C.TogglePause: lambda cmd: self.run.toggle(), C.StepOnce: lambda cmd: self.run.step_once(cmd.steps),
            C.Reset: self._reset, C.SetSpeed: self._set_speed, C.ChangeSpeed: lambda cmd: self.run.change_speed(cmd.direction),
            C.AddLoad: self._add_load, C.RemoveLoad: self._remove_load, C.SetLoadActive: self._set_load_active,
            C.AddProximity: self._add_proximity, C.RemoveProximity: self._remove_proximity,
            C.SetParam: self._set_param, C.AddParam: self._add_param, C.SaveScenario: self._save_scenario,
            C.SetCamera: self._set_camera, C.Quit: self._quit, C.KeepWorking: self._keep_working,
            **self.outputs.handlers(), **self.tools.handlers(), **self.timeline.handlers(), **self.replayer.handlers(),
        }

    # --- the current rig ---------------------------------------------------------------------------
    @property
    def model(self) -> mujoco.MjModel | None:
        return self.rig.model if self.rig is not None else None

    @property
    def data(self) -> mujoco.MjData | None:
        return self.rig.data if self.rig is not None else None

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
        self._commands.put(cmd)

    def latest(self) -> C.PanelState:
        """The last published snapshot."""
        return self._snapshot

    def drain_rows(self) -> list[tuple[list[str], np.ndarray]]:
        """Telemetry blocks for the live plots since the last call (oldest first; see
        ``mjrig.session.plot_rows`` for the mark a newly opened model puts between them)."""
        return self._rows.drain()

    def push_rows(self, columns: list[str], block: np.ndarray) -> None:
        """Hand a block of telemetry rows to the live plots (the newest PLOT_ROWS are kept)."""
        self._rows.push(columns, block)

    def log(self, level: str, text: str) -> None:
        """Add a message for the status area ('info', 'warning' or 'error'); any thread (a deque
        append; ``on_message`` must be as safe)."""
        self._messages.append((level, text))
        if self.on_message is not None:
            self.on_message(level, text)

    def note_event(self, t: float, text: str, *, level: str = "warning") -> None:
        """Mark simulated time ``t`` (s) on the plots' time axis with ``text``, and log it."""
        self._events.append((t, text))
        self.log(level, text)

    def warn(self, text: str) -> None:
        """A rig's one-line warning (a control clamped to its ctrlrange), as a 'warning' message."""
        self.log("warning", text)

    # --- opening and building --------------------------------------------------------------
    def open(self, path: str | os.PathLike) -> None:
        """Open an .xml/.mjb model, a .toml scenario or a .parquet recording to replay (on failure
        the current model stays)."""
        path = Path(path).expanduser().resolve()
        if path.suffix.lower() == ".parquet":
            return self.replayer.open(path)
        if path.suffix.lower() == ".toml":
            sc = load_scenario(path)
            doc = copy.deepcopy(sc.doc)
            self.run.speed = sc.speed
        elif path.suffix.lower() in (".xml", ".mjb"):
            if not path.is_file():
                raise ConfigError(f"{path}: model file not found")
            doc = {"model": str(path)}
        else:
            raise ConfigError(f"{path}: not a model or scenario (expected .xml, .mjb or .toml)")
        self.load(doc, base=path.parent, source=path, reload=False)
        self.log("info", f"opened {path.name}")
        self.outputs.interrupted = self.outputs.find_interrupted()
        for found in self.outputs.interrupted:
            self.log("warning", f"an interrupted recording was found: {found} (Recording > Recover)")

    def load(self, doc: dict, *, base: Path, source: Path | None, reload: bool) -> None:
        """Build ``doc`` on a freshly compiled model; ``reload`` keeps the state and switches."""
        live = self._new_live()
        sc = scenario_from_doc(doc, base=base, source=source)
        rig = build_rig(sc, monitors=[live], on_load_error=self._load_failed,
                        start_from=self.data if reload else None, on_warning=self.warn)
        if reload and self.rig is not None:
            keep_switched_off(self.rig.runtime, rig.runtime)
        self.outputs.stop_video()  # a video shows one model
        if self.rig is not None:
            rig.runtime.set_recorder(self.rig.runtime.set_recorder(None))
            self.rig.runtime.close()
        self.rig, self._live = rig, live
        self.document.opened(doc, base=base, source=source, model_path=sc.model, fresh=not reload)
        if not reload:  # another rig: nothing the previous one left behind carries over
            self._rows.mark_new_model(str(sc.model))
            self._events.clear()
            self.selection = None
            self.opened += 1
            for part in (self.outputs, self.tools, self.timeline):
                part.rig_opened()
        self.model_changed = True
        self.run.opened(fresh=not reload)

    def edit(self, doc: dict) -> None:
        """Make ``doc`` the rig on the current model and data (state kept); refused: unchanged."""
        assert self.rig is not None
        live = self._new_live()
        self.rig = rebuild_rig(self.document.scenario(doc), on=self.rig, monitors=[live],
                               on_load_error=self._load_failed, on_warning=self.warn)
        self._live = live
        self.document.edited(doc)

    def _load_failed(self, load: Load, exc: BaseException) -> None:
        # It stays off across rig edits (keep_switched_off); "active" is not a scenario field,
        # so it must not go into the doc (every later edit would fail to validate).
        self.log("error", f"load '{load.name}' raised {type(exc).__name__}: {exc}; it was disabled")

    # --- commands --------------------------------------------------------------------------
    def process_commands(self) -> None:
        """Run every queued command (call at a step boundary), then report finished jobs."""
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                break
            try:
                self.handle(cmd)
            except MjrigError as exc:
                self.log("error", str(exc))
            except Exception as exc:  # a command must never take the simulation down
                self.log("error", f"{type(cmd).__name__} failed: {type(exc).__name__}: {exc}")
        self.outputs.jobs.finish()

    def handle(self, cmd: C.Command) -> None:
        """Carry out one command now."""
        handler = self._handlers.get(type(cmd))
        if handler is None:
            raise MjrigError(f"unknown command {type(cmd).__name__}")
        if self.rig is None and not isinstance(cmd, _NO_MODEL_NEEDED):
            raise MjrigError(f"{type(cmd).__name__}: no model is open")
        handler(cmd)

    def _open_model(self, cmd: C.OpenModel) -> None:
        if self.document.dirty and not cmd.discard:
            self.pending_open = cmd.path
            self.log("warning", f"the rig has unsaved changes: save it as a scenario, or open {Path(cmd.path).name} "
                                "without saving")
            return
        self.pending_open = None
        self.open(cmd.path)

    def _keep_rig(self, cmd: C.KeepRig) -> None:
        self.pending_open = None

    def _reset(self, cmd: C.Reset) -> None:
        assert self.rig is not None
        self.rig.reset()  # the scenario's start state (initial_key/initial_state), else the model's own
        self.run.reset(recount=True)
        self.log("info", "reset")

    def _set_speed(self, cmd: C.SetSpeed) -> None:
        self.run.speed = cmd.speed

    def _add_load(self, cmd: C.AddLoad) -> None:
        spec = {k: v for k, v in cmd.spec.items() if k != "active"}
        self.edit(self.document.with_item("loads", spec, replace=cmd.replace))
        self.log("info", f"{'updated' if cmd.replace else 'attached'} load '{spec.get('name')}'")

    def _remove_load(self, cmd: C.RemoveLoad) -> None:
        self.edit(self.document.without_item("loads", cmd.name))
        self.log("info", f"removed load '{cmd.name}'")

    def _set_load_active(self, cmd: C.SetLoadActive) -> None:
        assert self.rm is not None
        for ld in self.rm.loads:
            if ld.name == cmd.name:
                ld.active = cmd.active
                return
        raise ConfigError(f"no load named '{cmd.name}'")

    def _add_proximity(self, cmd: C.AddProximity) -> None:
        self.edit(self.document.with_item("proximities", dict(cmd.spec), replace=cmd.replace))
        self.log("info", f"measuring proximity '{cmd.spec.get('name')}'")

    def _remove_proximity(self, cmd: C.RemoveProximity) -> None:
        self.edit(self.document.without_item("proximities", cmd.name))

    def _set_param(self, cmd: C.SetParam) -> None:
        assert self.rm is not None
        nv = next((p for p in self.rm.params if p.name == cmd.name), None)
        if nv is None:
            raise ConfigError(f"no param named '{cmd.name}'")
        nv.value = cmd.value
        self.document.set_param_value(cmd.name, nv.value)

    def _add_param(self, cmd: C.AddParam) -> None:
        self.edit(self.document.with_param(cmd.name, value=cmd.value, min=cmd.min, max=cmd.max, unit=cmd.unit))

    def _save_scenario(self, cmd: C.SaveScenario) -> None:
        self.outputs.save_scenario(cmd)  # raises when not written: no quitting, no opening
        self.quit = self.quit or cmd.then_quit
        if self.pending_open and not cmd.then_quit:  # saved on the way to opening another file: go on
            pending, self.pending_open = self.pending_open, None
            self.open(pending)

    def _set_camera(self, cmd: C.SetCamera) -> None:
        self.view_request = cmd.choice  # the viewer loop owns the camera

    def _quit(self, cmd: C.Quit) -> None:
        self.quit = True
        self.quit_confirmed = self.quit_confirmed or cmd.confirmed

    def _keep_working(self, cmd: C.KeepWorking) -> None:
        self.quit_question = False

    # --- stepping --------------------------------------------------------------------------
    def _step(self) -> bool:
        """One timestep of the rig (RunControl's step); a divergence pauses with its message."""
        assert self.rig is not None
        if self.replayer.active:
            return self.replayer.step()
        self.timeline.before_step()
        try:
            self.rig.runtime.step(self.rig.model, self.rig.data)
        except DivergenceError as exc:
            self.run.fail(str(exc))
            self.log("error", f"{exc}; paused (reset to go on)")
            if self.rig.runtime.signal_manager is not None:
                self.rig.runtime.signal_manager.flush()
            return False
        return True

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
        rm, doc, out = self.rm, self.document, self.outputs
        loads: tuple[C.LoadInfo, ...] = ()
        proxs: tuple[C.ProximityInfo, ...] = ()
        params: tuple[C.ParamInfo, ...] = ()
        rec = rm.signal_manager if rm is not None else None
        if rm is not None:
            specs, pspecs = doc.specs("loads"), doc.specs("proximities")
            readouts = rm.load_readouts()
            loads = tuple(C.LoadInfo(ld.name, ld.kind, ld.active, dict(specs.get(ld.name, {})),
                                     readouts[ld.name])
                          for ld in rm.loads)
            for p in rm.proximities:
                while p.events:
                    t_event, text = p.events.popleft()
                    self._events.append((t_event, text))
                    self.log("warning" if "below" in text else "info", text)
            proxs = tuple(C.ProximityInfo(p.name, p.distance, p.below, dict(pspecs.get(p.name, {})))
                          for p in rm.proximities)
            params = tuple(C.ParamInfo(nv.name, nv.value, nv.min, nv.max, nv.unit) for nv in rm.params)
        self._snapshot = C.PanelState(
            state=self.run.state, time=self.data.time if self.data is not None else 0.0, realtime_factor=rtf,
            speed=self.run.speed, model=self._model_info(), loads=loads, proximities=proxs, params=params,
            recording_path=str(rec.export_path) if rec is not None else None,
            recording_rows=rec.rows_recorded if rec is not None else 0,
            recording_bytes=rec.bytes_written if rec is not None else 0,
            recording_error=rec.error if rec is not None else None,
            selection=self.selection, error=self.run.error, messages=tuple(self._messages),
            video_path=str(out.video.path) if out.video is not None else None,
            signals=self.replayer.signals or tuple(self._live.columns[2:]), steps=self.run.steps, interrupted=out.interrupted,
            camera=self.camera_choice, recording_plan=out.plan, plan_revision=out.plan_revision,
            opened=self.opened,
            source=str(doc.source or ""), dirty=doc.dirty, pending_open=self.pending_open,
            quit_question=self.quit_question, units=self._live.units_view(), events=tuple(self._events),
            actuators=self.tools.actuators(), requirements=self.tools.requirements(),
            snapshot_path=str(self.tools.last_snapshot or "") or None, timeline=self.timeline.info())
        return self._snapshot

    def _model_info(self) -> C.ModelInfo:
        m = self.model
        if m is None:
            return C.ModelInfo()
        if self._info is None or self._info[0] is not m:
            self._info = (m, describe_model(m, path=self.document.model_path))
        return self._info[1]

    def close(self) -> None:
        """Finalize any recording and video and wait for them; safe twice."""
        self.outputs.close()
        if self.rm is not None:
            self.rm.close()
