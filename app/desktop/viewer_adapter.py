"""The one adapter over MuJoCo's passive viewer and the GLFW window behind it.

``mujoco.viewer.launch_passive`` offers a handle (lock, sync, user_scn, cam, opt, perturb) but
not the window: file drops are discarded in passive mode, key callbacks get no modifiers, and
the window cannot be placed. MuJoCo creates the window, and makes its context current, inside
the ``_Simulate`` constructor on the viewer's render thread, and hands Python's ``glfw`` the
same library; so a constructor wrapped here sees the window through
``glfw.get_current_context()`` and installs a drop callback, position/size callbacks and the
requested geometry there, on the thread that owns the window; it also reads the window's OpenGL
renderer there (``ViewerWindow.renderer``), so that a view drawn on the CPU can be told.

Every private name of ``mujoco.viewer`` used by mjrig is in this module, and
``tests/gui/test_viewer_access.py`` pins them against the installed MuJoCo.

The 3D view yields the CPU to the panel and the physics (Linux): its render thread lowers its
own scheduling priority (nice ``VIEW_NICE``) before MuJoCo creates the window, so the threads a
software OpenGL (Mesa llvmpipe) starts for that context inherit it. With a GPU the render thread
mostly waits on the GPU and this changes nothing; on a CPU-rendered display with 2 cores the
panel's frames at 1,000 bodies went from p95 ~80 ms to ~50 (``benchmarks/panel_scale.py``), the
view drawing fewer frames when the cores are busy.

Threading: ``ViewerWindow`` is written by the render thread (callbacks) and read by the
simulation thread; its fields are plain values swapped atomically, the drop list is a queue.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco

from mjrig.desktop import x_errors
from mjrig.desktop.xdnd_target import DropTarget
from mjrig.settings.keys import MOD_ALT, MOD_CTRL, MOD_SHIFT

__all__ = ["ViewerWindow", "launch", "close_viewer", "load_into_viewer", "describe_selection"]

_launch_lock = threading.Lock()
VIEW_NICE = 19
"""Nice value of the viewer's render thread (and the rasteriser threads it starts): 0 the
panel's and the physics' own, 19 the lowest."""


_SOFTWARE_GL = re.compile(r"llvmpipe|softpipe|swrast|SwiftShader|Software Rasterizer|GDI Generic", re.IGNORECASE)


def _gl_renderer() -> str:
    """``GL_RENDERER`` of the context current on this thread ("" when it cannot be read: no
    context, or a system where mjrig does not look)."""
    if not sys.platform.startswith("linux"):
        return ""
    try:
        import ctypes

        gl = ctypes.CDLL("libGL.so.1")
        gl.glGetString.restype = ctypes.c_char_p
        gl.glGetString.argtypes = [ctypes.c_uint]
        name = gl.glGetString(0x1F01)  # GL_RENDERER
    except (OSError, AttributeError):
        return ""
    return name.decode(errors="replace") if name else ""


def _yield_cpu() -> None:
    """Lower the calling thread's scheduling priority to ``VIEW_NICE`` (Linux only: elsewhere a
    thread id is not a ``setpriority`` target). Never fails the viewer."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), VIEW_NICE))
    except OSError:
        pass


def _thread_clock() -> Callable[[], float] | None:
    """The calling thread's CPU time as a function (s), readable from any thread; None where the
    platform has no per-thread clock to read from another thread."""
    getid = getattr(time, "pthread_getcpuclockid", None)
    if getid is None:
        return None
    try:
        clock = getid(threading.get_ident())
        time.clock_gettime(clock)
    except (OSError, OverflowError):
        return None
    return lambda: time.clock_gettime(clock)


