"""Shared helpers of the end-to-end CLI tests: run ``python -m mjrig`` as a real subprocess.

A plain module (not conftest.py) so its name cannot clash with tests/unit/conftest.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import io
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import mujoco
import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "models"


def bundled_scenarios() -> list[Path]:
    """Every bundled rig's scenario, globbed at collection time (new rigs are picked up)."""
    return sorted(MODELS.glob("*.toml"))


def bundled_ids() -> list[str]:
    return [p.stem for p in bundled_scenarios()]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONSTARTUP", None)
    return env


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str

    @property
    def err_lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()]

    def __str__(self) -> str:  # shown by pytest on a failed assert
        return f"rc={self.rc}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


@functools.cache
def scratch() -> Path:
    """A working folder of this test process's own (what a command writes under the current
    folder lands there, never in the source tree)."""
    return Path(tempfile.mkdtemp(prefix="mjrig-e2e-work-"))


def python(
    *args: object,
    timeout: float = 120,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    prefix: Sequence[str] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> Result:
    """Run ``python ARGS`` (this interpreter) with no stdin in ``cwd`` (default: a scratch folder,
    see ``scratch``) and ``env`` (default: ``cli_env()``); waits up to ``timeout`` s and returns
    exit code and output. ``prefix`` is a command that runs it (``setpriv ... --``),
    ``preexec_fn`` runs in the child before it starts (see ``subprocess.Popen``)."""
    proc = subprocess.run(
        [*prefix, sys.executable, *map(str, args)],
        cwd=cwd or scratch(),
        env=cli_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=preexec_fn,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def mjrig(*args: object, timeout: float = 120, cwd: Path | None = None, **kw) -> Result:
    """Run ``python -m mjrig ARGS`` in ``cwd`` (default: a scratch folder, see ``scratch``);
    returns exit code and output. The other keywords are ``python``'s."""
    return python("-m", "mjrig", *args, timeout=timeout, cwd=cwd, **kw)


def mjrig_here(*args: object, cwd: Path | None = None) -> Result:
    """Run ``mjrig ARGS`` through the entry point ``python -m mjrig`` calls, in this test process,
    in ``cwd`` (default: a scratch folder); its exit code and output. For commands that end on
    bad input before anything is simulated: a new interpreter would add only its second of
    imports. (Anything about the process itself -- signals, exit, what reaches the terminal --
    goes through ``mjrig``.)"""
    from mjrig import entry

    out, err = io.StringIO(), io.StringIO()
    argv, here = sys.argv, os.getcwd()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    sys.argv = ["mjrig", *map(str, args)]
    os.chdir(cwd or scratch())
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = entry.main()
            except SystemExit as exc:  # argparse's usage errors
                rc = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = argv
        os.chdir(here)
        for s, h in handlers.items():
            signal.signal(s, h)
    return Result(rc, out.getvalue(), err.getvalue())


def python_popen(*args: object, cwd: Path | None = None, **kw) -> subprocess.Popen:
    """Start ``python ARGS`` with no stdin in ``cwd`` (default: a scratch folder) and
    ``cli_env()``; the other keywords are ``subprocess.Popen``'s."""
    return subprocess.Popen(
        [sys.executable, *map(str, args)], cwd=cwd or scratch(), env=cli_env(), stdin=subprocess.DEVNULL, **kw
    )


def mjrig_popen(*args: object, **kw) -> subprocess.Popen:
    """Start ``python -m mjrig ARGS``; the keywords are ``python_popen``'s."""
    return python_popen("-m", "mjrig", *args, **kw)


def sigkill_once(proc: subprocess.Popen, done: Callable[[], int], at_least: int, *, timeout: float, poll: float) -> int:
    """Wait until ``done()`` (how many trials have finished, say) reaches ``at_least``, ``timeout``
    s have passed or ``proc`` has ended, looking every ``poll`` s; then SIGKILL ``proc`` and every
    process of its session (start it with ``start_new_session=True``), reap it and return ``done()``."""
    deadline = time.monotonic() + timeout
    while done() < at_least and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(poll)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return done()


def on_terminal(*args: object, cwd: Path, columns: int = 0, timeout: float = 120) -> tuple[int, str]:
    """Run ``python ARGS`` with stderr on a pseudo-terminal (stdout to /dev/null); ``columns=0``
    leaves its window size unset (0 x 0, as a fresh pty and some CI consoles report), else sets it
    to ``columns`` x 24. Reads the terminal until the process has ended and nothing is left;
    returns the exit status (waited for up to ``timeout`` s) and what it wrote there."""
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = python_popen(*args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out, deadline = b"", time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:  # a process that never ends (or a child of it that keeps writing)
            proc.kill()
            proc.wait()
            os.close(master)
            raise AssertionError(f"still running after {timeout} s: {args}; it wrote {out.decode(errors='replace')!r}")
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=timeout)
    os.close(master)
    return proc.returncode, out.decode("utf-8", "replace")


def no_screen_env() -> dict[str, str]:
    """``cli_env()`` without DISPLAY and WAYLAND_DISPLAY: the app finds no screen."""
    env = cli_env()
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def video_stream(path: Path, entries: str, *, count_frames: bool = False) -> list[int]:
    """The first video stream's ``entries`` as ffprobe reads them (its names, comma-separated:
    ``"width,height"``), as integers in ffprobe's own order (width and height, in pixels, before
    ``nb_read_frames``); ``count_frames`` decodes every frame to count them."""
    out = subprocess.run(
        [
            shutil.which("ffprobe") or "ffprobe",
            "-v",
            "error",
            *(["-count_frames"] if count_frames else []),
            "-select_streams",
            "v:0",
            "-show_entries",
            f"stream={entries}",
            "-of",
            "csv=p=0",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [int(x) for x in out.strip().split(",")]


def load_model_quietly(path: Path) -> mujoco.MjModel:
    """Compile an MJCF in the test process without MuJoCo writing MUJOCO_LOG.TXT into the repo."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda msg: None)
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    finally:
        mujoco.set_mju_user_warning(previous)


def copy_rig(name: str, dest: Path) -> Path:
    """Copy bundled rig NAME (its .toml and .xml, plus any mesh/texture folder) into DEST."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in MODELS.glob(f"{name}.*"):
        shutil.copy2(f, dest / f.name)
    return dest / f"{name}.toml"


def require_rig(name: str) -> None:
    if not (MODELS / f"{name}.toml").is_file():
        pytest.skip(f"bundled rig {name} is not present")
