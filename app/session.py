"""One loaded model, its rig and its run state: takes commands, steps, publishes snapshots.

The rig is held as a scenario *document* (the same tables a scenario file has), so every edit
made in the app is validated by the scenario code and "save scenario" writes exactly what the
headless runner reads back. GUI-free: the simulation thread owns a Session; the panel only
submits commands and reads snapshots.

Threading: ``submit``, ``latest`` and ``drain_rows`` may be called from any thread; everything
else runs on the simulation thread (the only one touching MjModel/MjData).
"""
from __future__ import annotations

import collections
import copy
import os
import queue
import threading
import time
from pathlib import Path
from typing import Callable

import mujoco
import numpy as np

from mjrig import commands as C
from mjrig.camera import camera_choices
from mjrig.runtime.errors import ConfigError, DivergenceError, MjrigError
from mjrig.runtime.loads import Load
from mjrig.runtime.manager import RuntimeManager
from mjrig.runtime.points import model_names
from mjrig.runtime.rigmodel import is_rig_name
from mjrig.runtime.signals import SignalManager
from mjrig.scenario import load_scenario, scenario_from_doc
from mjrig.session_outputs import OutputCommands

__all__ = ["Session"]

PLOT_RATE = 200.0
"""Live-plot samples per simulated second (the recording has its own rate)."""
PLOT_ROWS = 20000
"""Rows of recent telemetry kept for the plots (older rows are dropped)."""


