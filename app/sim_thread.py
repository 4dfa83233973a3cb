"""The simulation thread: drives MuJoCo's passive viewer over a Session.

Each frame (about 60 Hz) it takes the viewer lock, runs queued commands, steps the physics
paced to the chosen speed, draws the rig's arrows and lines into ``user_scn``, then calls
``sync()`` outside the lock and publishes a snapshot. Viewer keys become the same commands the
panel submits (``KEYMAP``, remappable in one place).

Threading: the only code that touches MjModel/MjData/``user_scn``; everything it shares with
the panel goes through the Session's command queue and snapshot.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

import mujoco

from app import commands as C
from app.session import Session

__all__ = ["KEYMAP", "SimThread", "take_dropped_file", "describe_selection"]

_GLFW_RIGHT = 262
KEYMAP: dict[int, Callable[[], C.Command]] = {
    ord(" "): C.TogglePause,
    _GLFW_RIGHT: lambda: C.StepOnce(1),
    ord("S"): lambda: C.ChangeSpeed(-1),
    ord("F"): lambda: C.ChangeSpeed(+1),
    ord("V"): C.ToggleVideo,
    ord("T"): C.Screenshot,
    ord("C"): lambda: C.SetVisualFlag("contact_force"),
    ord("R"): lambda: C.SetVisualFlag("transparent"),
    ord("L"): C.Reload,
}
"""GLFW key code -> command factory. Documented in the README and the help panel."""

FRAME_S = 1.0 / 60.0


def take_dropped_file(viewer: Any) -> str | None:
    """The path of a file dropped on the viewer window since the last call, else None.

    The passive handle does not expose drops; the underlying simulate object records them in
    ``droploadrequest``/``dropfilename``. This is the one place that reaches for it.
    """
    sim = viewer._sim() if hasattr(viewer, "_sim") else None
    if sim is None:
        return None
    try:
        if not sim.droploadrequest:
            return None
        path = sim.dropfilename
        sim.droploadrequest = 0
        return path or None
    except Exception:  # the simulate object is gone (window closed)
        return None


def close_viewer(viewer: Any, *, timeout: float = 5.0) -> None:
    """Close the viewer window and wait until its render thread has let go of it.

    ``close()`` only asks; exiting the process while the render thread still tears down races
    with GLFW's termination at exit (a segfault). The simulate object dies when that thread ends.
    """
    viewer.close()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if viewer._sim() is None:
                return
        except Exception:
            return
        time.sleep(0.01)


def load_into_viewer(viewer: Any, model: mujoco.MjModel, data: mujoco.MjData, name: str) -> None:
    """Show another model in an open passive viewer (without closing its window)."""
    sim = viewer._sim()
    if sim is not None:
        sim.load(model, data, name)


def describe_selection(model: mujoco.MjModel, data: mujoco.MjData, perturb: mujoco.MjvPerturb) -> str | None:
    """The viewer's selected point (double-click) as ``body:NAME@x,y,z``, or None."""
    body = int(perturb.select)
    if body <= 0 or body >= model.nbody:
        return None
    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or f"body{body}"
    x, y, z = (float(v) for v in perturb.localpos)
    return f"body:{name}@{x:.4g},{y:.4g},{z:.4g}"