@dataclass
class ViewerWindow:
    """What mjrig knows of the viewer's GLFW window.

    ``geometry`` is the client area (x, y, width, height) in screen pixels, kept current by
    GLFW's position and framebuffer-size callbacks; ``drops`` holds dropped file paths.
    """

    handle: Any = None
    geometry: tuple[int, int, int, int] | None = None
    drops: queue.Queue[list[str]] = field(default_factory=queue.Queue)
    may_close: Callable[[], bool] | None = None
    """Asked (render thread) when the user closes the window; False keeps it open."""
    renderer: str = ""
    """The window's OpenGL renderer (``GL_RENDERER``, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)");
    empty when unknown."""
    problems: queue.Queue[str] = field(default_factory=queue.Queue)
    """One line per drop that could not be taken (its source went away, it offered no files)."""
    render_cpu: Callable[[], float] | None = None
    """The render thread's CPU time, s (``ViewHold.watch``); None where a thread's clock cannot be
    read (macOS). Raises ``OSError`` once the thread has ended."""
    _glfw: Any = None
    _drop_target: DropTarget | None = None

    @property
    def software(self) -> bool:
        """Whether the view is drawn on the CPU (Mesa's llvmpipe or softpipe, SwiftShader, Windows'
        GDI renderer): a virtual display, a remote desktop, a machine without a graphics driver."""
        return bool(_SOFTWARE_GL.search(self.renderer))

    def modifiers(self) -> int:
        """Modifier keys held now (MOD_* bits). Call on the render thread (key callbacks)."""
        g = self._glfw
        if g is None or self.handle is None:
            return 0
        mods = 0
        for bit, keys in (
            (MOD_SHIFT, (g.KEY_LEFT_SHIFT, g.KEY_RIGHT_SHIFT)),
            (MOD_CTRL, (g.KEY_LEFT_CONTROL, g.KEY_RIGHT_CONTROL)),
            (MOD_ALT, (g.KEY_LEFT_ALT, g.KEY_RIGHT_ALT)),
        ):
            if any(g.get_key(self.handle, k) == g.PRESS for k in keys):
                mods |= bit
        return mods

    def take_problem(self) -> str | None:
        """The next line about a drop that could not be taken, else None."""
        try:
            return self.problems.get_nowait()
        except queue.Empty:
            return None

    def close(self) -> None:
        """Stop answering drops (before the window goes)."""
        target, self._drop_target = self._drop_target, None
        if target is not None:
            target.close()

    def take_drop(self) -> list[str] | None:
        """The paths of the next file drop not yet taken, else None."""
        try:
            return self.drops.get_nowait()
        except queue.Empty:
            return None

    def _install(self, glfw: Any, handle: Any, geometry: tuple[int, int, int, int] | None) -> None:
        self._glfw, self.handle = glfw, handle
        # GLFW's late answer to a window that went (a drop's source) is one line in Status, never the end
        x_errors.forgive_gone(_x11_display(glfw), self.problems.put)
        glfw.set_drop_callback(handle, lambda _w, paths: self.drops.put([str(p) for p in paths]))
        glfw.set_window_pos_callback(handle, self._moved)
        glfw.set_framebuffer_size_callback(handle, self._resized)
        glfw.set_window_close_callback(handle, self._closing)
        self._answer_drops(glfw, handle)
        if geometry is not None:
            x, y, w, h = geometry
            glfw.set_window_size(handle, int(w), int(h))
            glfw.set_window_pos(handle, int(x), int(y))
        x, y = glfw.get_window_pos(handle)
        w, h = glfw.get_window_size(handle)
        self.geometry = (x, y, w, h)

    def _answer_drops(self, glfw: Any, handle: Any) -> None:
        """On X11, drops answered by ``DropTarget`` (at once, whatever the view is drawing); elsewhere,
        or without python-xlib, by GLFW's drop callback above."""
        if not sys.platform.startswith("linux"):
            return
        try:
            wid = int(glfw.get_x11_window(handle))
        except Exception:  # noqa: BLE001 - not an X11 window (Wayland): GLFW's callback it is
            return
        if not wid:
            return
        try:
            self._drop_target = DropTarget(
                wid, on_drop=lambda paths: self.drops.put(list(paths)), on_problem=self.problems.put
            )
        except Exception as exc:  # noqa: BLE001 - no python-xlib or no connection: GLFW's callback it is
            self._drop_target = None
            self.problems.put(
                f"file drops on the 3D view are answered by GLFW, between frames: {type(exc).__name__}: {exc}"
            )

    def _closing(self, window: Any) -> None:
        if self.may_close is not None and not self.may_close():
            self._glfw.set_window_should_close(window, False)

    def _moved(self, _window: Any, x: int, y: int) -> None:
        g = self.geometry or (0, 0, 0, 0)
        self.geometry = (x, y, g[2], g[3])

    def _resized(self, _window: Any, w: int, h: int) -> None:
        if w > 0 and h > 0:  # 0x0 while minimized
            g = self.geometry or (0, 0, 0, 0)
            self.geometry = (g[0], g[1], w, h)


