"""`mjrig optimize` as a user runs it (CONTRACT 7): the spring-mass's stiffness for a 2.0 Hz
natural frequency (k = m·(4π)²) on local workers and on a real local Ray head, requirements as
constraints, a study killed with SIGKILL and started again, no feasible trial, bad input."""

from __future__ import annotations

import math
import sqlite3

import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig, mjrig_popen, sigkill_once

from tests.sweep_util import C_PARAM, K_PARAM, ray_env, ray_head, spring_mass

K_2HZ = 1.0 * (4 * math.pi) ** 2  # N/m: sqrt(k/m)/2π = 2 Hz for m = 1 kg

RIG = f"""{spring_mass(duration=3.0, params=(K_PARAM, C_PARAM), damping='"c"')}
[[metrics]]
name = "f"
signal = "Joints/slide_x:qpos"
kind = "frequency"

[optimize]
minimize = "Metrics/f"
target = 2.0
trials = 40
seed = 3

[optimize.params]
k = {{ low = 50.0, high = 500.0 }}
"""


GENTLE = """
[[requirements]]
name = "gentle"
signal = "Joints/slide_x:qvel"
max = 1.5
"""
"""A requirement that holds the block's speed under 1.5 m/s."""


def study(tmp_path, text: str = RIG):
    path = tmp_path / "opt.toml"
    path.write_text(text, encoding="utf-8")
    return path


def best_line(stdout: str) -> str:
    return stdout.strip().splitlines()[-1]


def check_found_2hz(r, out) -> None:
    assert r.rc == 0, r
    line = best_line(r.stdout)
    assert line.startswith("best: trial ") and "|Metrics/f - 2| = " in line and " Hz, k = " in line, line
    k = float(line.rsplit("k = ", 1)[1])
    assert k == pytest.approx(K_2HZ, rel=0.01), (k, K_2HZ)
    df = pl.read_parquet(out)
    assert len(df) == 40 and df["trial"].to_list() == list(range(40))
    assert {"objective", "feasible", "Params/k:value", "Metrics/f:value"} <= set(df.columns)
    best = df.filter(pl.col("feasible")).sort("objective")[0]
    assert best["Params/k:value"][0] == pytest.approx(k, rel=1e-5)
    assert b"mjrig.optimize" in pq.read_schema(out).metadata
    assert (out.parent / "study.optuna.db").exists()
    best_toml = (out.parent / "study-best.toml").read_text()
    assert f"value = {best['Params/k:value'][0]!r}" in best_toml


def test_finds_the_stiffness_of_a_2_hz_spring_mass_on_two_workers(tmp_path):
    out = tmp_path / "study.parquet"
    r = mjrig("optimize", study(tmp_path), "--out", out, "--workers", "2")
    check_found_2hz(r, out)
    assert "wrote 40 trials" in r.stderr and "Traceback" not in r.stderr and "optuna" not in r.stderr.lower()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray head at a time: on one worker, in turn
def test_finds_it_on_a_real_local_ray_head_too(tmp_path, monkeypatch):
    """Slow (up to a minute): starts a real Ray head (about 10 s), after any other test's head
    has stopped (one at a time, see ``ray_head``), and runs a 40-trial study on it."""
    for k, v in ray_env().items():
        monkeypatch.setenv(k, v)
    out = tmp_path / "study.parquet"
    with ray_head() as address:
        r = mjrig("optimize", study(tmp_path), "--out", out, "--ray", address, timeout=600)
    check_found_2hz(r, out)


def test_requirements_are_constraints_the_best_violates_none(tmp_path):
    """Maximise the frequency with the swing's top speed held under 1.5 m/s: the speed is
    0.1 m x 2πf, so the best is near f = 2.39 Hz, not at the range's end (3.56 Hz)."""
    text = RIG.replace('minimize = "Metrics/f"\ntarget = 2.0', 'maximize = "Metrics/f"') + GENTLE
    out = tmp_path / "study.parquet"
    r = mjrig("optimize", study(tmp_path, text), "--out", out, "--workers", "2", "--trials", "30")
    assert r.rc == 0, r
    df = pl.read_parquet(out)
    assert (~df["feasible"]).sum() > 0 and df.filter(~pl.col("feasible"))["objective"].is_null().all()
    assert (df.filter(~pl.col("feasible"))["Requirements/gentle:pass"] == False).all()  # noqa: E712
    best = df.filter(pl.col("feasible")).sort("objective", descending=True)[0]
    assert best["Requirements/gentle:pass"][0] and best["Requirements/gentle:value"][0] <= 1.5
    f_limit = 1.5 / (0.1 * 2 * math.pi)
    assert best["objective"][0] <= f_limit * 1.01 and best["objective"][0] > 0.9 * f_limit
    assert f"= {best['objective'][0]:.6g} Hz" in best_line(r.stdout)


def test_no_feasible_trial_exits_4(tmp_path):
    text = (
        RIG
        + """
[[requirements]]
name = "impossible"
signal = "Joints/slide_x:qpos"
min = 1.0
"""
    )
    r = mjrig("optimize", study(tmp_path, text), "--out", tmp_path / "study.parquet", "--trials", "4")
    assert r.rc == 4 and best_line(r.stdout) == "no feasible trial", r
    assert len(pl.read_parquet(tmp_path / "study.parquet")) == 4


