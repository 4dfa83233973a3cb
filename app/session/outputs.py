"""The files a session writes: recordings, videos, screenshots, scenarios, keyframes.

One part of ``mjrig.session.kernel.Session`` (composition): it reads the session's rig and document,
reports through its log, and finishes recordings on background jobs whose outcome is reported
back on the simulation thread.

Threading: simulation thread only (background jobs report through ``BackgroundJobs``).
"""

from __future__ import annotations

import copy
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import mujoco

from mjrig import commands as C
from mjrig.recordings.recorder import open_recorder, outcome_metadata
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.files.atomic_output import atomic_output
from mjrig.runtime.files.out_lock import Hold, held, hold
from mjrig.runtime.files.paths import RECORDING_SUFFIXES, check_suffix, check_writable, fresh_path
from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS, SignalManager
from mjrig.scenario.measured import MEASURED_KEY, measured_metadata
from mjrig.scenario.parse import scenario_from_doc
from mjrig.scenario.toml_writer import dumps
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler
from mjrig.session.jobs import BackgroundJobs

__all__ = ["Outputs"]


class Outputs(Feature):
    """Recording, video, screenshot, scenario and keyframe commands of one session."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.video: Any = None  # the VideoRecorder while a video runs
        self.pending_screenshot: Path | None = None  # taken by the viewer loop, which owns the camera
        self.interrupted: tuple[str, ...] = ()  # recordings a crash left as segments
        self.plan: dict[str, Any] = {}
        """What ToggleRecording starts: the Recording form's settings (``C.PanelState.outputs.recording_plan``;
        replaced, never changed in place, so a published snapshot can hold it as it is)."""
        self.plan_revision = 0
        self.jobs: BackgroundJobs = BackgroundJobs()
        self._holds: dict[Path, Hold] = {}  # the recordings this process writes (``out_lock``)
        self._saving: dict[int, SignalManager] = {}  # recordings stopped, their files being finished

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this part carries out."""
        return {
            C.StartRecording: self.start_recording,
            C.StopRecording: self.stop_recording,
            C.ToggleRecording: self.toggle_recording,
            C.PlanRecording: self.plan_recording,
            C.RecoverRecording: self.recover,
            C.SaveKeyframe: self.save_keyframe,
            C.Screenshot: self.screenshot,
            C.ToggleVideo: self.toggle_video,
        }

    def publish(self) -> C.OutputsPart:
        """Its part of the panel state: the recording being made, its plan, the video, the
        interrupted recordings found."""
        rm = self.ctx.runtime_or_none
        rec = rm.signal_manager if rm is not None else None
        video = str(self.video.path) if self.video is not None else None
        saving = tuple(
            C.JobInfo(
                f"saving {sm.export_path.name if sm.export_path else 'a recording'}",
                sm.saved_fraction,
                f"{sm.bytes_written / 1e6:.1f} MB",
            )
            for sm in self._saving.values()
        )
        return C.OutputsPart(
            saving=saving,
            recording_path=None if rec is None else str(rec.export_path),
            recording_rows=0 if rec is None else rec.rows_recorded,
            recording_bytes=0 if rec is None else rec.bytes_written,
            recording_error=None if rec is None else rec.error or rec.behind,
            video_path=video,
            interrupted=self.interrupted,
            recording_plan=self.plan,
            plan_revision=self.plan_revision,
        )

    # --- recordings ------------------------------------------------------------------------------
    def start_recording(self, cmd: C.StartRecording) -> None:
        s, doc = self.ctx, self.ctx.document
        assert doc.model_path is not None
        # An empty path (the form emptied, or not filled yet): the rig's own, as the form shows it.
        asked = Path(cmd.path.strip() or doc.recording_plan()["path"]).expanduser()
        asked = asked if asked.is_absolute() else Path.cwd() / asked
        check_suffix(asked, RECORDING_SUFFIXES, where="recording path")
        self._finish(s.runtime.set_recorder(None))
        check_writable(asked, "recording path")
        held = hold(asked, what="recording path", fresh=True)  # a name no other process takes meanwhile
        path = self._holds.setdefault(held.path, held).path
        groups = tuple(cmd.signals) if cmd.signals else SIGNAL_GROUPS
        sm = open_recorder(
            path,
            model_path=doc.model_path,
            scenario_text=dumps(doc.doc),
            rate=cmd.rate,
            groups=groups,
            extra_metadata=self._measured() or None,
            wait_when_behind=False,
        )  # real time first: a slow disk is said
        self._finish(s.runtime.set_recorder(sm))
        rec: dict[str, Any] = {"path": str(path), "signals": list(groups)}
        if cmd.rate is not None:
            rec["rate"] = float(cmd.rate)
        doc.doc["recording"] = rec
        self._set_plan({"path": str(path), "rate": cmd.rate, "signals": list(groups)})  # the form shows the file
        note = f" ({asked.name} exists)" if path != asked else ""
        s.log("info", f"recording to {path}{note}")

    def stop_recording(self, cmd: C.StopRecording) -> None:
        s = self.ctx
        old = s.runtime.set_recorder(None)
        if old is not None:
            s.log("info", f"saving {old.export_path}: {old.rows_recorded} rows recorded")
            self._finish(old)

    def toggle_recording(self, cmd: C.ToggleRecording) -> None:
        """Stop, or start exactly what the Recording form shows for this rig (``plan``)."""
        s = self.ctx
        if s.runtime.signal_manager is not None:
            self.stop_recording(C.StopRecording())
            return
        plan = self.plan or s.document.recording_plan()
        signals = plan.get("signals")
        self.start_recording(
            C.StartRecording(str(plan["path"]), plan.get("rate"), tuple(signals) if signals is not None else None)
        )

    def plan_recording(self, cmd: C.PlanRecording) -> None:
        """The form was edited: its settings are the plan now (no revision: the form has them)."""
        self.plan = {
            "path": cmd.path,
            "rate": cmd.rate,
            "signals": list(cmd.signals) if cmd.signals is not None else None,
        }

    def rig_opened(self) -> None:
        """Another rig was opened: the plan is its own [recording] again; what the form held for
        the previous rig, typed or recorded, is not carried over."""
        self._set_plan(self.ctx.document.recording_plan())

    def _set_plan(self, plan: dict[str, Any]) -> None:
        """A plan the session chose: the form shows it (a new revision)."""
        self.plan = plan
        self.plan_revision += 1

    def branch_recording(self, *, time: float) -> Path | None:
        """The run goes on from an earlier instant ``time`` (s): the recording being made, if any,
        is finished as it is (it keeps the instants after ``time`` that were abandoned) and
        recording goes on into a new file ``<name>-branch-<time>s.parquet`` beside it, with the
        same rate and signals, whose rows start at ``time`` and whose metadata records
        ``mjrig.branched_from`` = JSON ``{"time": s, "recording": previous file,
        "branched_from": the previous file's own branch record or null}`` (the scenario in it is
        the rig as it is now, with any edits made while paused). Returns the new path.

        A new file, not a new part of the same one: every recording keeps time increasing, so
        replay, ``mjrig compare`` and the plots read a branch like any recording."""
        s, doc = self.ctx, self.ctx.document
        rm = s.runtime_or_none
        old = rm.signal_manager if rm is not None else None
        if old is None or old.export_path is None or doc.model_path is None:
            return None
        prev = old.export_path
        stem = prev.stem.split("-branch-")[0]
        path = fresh_path(prev.with_name(f"{stem}-branch-{time:.4f}s{prev.suffix}"))
        branch = json.dumps(
            {
                "time": float(time),
                "recording": str(prev),
                "branched_from": json.loads(old.metadata.get("mjrig.branched_from", "null")),
            }
        )
        sm = open_recorder(
            path,
            model_path=doc.model_path,
            scenario_text=dumps(doc.doc),
            rate=old.rate,
            groups=old.groups,
            extra_metadata={"mjrig.branched_from": branch, **self._measured()},
            wait_when_behind=False,
        )
        self._finish(s.runtime.set_recorder(sm))
        s.log("info", f"branched at t = {time:.4f} s: recording goes on in {path.name}")
        return path

    def _measured(self) -> dict[str, str]:
        """The rig's bench data (``[[measured]]``, also what was added in the app) as a recording's
        metadata keeps it (``mjrig.measured``, as ``mjrig run`` writes it); empty: none."""
        rig = self.ctx.rig()
        if rig is None or not rig.scenario.measured:
            return {}
        return {MEASURED_KEY: measured_metadata(rig.scenario.measured)}

    def _finish(self, sm: SignalManager | None) -> None:
        """Close a recorder off the simulation thread (merging segments can take a while); its
        metadata gets the rig's metrics over the run (``mjrig.metrics``)."""
        if sm is None:
            return
        rm = self.ctx.runtime_or_none
        if rm is not None:
            sm.add_metadata({**outcome_metadata(rm), **self._measured()})  # bench data added meanwhile too
        target = sm.export_path
        if target is not None:
            for hook in self.ctx.finishing:
                hook(target)

        def done(path: Path | None, error: BaseException | None) -> None:
            self._saving.pop(id(sm), None)
            if error is not None:
                self.ctx.log("error", f"recording could not be finalized: {error}")
            else:
                if sm.error or sm.behind and "not recorded" in sm.behind:
                    self.ctx.log("error", f"recording: {sm.error or sm.behind}")
                if path is not None and path.is_file():  # said once the file is there, never before
                    size = path.stat().st_size / 1e6
                    self.ctx.log("info", f"recording stopped: {sm.rows_recorded} rows saved to {path} ({size:.1f} MB)")
            if target is not None:
                held = self._holds.pop(Path(target), None)
                if held is not None:
                    held.release()
                for hook in self.ctx.finished:
                    hook(target, error is None and not sm.error and path is not None)

        self._saving[id(sm)] = sm
        self.jobs.start("mjrig-recording-close", sm.close, done)

    def find_interrupted(self) -> tuple[str, ...]:
        """Recordings near this model that a crash or kill left as segments (not being written)."""
        from mjrig.runtime.files.parquet_sink import segment_dir

        s, doc = self.ctx, self.ctx.document
        folders = {Path.cwd() / "runs"}
        rec = doc.doc.get("recording", {})
        if isinstance(rec, dict) and isinstance(rec.get("path"), str):
            folders.add(doc.resolve_path(rec["path"]).parent)
        rm = s.runtime_or_none
        active = rm.signal_manager.export_path if rm is not None and rm.signal_manager else None
        found = []
        for folder in folders:
            if not folder.is_dir():
                continue
            for parts in sorted(folder.glob("*.parquet.parts")):
                target = parts.with_name(parts.name[: -len(".parts")])
                if (
                    target != active
                    and segment_dir(target) == parts
                    and (any(parts.glob("part-*.json")) or any(parts.glob("seg-*")))
                    and not held(target)
                ):  # another process's recording going on
                    found.append(str(target))
        return tuple(found)

    def recover(self, cmd: C.RecoverRecording) -> None:
        from mjrig.runtime.files.parquet_sink import recover

        def done(result: tuple[Path, int] | None, error: BaseException | None) -> None:
            if error is not None:
                self.ctx.log("error", f"recovery of {cmd.path} failed: {error}")
            elif result is not None:
                self.ctx.log("info", f"recovered {result[1]} rows into {result[0]}")
            self.interrupted = tuple(p for p in self.interrupted if p != cmd.path)

        def run() -> tuple[Path, int]:
            with hold(Path(cmd.path), what="recover"), warnings.catch_warnings(record=True) as notes:
                warnings.simplefilter("always")  # a damaged segment: what was kept goes to the log
                result = recover(cmd.path)
            for note in notes:
                self.ctx.log("warning", str(note.message))
            return result

        self.jobs.start("mjrig-recover", run, done)

    # --- scenario and keyframe ---------------------------------------------------------------------
    def save_scenario(self, cmd: C.SaveScenario) -> Path:
        """Write the rig as a scenario file that ``mjrig run`` reads back; returns its path."""
        s, rig = self.ctx, self.ctx.document
        path = Path(cmd.path).expanduser().resolve()
        doc = copy.deepcopy(rig.doc)
        doc["model"] = os.path.relpath(rig.model_path, path.parent) if rig.model_path else doc.get("model")
        sim = doc.setdefault("simulation", {})
        sim["speed"] = s.run.speed if s.run.speed > 0 else sim.get("speed", 1.0)
        for key in ("recording", "video"):
            if key in doc and "path" in doc[key]:
                # a free name: re-running the scenario must not replace what the app recorded
                p = fresh_path(rig.resolve_path(doc[key]["path"]))
                doc[key]["path"] = os.path.relpath(p, path.parent)
        for entry in doc.get("measured", []):  # bench files as the saved scenario finds them
            entry["file"] = os.path.relpath(rig.resolve_path(entry["file"]), path.parent)
        check_writable(path, "scenario path")
        text = dumps(doc)
        scenario_from_doc(doc, base=path.parent, source=path)  # what we write must load back
        with atomic_output(path, what="scenario") as part:  # whole or not at all: a replaced file is never half-written
            part.write_text(text, encoding="utf-8")
        rig.saved(path)
        s.log("info", f"scenario saved: {path}")
        return path

    def save_keyframe(self, cmd: C.SaveKeyframe) -> None:
        s, rig = self.ctx, self.ctx.document
        model, data, model_path = s.model, s.data, rig.model_path
        assert model is not None and data is not None
        if model_path is None or model_path.suffix.lower() != ".xml":
            raise ConfigError("save keyframe needs an MJCF (.xml) model")
        spec = mujoco.MjSpec.from_file(str(model_path))
        key = spec.add_key()
        key.name = f"mjrig_t{data.time:.3f}"
        key.time, key.qpos, key.qvel = float(data.time), data.qpos.copy(), data.qvel.copy()
        if model.na:
            key.act = data.act.copy()
        if model.nu:
            key.ctrl = data.ctrl.copy()
        # Next to the model (its meshes and textures resolve from there), or for a bundled rig
        # in the current folder's runs/.
        folder = Path.cwd() / "runs" if rig.bundled() else model_path.parent
        out = Path(cmd.path) if cmd.path else fresh_path(folder / (model_path.stem + "_keyframe.xml"))
        check_writable(out, "keyframe path")
        with atomic_output(out, what="keyframe") as part:
            part.write_text(spec.to_xml(), encoding="utf-8")
        s.log("info", f"state saved as keyframe '{key.name}' in {out}")

    # --- pictures ------------------------------------------------------------------------------------
    def screenshot(self, cmd: C.Screenshot) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = fresh_path(Path(cmd.path) if cmd.path else Path.cwd() / "runs" / f"screenshot-{stamp}.png")
        check_writable(path, "screenshot path")
        self.pending_screenshot = path

    def toggle_video(self, cmd: C.ToggleVideo) -> None:
        s = self.ctx
        if self.video is not None:
            self.stop_video()
            return
        from mjrig.runtime.drawing.video import VideoRecorder

        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = fresh_path(Path(cmd.path) if cmd.path else Path.cwd() / "runs" / f"video-{stamp}.mp4")
        check_writable(path, "video path")
        g = s.model.vis.global_
        rec = VideoRecorder(
            path=path,
            camera=s.camera(),
            show_loads=True,
            show_proximities=True,
            width=min(640, int(g.offwidth)),
            height=min(480, int(g.offheight)),
        )
        rec.check(s.model)
        s.runtime.add_video(rec)
        self.video = rec
        s.log("info", f"video recording to {path}")

    def stop_video(self) -> None:
        """Finish the video (on the simulation thread, which owns its GL context)."""
        s = self.ctx
        rec, self.video = self.video, None
        if rec is None:
            return
        rm = s.runtime_or_none
        if rm is not None:
            rm.remove_video(rec)
        try:
            rec.save()
            if rec.frames_written == 0 or not Path(rec.path).exists():
                s.log(
                    "warning",
                    f"no video written to {rec.path}: no frame was due (frames follow simulated "
                    "time; was the simulation paused?)",
                )
            else:
                s.log("info", f"video saved: {rec.path} ({rec.frames_written} frames)")
        except MjrigError as exc:
            s.log("error", str(exc))

    def close(self) -> None:
        """Finish the video and the recording and wait for them; safe twice."""
        self.stop_video()
        rm = self.ctx.runtime_or_none
        if rm is not None:
            self._finish(rm.set_recorder(None))
        self.jobs.join()
