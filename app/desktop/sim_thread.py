"""The simulation thread: drives MuJoCo's passive viewer over a Session.

Each frame (about 60 Hz) it takes the viewer lock, runs queued commands, steps the physics
paced to the chosen speed, draws the rig's arrows and lines into ``user_scn``, then calls
``sync()`` outside the lock and publishes a snapshot. Viewer keys (``mjrig.settings.keys``) become the
same commands the panel submits; files dropped on the viewer open like File > Open.

Threading: the only code that touches MjModel/MjData/``user_scn`` and the viewer's camera;
everything it shares with the panel goes through the Session's command queue and snapshot.
Callbacks on the viewer's render thread (keys, the close button) only submit commands.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import mujoco

from mjrig import commands as C
from mjrig.desktop.view_hold import ViewHold
from mjrig.desktop.viewer_adapter import ViewerWindow, close_viewer, describe_selection, launch, load_into_viewer
from mjrig.runtime.drawing.camera import FREE, apply_camera, frame_model, next_camera
from mjrig.runtime.drawing.framing import rig_points
from mjrig.runtime.drawing.video import render_with_rig
from mjrig.session.kernel import Session
from mjrig.settings.keys import KeyMap, load_keymap

_VERBOSE = os.environ.get("MJRIG_VERBOSE") == "1"

__all__ = ["SimThread", "pick_dropped", "run_headless_frames"]

FRAME_S = 1.0 / 60.0


class SimThread:
    """Owns the viewer window and the stepping loop; ``start()``, then ``stop()``/``join()``."""

    def __init__(
        self,
        session: Session,
        *,
        show_viewer: bool = True,
        geometry: tuple[int, int, int, int] | None = None,
        keymap: KeyMap | None = None,
        view_fps: float | None = None,
    ) -> None:
        self.session = session
        self._hold = ViewHold(view_fps)
        self.show_viewer = show_viewer
        self.geometry = geometry
        self.keymap = keymap if keymap is not None else load_keymap()
        self.viewer: Any = None
        self.window = ViewerWindow()
        self.frames = 0
        self.viewer_closed = False
        self._thread = threading.Thread(target=self._run, name="mjrig-sim", daemon=True)
        self._stop = threading.Event()
        self.failure: BaseException | None = None
        self._renderer: Any = None
        self._renderer_model: Any = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _key(self, keycode: int) -> None:
        """MuJoCo's key callback (render thread): a bound key submits its command. With
        MJRIG_VERBOSE=1 each key the viewer passes on is one line on stderr (scripts driving the
        app with xdotool wait for it)."""
        if _VERBOSE:
            print(f"mjrig: viewer key {keycode}", file=sys.stderr, flush=True)
        command = self.keymap.command(self.window.modifiers(), keycode)
        if command is not None:
            self.session.submit(command)

    def _open_viewer(self) -> None:
        s = self.session
        for warning in self.keymap.warnings:
            s.log("warning", warning)
        # MuJoCo's own side panels would take most of a laptop-sized view: the left one (File,
        # Option, Simulation, Rendering...) only when the window is wide; Tab shows either.
        wide = self.geometry is None or self.geometry[2] >= 1000
        self.viewer, self.window = launch(
            s.model, s.data, key_callback=self._key, geometry=self.geometry, show_left_ui=wide, show_right_ui=False
        )
        self.window.may_close = self._may_close
        self._hold.watch(self.window.render_cpu)
        if self.window.software:
            self._light_rendering(self.viewer, say=True)
        s.view.camera = self.viewer.cam  # videos follow what the user sees
        s.view.model_changed = False
        s.view.request = s.view.request or "open"

    def _light_rendering(self, v: Any, *, say: bool) -> None:
        """A view drawn on the CPU (``ViewerWindow.software``) without shadows and reflections:
        each draws the scene once more, and a software renderer then shows a few frames a second
        (robot_arm with a trail in a laptop-sized view on Mesa's llvmpipe: 5.5 frames/s with them,
        22.7 without; ``benchmarks/view_rate.py``). MuJoCo's S and R keys in the view bring them
        back (until the next model: MuJoCo's scene starts over with each). ``say``: tell Status."""
        with v.lock():
            flags = v.user_scn.flags
            flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        if not say:
            return
        self.session.log(
            "info",
            f"the 3D view is drawn on the CPU ({self.window.renderer.split(' (')[0]}): shadows and reflections "
            "are off so that it keeps moving (S and R in the view turn them on)",
        )

    def _may_close(self) -> bool:
        """The viewer's close button (render thread): only a ``CloseViewer`` for the session, which
        quits (this loop then closes the window) or asks about unsaved edits first; the window
        stays open meanwhile."""
        self.session.submit(C.CloseViewer())
        return False

    def _aspect(self) -> float:
        """Width/height of the 3D view: the viewer's scene viewport (the window less MuJoCo's side
        panels) once it has drawn, else its window."""
        rect = getattr(self.viewer, "viewport", None)
        if rect is not None and rect.width > 0 and rect.height > 0:
            return rect.width / rect.height
        g = self.window.geometry
        return g[2] / g[3] if g and g[3] > 0 else 1.5

    def _rig_points(self) -> Any:
        """The rig's attachment points (world, m, (n, 3)) a framed view shows, or None."""
        s, rm = self.session, self.session.rm
        if rm is None:
            return None
        return rig_points(s.model, s.data, loads=rm.loads, proximities=rm.proximities, tracers=rm.tracers)

    def _apply_view(self, v: Any) -> None:
        """Carry out a camera request (under the viewer lock)."""
        s = self.session
        req, s.view.request = s.view.request, None
        if req is None or s.model is None:
            return
        cam, aspect, points = v.cam, self._aspect(), self._rig_points()
        if req == "open":  # a new model: frame it; follow it if one body flies freely
            tracking = int((s.model.jnt_type == mujoco.mjtJoint.mjJNT_FREE).sum()) == 1
            s.view.camera_choice = apply_camera(
                s.model, s.data, cam, "tracking" if tracking else FREE, aspect=aspect, points=points
            )
        elif req == "fit":  # from where the user looks now
            frame_model(
                s.model,
                s.data,
                cam,
                aspect=aspect,
                track=s.view.camera_choice == "tracking",
                points=points,
                keep_direction=cam.type != mujoco.mjtCamera.mjCAMERA_FIXED,
            )
            if s.view.camera_choice not in (FREE, "tracking"):
                s.view.camera_choice = FREE
        else:
            choice = next_camera(s.model, s.view.camera_choice) if req == "next" else req
            s.view.camera_choice = apply_camera(s.model, s.data, cam, choice, aspect=aspect, points=points)

    def _run(self) -> None:
        s = self.session
        try:
            while not (self._stop.is_set() or s.unsaved.quit):
                t0 = time.perf_counter()
                if s.model is None:
                    s.process_commands()
                    s.publish()
                    time.sleep(FRAME_S)
                    continue
                if self.show_viewer and self.viewer is None:
                    self._open_viewer()
                v = self.viewer
                if v is not None and not v.is_running():
                    self.viewer_closed = True
                    s.unsaved.quit = True
                    break
                self._frame(v)
                self.frames += 1
                self._hold.wait(v, FRAME_S - (time.perf_counter() - t0))
        except BaseException as exc:  # reported by the app; never silent
            self.failure = exc
            s.log("error", f"simulation thread stopped: {type(exc).__name__}: {exc}")
        finally:
            s.unsaved.quit = True
            self._hold.release()
            s.outputs.stop_video()  # GL resources belong to this thread
            if self._renderer is not None:
                self._renderer.close()
            self.window.close()
            if self.viewer is not None:
                close_viewer(self.viewer)

    def _frame(self, v: Any) -> None:
        s = self.session
        if v is None:
            s.process_commands()
            s.advance(budget_s=0.8 * FRAME_S)
            s.publish()
            return
        problem = self.window.take_problem()
        if problem is not None:
            s.log("warning", problem)
        dropped = self.window.take_drop()
        if dropped:
            target, note = pick_dropped(dropped)
            if note:
                s.log("warning", note)
            s.submit(C.OpenModel(target))
        kept_camera: tuple[int, int, int] | None = None
        shown = False  # a feature drew in the view (a mode animated): its frame drawn, then the run's state put back
        s.process_commands(off_lock=True)  # opening a model compiles it while the view goes on drawing
        # The view's turn (a frame of it drawn after this one) comes at most view_fps times a
        # second, and whenever a command waits: a command may swap the model or take long.
        if self._hold.view_turn() or s.commands_waiting():
            self._hold.release()
        else:
            self._hold.keep(v)
        with nullcontext() if self._hold.kept else v.lock():
            s.process_commands()
            if s.view.model_changed:
                kept_camera = self._before_swap(v)  # swapped below, outside the lock (simulate.load takes it)
            else:
                s.advance(budget_s=0.8 * FRAME_S)
                shown = s.view.draw()
                self._apply_view(v)
                s.view.selection = describe_selection(s.model, s.data, v.perturb)
                scn = v.user_scn
                scn.ngeom = 0
                if s.rm is not None and not s.view.rig_hidden:
                    s.rm.drawing.draw(scn, s.model, s.data)
                s.replayer.draw_ghost(scn, option=v.opt)
                if s.outputs.pending_screenshot is not None:
                    self._screenshot(v, s.outputs.pending_screenshot)
                    s.outputs.pending_screenshot = None
        if kept_camera is not None:
            self._hold.release()
            v.sync()  # the emptied overlay, while the old model is still the one shown
            load_into_viewer(v, s.model, s.data)
            if self.window.software:  # the viewer's scene starts over with each model
                self._light_rendering(v, say=False)
            s.view.model_changed = False
            with v.lock():
                v.cam.type, v.cam.trackbodyid, v.cam.fixedcamid = kept_camera
        if not self._hold.kept:  # the viewer's turn: the state it draws next (sync locks)
            v.sync()
        if shown:
            with nullcontext() if self._hold.kept else v.lock():
                s.view.undraw()
        s.publish()

    def _before_swap(self, v: Any) -> tuple[int, int, int]:
        """Under the viewer lock, before another model goes into the viewer, which draws its first
        frame of it with the camera and overlay as they are now: the old rig's arrows and trails
        go, and the camera takes the new model's first view already. Until the swap the old
        model is still drawn (under MuJoCo's "LOADING" label), so the camera stays a free one
        for now, from the same place: a tracked body's or model camera's id of the new model may
        not exist in the old one. Returns the camera's (type, trackbodyid, fixedcamid) to put
        back once the new model is in."""
        s = self.session
        v.user_scn.ngeom = 0
        s.view.request = "open"
        self._apply_view(v)
        cam = v.cam
        kept = (int(cam.type), int(cam.trackbodyid), int(cam.fixedcamid))
        cam.type, cam.trackbodyid, cam.fixedcamid = mujoco.mjtCamera.mjCAMERA_FREE, -1, -1
        return kept

    def _screenshot(self, v: Any, path: Any) -> None:
        """Render the viewer's current camera offscreen, with the rig drawn, to a PNG."""
        s = self.session
        try:
            import mediapy

            m = s.model
            if m is None:
                s.log("error", "screenshot failed: no model is open")
                return
            width = min(1280, int(m.vis.global_.offwidth))
            height = min(960, int(m.vis.global_.offheight))
            if self._renderer is None or self._renderer_model is not m:
                if self._renderer is not None:
                    self._renderer.close()
                self._renderer = mujoco.Renderer(m, height, width)
                self._renderer_model = m
            arrows, lines = s.rm.drawing.visuals(m, s.data) if s.rm is not None and not s.view.rig_hidden else ([], [])
            mediapy.write_image(
                str(path),
                render_with_rig(
                    self._renderer,
                    m,
                    s.data,
                    camera=v.cam,
                    option=v.opt,
                    arrows=arrows,
                    lines=lines,
                    extra=lambda scn: s.replayer.draw_ghost(scn, option=v.opt),
                    scale=s.rm.arrow_scale if s.rm is not None else None,
                ),
            )
            s.log("info", f"screenshot saved: {path}")
        except Exception as exc:  # noqa: BLE001 - reported; the simulation goes on
            s.log("error", f"screenshot failed: {type(exc).__name__}: {exc}")


def pick_dropped(paths: list[str]) -> tuple[str, str | None]:
    """Of files dropped together, the one to open: the scenario if there is one (it names its
    model, and brings the rig), else the first; with a one-line note naming the ones ignored
    (None for a single file). The app holds one model at a time."""
    target = next((p for p in paths if p.lower().endswith(".toml")), paths[0])
    ignored = [Path(p).name for p in paths if p != target]
    if not ignored:
        return target, None
    why = "the scenario" if target.lower().endswith(".toml") else "the first"
    return target, (
        f"{len(paths)} files dropped: opening {why}, {Path(target).name}; ignored "
        f"{', '.join(ignored)} (one model at a time)"
    )


def run_headless_frames(session: Session, *, seconds: float) -> int:
    """Drive a session without a viewer for ``seconds`` of wall time (tests, benchmarks)."""
    end = time.perf_counter() + seconds
    frames = 0
    while time.perf_counter() < end and not session.unsaved.quit:
        session.process_commands()
        session.advance(budget_s=0.8 * FRAME_S)
        session.publish()
        frames += 1
    return frames
