"""`mjrig run --set/--report` (exit 4 with every file written) and `mjrig compare`, as a user runs them.

The rig is the bundled spring-mass: a 1 kg block, k = 200 N/m, c = 1 N·s/m, released 0.1 m
stretched, so q(t) ≈ -0.1 (1 - cos ωt) with ω = sqrt(k/m) and a period of 2π/ω.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import Result, copy_rig, mjrig

Q = "Joints/slide_x:qpos"


def one_line(r: Result, *words: str) -> str:
    assert r.rc == 2, r
    assert "Traceback" not in r.stderr + r.stdout, r
    assert len(r.err_lines) == 1, f"expected exactly one stderr line\n{r}"
    msg = r.err_lines[0]
    for w in words:
        assert w.lower() in msg.lower(), f"{w!r} not in: {msg}"
    return msg


def period(df: pl.DataFrame) -> float:
    """Mean time between upward zero crossings of the velocity (s)."""
    t, v = df["time"].to_numpy(), df["Joints/slide_x:qvel"].to_numpy()
    up = np.nonzero((v[:-1] < 0) & (v[1:] >= 0))[0]
    crossings = t[up] - v[up] * (t[up + 1] - t[up]) / (v[up + 1] - v[up])
    return float(np.mean(np.diff(crossings)))


@pytest.fixture
def rig(tmp_path: Path) -> Path:
    return copy_rig("spring_mass", tmp_path / "rig")


def test_set_changes_a_param_and_the_motion(rig: Path, tmp_path: Path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert mjrig("run", rig, "--duration", 2, "--out", a).rc == 0
    r = mjrig("run", rig, "--duration", 2, "--out", b, "--set", "k=800", "--set", "c=0.5")
    assert r.rc == 0, r
    da, db = pl.read_parquet(a), pl.read_parquet(b)
    assert set(db["Params/k:value"]) == {800.0} and set(db["Params/c:value"]) == {0.5}
    assert period(da) == pytest.approx(2 * math.pi / math.sqrt(200.0), rel=2e-3)
    assert period(db) == pytest.approx(2 * math.pi / math.sqrt(800.0), rel=2e-3)  # half the period
    meta = pq.read_schema(b).metadata
    assert json.loads(meta[b"mjrig.set"]) == {"k": 800.0, "c": 0.5}


def test_set_outside_the_range_is_clamped_with_one_warning(rig: Path, tmp_path: Path):
    out = tmp_path / "x.parquet"
    r = mjrig("run", rig, "--duration", 0.05, "--out", out, "--set", "k=9000")
    assert r.rc == 0, r
    warned = [ln for ln in r.err_lines if "--set" in ln]
    assert len(warned) == 1 and "clamped to 5000" in warned[0] and "[0, 5000]" in warned[0], r
    assert set(pl.read_parquet(out)["Params/k:value"]) == {5000.0}


@pytest.mark.parametrize(
    "arg, words",
    [
        ("kk=5", ("--set kk", "unknown param 'kk'", "closest: k")),
        ("k", ("--set", "expected NAME=VALUE", "'k'")),
        ("=5", ("--set", "expected NAME=VALUE")),
        ("k=stiff", ("--set", "not a number", "'stiff'")),
        ("k=nan", ("--set", "finite")),
    ],
)
def test_bad_set_is_one_line(rig: Path, tmp_path: Path, arg: str, words: tuple[str, ...]):
    out = tmp_path / "x.parquet"
    one_line(mjrig("run", rig, "--duration", 0.05, "--out", out, "--set", arg), *words)
    assert not out.exists()


def test_set_on_a_bare_model_names_no_params(tmp_path: Path):
    xml = copy_rig("spring_mass", tmp_path).with_suffix(".xml")
    one_line(mjrig("run", xml, "--duration", 0.05, "--set", "k=1"), "unknown param 'k'", "no params")


REQS = """
[[requirements]]
name = "stays_short"
signal = "Joints/slide_x:qpos"
min = -0.05
end = 1.0

[[requirements]]
name = "spring_force"
signal = "Loads/main_spring:fx"
max = 25.0

