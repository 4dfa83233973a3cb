"""Sweeps across processes: a sweep killed with SIGKILL resumes where it was, and a local sweep
equals the same sweep on a Ray head."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import polars as pl
import pytest

from mjrig.campaign.sweep import parts_dir, run_sweep
from mjrig.scenario.parse import load_scenario
from tests.sweep_util import done_trials, ray_env, ray_head, write_scenario
from tests.unit.test_sweep import MC

RESUME = """
import sys
from pathlib import Path
from mjrig.scenario.parse import load_scenario
from mjrig.campaign.sweep import run_sweep
run_sweep(load_scenario(sys.argv[1]), out=Path(sys.argv[2]), workers=1, lockstep=sys.argv[3] == "lockstep",
          duration=float(sys.argv[4]))
"""


@pytest.mark.parametrize("how, trials, duration", [("one by one", 12, 1.0), ("lockstep", 40, 30.0)])
def test_resume_after_sigkill_runs_only_the_missing_trials(tmp_path, how, trials, duration):
    """Killed after some rows reached the log (one by one: a row a trial; in lock-step: a batch
    of about half a second at a time), the same sweep started again runs only the rest."""
    path = write_scenario(tmp_path, f"[sweep]\n[sweep.params]\nk = {{ range = [100.0, 400.0], steps = {trials} }}\n")
    out = tmp_path / "res.parquet"
    proc = subprocess.Popen(
        [sys.executable, "-c", RESUME, str(path), str(out), how, str(duration)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    parts = parts_dir(out)
    deadline = time.monotonic() + 60
    while done_trials(parts) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = sorted(done_trials(parts, which=True))
    assert 3 <= len(done) < trials and not out.exists()
    with open(parts / "trials.jsonl", "a", encoding="utf-8") as f:
        f.write(f'{{"trial": {trials - 1}, "seed": 12')  # a row a kill cut short is dropped, not misread
    outcome = run_sweep(load_scenario(path), out=out, workers=2, duration=duration)
    assert sorted(outcome.ran) == [i for i in range(trials) if i not in done]
    fresh = run_sweep(load_scenario(path), out=tmp_path / "fresh.parquet", workers=1, lockstep=False, duration=duration)
    assert pl.read_parquet(out).equals(pl.read_parquet(fresh.path))


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray head at a time: on one worker, in turn
def test_local_and_ray_give_identical_results(tmp_path, monkeypatch):
    """Slow: starts a real Ray head (about 10 s), after any other test's head has stopped."""
    for k, v in ray_env().items():
        monkeypatch.setenv(k, v)
    paths = [
        write_scenario(tmp_path, MC),
        write_scenario(tmp_path, MC.replace("trials = 3", 'trials = 3\nsampler = "lhs"'), name="lhs.toml"),
    ]
    local = [
        pl.read_parquet(run_sweep(load_scenario(p), out=tmp_path / f"local-{p.stem}.parquet", workers=2).path)
        for p in paths
    ]
    assert not local[0].equals(local[1])  # the sampler changed the masses
    with ray_head() as address:
        for path, here in zip(paths, local):
            on_ray = run_sweep(load_scenario(path), out=tmp_path / f"ray-{path.stem}.parquet", ray=address)
            assert pl.read_parquet(on_ray.path).equals(here)
