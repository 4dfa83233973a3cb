"""mjrig: a test rig for MuJoCo models (desktop app + headless runner)."""

from mjrig.runtime.drawing.offscreen_gl import choose_offscreen_gl as _choose_offscreen_gl

try:
    _choose_offscreen_gl()  # before any mjrig module imports mujoco: see mjrig.runtime.drawing.offscreen_gl
except KeyboardInterrupt:  # Ctrl+C this early: one line and 130, as once a command runs
    import sys as _sys

    print("mjrig: interrupted", file=_sys.stderr)
    raise SystemExit(130) from None

__version__ = "0.1.0"
