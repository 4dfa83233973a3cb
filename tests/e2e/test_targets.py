"""`mjrig run|check TARGET` and `mjrig PATH` take a scenario, a bare model or a bundled rig's name;
outputs of bundled rigs and bare models go under the current folder, never into models/."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import mujoco
import polars as pl
import pytest
from e2e_util import MODELS, REPO, bundled_scenarios, cli_env, load_model_quietly, mjrig, no_screen_env


def tree(folder: Path) -> set[Path]:
    """Every file and folder under ``folder``; Python's own byte-code caches left out (importing
    the ``models`` package may write one, which is not an output of a run)."""
    return {p for p in folder.rglob("*") if "__pycache__" not in p.parts}


def assert_bare_recording(out: Path, model: mujoco.MjModel, duration: float) -> pl.DataFrame:
    """The recording of a bare model: joints and bodies recorded every step of the model's timestep."""
    df = pl.read_parquet(out)
    assert df.columns[:2] == ["time", "wall_time"]
    for j in range(model.njnt):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        assert any(c.startswith(f"Joints/{name}:") for c in df.columns), (name, df.columns)
    for b in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
        assert {f"Bodies/{name}:{a}" for a in "xyz"} <= set(df.columns), (name, df.columns)
    assert not any(c.startswith(("Loads/", "Proximities/", "Params/")) for c in df.columns), df.columns
    want = duration / model.opt.timestep
    assert abs(df.height - want) <= 1, f"{df.height} rows, expected {want:g}"
    return df


def test_bare_xml_writes_runs_stem_in_the_current_folder(tmp_path: Path):
    xml = shutil.copy2(MODELS / "spring_mass.xml", tmp_path / "rail.xml")
    work = tmp_path / "work"
    work.mkdir()
    res = mjrig("run", xml, "--duration", 0.3, cwd=work)
    assert res.rc == 0, res
    out = work / "runs" / "rail.parquet"
    assert out.is_file(), f"expected the default recording at {out}\n{res}"
    assert str(out) in res.stderr, res
    assert_bare_recording(out, load_model_quietly(xml), 0.3)
    assert tree(tmp_path) == {Path(xml), work, work / "runs", out}, "wrote something besides runs/rail.parquet"


def test_bare_mjb_with_its_own_timestep_and_the_default_duration(tmp_path: Path):
    model = load_model_quietly(MODELS / "spring_mass.xml")
    model.opt.timestep = 0.004  # differs from the MJCF's, so the row count shows which one ran
    mjb = tmp_path / "rail.mjb"
    mujoco.mj_saveModel(model, str(mjb), None)
    out = tmp_path / "o" / "bare.parquet"
    res = mjrig("run", mjb, "--out", out, cwd=tmp_path)
    assert res.rc == 0, res
    assert_bare_recording(out, mujoco.MjModel.from_binary_path(str(mjb)), 5.0)  # Scenario's default duration
    assert not (tmp_path / "runs").exists(), "--out given, yet the default path was written too"


def test_check_bare_model(tmp_path: Path):
    res = mjrig("check", MODELS / "spring_mass.xml", cwd=tmp_path)
    assert res.rc == 0, res
    assert "ok" in res.stdout and "0 loads" in res.stdout, res
    assert tree(tmp_path) == set(), "check must create nothing"


def test_bundled_rig_by_name_writes_under_the_current_folder(tmp_path: Path):
    before = tree(MODELS)
    res = mjrig("run", "spring_mass", "--duration", 0.2, cwd=tmp_path)
    assert res.rc == 0, res
    out = tmp_path / "runs" / "spring_mass.parquet"
    assert out.is_file(), res
    df = pl.read_parquet(out)
    assert abs(df.height - 200) <= 1 and "Loads/main_spring:fx" in df.columns
    assert tree(MODELS) == before, "a run of a bundled rig wrote into models/"