def finished(db) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("select count(*) from trial_user_attributes where key = 'mjrig.row'").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_a_study_killed_with_sigkill_continues_where_it_was(tmp_path):
    path, out = study(tmp_path, RIG.replace("duration = 3.0", "duration = 20.0")), tmp_path / "study.parquet"
    proc = mjrig_popen("optimize", path, "--out", out, "--workers", "1", start_new_session=True)
    db = tmp_path / "study.optuna.db"
    done = sigkill_once(proc, lambda: finished(db), 3, timeout=120, poll=0.05)
    assert 3 <= done < 40 and not out.exists()
    r = mjrig("optimize", path, "--out", out, "--workers", "2", "--trials", str(done + 4), timeout=300)
    assert r.rc == 0, r
    assert f"resuming: {done} of {done + 4} trials already done, running 4" in r.stderr, r.stderr
    df = pl.read_parquet(out)
    assert len(df) == done + 4 and df["trial"].n_unique() == done + 4
    # the trial the kill interrupted ran again under its number: no holes
    assert sorted(df["trial"].to_list()) == list(range(done + 4)), df["trial"].to_list()


BAD = [
    ('minimize = "Metrics/f"', 'minimize = "Metrics/ff"', "unknown metric", "Metrics/f"),
    ('minimize = "Metrics/f"\ntarget = 2.0', 'maximize = "Metrics/f"\ntarget = 2.0', "'target' goes with", ""),
    ("seed = 3", 'seed = 3\nsampler = "tpee"', "unknown sampler", "tpe"),
    ("k = { low = 50.0, high = 500.0 }", "kk = { low = 50.0, high = 500.0 }", "unknown param", "k"),
    ("k = { low = 50.0, high = 500.0 }", "k = { low = 500.0, high = 50.0 }", "must be below", ""),
    ("k = { low = 50.0, high = 500.0 }", "k = { low = 0.0, high = 500.0, log = true }", "log scale", ""),
    ("k = { low = 50.0, high = 500.0 }", "k = { low = 50.0, high = 9000.0 }", "outside the param's range", ""),
    ("trials = 40", "trials = 0", "whole number", ""),
]


@pytest.mark.parametrize("old, new, words, closest", BAD, ids=[b[2] for b in BAD])
def test_bad_optimize_fields_exit_2_with_one_line(tmp_path, old, new, words, closest):
    text = RIG.replace(old, new)
    r = mjrig("optimize", study(tmp_path, text), "--out", tmp_path / "study.parquet")
    assert r.rc == 2 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    line = r.err_lines[0]
    assert f"{tmp_path / 'opt.toml'}:" in line and "optimize" in line and words in line, line
    if closest:
        assert f"closest: {closest}" in line, line
    assert not (tmp_path / "study.optuna.db").exists()


def test_a_scenario_without_optimize_exits_2(tmp_path):
    text = RIG.split("[optimize]")[0]
    r = mjrig("optimize", study(tmp_path, text), "--out", tmp_path / "study.parquet")
    assert r.rc == 2 and "no [optimize] section" in r.stderr and len(r.err_lines) == 1, r


def test_more_trials_in_the_file_continue_the_study_another_seed_is_refused(tmp_path):
    out = tmp_path / "study.parquet"
    assert mjrig("optimize", study(tmp_path, RIG.replace("trials = 40", "trials = 3")), "--out", out).rc == 0
    r = mjrig("optimize", study(tmp_path, RIG.replace("trials = 40", "trials = 5")), "--out", out)
    assert r.rc == 0 and "resuming: 3 of 5 trials already done, running 2" in r.stderr, r
    r = mjrig("optimize", study(tmp_path, RIG.replace("seed = 3", "seed = 4")), "--out", out)
    assert r.rc == 2 and "holds a different study" in r.err_lines[0] and len(r.err_lines) == 1, r


@pytest.mark.parametrize("sampler", ["cmaes", "random"])
def test_every_sampler_runs_quietly(tmp_path, sampler):
    text = RIG.replace("seed = 3", f'seed = 3\nsampler = "{sampler}"').replace("trials = 40", "trials = 4") + GENTLE
    out = tmp_path / "study.parquet"
    r = mjrig("optimize", study(tmp_path, text), "--out", out)
    assert r.rc in (0, 4) and "Warning" not in r.stderr and "optuna" not in r.stderr.lower(), r
    assert len(pl.read_parquet(out)) == 4


def test_two_objectives_on_two_workers_end_with_the_pareto_line(tmp_path):
    """Peak spring tension (0.1·k, the block let go 0.1 m out) against the time to the far end of
    its swing (π/ω_d): `pareto: N trials: ...` names exactly the table's front, no best set-up."""
    from tests.long.test_study_pareto import study as pareto_study

    path = pareto_study(tmp_path, objectives='minimize = ["Metrics/peak", "Metrics/half_period"]', trials=16)
    out = tmp_path / "front.parquet"
    r = mjrig("optimize", path, "--out", out, "--workers", "2")
    assert r.rc == 0, r
    line = best_line(r.stdout)
    df = pl.read_parquet(out)
    front = df.filter(pl.col("pareto"))["trial"].to_list()
    assert line == f"pareto: {len(front)} trials: {', '.join(str(n) for n in sorted(front))}", line
    assert len(df) == 16 and "objective" not in df.columns and 0 < len(front) <= int(df["feasible"].sum())
    assert not (tmp_path / "front-best.toml").exists() and "Traceback" not in r.stderr
