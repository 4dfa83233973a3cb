"""Bounds on what input may ask (CONTRACT 14): a count or a time that cannot finish is refused
with one line naming the estimate, exit 2, before any work starts and with nothing left behind
(no list of 2^40 trials, no results folder); a time that is not a finite number is refused; a
saved state (``--snapshot``) is an input no output may replace. In this process (``mjrig_here``):
each command ends on its input after building the rig once (about 1 s each)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.e2e_util import mjrig_here
from tests.sweep_util import BASE, write_scenario

pytestmark = pytest.mark.e2e

ESTIMATE = re.compile(r"[\d,]+ (trials|steps) of about [\d.e-]+ s each would take about [\d.,]+ (years|days)")
OPTIMIZE = """
[[metrics]]
name = "peak"
kind = "max"
signal = "Joints/slide_x:qpos"

[optimize]
minimize = "Metrics/peak"
trials = {trials}
[optimize.params]
k = {{ low = 100.0, high = 400.0 }}
"""


def _refused(r, *, where: str) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.rc == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r
    assert lines[0].startswith(f"mjrig: {where}"), lines
    return lines[0]


@pytest.mark.parametrize("sobol", [False, True], ids=["monte-carlo", "saltelli"])
def test_a_sweep_of_2_to_the_40_trials_is_refused_with_its_estimate(tmp_path: Path, sobol: bool) -> None:
    extra = 'sensitivity = "sobol"\n' if sobol else ""
    sweep = f"[sweep]\ntrials = {2**40}\n{extra}[sweep.params]\nk = {{ distribution = 'uniform', low = 100.0, high = 400.0 }}\n"
    path = write_scenario(tmp_path, sweep)
    out = tmp_path / "res.parquet"
    line = _refused(mjrig_here("sweep", path, "--out", out, "--workers", "2"), where=f"{path}: [sweep]: ")
    assert ESTIMATE.search(line) and "on 2 workers" in line and "finish in 30 days here" in line, line
    total = 2**40 * (3 if sobol else 1)  # a Saltelli design: n (d + 2) trials
    assert f"{total:,} trials" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], "a refused sweep leaves nothing"


def test_trials_on_the_command_line_are_bounded_too(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, "[sweep]\n[sweep.params]\nk = { values = [100.0, 200.0] }\n")
    r = mjrig_here("sweep", path, "--out", tmp_path / "res.parquet", "--trials", str(10**11))
    assert ESTIMATE.search(_refused(r, where="--trials: "))


def test_a_study_of_2_to_the_40_trials_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(BASE + OPTIMIZE.format(trials=2**40), encoding="utf-8")
    r = mjrig_here("optimize", path, "--out", tmp_path / "study.parquet")
    assert ESTIMATE.search(_refused(r, where=f"{path}: [optimize] trials: "))
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_run_that_cannot_finish_is_refused(tmp_path: Path) -> None:
    r = mjrig_here("run", "spring_mass", "--duration", "1e12", "--out", tmp_path / "x.parquet")
    assert ESTIMATE.search(_refused(r, where="--duration: "))
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("at", ["inf", "1e308", "-1", "nan"])
def test_an_operating_point_time_that_is_no_time_is_refused(at: str) -> None:
    r = mjrig_here("modes", "spring_mass", "--at", at)
    line = _refused(r, where="")
    assert "--at" in line, line


def test_an_operating_point_far_past_the_duration_asks_for_long(tmp_path: Path) -> None:
    line = _refused(mjrig_here("modes", "spring_mass", "--at", "51"), where="--at 51: ")
    assert "times the scenario's duration (5 s)" in line and "--long" in line, line
    line = _refused(mjrig_here("modes", "spring_mass", "--at", "1e12", "--long"), where="--at: ")
    assert ESTIMATE.search(line), line


@pytest.mark.parametrize(
    "command",
    [
        ("linearise", "spring_mass", "-o", "{snap}"),
        ("modes", "spring_mass", "--json", "{snap}"),
        ("bode", "spring_mass", "--input", "k", "--output", "Joints/slide_x:qpos", "--json", "{snap}"),
    ],
    ids=["linearise -o", "modes --json", "bode --json"],
)
def test_a_saved_state_is_never_replaced(tmp_path: Path, command: tuple[str, ...]) -> None:
    snap = tmp_path / "snap.npz"
    snap.write_bytes(b"a saved state")
    args = [a.format(snap=snap) for a in command] + ["--snapshot", str(snap)]
    line = _refused(mjrig_here(*args), where="")
    assert f"is the --snapshot state ({snap})" in line, line
    assert snap.read_bytes() == b"a saved state"
