"""A private Xvfb screen for the GUI tests (started once per session, 1920x1080)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
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