def _x11_display(glfw: Any) -> int | None:
    """GLFW's Xlib connection (``Display*``), or None where GLFW is not on X11."""
    try:
        return int(glfw.get_x11_display() or 0) or None
    except Exception:  # noqa: BLE001 - Wayland, or a GLFW without the native functions
        return None


def launch(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    *,
    key_callback: Callable[[int], None] | None = None,
    geometry: tuple[int, int, int, int] | None = None,
    show_left_ui: bool = True,
    show_right_ui: bool = True,
) -> tuple[Any, ViewerWindow]:
    """``launch_passive`` plus the window: returns (handle, ViewerWindow).

    ``geometry`` (x, y, width, height of the client area, pixels) places the window as soon as
    it exists. If this MuJoCo builds its viewer differently, the viewer still opens and the
    ViewerWindow stays empty (no drops, no placement): degraded, never broken.
    """
    import glfw
    import mujoco.viewer as mv

    window = ViewerWindow()
    original = getattr(mv, "_Simulate", None)

    class _Hooked:
        """Stands in for ``_Simulate`` while one viewer is built: the window is current right
        after the real constructor, on the render thread."""

        MAX_GEOM = getattr(original, "MAX_GEOM", 10000)

        def __init__(self, real: Callable[..., Any]) -> None:
            self._real = real  # ``_Simulate`` itself

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            _yield_cpu()
            window.render_cpu = _thread_clock()
            sim = self._real(*args, **kwargs)
            try:
                handle = glfw.get_current_context()
                if handle:
                    window._install(glfw, handle, geometry)
                    window.renderer = _gl_renderer()
            except Exception:  # noqa: BLE001 - placement and drops are extras; the viewer must open
                window.handle = None
            return sim

    with _launch_lock:  # the module attribute is swapped for the duration of one launch
        if original is not None:
            mv._Simulate = _Hooked(original)
        try:
            handle = mv.launch_passive(
                model, data, key_callback=key_callback, show_left_ui=show_left_ui, show_right_ui=show_right_ui
            )
        finally:
            if original is not None:
                mv._Simulate = original
    return handle, window


def _simulate(viewer: Any) -> Any:
    try:
        return viewer._sim()
    except Exception:  # noqa: BLE001 - the simulate object is gone
        return None


def close_viewer(viewer: Any, *, timeout: float = 5.0) -> None:
    """Close the viewer window and wait until its render thread has let go of it.

    ``close()`` only asks; exiting the process while the render thread still tears down races
    with GLFW's termination at exit (a segfault). The simulate object dies when that thread ends.
    """
    viewer.close()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if _simulate(viewer) is None:
            return
        time.sleep(0.01)


def load_into_viewer(viewer: Any, model: mujoco.MjModel, data: mujoco.MjData) -> None:
    """Show another model in an open passive viewer (without closing its window).

    MuJoCo's render thread draws the first frame of the new model before ``load`` returns, with
    the viewer's camera and the overlay (``user_scn``) as the last ``sync()`` left them: set both
    for the new model and sync before calling this. The name handed to MuJoCo stays empty: a
    name other than the previous one makes MuJoCo put its own default camera on that frame.
    """
    sim = _simulate(viewer)
    if sim is not None:
        sim.load(model, data, "")


def describe_selection(model: mujoco.MjModel, data: mujoco.MjData, perturb: mujoco.MjvPerturb) -> str | None:
    """The viewer's selected point (double-click) as ``body:NAME@x,y,z``, or None."""
    body = int(perturb.select)
    if body <= 0 or body >= model.nbody:
        return None
    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or f"body{body}"
    x, y, z = (float(v) for v in perturb.localpos)
    return f"body:{name}@{x:.4g},{y:.4g},{z:.4g}"
