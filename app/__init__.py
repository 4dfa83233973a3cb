"""mjrig: a test rig for MuJoCo models (desktop app + headless runner)."""
from mjrig.offscreen_gl import choose_offscreen_gl as _choose_offscreen_gl

_choose_offscreen_gl()  # before any mjrig module imports mujoco: see mjrig.offscreen_gl

__version__ = "0.1.0"
