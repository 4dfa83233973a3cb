"""Shared helpers of the end-to-end CLI tests: run ``python -m mjrig`` as a real subprocess.

A plain module (not conftest.py) so its name cannot clash with tests/unit/conftest.py.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
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


def mjrig(*args: object, timeout: float = 120, cwd: Path | None = None) -> Result:
    """Run ``python -m mjrig ARGS`` in ``cwd`` (default: a scratch folder, see ``scratch``);
    returns exit code and output."""
    proc = subprocess.run(
        [sys.executable, "-m", "mjrig", *map(str, args)],
        cwd=cwd or scratch(),
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def mjrig_popen(*args: object, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mjrig", *map(str, args)], cwd=scratch(), env=cli_env(), stdin=subprocess.DEVNULL, **kw
    )


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