class Session(OutputCommands):
    """A model + rig + run state, driven by commands (see ``mjrig.commands``)."""

    def __init__(self, *, plot_rate: float = PLOT_RATE) -> None:
        self.state = C.RunState.STOPPED
        self.speed = 1.0
        self.model: mujoco.MjModel | None = None
        self.data: mujoco.MjData | None = None
        self.rm: RuntimeManager | None = None
        self.doc: dict = {}
        self.base = Path.cwd()
        self.source: Path | None = None        # the file opened (xml/mjb/toml)
        self.model_path: Path | None = None
        self.model_changed = False             # the viewer must load the new model
        self.quit = False
        self.error: str | None = None
        self.selection: str | None = None
        self.steps = 0
        self.dirty = False                     # rig edited since opened or saved
        self.quit_question = False             # the viewer was closed with unsaved edits: ask
        self.quit_confirmed = False            # the user said to quit without saving
        self.pending_open: str | None = None   # waits for the unsaved-edits answer
        self._events: collections.deque[tuple[float, str]] = collections.deque(maxlen=200)
        self.view_request: str | None = None   # a SetCamera choice for the viewer loop
        self.camera_choice = "free"            # set by the viewer loop
        self.pending_screenshot: Path | None = None
        self.interrupted: tuple[str, ...] = ()
        self.video = None                     # the VideoRecorder while V is on
        self.camera: mujoco.MjvCamera | None = None  # the viewer's camera, set by the viewer loop
        self._commands: "queue.Queue[C.Command]" = queue.Queue()
        self._messages: collections.deque[tuple[str, str]] = collections.deque(maxlen=200)
        self._rows: collections.deque[tuple[list[str], np.ndarray]] = collections.deque()
        self._rows_count = 0
        self._rows_lock = threading.Lock()
        self._plot_rate = plot_rate
        self._live = self._new_live()
        self._last_recording: C.StartRecording | None = None
        self._closing: list[threading.Thread] = []
        self._anchor: tuple[float, float] | None = None   # (wall, sim) for pacing
        self._rtf = 0.0
        self._rtf_window: collections.deque[tuple[float, float]] = collections.deque(maxlen=120)
        self._snapshot = C.Snapshot()
        self.on_message: Callable[[str, str], None] | None = None

    def _new_live(self) -> SignalManager:
        """A fresh file-less monitor for the live plots: its columns are exactly the current
        model's and rig's signals (switching models or removing a load drops theirs)."""
        live = SignalManager(None, rate=self._plot_rate, batch_size=16)
        live.on_rows = self._push_rows
        return live

    # --- cross-thread API ------------------------------------------------------------------
    def submit(self, cmd: C.Command) -> None:
        """Queue a command; it runs at the next step boundary."""
        self._commands.put(cmd)

    def latest(self) -> C.Snapshot:
        """The last published snapshot."""
        return self._snapshot

    def drain_rows(self) -> list[tuple[list[str], np.ndarray]]:
        """Telemetry blocks for the live plots since the last call (oldest first)."""
        with self._rows_lock:
            out = list(self._rows)
            self._rows.clear()
            self._rows_count = 0
        return out

    def _push_rows(self, columns: list[str], block: np.ndarray) -> None:
        with self._rows_lock:
            self._rows.append((columns, block))
            self._rows_count += len(block)
            while self._rows_count > PLOT_ROWS and len(self._rows) > 1:
                self._rows_count -= len(self._rows.popleft()[1])

    def log(self, level: str, text: str) -> None:
        """Add a message for the status area ('info', 'warning' or 'error')."""
        self._messages.append((level, text))
        if self.on_message is not None:
            self.on_message(level, text)

    # --- opening ---------------------------------------------------------------------------
    def open(self, path: str | os.PathLike) -> None:
        """Open an .xml/.mjb model or a .toml scenario; on failure the current model stays."""
        path = Path(path).expanduser().resolve()
        if path.suffix.lower() == ".toml":
            sc = load_scenario(path)
            doc, base = copy.deepcopy(sc.doc), path.parent
            self.speed = sc.speed
        elif path.suffix.lower() in (".xml", ".mjb"):
            if not path.is_file():
                raise ConfigError(f"{path}: model file not found")
            doc, base = {"model": str(path)}, path.parent
        else:
            raise ConfigError(f"{path}: not a model or scenario (expected .xml, .mjb or .toml)")
        self._load(doc, base, source=path)
        self.log("info", f"opened {path.name}")
        self.interrupted = self.find_interrupted()
        for found in self.interrupted:
            self.log("warning", f"an interrupted recording was found: {found} (Recording > Recover)")

    def _load(self, doc: dict, base: Path, *, source: Path | None, keep_state: bool = False) -> None:
        sc = scenario_from_doc(doc, base=base, source=source)
        live = self._new_live()
        rm = sc.runtime(monitors=[live], on_load_error=self._load_failed)
        model, data = rm.load_model(sc.model)
        if sc.timestep is not None:
            model.opt.timestep = sc.timestep
        sc.check_model(model)
        if keep_state and self.model is not None and self.data is not None and self.model.nq == model.nq \
                and self.model.nv == model.nv and self.model.na == model.na:
            data.qpos[:], data.qvel[:], data.act[:] = self.data.qpos, self.data.qvel, self.data.act
            data.time = self.data.time
        else:
            _reset(model, data)
        if keep_state and self.rm is not None:
            _keep_switched_off(self.rm, rm)
        rm.resolve(model, data)
        self._stop_video()  # a video shows one model
        old = self.rm
        if old is not None:
            rm.set_recorder(old.set_recorder(None))
            old.close()
        self.rm, self.model, self.data, self.doc, self.base = rm, model, data, doc, base
        self.source, self.model_path = source, sc.model
        self._live = live
        if not keep_state:
            self._events.clear()
            self.steps = 0
            self.dirty = False
            self.selection = None
        self.model_changed = True
        self.error = None
        self.state = C.RunState.RUNNING if self.state != C.RunState.PAUSED else C.RunState.PAUSED
        self._anchor = None

    def _rebuild(self, doc: dict) -> None:
        """Re-validate the rig from ``doc`` on the current model and data (state kept)."""
        assert self.model is not None and self.data is not None and self.rm is not None
        sc = scenario_from_doc(doc, base=self.base, source=self.source)
        sc.check_model(self.model)
        live = self._new_live()
        rm = sc.runtime(monitors=[live], on_load_error=self._load_failed)
        rm.inherit_layout(self.rm)
        rm.video_recorders = self.rm.video_recorders
        _keep_switched_off(self.rm, rm)
        rm.resolve(self.model, self.data)
        rm.set_recorder(self.rm.set_recorder(None))
        self.rm.detach()
        self.rm, self.doc, self._live = rm, doc, live
        self.dirty = True

    def _load_failed(self, load: Load, exc: BaseException) -> None:
        # It stays off across rig edits (_keep_switched_off); "active" is not a scenario field,
        # so it must not go into the doc (every later edit would fail to validate).
        self.log("error", f"load '{load.name}' raised {type(exc).__name__}: {exc}; it was disabled")

    # --- commands --------------------------------------------------------------------------
    def process_commands(self) -> None:
        """Run every queued command (call at a step boundary)."""
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            try:
                self.handle(cmd)
            except MjrigError as exc:
                self.log("error", str(exc))
            except Exception as exc:  # a command must never take the simulation down
                self.log("error", f"{type(cmd).__name__} failed: {type(exc).__name__}: {exc}")

    def handle(self, cmd: C.Command) -> None:
        """Carry out one command now."""
        handler = getattr(self, f"_do_{type(cmd).__name__}", None)
        if handler is None:
            raise MjrigError(f"unknown command {type(cmd).__name__}")
        needs_model = not isinstance(cmd, (C.OpenModel, C.Quit, C.SetSpeed, C.ChangeSpeed, C.SetCamera, C.KeepRig, C.KeepWorking))
        if needs_model and self.model is None:
            raise MjrigError(f"{type(cmd).__name__}: no model is open")
        handler(cmd)

    def _do_OpenModel(self, cmd: C.OpenModel) -> None:
        if self.dirty and not cmd.discard:
            self.pending_open = cmd.path
            self.log("warning", f"the rig has unsaved changes: save it as a scenario, or open {Path(cmd.path).name} "
                                "without saving")
            return
        self.pending_open = None
        self.open(cmd.path)

    def _do_KeepRig(self, cmd: C.KeepRig) -> None:
        self.pending_open = None

    def _do_Reload(self, cmd: C.Reload) -> None:
        loads = self.doc.get("loads", [])
        try:
            self._load(copy.deepcopy(self.doc), self.base, source=self.source, keep_state=True)
        except ConfigError as exc:
            # A load whose site/body vanished is disabled with a message, not a crash.
            doc = copy.deepcopy(self.doc)
            doc["loads"] = [ld for ld in loads if _survives(ld, doc, self.base, self.source)]
            dropped = [ld.get("name") for ld in loads if ld not in doc["loads"]]
            if not dropped:
                raise
            self._load(doc, self.base, source=self.source, keep_state=True)
            self.log("warning", f"reloaded without load(s) {', '.join(map(str, dropped))}: {exc}")
            return
        self.log("info", f"reloaded {self.model_path.name if self.model_path else ''}")

    def _do_Play(self, cmd: C.Play) -> None:
        if self.state == C.RunState.ERROR:
            raise MjrigError("the run diverged: reset before playing")
        self.state, self._anchor = C.RunState.RUNNING, None

    def _do_Pause(self, cmd: C.Pause) -> None:
        if self.state == C.RunState.RUNNING:
            self.state = C.RunState.PAUSED

    def _do_TogglePause(self, cmd: C.TogglePause) -> None:
        self.handle(C.Pause() if self.state == C.RunState.RUNNING else C.Play())

    def _do_StepOnce(self, cmd: C.StepOnce) -> None:
        if self.state == C.RunState.ERROR:
            raise MjrigError("the run diverged: reset before stepping")
        self.state = C.RunState.PAUSED
        for _ in range(max(1, cmd.steps)):
            self._step()

    def _do_Reset(self, cmd: C.Reset) -> None:
        assert self.model is not None and self.data is not None
        _reset(self.model, self.data)
        self.error = None
        self.state = C.RunState.PAUSED if self.state == C.RunState.ERROR else self.state
        self._anchor = None
        self.log("info", "reset")

    def _do_SetSpeed(self, cmd: C.SetSpeed) -> None:
        self.speed = max(0.0, float(cmd.speed))
        self._anchor = None

    def _do_ChangeSpeed(self, cmd: C.ChangeSpeed) -> None:
        ladder = [s for s in C.SPEEDS if s > 0]
        if self.speed <= 0:
            self.speed = ladder[-1] if cmd.direction < 0 else 0.0
        else:
            i = min(range(len(ladder)), key=lambda k: abs(ladder[k] - self.speed))
            j = i + (1 if cmd.direction > 0 else -1)
            self.speed = 0.0 if j >= len(ladder) else ladder[max(0, j)]
        self._anchor = None

    def _edit_list(self, key: str, spec: dict, replace: bool) -> None:
        doc = copy.deepcopy(self.doc)
        items = doc.setdefault(key, [])
        name = spec.get("name")
        clash = [i for i, it in enumerate(items) if it.get("name") == name]
        if clash and not replace:
            raise ConfigError(f"a {key[:-1] if key == 'loads' else 'proximity'} named '{name}' already exists")
        if clash:
            items[clash[0]] = dict(spec)
        else:
            items.append(dict(spec))
        self._rebuild(doc)

    def _do_AddLoad(self, cmd: C.AddLoad) -> None:
        spec = {k: v for k, v in cmd.spec.items() if k != "active"}
        self._edit_list("loads", spec, cmd.replace)
        self.log("info", f"{'updated' if cmd.replace else 'attached'} load '{spec.get('name')}'")

    def _do_RemoveLoad(self, cmd: C.RemoveLoad) -> None:
        doc = copy.deepcopy(self.doc)
        before = len(doc.get("loads", []))
        doc["loads"] = [ld for ld in doc.get("loads", []) if ld.get("name") != cmd.name]
        if len(doc["loads"]) == before:
            raise ConfigError(f"no load named '{cmd.name}'")
        self._rebuild(doc)
        self.log("info", f"removed load '{cmd.name}'")

    def _do_SetLoadActive(self, cmd: C.SetLoadActive) -> None:
        assert self.rm is not None
        for ld in self.rm.loads:
            if ld.name == cmd.name:
                ld.active = cmd.active
                return
        raise ConfigError(f"no load named '{cmd.name}'")

    def _do_AddProximity(self, cmd: C.AddProximity) -> None:
        self._edit_list("proximities", dict(cmd.spec), cmd.replace)
        self.log("info", f"measuring proximity '{cmd.spec.get('name')}'")

    def _do_RemoveProximity(self, cmd: C.RemoveProximity) -> None:
        doc = copy.deepcopy(self.doc)
        doc["proximities"] = [p for p in doc.get("proximities", []) if p.get("name") != cmd.name]
        self._rebuild(doc)

    def _param(self, name: str):
        assert self.rm is not None
        for nv in self.rm.params:
            if nv.name == name:
                return nv
        raise ConfigError(f"no param named '{name}'")

    def _do_SetParam(self, cmd: C.SetParam) -> None:
        nv = self._param(cmd.name)
        nv.value = cmd.value
        spec = self.doc.setdefault("params", {}).get(cmd.name)
        self.dirty = True
        if isinstance(spec, dict):
            spec["value"] = nv.value
        else:
            self.doc["params"][cmd.name] = nv.value

    def _do_AddParam(self, cmd: C.AddParam) -> None:
        doc = copy.deepcopy(self.doc)
        spec: dict = {"value": float(cmd.value)}
        if cmd.min is not None:
            spec["min"] = float(cmd.min)
        if cmd.max is not None:
            spec["max"] = float(cmd.max)
        if cmd.unit:
            spec["unit"] = cmd.unit
        doc.setdefault("params", {})[cmd.name] = spec
        self._rebuild(doc)

    def _do_SetCamera(self, cmd: C.SetCamera) -> None:
        self.view_request = cmd.choice  # the viewer loop owns the camera

    def _do_Quit(self, cmd: C.Quit) -> None:
        self.quit = True
        self.quit_confirmed = self.quit_confirmed or cmd.confirmed

    def _do_KeepWorking(self, cmd: C.KeepWorking) -> None:
        self.quit_question = False

    # --- stepping --------------------------------------------------------------------------
    def _step(self) -> bool:
        assert self.rm is not None and self.model is not None and self.data is not None
        try:
            self.rm.step(self.model, self.data)
        except DivergenceError as exc:
            self.state, self.error = C.RunState.ERROR, str(exc)
            self.log("error", f"{exc}; paused (reset to go on)")
            if self.rm.signal_manager is not None:
                self.rm.signal_manager.flush()
            return False
        self.steps += 1
        return True

    def advance(self, *, budget_s: float = 0.014) -> int:
        """Step while running, paced to ``speed`` (or as fast as possible within ``budget_s``
        of wall time). Returns the number of steps taken."""
        if self.state != C.RunState.RUNNING or self.model is None or self.data is None:
            self._anchor = None
            return 0
        now = time.perf_counter()
        if self._anchor is None:
            self._anchor = (now, self.data.time)
        deadline = now + budget_s
        n = 0
        if self.speed > 0:
            target = self._anchor[1] + (now - self._anchor[0]) * self.speed
            while self.data.time < target and time.perf_counter() < deadline:
                if not self._step():
                    break
                n += 1
            if self.data.time < target - 0.25 * self.speed:  # cannot keep up: don't spiral
                self._anchor = (time.perf_counter(), self.data.time)
        else:
            while time.perf_counter() < deadline:
                if not self._step():
                    break
                n += 1
        return n

    def publish(self) -> C.Snapshot:
        """Build and store the snapshot for the panel."""
        now = time.perf_counter()
        sim_t = self.data.time if self.data is not None else 0.0
        self._rtf_window.append((now, sim_t))
        if len(self._rtf_window) >= 2:
            (w0, s0), (w1, s1) = self._rtf_window[0], self._rtf_window[-1]
            self._rtf = (s1 - s0) / (w1 - w0) if w1 > w0 and s1 >= s0 else 0.0
        rm, m = self.rm, self.model
        loads, proxs, params = (), (), ()
        rec = rm.signal_manager if rm is not None else None
        if rm is not None and m is not None:
            eng = rm.engine
            if eng is not None:
                eng.update_outputs()
            specs = {s.get("name"): s for s in self.doc.get("loads", [])}
            loads = tuple(C.LoadInfo(ld.name, ld.kind, ld.active, dict(specs.get(ld.name, {})),
                                     tuple(float(x) for x in ld._last_f)) for ld in rm.loads)
            pspecs = {s.get("name"): s for s in self.doc.get("proximities", [])}
            for p in rm.proximities:
                while p.events:
                    t_event, text = p.events.popleft()
                    self._events.append((t_event, text))
                    self.log("warning" if "below" in text else "info", text)
            proxs = tuple(C.ProximityInfo(p.name, p.distance, p.below, dict(pspecs.get(p.name, {})))
                          for p in rm.proximities)
            params = tuple(C.ParamInfo(nv.name, nv.value, nv.min, nv.max, nv.unit) for nv in rm.params)
        self._snapshot = C.Snapshot(
            state=self.state, time=sim_t, realtime_factor=self._rtf, speed=self.speed,
            model=self._model_info(), loads=loads, proximities=proxs, params=params,
            recording_path=str(rec.export_path) if rec is not None else None,
            recording_rows=rec.rows_recorded if rec is not None else 0,
            recording_bytes=rec.bytes_written if rec is not None else 0,
            recording_error=rec.error if rec is not None else None,
            selection=self.selection, error=self.error, messages=tuple(self._messages),
            video_path=str(self.video.path) if self.video is not None else None,
            signals=tuple(self._live.columns[2:]), steps=self.steps, interrupted=self.interrupted,
            camera=self.camera_choice, recording_plan=self._recording_plan(),
            source=str(self.source or ""), dirty=self.dirty, pending_open=self.pending_open,
            quit_question=self.quit_question,
            units=self._live.units, events=tuple(self._events))
        return self._snapshot

    def _recording_plan(self) -> dict:
        """The rig's [recording] table with its path as it will be written (absolute)."""
        plan = dict(self.doc.get("recording", {}))
        if isinstance(plan.get("path"), str):
            plan["path"] = str(self._rig_path(plan["path"]))
        return plan

    def _model_info(self) -> C.ModelInfo:
        m = self.model
        if m is None:
            return C.ModelInfo()
        cached = getattr(self, "_info_cache", None)
        if cached is not None and cached[0] is m:
            return cached[1]
        names = lambda obj, n: tuple(x for x in model_names(m, obj, n) if not is_rig_name(x))  # noqa: E731
        info = C.ModelInfo(
            path=str(self.model_path or ""), bodies=names(mujoco.mjtObj.mjOBJ_BODY, m.nbody),
            joints=names(mujoco.mjtObj.mjOBJ_JOINT, m.njnt), sites=names(mujoco.mjtObj.mjOBJ_SITE, m.nsite),
            geoms=names(mujoco.mjtObj.mjOBJ_GEOM, m.ngeom), sensors=names(mujoco.mjtObj.mjOBJ_SENSOR, m.nsensor),
            cameras=tuple(camera_choices(m)), timestep=float(m.opt.timestep),
            nq=m.nq, nv=m.nv, nu=m.nu)
        self._info_cache = (m, info)
        return info

    def close(self) -> None:
        """Finalize any recording and video and wait for them; safe twice."""
        self._stop_video()
        if self.rm is not None:
            self._finish(self.rm.set_recorder(None))
            self.rm.close()
        for t in self._closing:
            t.join()
        self._closing.clear()


def _reset(model: mujoco.MjModel, data: mujoco.MjData) -> None:
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    else:
        mujoco.mj_resetData(model, data)
    mujoco.mj_forward(model, data)


def _keep_switched_off(old: RuntimeManager, new: RuntimeManager) -> None:
    """Loads switched off in ``old`` (by SetLoadActive or after an error) stay off in ``new``."""
    off = {ld.name for ld in old.loads if not ld.active}
    for ld in new.loads:
        if ld.name in off:
            ld.active = False


def _survives(load_spec: dict, doc: dict, base: Path, source: Path | None) -> bool:
    """Whether one load still validates against the (reloaded) model."""
    trial = dict(doc, loads=[load_spec])
    try:
        sc = scenario_from_doc(trial, base=base, source=source)
        from mjrig.runtime.manager import load_model_file
        sc.check_model(load_model_file(sc.model))
        return True
    except ConfigError:
        return False
