"""Every frame a window shows, as fast as X hands them over: a grabber for flashes that last one
frame (a screenshot with ``import`` takes ~100 ms and misses them).

``FrameGrabber(display, wid)`` reads the window's pixels with libX11's ``XGetImage`` on its own
X connection, in a thread, keeping a frame only when it differs from the one before, with the
window's title at that moment. A software-rendered viewer on Xvfb swaps a frame every 10-40 ms;
one grab of a 1000x900 window takes a few ms, so consecutive frames are all caught.

An X error on a grab (BadMatch while the window is resized, or gone) skips that grab: libX11's
default handler would end the whole test process with exit(1), its message lost in pytest's
captured stderr.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Frame", "FrameGrabber"]


class _XImage(ctypes.Structure):
    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.POINTER(ctypes.c_ubyte)),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
    ]


@dataclass(frozen=True)
class Frame:
    """One distinct picture of the window: ``t`` (monotonic s) when grabbed, ``title`` then,
    ``rgb`` (H, W, 3) uint8."""

    t: float
    title: str
    rgb: np.ndarray


_ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


@_ERROR_HANDLER
def _ignore_x_error(_display: int, _event: int) -> int:
    """libX11 error handler: go on (the failed call returns nothing; the grab is skipped)."""
    return 0


class FrameGrabber:
    """Grab window ``wid`` on X display ``display`` (":N") from ``start()`` to ``stop()``."""

    def __init__(self, display: str, wid: int) -> None:
        self._x = ctypes.CDLL(ctypes.util.find_library("X11"))
        self._x.XOpenDisplay.restype = ctypes.c_void_p
        self._x.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self._x.XGetImage.restype = ctypes.POINTER(_XImage)
        self._x.XGetImage.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_ulong,
            ctypes.c_int,
        ]
        self._x.XDestroyImage.argtypes = [ctypes.POINTER(_XImage)]
        self._x.XFetchName.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_char_p)]
        self._x.XFree.argtypes = [ctypes.c_void_p]
        self._x.XCloseDisplay.argtypes = [ctypes.c_void_p]
        self._x.XSetErrorHandler.argtypes = [_ERROR_HANDLER]
        self._x.XSetErrorHandler.restype = ctypes.c_void_p
        self._x.XSetErrorHandler(_ignore_x_error)
        self._x.XGetGeometry.argtypes = (
            [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong)]
            + [ctypes.POINTER(ctypes.c_int)] * 2
            + [ctypes.POINTER(ctypes.c_uint)] * 4
        )
        self._dpy = self._x.XOpenDisplay(display.encode())
        if not self._dpy:
            raise RuntimeError(f"cannot open X display {display}")
        self.wid = wid
        self.frames: list[Frame] = []
        self.grabs = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="frame-grabber", daemon=True)

    def _size(self) -> tuple[int, int]:
        root = ctypes.c_ulong()
        x, y = ctypes.c_int(), ctypes.c_int()
        w, h, border, depth = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
        self._x.XGetGeometry(
            self._dpy,
            self.wid,
            ctypes.byref(root),
            ctypes.byref(x),
            ctypes.byref(y),
            ctypes.byref(w),
            ctypes.byref(h),
            ctypes.byref(border),
            ctypes.byref(depth),
        )
        return int(w.value), int(h.value)

    def title(self) -> str:
        name = ctypes.c_char_p()
        if not self._x.XFetchName(self._dpy, self.wid, ctypes.byref(name)) or not name.value:
            return ""
        text = name.value.decode(errors="replace")
        self._x.XFree(name)
        return text

    def grab(self) -> np.ndarray:
        """The window's pixels now, (H, W, 3) uint8 RGB."""
        w, h = self._size()
        img = self._x.XGetImage(self._dpy, self.wid, 0, 0, w, h, 0xFFFFFFFF, 2)  # ZPixmap
        if not img:
            raise RuntimeError("XGetImage failed")
        try:
            im = img.contents
            assert im.bits_per_pixel == 32, im.bits_per_pixel
            raw = np.ctypeslib.as_array(im.data, shape=(im.height * im.bytes_per_line,))
            bgrx = raw.reshape(im.height, im.bytes_per_line // 4, 4)[:, : im.width]
            return bgrx[:, :, 2::-1].copy()
        finally:
            self._x.XDestroyImage(img)

    def _run(self) -> None:
        last: np.ndarray | None = None
        while not self._stop.is_set():
            title = self.title()
            try:
                rgb = self.grab()
            except RuntimeError:  # an X error (the window resized or gone): the next grab
                time.sleep(0.005)
                continue
            self.grabs += 1
            if last is None or rgb.shape != last.shape or not np.array_equal(rgb, last):
                self.frames.append(Frame(time.monotonic(), title, rgb))
                last = rgb
            time.sleep(0.001)

    def start(self) -> FrameGrabber:
        self._thread.start()
        return self

    def stop(self) -> list[Frame]:
        """Stop grabbing (again: nothing more); the distinct frames seen, oldest first. Call it
        before the X server is closed, also when the test failed."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        if self._dpy:  # closed before the X server goes: a lost connection would exit(1) the process
            self._x.XCloseDisplay(self._dpy)
            self._dpy = None
        return self.frames
