"""Test-wide set-up: with no screen, MuJoCo must render offscreen through EGL. The backend is
fixed when mujoco is first imported, so this runs before any test module imports it."""

import os
import signal
from pathlib import Path

import pytest

# Ctrl+C as a person's terminal delivers it, however the suite was launched: a shell starts a
# background job (`cmd &`, a CI runner's detached step) with SIGINT ignored, which every process
# started from it inherits, so the stop tests' SIGINT would reach nothing. A handler set here
# (not an ignore) goes back to the default in every process this one starts.
signal.signal(signal.SIGINT, signal.default_int_handler)

if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")

# Nothing a test runs may touch the user's real config (recent files, keys, window placement).
# Each pytest-xdist worker gets a config folder of its own (workers inherit the controller's
# environment, so the controller's folder would otherwise be shared).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if "MJRIG_TEST_CONFIG" not in os.environ or _WORKER:
    import tempfile

    os.environ["MJRIG_TEST_CONFIG"] = tempfile.mkdtemp(prefix=f"mjrig-test-config-{_WORKER or 'main'}-")
os.environ["XDG_CONFIG_HOME"] = os.environ["MJRIG_TEST_CONFIG"]
# Compiled code (mjrig's callbacks, numba's cache) is kept in one cache folder of the test session,
# shared by its workers and the processes they start, never the user's.
if "MJRIG_TEST_CACHE" not in os.environ:
    import tempfile

    os.environ["MJRIG_TEST_CACHE"] = tempfile.mkdtemp(prefix="mjrig-test-cache-")
os.environ["XDG_CACHE_HOME"] = os.environ["MJRIG_TEST_CACHE"]


_HERE = Path(__file__).resolve().parent
LANES = {"unit": _HERE / "unit", "long": _HERE / "long", "e2e": _HERE / "e2e", "gui": _HERE / "gui"}
"""Each lane is a folder: a test file's lane is where it lives (see the lanes in docs/development.md)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its lane by the folder it lives in: ``unit`` (in-process: no
    subprocess, no window), ``long`` (in-process, seconds a test: fuzzing, stress, whole fits and
    studies), ``e2e`` (the CLI in subprocesses, Ray, wheels) or ``gui`` (the real
    app on a screen), so ``pytest -m unit`` runs one lane."""
    for item in items:
        parents = Path(str(item.fspath)).resolve().parents
        for lane, folder in LANES.items():
            if folder in parents:
                item.add_marker(getattr(pytest.mark, lane))
                break


_REPO = _HERE.parent
_ALLOWED = ("tests/artifacts/", ".pytest_cache/", ".hypothesis/")
"""What a test run may leave in the source tree: screenshots for people to look at, pytest's cache."""


def _untracked() -> set[str] | None:
    """Files and folders in the source tree that git does not track (ignored ones too), or None
    outside a git checkout."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--ignored", "--untracked-files=normal"],
            cwd=_REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return {
        line[3:]
        for line in out.stdout.splitlines()
        if line[:2] in ("??", "!!") and "__pycache__" not in line and ".egg-info" not in line
    }


def pytest_sessionstart(session: pytest.Session) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        session.config.stash[_BEFORE] = _untracked()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Tests never write into the source tree (only under tests/artifacts): a run that did fails."""
    before = session.config.stash.get(_BEFORE, None)
    if before is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    after = _untracked() or set()
    new = sorted(p for p in after - before if not p.startswith(_ALLOWED))
    if new:
        session.config.get_terminal_writer().line(f"tests wrote into the source tree: {', '.join(new)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_BEFORE = pytest.StashKey[set]()
