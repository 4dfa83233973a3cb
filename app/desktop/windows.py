"""Where the two windows go: tiled over the screen's work area, or where the user left them.

On first start the 3D viewer takes the left part of the work area (the screen minus panels
and docks, as the window manager reports it) and the control panel the right part, both fully
on screen with room for the window manager's title bars. When the app closes it saves both
windows' placement in ``~/.config/mjrig/windows.json``; the next start on the same screen
puts them back there (a placement that no longer fits the screen is tiled afresh).

Geometries are client areas: (x, y, width, height) in screen pixels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mjrig.runtime.files.atomic_output import replace_text
from mjrig.settings.keys import config_dir

__all__ = ["Layout", "tile", "screen_workarea", "plan_layout", "save_layout", "FRAME_TOP", "FRAME_SIDE", "FRAME_BOTTOM"]

Rect = tuple[int, int, int, int]

FRAME_TOP = 30
"""Pixels left above each window for the window manager's title bar."""
FRAME_SIDE = 4
"""Pixels left on each side for borders."""
FRAME_BOTTOM = 8
"""Pixels left below each window for its bottom border (openbox draws a 5 px handle)."""


@dataclass(frozen=True)
class Layout:
    """Client rectangles of the viewer and the panel."""

    viewer: Rect
    panel: Rect
    screen: Rect
    saved: bool = False


def tile(workarea: Rect) -> Layout:
    """Viewer left, panel right, side by side over ``workarea`` without overlap."""
    x, y, w, h = workarea
    # a wide screen gives the panel room for controls beside plots (the plots a third of it or
    # more: ``desktop.app.controls_width``); a laptop stacks them
    panel_w = max(460, min(1100, round(w * (0.55 if w >= 1600 else 0.42))))
    frame_w = 2 * FRAME_SIDE
    viewer_w = max(320, w - panel_w - 2 * frame_w)
    client_h = max(240, h - FRAME_TOP - FRAME_BOTTOM)
    viewer = (x + FRAME_SIDE, y + FRAME_TOP, viewer_w, client_h)
    panel = (x + viewer_w + frame_w + FRAME_SIDE, y + FRAME_TOP, w - viewer_w - 2 * frame_w, client_h)
    return Layout(viewer=viewer, panel=panel, screen=workarea)


def screen_workarea() -> Rect | None:
    """The primary monitor's work area as the window manager reports it, or None (no GLFW/display)."""
    try:
        import glfw

        if not glfw.init():
            return None
        monitor = glfw.get_primary_monitor()
        if not monitor:
            return None
        x, y, w, h = glfw.get_monitor_workarea(monitor)
        return (int(x), int(y), int(w), int(h)) if w > 0 and h > 0 else None
    except Exception:  # noqa: BLE001 - no screen information: the caller uses defaults
        return None


def _inside(rect: Rect, area: Rect) -> bool:
    x, y, w, h = rect
    ax, ay, aw, ah = area
    return w >= 200 and h >= 150 and x >= ax and y >= ay and x + w <= ax + aw and y + h <= ay + ah


def _rect(saved: list[int]) -> Rect:
    """A saved (x, y, width, height) as a rectangle (px); ValueError unless it has 4 numbers."""
    x, y, w, h = (int(v) for v in saved)
    return (x, y, w, h)


def _path() -> Path:
    return config_dir() / "windows.json"


def plan_layout(workarea: Rect | None = None) -> Layout:
    """The saved placement if it fits this screen, else the tiled one."""
    area = workarea or screen_workarea() or (0, 0, 1280, 800)
    try:
        saved = json.loads(_path().read_text(encoding="utf-8"))
        viewer, panel = _rect(saved["viewer"]), _rect(saved["panel"])
        if tuple(saved.get("screen", ())) == tuple(area) and _inside(viewer, area) and _inside(panel, area):
            return Layout(viewer=viewer, panel=panel, screen=area, saved=True)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return tile(area)


def save_layout(layout: Layout, *, viewer: Rect | None, panel: Rect | None) -> None:
    """Remember where the user left the windows (missing ones keep the planned place)."""
    doc = {"screen": list(layout.screen), "viewer": list(viewer or layout.viewer), "panel": list(panel or layout.panel)}
    try:
        _path().parent.mkdir(parents=True, exist_ok=True)
        replace_text(_path(), json.dumps(doc))
    except OSError:
        pass  # a read-only config folder must not stop the app from closing
