"""`mjrig sweep` as a user runs it: locally, resumed after SIGKILL, on a real local Ray head, and
every bad new field refused with one line and exit 2."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import Result, mjrig, mjrig_popen, sigkill_once

from tests.sweep_util import done_trials, ray_env, ray_head, write_scenario

GRID = (
    "[sweep]\nseed = 5\ntrials = 2\n[sweep.params]\nk = { values = [100.0, 400.0] }\n"
    'mass = { distribution = "truncated_normal", mean = 1.0, std = 0.1, low = 0.9, high = 1.1 }\n'
)


def one_line(r: Result, *words: str) -> str:
    assert r.rc == 2, r
    assert "Traceback" not in r.stderr + r.stdout, r
    assert len(r.err_lines) == 1, f"expected exactly one stderr line\n{r}"
    for w in words:
        assert w.lower() in r.err_lines[0].lower(), f"{w!r} not in: {r.err_lines[0]}"
    return r.err_lines[0]


def test_sweep_local_writes_one_row_per_trial_and_recordings(tmp_path):
    path = write_scenario(tmp_path, GRID, record=True)
    r = mjrig("sweep", path, "--out", tmp_path / "res.parquet", "--workers", "2")
    assert r.rc == 0, r
    assert "wrote 4 trials" in r.stderr
    df = pl.read_parquet(tmp_path / "res.parquet")
    assert df.columns == [
        "trial",
        "seed",
        "Params/k:value",
        "Params/c:value",
        "Params/mass:value",
        "status",
        "message",
        "Requirements/travel:pass",
        "Requirements/travel:value",
    ]
    assert df["trial"].to_list() == [0, 1, 2, 3]
    assert set(df["status"].to_list()) <= {"pass", "fail"}
    assert all(0.9 <= m <= 1.1 for m in df["Params/mass:value"])
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == [f"trial-{i}.parquet" for i in range(4)]
    assert b"mjrig.sweep" in pq.read_schema(tmp_path / "res.parquet").metadata
    again = mjrig("sweep", path, "--out", tmp_path / "again.parquet", "--workers", "1")
    assert again.rc == 0 and pl.read_parquet(tmp_path / "again.parquet").equals(df), again


def test_sweep_killed_and_started_again_runs_only_the_missing_trials(tmp_path):
    """Trials of 30 s: in lock-step, rows reach the log a batch of about half a second at a time."""
    path = write_scenario(tmp_path, "[sweep]\n[sweep.params]\nk = { range = [100.0, 400.0], steps = 40 }\n")
    path.write_text(path.read_text().replace("duration = 1.0", "duration = 30.0"))
    out = tmp_path / "res.parquet"
    proc = mjrig_popen("sweep", path, "--out", out, "--workers", "1", start_new_session=True)
    parts = tmp_path / "res.parquet.parts"
    done = sigkill_once(proc, lambda: done_trials(parts), 2, timeout=60, poll=0.01)
    assert 2 <= done < 40
    r = mjrig("sweep", path, "--out", out, "--workers", "2")
    assert r.rc == 0, r
    assert f"resuming: {done} of 40 trials already done, running {40 - done}" in r.stderr
    assert f"ran {40 - done} now" in r.stderr
    assert pl.read_parquet(out)["trial"].to_list() == list(range(40))
    assert not parts.exists()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray head at a time: on one worker, in turn
def test_sweep_on_a_real_local_ray_head_matches_local(tmp_path, monkeypatch):
    """Slow: starts a real Ray head (about 10 s), after any other test's head has stopped."""
    for k, v in ray_env().items():
        monkeypatch.setenv(k, v)  # the CLI subprocess inherits it
    path = write_scenario(tmp_path, GRID + SENSORS)
    local = mjrig("sweep", path, "--out", tmp_path / "local.parquet", "--workers", "2")
    assert local.rc == 0, local
    with ray_head() as address:
        r = mjrig("sweep", path, "--out", tmp_path / "ray.parquet", "--ray", address, timeout=300)
    assert r.rc == 0, r
    assert pl.read_parquet(tmp_path / "ray.parquet").equals(pl.read_parquet(tmp_path / "local.parquet"))
    for i in range(4):  # every row of each trial's recording, the first one's accelerometer included
        a, b = (pl.read_parquet(tmp_path / run / f"trial-{i}.parquet").drop("wall_time") for run in ("ray", "local"))
        assert a.equals(b), i


SENSORS = '\n[recording]\npath = "unused.parquet"\nsignals = ["joints", "sensors", "params"]\n'