def test_bundled_rig_by_path_also_keeps_models_clean(tmp_path: Path):
    """The rule follows the scenario's folder, not the way it was named: its [video] too."""
    before = tree(MODELS)
    res = mjrig("run", MODELS / "clearance.toml", "--duration", 0.1, cwd=tmp_path)
    assert res.rc == 0, res
    assert (tmp_path / "runs" / "clearance.parquet").is_file(), res
    assert (tmp_path / "runs" / "clearance.mp4").is_file(), res
    assert tree(MODELS) == before, "a run of a bundled rig wrote into models/"


def test_check_bundled_rig_by_name(tmp_path: Path):
    res = mjrig("check", "spring_mass", cwd=tmp_path)
    assert res.rc == 0, res
    assert res.stdout.startswith("spring_mass: ok"), res
    assert tree(tmp_path) == set(), "check must create nothing"


@pytest.mark.parametrize("cmd", ["run", "check"])
def test_unknown_rig_is_one_line_with_closest_names(tmp_path: Path, cmd: str):
    res = mjrig(cmd, "no_such_rig", cwd=tmp_path)
    assert res.rc == 2, res
    assert "Traceback" not in res.stderr and len(res.err_lines) == 1, res
    line = res.err_lines[0]
    assert "no_such_rig" in line
    assert ".toml" in line and ".xml" in line and "closest:" in line, line
    near = mjrig(cmd, "spring_mas", cwd=tmp_path)
    assert near.rc == 2 and len(near.err_lines) == 1, near
    assert "closest: spring_mass" in near.err_lines[0], near
    assert tree(tmp_path) == set()


def test_missing_model_file_is_one_line(tmp_path: Path):
    res = mjrig("run", tmp_path / "nope.xml", cwd=tmp_path)
    assert res.rc == 2 and len(res.err_lines) == 1, res
    assert "nope.xml" in res.err_lines[0] and "not found" in res.err_lines[0], res


def test_an_existing_path_wins_over_a_rig_name(tmp_path: Path):
    (tmp_path / "spring_mass").write_text("not a rig\n")
    res = mjrig("check", "spring_mass", cwd=tmp_path)
    assert res.rc == 2 and len(res.err_lines) == 1, res
    assert "not a scenario or a model" in res.err_lines[0], res


def test_the_app_resolves_a_rig_name_before_it_needs_a_screen(tmp_path: Path):
    """`mjrig NAME`: an unknown name is the target's error; a known one gets as far as the display."""
    bad = mjrig("no_such_rig", "--exit-after", "1", cwd=tmp_path, env=no_screen_env(), timeout=60)
    assert bad.rc == 2 and "no_such_rig" in bad.stderr and "closest:" in bad.stderr, bad.stderr
    good = mjrig("spring_mass", "--exit-after", "1", cwd=tmp_path, env=no_screen_env(), timeout=60)
    assert good.rc == 2 and "no display" in good.stderr, good.stderr


def test_models_prints_name_description_and_scenario_path():
    res = mjrig("models")
    assert res.rc == 0, res
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    scenarios = bundled_scenarios()
    heads = [i for i, ln in enumerate(lines) if not ln.startswith(" ")]
    assert [lines[i].split()[0] for i in heads] == [
        s.stem for s in sorted(scenarios, key=lambda s: (s.stem != "shaker", s.stem))
    ], res  # the default rig first, then by name
    starts = set()
    for scen, i in zip(sorted(scenarios, key=lambda s: (s.stem != "shaker", s.stem)), heads):
        block = lines[i : (heads + [len(lines)])[heads.index(i) + 1]]
        assert block[-1].strip() == str(scen), block  # the scenario's path closes its block
        starts.add(block[-1].index("/"))
        assert all(len(ln) <= 80 for ln in block[:-1]), block
    assert len(starts) == 1, f"the paths are not aligned in one column:\n{res.stdout}"


def test_models_into_a_reader_that_leaves_early_prints_no_traceback():
    # `true` reads nothing and is gone long before Python has started: every write meets a closed pipe
    proc = subprocess.run(
        f"{sys.executable} -m mjrig models | true",
        shell=True,
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stderr == "", proc.stderr
