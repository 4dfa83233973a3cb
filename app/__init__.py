"""mjrig: a test rig for MuJoCo models (desktop app + headless runner)."""
__version__ = "0.1.0"