class SimThread:
    """Owns the viewer window and the stepping loop; ``start()``, then ``stop()``/``join()``."""

    def __init__(self, session: Session, *, show_viewer: bool = True) -> None:
        self.session = session
        self.show_viewer = show_viewer
        self.viewer: Any = None
        self.frames = 0
        self.viewer_closed = False
        self._thread = threading.Thread(target=self._run, name="mjrig-sim", daemon=True)
        self._stop = threading.Event()
        self.failure: BaseException | None = None
        self._flags_applied: frozenset[str] = frozenset()
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
        factory = KEYMAP.get(keycode)
        if factory is not None:
            self.session.submit(factory())

    def _open_viewer(self) -> None:
        import mujoco.viewer  # GUI-only import, here and nowhere in the core
        s = self.session
        self.viewer = mujoco.viewer.launch_passive(s.model, s.data, key_callback=self._key)
        s.camera = self.viewer.cam  # videos follow what the user sees
        s.model_changed = False

    def _run(self) -> None:
        s = self.session
        try:
            while not (self._stop.is_set() or s.quit):
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
                    s.quit = True
                    break
                self._frame(v)
                self.frames += 1
                spare = FRAME_S - (time.perf_counter() - t0)
                if spare > 0:
                    time.sleep(spare)
        except BaseException as exc:  # reported by the app; never silent
            self.failure = exc
            s.log("error", f"simulation thread stopped: {type(exc).__name__}: {exc}")
        finally:
            s.quit = True
            s._stop_video()  # GL resources belong to this thread
            if self._renderer is not None:
                self._renderer.close()
            if self.viewer is not None:
                close_viewer(self.viewer)

    def _frame(self, v: Any) -> None:
        s = self.session
        if v is None:
            s.process_commands()
            s.advance(budget_s=0.8 * FRAME_S)
            s.publish()
            return
        dropped = take_dropped_file(v)
        if dropped:
            s.submit(C.OpenModel(dropped))
        with v.lock():
            s.process_commands()
            if s.model_changed:
                pass  # swapped below, outside the lock (simulate.load takes it itself)
            else:
                s.advance(budget_s=0.8 * FRAME_S)
                self._apply_flags(v)
                s.selection = describe_selection(s.model, s.data, v.perturb)
                scn = v.user_scn
                scn.ngeom = 0
                if s.rm is not None:
                    s.rm.draw(scn, s.model, s.data)
                if s.pending_screenshot is not None:
                    self._screenshot(v, s.pending_screenshot)
                    s.pending_screenshot = None
        if s.model_changed:
            load_into_viewer(v, s.model, s.data, str(s.model_path or ""))
            s.model_changed = False
        v.sync()
        s.publish()

    def _screenshot(self, v: Any, path: Any) -> None:
        """Render the viewer's current camera offscreen, with the rig drawn, to a PNG."""
        s = self.session
        try:
            import mediapy
            m = s.model
            width = min(1280, int(m.vis.global_.offwidth))
            height = min(960, int(m.vis.global_.offheight))
            if self._renderer is None or self._renderer_model is not m:
                if self._renderer is not None:
                    self._renderer.close()
                self._renderer = mujoco.Renderer(m, height, width)
                self._renderer_model = m
            r = self._renderer
            r.update_scene(s.data, camera=v.cam, scene_option=v.opt)
            if s.rm is not None:
                s.rm.draw(r.scene, m, s.data)
            mediapy.write_image(str(path), r.render())
            s.log("info", f"screenshot saved: {path}")
        except Exception as exc:  # noqa: BLE001 - reported; the simulation goes on
            s.log("error", f"screenshot failed: {type(exc).__name__}: {exc}")

    def _apply_flags(self, v: Any) -> None:
        """Push key-toggled flags to the viewer only when they change, so the viewer's own
        checkboxes keep working."""
        flags = frozenset(self.session.visual_flags)
        if flags == self._flags_applied:
            return
        for name, bit in (("contact_force", mujoco.mjtVisFlag.mjVIS_CONTACTFORCE),
                          ("transparent", mujoco.mjtVisFlag.mjVIS_TRANSPARENT)):
            if (name in flags) != (name in self._flags_applied):
                v.opt.flags[bit] = name in flags
        self._flags_applied = flags


def run_headless_frames(session: Session, *, seconds: float) -> int:
    """Drive a session without a viewer for ``seconds`` of wall time (tests, benchmarks)."""
    end = time.perf_counter() + seconds
    frames = 0
    while time.perf_counter() < end and not session.quit:
        session.process_commands()
        session.advance(budget_s=0.8 * FRAME_S)
        session.publish()
        frames += 1
    return frames

