"""Test-wide set-up: with no screen, MuJoCo must render offscreen through EGL. The backend is
fixed when mujoco is first imported, so this runs before any test module imports it."""
import os

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")

# Nothing a test runs may touch the user's real config (recent files, keys, window placement).
if "MJRIG_TEST_CONFIG" not in os.environ:
    import tempfile
    os.environ["MJRIG_TEST_CONFIG"] = tempfile.mkdtemp(prefix="mjrig-test-config-")
os.environ["XDG_CONFIG_HOME"] = os.environ["MJRIG_TEST_CONFIG"]

from pathlib import Path

import pytest

_GUI = Path(__file__).resolve().parent / "gui"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/gui drives the real app on a screen: marked ``gui``, so
    ``pytest -m "not gui"`` leaves them out."""
    for item in items:
        if _GUI in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.gui)
