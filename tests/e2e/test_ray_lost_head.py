"""A Ray head lost while ``optimize``, ``sweep`` or ``fit`` runs on it (CONTRACT 1, exit 5): the
command ends within 15 s with mjrig's one line and nothing before or after it (no line of Ray's
C++ client, no traceback), and what it finished is kept for the same command to go on.

The head is lost two ways in turn: its GCS server killed (the head stops answering), and its
GCS server and raylet killed together (the node is gone: Ray's client then ended the command
itself, exit 1 with nothing said). One core is kept busy meanwhile, as on a laptop doing other
work.

Slow: each run starts a real Ray head (about 10 s) and waits for a few trials, 25-40 s a run.
``MJRIG_LOST_HEAD_RUNS`` runs of each command, the two ways in turn (default 1: the node lost for
``optimize`` and ``sweep``, where Ray's client ended the command or wrote before mjrig, the GCS
server alone for ``fit``; 20 in a row each, a core busy, was the acceptance run)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_util import mjrig_popen
from test_fit_cli import _bench
from test_optimize_cli import RIG

from tests.sweep_util import ray_env, ray_head

RUNS = int(os.environ.get("MJRIG_LOST_HEAD_RUNS", "1"))
"""Runs of each command (each a fresh head); the ways of losing it alternate."""
KILLS = ("gcs_server|raylet", "gcs_server")
"""``pkill -f`` patterns: the head's GCS server with its raylet (the node gone), the GCS server alone."""
FIRST = {"optimize": 0, "sweep": 0, "fit": 1}
"""Each command's first way of losing the head (an index into ``KILLS``)."""

STUDY = (
    RIG.replace("trials = 40\n", "trials = 400\n")
    + """
[sweep]
trials = 400
[sweep.params]
k = { distribution = "uniform", low = 50.0, high = 500.0 }
"""
)
"""A 400-trial study and sweep of the spring-mass's stiffness: far longer than a run waits."""


def _rig(folder: Path, command: str) -> Path:
    if command == "fit":
        return _bench(folder)  # the fit CLI tests' bench and [fit]
    path = folder / "rig.toml"
    path.write_text(STUDY, encoding="utf-8")
    return path


def _finished(command: str, out: Path) -> int:
    """Trials (evaluations) the command has kept so far."""
    parts = out.with_name(out.name + ".parts")
    try:
        if command == "optimize":
            db = out.with_name("study.optuna.db")
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                return con.execute("SELECT COUNT(*) FROM trials WHERE state = 'COMPLETE'").fetchone()[0]
        name = "trials.jsonl" if command == "sweep" else "evals.jsonl"
        return len((parts / name).read_text(encoding="utf-8").splitlines())
    except (OSError, sqlite3.Error):
        return 0


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray head at a time: on one worker, in turn
@pytest.mark.parametrize("command", ["optimize", "sweep", "fit"])
def test_a_lost_ray_head_ends_the_command_with_exit_5_and_one_line(tmp_path, monkeypatch, command):
    for k, v in ray_env().items():
        monkeypatch.setenv(k, v)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for run in range(RUNS):
            folder = tmp_path / f"run{run}"
            folder.mkdir()
            rig, out = _rig(folder, command), folder / "study.parquet"
            with ray_head() as address:
                proc = mjrig_popen(
                    command,
                    rig,
                    "--out",
                    out,
                    "--ray",
                    address,
                    cwd=folder,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                deadline = time.monotonic() + 180
                while _finished(command, out) < 4 and time.monotonic() < deadline:
                    assert proc.poll() is None, (run, proc.communicate())
                    time.sleep(0.2)
                kill = KILLS[(FIRST[command] + run) % len(KILLS)]
                subprocess.run(["pkill", "-9", "-f", kill], check=False)
                killed = time.monotonic()
                _, err = proc.communicate(timeout=120)
                took = time.monotonic() - killed
            lines = [ln for ln in err.splitlines() if ln.strip()]
            said = (
                f"mjrig: --ray {address}: the Ray head stopped answering; every finished trial is kept: "
                "start the cluster again and run the same command to go on"
            )
            assert proc.returncode == 5 and took < 15 and lines == [said], (run, kill, proc.returncode, took, err)
            assert _finished(command, out) >= 4 and not out.exists(), (run, kill)
    finally:
        busy.kill()
        busy.wait()
