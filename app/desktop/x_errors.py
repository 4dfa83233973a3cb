"""An X error about a window that is gone is one line, never the end of the app (X11 only).

Xlib's default error handler prints the error and exits the process. Some of what the app's
windows send fails through no fault of theirs: GLFW's answer to a drag-and-drop whose source (a
file manager, a drag tool) closed its window meanwhile is ``BadWindow`` from ``X_SendEvent``
(measured: the app ended with "X Error of failed request: BadWindow", exit 1). The X server has
already dropped such a request and nothing of the app's state depends on it.

A process-wide handler (``XSetErrorHandler``) cannot be kept: the GLFW inside Dear PyGui (3.3)
puts Xlib's fatal default back on every frame of the panel (``glfwGetWindowAttrib(GLFW_HOVERED)``
checks its call with a handler of its own and then sets none; seen with gdb). So ``forgive_gone``
hooks one *connection* instead: Xlib turns an error code into an error event through the
display's table of converters (``XESetWireToError``) before any handler is called, and a
converter that answers False drops the error there, however it arrived (an extension's
``XESetError`` hook would be asked only about errors that come while a reply is awaited, not
those read with events, which is how GLFW's late answers come back). The hook takes ``BadWindow``
alone (a window that went; the app's own windows never go under it), writes one line to ``sink``
and leaves every other error to whoever checks for it (GLFW's own checks, Xlib's default).

Threading: install on any thread (Xlib locks the display); the hook runs on the thread whose call
read the error (the viewer's render thread, the panel's main thread) while Xlib holds that
display's lock: ``sink`` must not use the display, and must be safe from any thread.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["forgive_gone", "current_glx_display", "describe"]

BAD_WINDOW = 3
"""X's error code for a window id that names no window (any more)."""


class _XErrorEvent(ctypes.Structure):
    """``XErrorEvent`` (Xlib.h): the error as Xlib unpacked it, as the hook receives it."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("resourceid", ctypes.c_ulong),
        ("serial", ctypes.c_ulong),
        ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte),
        ("minor_code", ctypes.c_ubyte),
    ]


_HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_XErrorEvent), ctypes.c_void_p)
"""``Bool (*)(Display*, XErrorEvent*, xError*)``: False drops the error before any handler sees it."""

_REQUESTS = {
    15: "X_QueryTree",
    18: "X_ChangeProperty",
    19: "X_DeleteProperty",
    20: "X_GetProperty",
    25: "X_SendEvent",
    38: "X_QueryPointer",
    40: "X_TranslateCoords",
}

_hooked: dict[int, object] = {}
"""Display pointer -> its hook (kept referenced: Xlib calls it for as long as the display lives)."""


def describe(error_code: int, request_code: int, resource: int) -> str:
    """One line for an X error: ``BadWindow from X_SendEvent (window 0xa00000)``."""
    what = "BadWindow" if error_code == BAD_WINDOW else f"X error {error_code}"
    request = _REQUESTS.get(request_code, f"request {request_code}")
    return f"{what} from {request} (window {resource:#x})"


def _x11() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except OSError:
        return None


def forgive_gone(display: int | None, sink: Callable[[str], None]) -> bool:
    """Make ``BadWindow`` on the Xlib connection ``display`` (a ``Display*``) one line to ``sink``
    instead of the end of the process; False where there is nothing to hook (no display, no libX11).
    Safe to call twice for one display (the first hook stays)."""
    if not display:
        return False
    if display in _hooked:
        return True
    x11 = _x11()
    if x11 is None:
        return False

    def hook(
        _display: int | None, event: Any, _wire: int | None
    ) -> int:  # ctypes: POINTER(_XErrorEvent), no public type
        e = event.contents
        try:
            sink(f"ignored an X error: {describe(e.error_code, e.request_code, e.resourceid)}")
        except Exception:  # noqa: BLE001 - the hook must answer; a line lost is the lesser harm
            pass
        return 0  # dropped: no handler, fatal or not, sees it

    callback = _HOOK(hook)
    x11.XESetWireToError.restype = ctypes.c_void_p
    x11.XESetWireToError.argtypes = [ctypes.c_void_p, ctypes.c_int, _HOOK]
    x11.XESetWireToError(ctypes.c_void_p(display), BAD_WINDOW, callback)
    _hooked[display] = callback
    return True


def current_glx_display() -> int | None:
    """The Xlib connection of the OpenGL context current on this thread (``glXGetCurrentDisplay``):
    Dear PyGui's, on the panel's thread once its viewport is shown; None without one."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        gl = ctypes.CDLL(ctypes.util.find_library("GL") or "libGL.so.1")
    except OSError:
        return None
    gl.glXGetCurrentDisplay.restype = ctypes.c_void_p
    gl.glXGetCurrentDisplay.argtypes = []
    return gl.glXGetCurrentDisplay() or None