def test_a_trials_recording_is_a_fresh_run_of_its_params_whatever_its_worker_ran(tmp_path):
    """Six trials on two worker processes, each recorded: every row of each, the first one's
    accelerometer included (-k 0.1 / m at t = 0, different in each trial), is what a fresh
    ``mjrig run --set`` of the trial's params records (about 15 s: seven processes)."""
    sweep = "[sweep]\n[sweep.params]\nk = { values = [100.0, 250.0, 400.0] }\nmass = { values = [0.5, 3.0] }\n"
    path = write_scenario(tmp_path, SENSORS + sweep.replace("[sweep]\n", "[sweep]\nseed = 1\n"))
    path.write_text(path.read_text().replace("duration = 1.0", "duration = 0.02"))
    r = mjrig("sweep", path, "--out", tmp_path / "res.parquet", "--workers", "2")
    assert r.rc == 0, r
    results = pl.read_parquet(tmp_path / "res.parquet")
    firsts = set()
    for row in results.iter_rows(named=True):
        k, mass = row["Params/k:value"], row["Params/mass:value"]
        fresh = tmp_path / f"fresh-{row['trial']}.parquet"
        one = mjrig("run", path, "--set", f"k={k!r}", "--set", f"mass={mass!r}", "--out", fresh)
        assert one.rc == 0, one
        a = pl.read_parquet(tmp_path / "res" / f"trial-{row['trial']}.parquet").drop("wall_time")
        b = pl.read_parquet(fresh).drop("wall_time")
        assert a["Sensors/block_acc:0"][0] == pytest.approx(-k * 0.1 / mass, rel=1e-9), row
        assert a.equals(b), [(c, a[c][0], b[c][0]) for c in a.columns if a[c][0] != b[c][0]]
        firsts.add(a["Sensors/block_acc:0"][0])
    assert len(firsts) == 6


BAD = [
    ("k = { values = [] }", "values"),
    ("k = { range = [1.0, 2.0], steps = 1 }", "steps"),
    ('mass = { distribution = "normal", mean = 1.0, std = -0.1 }', "std"),
    ('mass = { distribution = "uniform", low = 2.0, high = 1.0 }', "low"),
    ('mass = { distribution = "truncated_normal", mean = 1.0, std = 0.1, low = 2.0, high = 1.0 }', "low"),
    ('mass = { distribution = "lognormal", mu = 0.0, sigma = -1.0 }', "sigma"),
    ('mass = { distribution = "gauss", mean = 1.0, std = 0.1 }', "unknown distribution"),
    ("stiffness = { values = [1.0] }", "unknown param"),
    ("k = { values = [1.0], range = [1.0, 2.0] }", "exactly one"),
    ("k = { values = [99999.0] }", "outside"),
]


@pytest.mark.parametrize("entry, words", BAD, ids=[w for _, w in BAD])
def test_bad_sweep_fields_exit_2_with_one_line(tmp_path, entry, words):
    path = write_scenario(tmp_path, f"[sweep]\n[sweep.params]\n{entry}\n")
    msg = one_line(mjrig("sweep", path, "--out", tmp_path / "res.parquet"), words)
    assert f"{path}:" in msg and "sweep.params" in msg
    assert not (tmp_path / "res.parquet.parts").exists()


def test_an_unknown_sampler_exits_2_naming_the_line_and_the_closest(tmp_path):
    path = write_scenario(tmp_path, '[sweep]\nsampler = "lhc"\n[sweep.params]\nk = { values = [100.0] }\n')
    msg = one_line(mjrig("sweep", path, "--out", tmp_path / "res.parquet"), "unknown sampler", "lhs")
    line = path.read_text().splitlines().index('sampler = "lhc"') + 1
    assert f"{path}:{line}:" in msg and "sweep.sampler" in msg


def test_bad_sweep_command_lines_exit_2_with_one_line(tmp_path):
    path = write_scenario(tmp_path, GRID)
    one_line(mjrig("sweep", path, "--out", tmp_path / "r.parquet", "--ray", "127.0.0.1:9"), "--ray", "127.0.0.1:9")
    one_line(mjrig("sweep", path, "--out", tmp_path / "r.parquet", "--workers", "0"), "--workers")
    one_line(mjrig("sweep", path, "--out", tmp_path / "r.parquet", "--seed", "-1"), "--seed")
    one_line(
        mjrig("sweep", write_scenario(tmp_path, "", name="plain.toml"), "--out", tmp_path / "r.parquet"), "no [sweep]"
    )
    one_line(
        mjrig(
            "sweep", write_scenario(tmp_path, "[sweep]\ntrials = 0\n", name="t.toml"), "--out", tmp_path / "r.parquet"
        ),
        "trials",
    )
