"""A private Xvfb screen for the GUI tests (started once per session, 1920x1080)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def _start_xvfb() -> tuple[subprocess.Popen, str]:
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    number = b""
    while not number.endswith(b"\n"):
        ready, _, _ = select.select([read_fd], [], [], 10.0)
        chunk = os.read(read_fd, 16) if ready else b""
        if not chunk:
            proc.kill()
            raise RuntimeError("Xvfb did not report a display number")
        number += chunk
    os.close(read_fd)
    return proc, f":{number.decode().strip()}"


@pytest.fixture(scope="session")
def xdisplay() -> Iterator[str]:
    """DISPLAY of a fresh Xvfb screen (skips when there is neither Xvfb nor a display)."""
    if shutil.which("Xvfb") is None:
        if not os.environ.get("DISPLAY"):
            pytest.skip("no Xvfb and no DISPLAY")
        yield os.environ["DISPLAY"]
        return
    proc, display = _start_xvfb()
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    os.environ.pop("MUJOCO_GL", None)
    try:
        yield display
    finally:
        # Close GLFW's connection before the server goes, or Xlib's IO-error handler ends the
        # process with status 1 when GLFW terminates at exit.
        if "glfw" in sys.modules:
            sys.modules["glfw"].terminate()
        proc.kill()
        proc.wait()
        if old is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = old


@pytest.fixture(scope="session")
def dpg_viewport(xdisplay: str) -> Iterator[None]:
    """One Dear PyGui context and viewport (1400x900) for the in-process widget tests of the whole
    session: Dear PyGui crashes when a second context is made in a process that destroyed one."""
    import dearpygui.dearpygui as dpg

    dpg.create_context()
    dpg.create_viewport(title="mjrig panels", width=1400, height=900, vsync=False)
    dpg.setup_dearpygui()
    dpg.show_viewport()
    try:
        yield
    finally:
        dpg.destroy_context()


def screenshot(display: str, name: str) -> Path:
    """Save the whole virtual screen (both windows) to tests/artifacts/NAME.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    subprocess.run(["import", "-display", display, "-window", "root", str(out)], check=True, timeout=30)
    return out


SCREENS_ENV = "MJRIG_GUI_SCREENS"
"""``both``: every test written for both screens (a ``size`` parameter of 1280x800 and 1920x1080)
runs on both; unset: on one of them (see ``pytest_collection_modifyitems``)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A GUI test written for a laptop's and a desktop's screen (parametrized by ``size``) runs on
    one of them, the same each run and about half the tests on each (by the test's name), so that
    both screens are covered at half the time; a test marked ``both_screens`` (a layout that
    differs between them) and every test under ``MJRIG_GUI_SCREENS=both`` run on both. A screen
    asked for by name (``test[1280x800]``, or ``-k``) runs whatever the choice."""
    if os.environ.get(SCREENS_ENV) == "both":
        return
    here = Path(__file__).resolve().parent
    by_test: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is None or "size" not in spec.params or item.get_closest_marker("both_screens"):
            continue
        if here not in Path(str(item.fspath)).resolve().parents:
            continue
        rest = tuple(sorted((k, repr(v)) for k, v in spec.params.items() if k != "size"))
        by_test.setdefault((item.nodeid.split("[")[0], repr(rest)), []).append(item)
    dropped = []
    for (name, _), group in by_test.items():
        if len(group) < 2:
            continue
        keep = group[zlib.crc32(name.encode()) % len(group)]
        dropped += [it for it in group if it is not keep]
    if dropped:
        gone = set(map(id, dropped))
        config.hook.pytest_deselected(items=dropped)
        items[:] = [it for it in items if id(it) not in gone]
