"""Test-wide set-up: with no screen, MuJoCo must render offscreen through EGL. The backend is
fixed when mujoco is first imported, so this runs before any test module imports it."""
import os

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")

# Nothing a test runs may touch the user's real config (recent files, keys, window placement).
# Each pytest-xdist worker gets a config folder of its own (workers inherit the controller's
# environment, so the controller's folder would otherwise be shared).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if "MJRIG_TEST_CONFIG" not in os.environ or (_WORKER and os.environ.get("MJRIG_TEST_CONFIG_OF") != _WORKER):
    import tempfile
    os.environ["MJRIG_TEST_CONFIG"] = tempfile.mkdtemp(prefix=f"mjrig-test-config-{_WORKER or 'main'}-")
    os.environ["MJRIG_TEST_CONFIG_OF"] = _WORKER or ""
os.environ["XDG_CONFIG_HOME"] = os.environ["MJRIG_TEST_CONFIG"]

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
LANES = {"unit": _HERE / "unit", "e2e": _HERE / "e2e", "gui": _HERE / "gui"}
"""Each lane is a folder: a test file's lane is where it lives (see the README's lanes)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its lane by the folder it lives in: ``unit`` (in-process: no
    subprocess, no window), ``e2e`` (the CLI in subprocesses, Ray, wheels) or ``gui`` (the real
    app on a screen), so ``pytest -m unit`` runs one lane."""
    for item in items:
        parents = Path(str(item.fspath)).resolve().parents
        for lane, folder in LANES.items():
            if folder in parents:
                item.add_marker(getattr(pytest.mark, lane))
                break
