"""``mjrig run|check|sweep ... --junit OUT.xml`` as a CI server reads it (``junitparser``): one test
per requirement (per trial and requirement for a sweep, its params as properties), a failure with
the first violation's time and value, exit codes unchanged; bad input one line, exit 2 or 5, no file.

The rig is the bundled spring-mass: a 1 kg block, k = 200 N/m, released 0.1 m stretched, so
q(t) ≈ -0.1 (1 - cos ωt), ω = sqrt(k/m): it first goes below -0.05 m at ωt = π/3.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import polars as pl
import pytest
from e2e_util import Result, cli_env, copy_rig, mjrig, mjrig_here
from junitparser import Error, Failure, JUnitXml, Properties, TestCase, TestSuite
from test_requirements_cli import REQS  # noqa: E402

from tests.sweep_util import write_scenario as sweep_scenario

# REQS (test_requirements_cli): ``stays_short`` fails (first at t = π/(3ω) ≈ 0.074 s), the other two pass.


def one_line(r: Result, rc: int, *words: str) -> str:
    assert r.rc == rc, r
    assert "Traceback" not in r.stderr + r.stdout, r
    assert len(r.err_lines) == 1, f"expected exactly one stderr line\n{r}"
    for w in words:
        assert w.lower() in r.err_lines[0].lower(), f"{w!r} not in: {r.err_lines[0]}"
    return r.err_lines[0]


def suite_of(path: Path) -> TestSuite:
    """The one testsuite of the JUnit file at ``path``."""
    (suite,) = list(JUnitXml.fromfile(str(path)))
    return suite


def cases(suite: TestSuite) -> dict[str, TestCase]:
    return {c.name: c for c in suite}


@pytest.fixture
def rig(tmp_path: Path) -> Path:
    scenario = copy_rig("spring_mass", tmp_path / "rig")
    scenario.write_text(scenario.read_text(encoding="utf-8") + REQS, encoding="utf-8")
    return scenario


def test_run_writes_a_failure_with_the_first_violation_and_still_exits_4(rig: Path, tmp_path: Path):
    junit, report = tmp_path / "ci" / "deep" / "junit.xml", tmp_path / "report.json"  # folders made, as --report's
    r = mjrig("run", rig, "--duration", 0.3, "--out", tmp_path / "x.parquet", "--report", report, "--junit", junit)
    assert r.rc == 4, r
    assert f"wrote 3 JUnit tests to {junit}" in r.stderr
    suite = suite_of(junit)
    assert (suite.name, suite.tests, suite.failures, suite.errors) == ("mjrig run spring_mass", 3, 1, 0)
    by_name = cases(suite)
    assert list(by_name) == ["stays_short", "spring_force", "settles"]
    assert {c.classname for c in suite} == {"spring_mass"}
    times = [c.time for c in suite]
    assert times[0] > 0 and len(set(times)) == 1  # the run's wall time, split evenly
    assert sum(times) == pytest.approx(suite.time, abs=2e-3)
    assert by_name["spring_force"].is_passed and by_name["settles"].is_passed
    (failure,) = by_name["stays_short"].result
    assert isinstance(failure, Failure) and failure.type == "requirement"
    entry = json.loads(report.read_text(encoding="utf-8"))[0]
    assert abs(entry["time"] - math.pi / (3 * math.sqrt(200.0))) < 0.002  # the closed-form crossing, ±1 step
    df = pl.read_parquet(tmp_path / "x.parquet")
    q_then = df.filter(pl.col("time") == entry["time"])["Joints/slide_x:qpos"][0]
    assert q_then < -0.05
    assert failure.message == (
        f"Joints/slide_x:qpos = {q_then:.6g} m at t = {entry['time']:.6g} s, below its min -0.05 m "
        f"(worst in the window: {entry['value']:.6g} m)"
    )


def test_check_writes_a_passed_test_per_requirement_and_nothing_when_invalid(rig: Path, tmp_path: Path):
    junit = tmp_path / "made" / "check.xml"
    r = mjrig_here("check", rig, "--junit", junit)
    assert r.rc == 0 and "3 requirements" in r.stdout, r
    suite = suite_of(junit)
    assert (suite.name, suite.tests, suite.failures, suite.errors) == ("mjrig check spring_mass", 3, 0, 0)
    assert [(c.name, c.classname, c.is_passed) for c in suite] == [
        (name, "spring_mass", True) for name in ("stays_short", "spring_force", "settles")
    ]
    bad = rig.with_name("bad.toml")
    bad.write_text(rig.read_text(encoding="utf-8").replace('"Loads/main_spring:fx"', '"Loads/main_sprung:fx"'))
    missing = tmp_path / "never" / "check.xml"
    one_line(mjrig_here("check", bad, "--junit", missing), 2, "main_sprung")
    assert not missing.parent.exists()  # bad input writes nothing, not even its folder


def test_a_bundled_rig_is_named_after_itself(tmp_path: Path):
    junit = tmp_path / "rig.xml"
    assert mjrig_here("check", "spring_mass", "--junit", junit).rc == 0
    assert suite_of(junit).name == "mjrig check spring_mass" and suite_of(junit).tests == 0


SWEEP = "[sweep]\n[sweep.params]\nc = { values = [0.0, 20.0] }\n"
"""On ``tests.sweep_util.BASE`` (params k, c, mass; ``travel``: min -0.15 m): undamped the block swings to -0.2 m (``travel``, min -0.15 m, fails); at c = 20 N·s/m (damping
ratio 0.71) it overshoots -0.1 m by 4 % and passes."""


def test_sweep_writes_a_test_per_trial_and_requirement_with_its_params(tmp_path: Path):
    scenario = sweep_scenario(tmp_path, SWEEP)
    out, junit = tmp_path / "res.parquet", tmp_path / "ci" / "sweep.xml"
    r = mjrig("sweep", scenario, "--out", out, "--workers", 1, "--duration", 0.5, "--junit", junit)
    assert r.rc == 0, r  # a failed requirement does not change a sweep's status
    rows = pl.read_parquet(out).to_dicts()
    suite = suite_of(junit)
    assert (suite.tests, suite.failures, suite.errors) == (2, 1, 0)
    assert [c.name for c in suite] == ["trial 0: travel", "trial 1: travel"]
    assert {c.classname for c in suite} == {scenario.stem}
    for case, row in zip(suite, rows):
        props = {p.name: p.value for p in case.child(Properties)}
        assert props == {n: repr(row[f"Params/{n}:value"]) for n in ("k", "c", "mass")}
        assert case.is_passed == row["Requirements/travel:pass"]
    failed = next(c for c in suite if not c.is_passed)
    assert failed.child(Properties) is not None and failed.name == "trial 0: travel"
    (failure,) = failed.result
    assert failure.type == "requirement"
    assert failure.message == (
        f"failed: Joints/slide_x:qpos reached {rows[0]['Requirements/travel:value']:.6g} m, below its min -0.15 m"
    )
    assert rows[0]["Requirements/travel:value"] == pytest.approx(-0.2, abs=1e-3)


def test_bad_junit_paths_are_one_line(rig: Path, tmp_path: Path):
    """Onto an input or another output: exit 2; onto a folder: exit 2. Nothing is run or changed."""
    model, before = rig.with_suffix(".xml"), rig.read_bytes()
    run = ("run", rig, "--duration", 0.1, "--out", tmp_path / "x.parquet")
    one_line(mjrig_here(*run, "--junit", rig), 2, "--junit", "is the scenario")
    one_line(mjrig_here(*run, "--junit", model), 2, "--junit", "is the model")
    report = tmp_path / "same.xml"
    one_line(mjrig_here(*run, "--report", report, "--junit", report), 2, "--junit", "--report", "its own path")
    one_line(mjrig_here("check", rig, "--junit", model), 2, "--junit", "is the model")
    one_line(mjrig_here(*run, "--junit", tmp_path), 2, "--junit", "is a folder")
    sweep = sweep_scenario(tmp_path, SWEEP)
    one_line(mjrig_here("sweep", sweep, "--out", tmp_path / "r.parquet", "--junit", sweep), 2, "is the scenario")
    one_line(
        mjrig_here("sweep", sweep, "--out", tmp_path / "r.parquet", "--junit", tmp_path / "r.parquet"),
        2,
        "--junit",
        "--out",
    )
    assert rig.read_bytes() == before and not (tmp_path / "x.parquet").exists()
    assert not (tmp_path / "r.parquet").exists()


def test_a_junit_the_disk_refuses_is_exit_5(rig: Path, tmp_path: Path):
    """A read-only file system (a tmpfs mounted ``ro``; mounting needs root): exit 5, one line
    naming the cause, before anything runs."""
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(ro)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        for command in (
            ("run", rig, "--duration", 0.1, "--out", tmp_path / "x.parquet", "--junit", ro / "j.xml"),
            ("check", rig, "--junit", ro / "sub" / "j.xml"),
            ("sweep", sweep_scenario(tmp_path, SWEEP), "--out", tmp_path / "r.parquet", "--junit", ro / "j.xml"),
        ):
            line = one_line(mjrig_here(*command), 5, "--junit", "read-only file system", str(ro))
            assert "Traceback" not in line
        assert list(ro.iterdir()) == []
    finally:
        subprocess.run(["umount", str(ro)], check=False)
    assert not (tmp_path / "x.parquet").exists() and not (tmp_path / "r.parquet").exists()


def test_a_diverging_run_writes_what_was_decided_with_errors_for_the_rest(tmp_path: Path):
    """A bead on a 1e12 N/m spring, kicked at 0.3 s, blows up at once: exit 3 as before; the
    requirement whose window closed at 0.2 s passed, the one still open is an error."""
    from test_divergence import BEAD_XML, KICKED

    (tmp_path / "bead.xml").write_text(BEAD_XML)
    scenario = tmp_path / "bead.toml"
    scenario.write_text(
        KICKED
        + '\n[[requirements]]\nname = "early"\nsignal = "Joints/slide:qpos"\nmax = 1.0\nend = 0.2\n'
        + '\n[[requirements]]\nname = "bounded"\nsignal = "Joints/slide:qpos"\nmax = 1.0\n'
    )
    junit = tmp_path / "bead.xml.junit"
    env = {**cli_env(), "MJRIG_COMPILED": "0"}  # the Python path: a fresh cache compiles this rig's loads for 6 s
    r = mjrig("run", scenario, "--out", tmp_path / "out.parquet", "--junit", junit, env=env)
    assert r.rc == 3, r
    suite = suite_of(junit)
    assert (suite.tests, suite.failures, suite.errors) == (2, 0, 1)
    early, bounded = list(suite)
    assert early.is_passed
    (error,) = bounded.result
    assert isinstance(error, Error) and "diverged" in error.message