[[requirements]]
name = "settles"
signal = "Proximities/gap:distance"
final = 0.1
tolerance = 0.5
start = 0.2
end = 0.25
"""


def test_report_and_exit_4_with_every_file_written(rig: Path, tmp_path: Path):
    rig.write_text(rig.read_text(encoding="utf-8") + REQS, encoding="utf-8")
    out, video, report = tmp_path / "o" / "x.parquet", tmp_path / "o" / "x.gif", tmp_path / "o" / "report.json"
    r = mjrig("run", rig, "--duration", 0.3, "--out", out, "--video", video, "--report", report)
    assert r.rc == 4, r
    assert "Traceback" not in r.stderr
    failed = [ln for ln in r.err_lines if "failed:" in ln]
    assert len(failed) == 1 and "'stays_short'" in failed[0] and "first at t = 0.07" in failed[0], r
    assert video.is_file() and video.stat().st_size > 0
    df = pl.read_parquet(out)
    assert df.height == 300  # no stop_on: the whole run is recorded
    entries = json.loads(report.read_text(encoding="utf-8"))
    assert [e["name"] for e in entries] == ["stays_short", "spring_force", "settles"]
    assert all(set(e) == {"name", "signal", "pass", "value", "limit", "time"} for e in entries)
    short, force, settles = entries
    q, t = df[Q].to_numpy(), df["time"].to_numpy()
    first = int(np.argmax(q < -0.05))
    assert short == {
        "name": "stays_short",
        "signal": Q,
        "pass": False,
        "value": pytest.approx(q.min(), abs=1e-15),
        "limit": -0.05,
        "time": pytest.approx(t[first], abs=1e-15),
    }
    assert abs(short["time"] - math.pi / (3 * math.sqrt(200.0))) < 0.002  # the closed-form crossing, ±1 step
    fx = df["Loads/main_spring:fx"].to_numpy()
    assert force["pass"] is True and force["time"] is None and force["value"] == pytest.approx(fx.max(), abs=1e-12)
    assert force["limit"] == 25.0
    gap = df.filter((pl.col("time") - 0.25).abs() < 5e-4)["Proximities/gap:distance"][0]
    assert settles["pass"] is True and settles["value"] == pytest.approx(gap, abs=1e-12)
    assert settles["limit"] == pytest.approx(0.6 if gap > 0.1 else -0.4)
    passes = df["Requirements/stays_short:pass"].to_numpy()
    assert (passes[:first] == 1).all() and (passes[first:] == 0).all()
    assert set(df["Requirements/spring_force:pass"]) == {1.0}


def test_a_run_whose_requirements_hold_exits_0(rig: Path, tmp_path: Path):
    rig.write_text(rig.read_text(encoding="utf-8") + REQS.replace("min = -0.05", "min = -0.25"), encoding="utf-8")
    report = tmp_path / "report.json"
    r = mjrig("run", rig, "--duration", 0.3, "--out", tmp_path / "x.parquet", "--report", report)
    assert r.rc == 0, r
    assert [e["pass"] for e in json.loads(report.read_text(encoding="utf-8"))] == [True, True, True]
    r = mjrig("check", rig)
    assert r.rc == 0 and "3 requirements" in r.stdout, r


def test_stop_on_fail_ends_the_run_and_still_writes_everything(rig: Path, tmp_path: Path):
    rig.write_text(rig.read_text(encoding="utf-8") + REQS.replace("end = 1.0", 'stop_on = "fail"'), encoding="utf-8")
    out, report = tmp_path / "x.parquet", tmp_path / "r.json"
    r = mjrig("run", rig, "--duration", 1.0, "--out", out, "--report", report)
    assert r.rc == 4 and "stop_on ended the run at t = 0.07" in r.stderr, r
    entries = json.loads(report.read_text(encoding="utf-8"))
    assert pl.read_parquet(out)["time"].to_list()[-1] == entries[0]["time"]
    assert entries[2]["pass"] is False and entries[2]["value"] is None  # its window never came


# --- compare ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Recordings of 0.5 s: the rig twice, with k = 201, and at 500 samples/s."""
    folder = tmp_path_factory.mktemp("compare")
    rig = copy_rig("spring_mass", folder / "rig")
    rate = rig.with_name("rate.toml")
    rate.write_text(
        rig.read_text(encoding="utf-8").replace("[recording]\n", "[recording]\nrate = 500\n"), encoding="utf-8"
    )
    out = {name: folder / f"{name}.parquet" for name in ("a", "a2", "k201", "rate")}
    for name, scen, extra in (("a", rig, ()), ("a2", rig, ()), ("k201", rig, ("--set", "k=201")), ("rate", rate, ())):
        r = mjrig("run", scen, "--duration", 0.5, "--out", out[name], *extra)
        assert r.rc == 0, r
    return out


