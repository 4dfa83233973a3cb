"""The mouse on the live plots, told apart as a person means it: a click goes to the time under
the pointer; a drag or a Ctrl+wheel turn freezes the view so ImPlot's pan and zoom have it (the
wheel alone scrolls the panel past the plots); a
double-click gives the view back to the run (following it, y fitted).

Dear PyGui runs handler callbacks on its own thread, so the callbacks only note what happened
(press, release, double-click, wheel, each with the pointer's place) and ``poll`` decides on the
GUI thread, once a frame. A press becomes a click once the button is up where it went down and a
double-click's time has passed without a second press: the first press of a double-click, or of
a drag, must not move the run to another time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import dearpygui.dearpygui as dpg

__all__ = ["PlotMouse", "DOUBLE_CLICK_S", "STILL_PX"]

DOUBLE_CLICK_S = 0.35
"""A second press within this many seconds makes a double-click (Dear ImGui's is 0.30 s)."""
STILL_PX = 4.0
"""A press and release this close (px) are a click; farther apart, a drag."""

Point = tuple[float, float]


class PlotMouse:
    """Clicks, drags, double-clicks and wheel turns on the plots of ``plots()`` (unit -> (plot,
    x axis, y axis) ids). ``on_time(t)``: a click at simulated time ``t`` (s); ``on_freeze()``: a
    drag or a Ctrl+wheel turn began on a plot (stop following the run); ``on_follow()``: a
    double-click (follow the run again, y fitted)."""

    def __init__(
        self, *, on_time: Callable[[float], None], on_freeze: Callable[[], None], on_follow: Callable[[], None]
    ) -> None:
        self._on_time, self._on_freeze, self._on_follow = on_time, on_freeze, on_follow
        self.handlers: int | str = 0  # the item handler registry every plot is bound to
        self._press: tuple[float, int | str | None, float, Point] | None = None  # (s, plot, t under it, px)
        self._release: Point | None = None
        self._dragging = False
        self._double = False
        self._wheel = False

    def build(self) -> None:
        """The handlers (once, before the first plot is made)."""
        with dpg.item_handler_registry() as self.handlers:
            dpg.add_item_clicked_handler(dpg.mvMouseButton_Left, callback=self._pressed)
        with dpg.handler_registry():
            dpg.add_mouse_double_click_handler(dpg.mvMouseButton_Left, callback=self._doubled)
            dpg.add_mouse_release_handler(dpg.mvMouseButton_Left, callback=self._released)
            dpg.add_mouse_wheel_handler(callback=self._wheeled)

    # --- callbacks (Dear PyGui's thread): note, decide in poll ------------------------------
    def _pressed(self, sender: int | str, app_data: object) -> None:
        plot = app_data[1] if isinstance(app_data, (list, tuple)) and len(app_data) > 1 else None
        self._press = (time.monotonic(), plot, float(dpg.get_plot_mouse_pos()[0]), _pointer())
        self._release, self._dragging = None, False

    def _released(self, sender: int | str, app_data: object) -> None:
        if self._press is not None:
            self._release = _pointer()

    def _doubled(self, sender: int | str, app_data: object) -> None:
        self._double = True

    def _wheeled(self, sender: int | str, app_data: object) -> None:
        # Ctrl+wheel zooms (``PLOT_INPUT``); the wheel alone scrolls the panel and leaves the plots be
        self._wheel = self._wheel or dpg.is_key_down(dpg.mvKey_LControl) or dpg.is_key_down(dpg.mvKey_RControl)

    # --- the GUI thread ----------------------------------------------------------------------
    def poll(self, plots: dict[str, tuple[int | str, int | str, int | str]]) -> None:
        """Act on what the mouse did since the last frame (call once a frame)."""
        if self._double:
            self._double = False
            if any(dpg.is_item_hovered(p) for p, _, _ in plots.values()):
                self._press = None
                self._on_follow()
                return
        if self._wheel:
            self._wheel = False
            if any(dpg.is_item_hovered(p) for p, _, _ in plots.values()):
                self._on_freeze()
        press = self._press
        if press is None:
            return
        t0, plot, x, where = press
        if self._release is None:  # still held: a drag once it moves
            if not self._dragging and _apart(_pointer(), where) > STILL_PX:
                self._dragging = True
                self._on_freeze()
            return
        if self._dragging or _apart(self._release, where) > STILL_PX:
            self._press = None
            return
        if time.monotonic() - t0 < DOUBLE_CLICK_S:
            return  # a second press may still make it a double-click
        self._press = None
        axis = next((xa for p, xa, _ in plots.values() if p == plot), None)
        if axis is None and plots:
            axis = next(iter(plots.values()))[1]
        if axis is not None:
            lo, hi = dpg.get_axis_limits(axis)
            if lo <= x <= hi:  # the pointer was over the data (not a tick label, nor the legend)
                self._on_time(x)


def _pointer() -> Point:
    x, y = dpg.get_mouse_pos(local=False)
    return float(x), float(y)


def _apart(a: Point, b: Point) -> float:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))
