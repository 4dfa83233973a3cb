"""Pick MuJoCo's offscreen GL backend (``MUJOCO_GL``) before mujoco is first imported.

mujoco fixes its backend when it is imported, and with ``MUJOCO_GL`` unset on Linux it takes
GLFW, importing the ``glfw`` module even for a headless run on a machine with a screen. mjrig
renders offscreen only (videos, screenshots; the 3D viewer is MuJoCo's own window and does not
depend on this), so on Linux it asks for EGL, or OSMesa when EGL is missing, whether or not
there is a display. A ``MUJOCO_GL`` the user set is kept; with neither library present, or on
another system, mujoco's default stays.
"""

from __future__ import annotations

import os
import sys

__all__ = ["choose_offscreen_gl"]


def choose_offscreen_gl() -> str | None:
    """Set ``MUJOCO_GL`` to "egl" or "osmesa" if unset, on Linux, before mujoco loads; returns
    the value in force (None: mujoco's default)."""
    if "MUJOCO_GL" in os.environ or not sys.platform.startswith("linux") or "mujoco" in sys.modules:
        return os.environ.get("MUJOCO_GL")
    import ctypes.util

    for name, value in (("EGL", "egl"), ("OSMesa", "osmesa")):
        if ctypes.util.find_library(name):
            os.environ["MUJOCO_GL"] = value
            return value
    if not os.environ.get("DISPLAY"):
        os.environ["MUJOCO_GL"] = "egl"  # no screen, no library: fails clearly only if a video is asked for
        return "egl"
    return None