def test_compare_identical_runs_is_exit_0_with_a_line_per_signal(runs):
    r = mjrig("compare", runs["a"], runs["a2"])
    assert r.rc == 0, r
    cols = [c for c in pl.read_parquet_schema(runs["a"]) if c not in ("time", "wall_time")]
    lines = r.stdout.splitlines()
    assert len(lines) == len(cols) and all(ln.startswith("ok") for ln in lines)
    assert [ln.split()[1] for ln in lines] == cols


def test_compare_beyond_and_within_tolerance(runs):
    a, b = pl.read_parquet(runs["a"]), pl.read_parquet(runs["k201"])
    d = np.abs(a[Q].to_numpy() - b[Q].to_numpy())
    worst, at = float(d.max()), float(a["time"][int(d.argmax())])
    assert worst > 1e-5
    r = mjrig("compare", runs["a"], runs["k201"])
    assert r.rc == 4, r
    (line,) = [ln for ln in r.stdout.splitlines() if f" {Q} " in ln]
    assert line.startswith("FAIL") and f"max |a-b| = {worst:.6g} at t = {at:.6g} s" in line
    assert any(ln.startswith("ok") and "Params/c:value" in ln for ln in r.stdout.splitlines())
    within = mjrig(
        "compare", runs["a"], runs["k201"], "--signals", "Joints/*:qpos", "--rtol", 0, "--atol", worst * 1.01
    )
    assert within.rc == 0 and len(within.stdout.splitlines()) == 1, within
    beyond = mjrig(
        "compare", runs["a"], runs["k201"], "--signals", "Joints/*:qpos", "--rtol", 0, "--atol", worst * 0.99
    )
    assert beyond.rc == 4, beyond
    rel = mjrig(
        "compare",
        runs["a"],
        runs["k201"],
        "--signals",
        "Joints/*:qpos",
        "--signals",
        "Params/c:*",
        "--atol",
        0,
        "--rtol",
        10.0,
    )
    assert rel.rc == 0 and len(rel.stdout.splitlines()) == 2, rel


def test_compare_interpolates_b_on_as_time_base(runs):
    every, rate = pl.read_parquet(runs["a"]), pl.read_parquet(runs["rate"])
    assert rate.height == 250 and every.height == 500
    r = mjrig("compare", runs["rate"], runs["a"], "--signals", Q)  # B's samples include A's times: exact
    assert r.rc == 0 and "max |a-b| = 0 " in r.stdout, r
    r = mjrig("compare", runs["a"], runs["rate"], "--signals", Q)  # B interpolated between its samples
    assert r.rc == 4, r
    ta, tb = every["time"].to_numpy(), rate["time"].to_numpy()
    both = ta <= tb[-1] + 1e-9  # A's last step lies past B's last sample: not compared
    expected = np.interp(ta[both], tb, rate[Q].to_numpy())
    d = np.abs(every[Q].to_numpy()[both] - expected)
    assert f"max |a-b| = {d.max():.6g}" in r.stdout, r
    assert f"not compared: {tb[-1]:.6g}..{ta[-1]:.6g} s (only in a.parquet)" in r.stderr, r


def test_compare_bad_input_is_one_line(runs, tmp_path: Path):
    text = tmp_path / "notes.parquet"
    text.write_text("not parquet", encoding="utf-8")
    other = tmp_path / "other.parquet"
    pl.DataFrame({"time": [0.0, 1.0], "Foo/bar:x": [1.0, 2.0]}).write_parquet(other)
    timeless = tmp_path / "timeless.parquet"
    pl.DataFrame({"x": [1.0]}).write_parquet(timeless)
    a = runs["a"]
    one_line(mjrig("compare", a, tmp_path / "missing.parquet"), "B", "not found", "missing.parquet")
    one_line(mjrig("compare", tmp_path / "missing.parquet", a), "A", "not found")
    one_line(mjrig("compare", a, text), "not a Parquet recording")
    one_line(mjrig("compare", timeless, a), "not an mjrig recording", "time")
    one_line(mjrig("compare", a, other), "no signal in common")
    one_line(
        mjrig("compare", a, runs["a2"], "--signals", "Joints/slide_x:qpso"),
        "--signals",
        "matches no signal",
        "closest: Joints/slide_x:qpos",
    )
    one_line(mjrig("compare", a, runs["a2"], "--rtol", "-1"), "--rtol", ">= 0")
    one_line(mjrig("compare", a, runs["a2"], "--atol", "tiny"), "--atol", "not a number")
    one_line(mjrig("compare", a), "the following arguments are required")
