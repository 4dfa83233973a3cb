"""Test-wide set-up: with no screen, MuJoCo must render offscreen through EGL. The backend is
fixed when mujoco is first imported, so this runs before any test module imports it."""
import os

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
