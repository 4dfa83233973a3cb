"""The session's replay mode: ``mjrig RECORDING.parquet [--compare OTHER.parquet]``.

Opening a recording (``Session.open`` of a ``.parquet``) loads the model its metadata names as a
bare rig (``mjrig.recordings.replay.Replay.open``: SHA-256 checked with one warning line, a recording
without joints refused with one line) and puts the session in replay mode: stepping advances
the replay's time by the model's timestep instead of stepping the physics (paced by the same
``RunControl``, so every speed works; at the end the run pauses), and each instant shows the
recorded joint positions (``mj_kinematics``). ``Scrub`` goes to any time (interpolated) and
``StepHistory`` to the neighbouring recorded row, forward and back. The recording's time axis is
handed to the live plots at opening (``Session.push_rows``) and each signal's rows when it is
ticked (``plot_history``: read from the file then), so the plots show the whole recording with
the timeline's cursor on it, and a recording of 16,000 columns is never read whole.

``OpenComparison`` adds a second recording, over a replay or a live run alike: the panel's plots
draw its signals on their time axis (``TimelineInfo.compare`` names it), and ``draw_ghost``
adds its bodies at the current time to the viewer's scene as a translucent ghost when it is of
the same model. A comparison belongs to the model it was opened on: opening another drops it.

Replay is a step source (``ReplaySource``) the kernel swaps in for the live one (the timeline)
when a recording is opened: stepping, Scrub and StepHistory then move through the recording.
Opening anything else (or reloading) swaps the live source back.

Threading: simulation thread only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjrig import commands as C
from mjrig.bench_state import NO_MEASURED
from mjrig.panel_state import COMPARED_ROWS, NO_COMPARISON
from mjrig.recordings.replay import OverlaidRecording, Replay
from mjrig.runtime.drawing.visuals import add_ghost
from mjrig.runtime.errors import ConfigError, one_line
from mjrig.runtime.files.paths import file_sha256
from mjrig.scenario.measured import MEASURED_KEY, read_measured_metadata
from mjrig.scenario.targets import rig_of_recording
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler

__all__ = ["ReplayMode", "ReplaySource", "PLOT_BLOCK"]

PLOT_BLOCK = 2000
"""Rows per block handed to the plots at opening."""
PLOT_RATE, PLOT_ROWS = 200.0, 18000
"""The plots get the recording thinned to about PLOT_RATE rows per simulated second and at most
PLOT_ROWS rows (they keep 20000); the 3D view and a comparison use every row."""


class ReplaySource:
    """The step source while a recording is replayed: each step advances the replay's time by
    the model's timestep and shows the recorded pose (paused at the end); Scrub and StepHistory
    move through the recording."""

    def __init__(self, ctx: RigContext, replay: Replay) -> None:
        self.ctx = ctx
        self.replay = replay
        self._signals: tuple[str, ...] | None = None

    def handlers(self) -> dict[type[C.Command], Handler]:
        return {C.Scrub: self.scrub, C.StepHistory: self.step_row}

    def signals(self) -> tuple[str, ...]:
        """The recording's signals (the plots' choices; the same tuple every time)."""
        if self._signals is None:
            self._signals = tuple(self.replay.recording.signals)
        return self._signals

    def show(self, t: float) -> None:
        """Show the recorded pose at ``t`` (s), clamped to the recording, the params at their
        recorded values then (what Modes linearises, what the sliders show)."""
        rp = self.replay
        t = min(max(t, rp.start), rp.end)
        rp.show(self.ctx.data, t, model=self.ctx.model)
        rm = self.ctx.runtime_or_none
        columns = rp.recording.columns
        for nv in rm.params if rm is not None else ():
            column = columns.get(f"Params/{nv.name}:value")
            if column is not None and column.size:
                value = float(column[rp.index_at(t)])
                if np.isfinite(value) and value != nv.value:
                    nv.value = value

    def step(self) -> bool:
        """One timestep of replay (RunControl's step while replaying); pauses at the end."""
        rp, s = self.replay, self.ctx
        t = s.data.time + s.model.opt.timestep
        if t >= rp.end:
            t = rp.end
            s.run.pause()
        self.show(t)
        return True

    def leap(self, target: float) -> bool:
        """Go straight to ``target`` (s, the pacer's time; RunControl's leap while replaying): one
        pose a frame, however small the timestep and however many bodies, so a replay keeps the
        recorded speed; pauses at the end. Always True (a replay can leap)."""
        rp, s = self.replay, self.ctx
        t = min(target, rp.end)
        if t >= rp.end:
            s.run.pause()
        if t > s.data.time:
            self.show(t)
        return True

    def scrub(self, cmd: C.Scrub) -> None:
        if not np.isfinite(cmd.time):
            raise ConfigError(f"scrub time must be a number of seconds, got {cmd.time}")
        self.ctx.run.pause()
        self.show(cmd.time)

    def step_row(self, cmd: C.StepHistory) -> None:
        """To the neighbouring recorded row (``direction`` -1 or +1)."""
        rp, data = self.replay, self.ctx.data
        self.ctx.run.pause()
        k = rp.index_at(data.time)
        if cmd.direction > 0:
            k += 1
        elif data.time <= rp.times[k]:
            k -= 1
        self.show(float(rp.times[min(max(k, 0), rp.times.size - 1)]))

    def info(self) -> C.TimelineInfo:
        """The timeline over the recording."""
        rp = self.replay
        return C.TimelineInfo(
            start=rp.start,
            end=rp.end,
            cursor=self.ctx.data.time,
            rows=int(rp.times.size),
            replay=True,
            recording=str(rp.recording.path),
        )


class ReplayMode(Feature):
    """Opening a recording to replay (the step source it swaps in), and the recording compared
    with (its signals on the plots, its bodies as a ghost)."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.source: ReplaySource | None = None
        self._comparison: OverlaidRecording | None = None
        self._cmp_model: mujoco.MjModel | None = None
        self._ghost_data: mujoco.MjData | None = None
        self._compared: tuple[OverlaidRecording | None, tuple[str, ...], C.ComparisonPart] = (
            None,
            (),
            C.ComparisonPart(),
        )
        self._measured: tuple[Any, C.MeasuredSignals] = (None, NO_MEASURED)

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this part carries out."""
        return {C.OpenComparison: self.open_comparison}

    def rig_opened(self) -> None:
        """A comparison belongs to the model it was opened on (``comparison`` checks that)."""

    @property
    def active(self) -> bool:
        """Whether the session replays a recording now (its step source is this one's)."""
        return self.source is not None and self.ctx.source() is self.source

    def open(self, path: str | Path) -> None:
        """Replay the recording at ``path`` (see the module); on failure the current model stays."""
        s = self.ctx
        rp = Replay.open(path, on_warning=s.warn)
        model_path = rp.recording.model_path
        assert model_path is not None
        try:  # the rig it ran: loads, params, requirements and all (``rig_of_recording``)
            doc, base = rig_of_recording(rp.recording.path)
            s.load(doc, base=base, source=model_path, reload=False)
        except ConfigError as exc:  # no rig kept, or it no longer builds: the bare model, said once
            s.load({"model": str(model_path)}, base=model_path.parent, source=model_path, reload=False)
            s.log("warning", f"{one_line(str(exc))}; replayed on the bare model {model_path.name}")
        if s.model.nq != rp.model.nq:
            raise ConfigError(f"{rp.recording.path}: its model does not compile to the recorded joints")
        self.source, self._comparison = ReplaySource(s, rp), None
        s.use_source(self.source)
        s.run.speed = s.run.speed or 1.0
        self.source.show(rp.start)
        rec = rp.recording
        span = rp.end - rp.start
        stride = max(
            1, int((rec.times.size - 1) / span // PLOT_RATE) if span > 0 else 1, -(-rec.times.size // PLOT_ROWS)
        )
        times = rec.times[::stride]
        wall = rec.columns["wall_time"][::stride] if "wall_time" in rec.columns else np.full(times.size, np.nan)
        table = np.column_stack([times, wall])
        for a in range(0, table.shape[0], PLOT_BLOCK):  # the time axis; each signal when ticked
            s.push_rows(["time", "wall_time"], table[a : a + PLOT_BLOCK].copy())

        def fetch(names: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
            """The recording's rows of ``names`` as the plots get them (read from the file once)."""
            found = [n for n in names if n in rec.columns and n not in ("time", "wall_time")]
            rec.columns.load(found)
            values = np.column_stack([rec.columns[n][::stride] for n in found]) if found else np.empty((times.size, 0))
            return found, times, values

        s.plot_history(fetch)
        s.log("info", f"replaying {rec.path.name}: {rp.start:.3f} ... {rp.end:.3f} s on {model_path.name}")

    @property
    def comparison(self) -> OverlaidRecording | None:
        """The recording compared with, while the model it was opened on is shown."""
        rig = self.ctx.rig()
        model = rig.model if rig is not None else None
        return self._comparison if self._comparison is not None and self._cmp_model is model else None

    def open_comparison(self, cmd: C.OpenComparison) -> None:
        s = self.ctx
        if not cmd.path:
            if self._comparison is not None:
                s.log("info", f"no longer comparing with {self._comparison.recording.path.name}")
            self._comparison = self._ghost_data = None
            return
        if s.rig() is None:
            raise ConfigError("compare: open a model or a recording first")
        if self.active and self.source is not None:
            sha = self.source.replay.recording.metadata.get("mjrig.model_sha256", "")
        else:
            path = s.document.model_path
            sha = file_sha256(Path(path)) if path is not None and Path(path).is_file() else ""
        cmp = OverlaidRecording.open(cmd.path, model=s.model, sha256=sha)
        self._comparison, self._cmp_model = cmp, s.model
        self._ghost_data = mujoco.MjData(s.model) if cmp.ghost is not None else None
        ghost = "with a ghost of its bodies" if cmp.ghost is not None else "signals only: another model"
        s.log("info", f"comparing with {Path(cmd.path).name} ({ghost})")

    def draw_ghost(self, scene: mujoco.MjvScene, *, option: mujoco.MjvOption | None = None) -> int:
        """Add the compared recording's bodies at the current time to ``scene`` (same model only);
        returns the geoms added."""
        gd, qpos = self._ghost_data, self.ghost_qpos()
        if qpos is None or gd is None:
            return 0
        model = self.ctx.model
        gd.qpos[:] = qpos
        mujoco.mj_kinematics(model, gd)
        return add_ghost(model, gd, scene, option=option)

    def on_timeline(self, info: C.TimelineInfo) -> C.TimelineInfo:
        """``info`` saying what is compared (``compare``, ``ghost``)."""
        cmp = self.comparison
        return dataclasses.replace(
            info, compare=str(cmp.recording.path) if cmp else "", ghost=cmp is not None and cmp.ghost is not None
        )

    def publish(self) -> C.ComparisonPart:
        """Its part of the panel state: the compared recording's plotted signals (the same
        object until the comparison or the plotted signals change) and the bench data of the rig
        or the replayed recording: the panel draws them and reads no file."""
        cmp = self.comparison
        plotted = self.ctx.plotted()
        measured = self._bench()
        if self._compared[0] is not cmp or self._compared[1] != plotted or self._compared[2].measured is not measured:
            part = NO_COMPARISON
            if cmp is not None:
                rec = cmp.recording
                stride = max(1, -(-rec.times.size // COMPARED_ROWS))
                part = C.ComparedSignals(
                    str(rec.path),
                    rec.times[::stride].copy(),
                    {n: rec.columns[n][::stride].copy() for n in plotted if n in rec.columns},
                )
            self._compared = (cmp, plotted, C.ComparisonPart(part, measured))
        return self._compared[2]

    def _bench(self) -> C.MeasuredSignals:
        """The measured series to draw: a replayed recording's (``mjrig.measured``), else the rig's
        ``[[measured]]`` entries (the same object while the rig or replay stays)."""
        key: Any = self.source if self.active else self.ctx.rig()
        if self._measured[0] is not key:
            series: list[tuple[str, str, np.ndarray, np.ndarray]] = []
            if self.active and self.source is not None:
                series = read_measured_metadata(self.source.replay.recording.metadata.get(MEASURED_KEY, ""))
            elif key is not None:
                series = [(m.name, sig, *m.series(sig)) for m in key.scenario.measured for sig in m.signals]
            self._measured = (key, C.MeasuredSignals(tuple(series)) if series else NO_MEASURED)
        return self._measured[1]

    def ghost_qpos(self) -> np.ndarray | None:
        """The compared recording's pose at the current time (same model only), else None."""
        cmp = self.comparison
        if cmp is None or cmp.ghost is None:
            return None
        return cmp.ghost.qpos_at(self.ctx.data.time)
