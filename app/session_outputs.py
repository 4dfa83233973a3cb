"""The Session's commands that write files: recordings, videos, screenshots, scenarios, keyframes.

A mixin of ``mjrig.session.Session`` (kept apart so each module stays small); it uses the
Session's model, rig document, runtime manager and log, and runs on the simulation thread.
"""
from __future__ import annotations

import copy
import os
import threading
import time
from pathlib import Path

import mujoco

from mjrig import commands as C
from mjrig.headless import check_writable, recording_metadata
from mjrig.runtime.errors import ConfigError, MjrigError
from mjrig.runtime.signals import SIGNAL_GROUPS, SignalManager
from mjrig.scenario import scenario_from_doc
from mjrig.scenario_toml import dumps

__all__ = ["OutputCommands", "fresh_path"]


def fresh_path(path: Path) -> Path:
    """``path`` when nothing is there yet, else the first free ``STEM-2.EXT``, ``STEM-3.EXT``...

    A recording's segment folder (``OUT.parquet.parts``) counts as taken: the app never
    replaces what the user made without asking.
    """
    def taken(p: Path) -> bool:
        return p.exists() or Path(str(p) + ".parts").exists()

    if not taken(path):
        return path
    stem = path.stem
    head, sep, tail = stem.rpartition("-")
    if sep and tail.isdigit():
        stem = head
    n = 2
    while taken(path.with_name(f"{stem}-{n}{path.suffix}")):
        n += 1
    return path.with_name(f"{stem}-{n}{path.suffix}")


class OutputCommands:
    """Handlers (``_do_<Command>``) for StartRecording, StopRecording, ToggleRecording,
    RecoverRecording, SaveScenario, SaveKeyframe, Screenshot and ToggleVideo."""

    def _out_base(self) -> Path:
        """Where outputs go by default (screenshots, videos, a recording with no path set): the
        current working folder, never inside the installed package."""
        return Path.cwd()

    def _bundled(self) -> bool:
        from mjrig.bundled import MODELS_DIR
        base = Path(self.base).resolve()
        return base == MODELS_DIR or MODELS_DIR in base.parents

    def _rig_path(self, path: str | Path) -> Path:
        """A path written in the rig's scenario: relative to the scenario file, except for a
        bundled rig, whose outputs go to the current folder."""
        p = Path(path).expanduser()
        if p.is_absolute():
            return p
        return (Path.cwd() if self._bundled() else Path(self.base)) / p

    def _do_StartRecording(self, cmd: C.StartRecording) -> None:
        assert self.rm is not None and self.model_path is not None
        asked = Path(cmd.path).expanduser()
        asked = asked if asked.is_absolute() else self._out_base() / asked
        if asked.suffix.lower() != ".parquet":
            raise ConfigError(f"recording path must end in .parquet, got '{asked.name}'")
        if self.rm.signal_manager is not None:
            self._finish(self.rm.set_recorder(None))
        path = fresh_path(asked)
        check_writable(path, "recording path")
        groups = tuple(cmd.signals) if cmd.signals else SIGNAL_GROUPS
        sm = SignalManager(path, rate=cmd.rate, groups=groups,
                           metadata=recording_metadata(self.model_path, dumps(self.doc)))
        self._finish(self.rm.set_recorder(sm))
        rec = {"path": str(path), "signals": list(groups)}
        if cmd.rate is not None:
            rec["rate"] = float(cmd.rate)
        self.doc["recording"] = rec
        self._last_recording = cmd
        note = f" ({asked.name} exists)" if path != asked else ""
        self.log("info", f"recording to {path}{note}")

    def _do_StopRecording(self, cmd: C.StopRecording) -> None:
        assert self.rm is not None
        old = self.rm.set_recorder(None)
        if old is not None:
            self._finish(old)
            self.log("info", f"recording stopped: {old.rows_recorded} rows to {old.export_path}")

    def _do_ToggleRecording(self, cmd: C.ToggleRecording) -> None:
        assert self.rm is not None
        if self.rm.signal_manager is not None:
            self.handle(C.StopRecording())
        else:
            rec = self.doc.get("recording", {})
            path = str(self._rig_path(rec["path"])) if "path" in rec else "runs/recording.parquet"
            last = self._last_recording or C.StartRecording(
                path=path, rate=rec.get("rate"),
                signals=tuple(rec["signals"]) if "signals" in rec else None)
            self.handle(last)

    def _finish(self, sm: SignalManager | None) -> None:
        """Close a recorder off the simulation thread (merging segments can take a while)."""
        if sm is None:
            return

        def close() -> None:
            try:
                path = sm.close()
                if sm.error:
                    self.log("error", f"recording: {sm.error}")
                elif path is not None:
                    self.log("info", f"recording saved: {path}")
            except Exception as exc:  # noqa: BLE001 - reported, never raised into the sim
                self.log("error", f"recording could not be finalized: {exc}")

        t = threading.Thread(target=close, name="mjrig-recording-close")
        t.start()
        self._closing.append(t)

    def find_interrupted(self) -> tuple[str, ...]:
        """Recordings near this model that a crash or kill left as segments (not being written)."""
        from mjrig.runtime.parquet_sink import segment_dir
        folders = {self._out_base() / "runs"}
        rec = self.doc.get("recording", {})
        if isinstance(rec, dict) and isinstance(rec.get("path"), str):
            p = Path(rec["path"])
            folders.add(self._rig_path(p).parent)
        active = self.rm.signal_manager.export_path if self.rm and self.rm.signal_manager else None
        found = []
        for folder in folders:
            if not folder.is_dir():
                continue
            for parts in sorted(folder.glob("*.parquet.parts")):
                target = parts.with_name(parts.name[: -len(".parts")])
                if target != active and segment_dir(target) == parts and any(parts.glob("seg-*")):
                    found.append(str(target))
        return tuple(found)

    def _do_RecoverRecording(self, cmd: C.RecoverRecording) -> None:
        from mjrig.runtime.parquet_sink import recover

        def work() -> None:
            try:
                path, rows = recover(cmd.path)
                self.log("info", f"recovered {rows} rows into {path}")
            except Exception as exc:  # noqa: BLE001 - reported in the status area
                self.log("error", f"recovery of {cmd.path} failed: {exc}")
            self.interrupted = tuple(p for p in self.interrupted if p != cmd.path)

        t = threading.Thread(target=work, name="mjrig-recover")
        t.start()
        self._closing.append(t)

    def _do_SaveScenario(self, cmd: C.SaveScenario) -> None:
        path = Path(cmd.path).expanduser().resolve()
        doc = copy.deepcopy(self.doc)
        doc["model"] = os.path.relpath(self.model_path, path.parent) if self.model_path else doc.get("model")
        sim = doc.setdefault("simulation", {})
        sim["speed"] = self.speed if self.speed > 0 else sim.get("speed", 1.0)
        for key in ("recording", "video"):
            if key in doc and "path" in doc[key]:
                p = Path(doc[key]["path"])
                # a free name: re-running the scenario must not replace what the app recorded
                p = fresh_path(self._rig_path(p))
                doc[key]["path"] = os.path.relpath(p, path.parent)
        check_writable(path, "scenario path")
        text = dumps(doc)
        scenario_from_doc(doc, base=path.parent, source=path)  # what we write must load back
        path.write_text(text, encoding="utf-8")
        self.dirty = False
        self.source = path  # the rig now lives in this file (Recent, reload)
        self.log("info", f"scenario saved: {path}")
        if self.pending_open:  # saved on the way to opening another file: go on
            pending, self.pending_open = self.pending_open, None
            self.open(pending)

    def _do_SaveKeyframe(self, cmd: C.SaveKeyframe) -> None:
        assert self.data is not None
        if self.model_path is None or self.model_path.suffix.lower() != ".xml":
            raise ConfigError("save keyframe needs an MJCF (.xml) model")
        spec = mujoco.MjSpec.from_file(str(self.model_path))
        key = spec.add_key()
        key.name = f"mjrig_t{self.data.time:.3f}"
        key.time, key.qpos, key.qvel = float(self.data.time), self.data.qpos.copy(), self.data.qvel.copy()
        if self.model is not None and self.model.na:
            key.act = self.data.act.copy()
        if self.model is not None and self.model.nu:
            key.ctrl = self.data.ctrl.copy()
        # Next to the model (its meshes and textures resolve from there), or for a bundled rig
        # in the current folder's runs/.
        folder = self._out_base() / "runs" if self._bundled() else self.model_path.parent
        out = Path(cmd.path) if cmd.path else fresh_path(folder / (self.model_path.stem + "_keyframe.xml"))
        check_writable(out, "keyframe path")
        out.write_text(spec.to_xml(), encoding="utf-8")
        self.log("info", f"state saved as keyframe '{key.name}' in {out}")

    def _do_Screenshot(self, cmd: C.Screenshot) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = fresh_path(Path(cmd.path) if cmd.path else self._out_base() / "runs" / f"screenshot-{stamp}.png")
        check_writable(path, "screenshot path")
        self.pending_screenshot = path  # taken by the viewer loop, which owns the camera

    def _do_ToggleVideo(self, cmd: C.ToggleVideo) -> None:
        assert self.rm is not None and self.model is not None
        if self.video is not None:
            self._stop_video()
            return
        from mjrig.runtime.video import VideoRecorder
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = fresh_path(Path(cmd.path) if cmd.path else self._out_base() / "runs" / f"video-{stamp}.mp4")
        check_writable(path, "video path")
        g = self.model.vis.global_
        rec = VideoRecorder(path=path, camera=self.camera, show_loads=True, show_proximities=True,
                            width=min(640, int(g.offwidth)), height=min(480, int(g.offheight)))
        rec.check(self.model)
        self.rm.video_recorders.append(rec)
        self.video = rec
        self.log("info", f"video recording to {path}")

    def _stop_video(self) -> None:
        """Finish the video (on the simulation thread, which owns its GL context)."""
        rec, self.video = self.video, None
        if rec is None:
            return
        if self.rm is not None and rec in self.rm.video_recorders:
            self.rm.video_recorders.remove(rec)
        try:
            rec.save()
            if rec.frames_written == 0 or not Path(rec.path).exists():
                self.log("warning", f"no video written to {rec.path}: no frame was due (frames follow simulated "
                                    "time; was the simulation paused?)")
            else:
                self.log("info", f"video saved: {rec.path} ({rec.frames_written} frames)")
        except MjrigError as exc:
            self.log("error", str(exc))
