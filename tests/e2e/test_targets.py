"""`mjrig run|check TARGET` takes a scenario, a bare model or a bundled rig's name; outputs go
under the current folder, never into the installed package."""
from __future__ import annotations

import subprocess
import sys

import mujoco
import polars as pl

from tests.e2e.e2e_util import MODELS, REPO, cli_env, load_model_quietly


def _mjrig(*args, cwd):
    p = subprocess.run([sys.executable, "-m", "app", *map(str, args)], cwd=cwd, env=cli_env(), capture_output=True,
                       text=True, timeout=180, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def test_a_bare_xml_runs_with_every_signal_group(tmp_path):
    rc, _, err = _mjrig("run", MODELS / "clearance.xml", "--duration", "0.2", cwd=tmp_path)
    assert rc == 0, err
    df = pl.read_parquet(tmp_path / "runs" / "clearance.parquet")
    groups = {c.split("/")[0] for c in df.columns[2:]}
    assert {"Joints", "Bodies", "Sensors", "Energy"} <= groups, groups
    assert df.height == 200 and not any(c.startswith("Loads/") for c in df.columns)


def test_a_bare_mjb_runs(tmp_path):
    mjb = tmp_path / "m.mjb"
    mujoco.mj_saveModel(load_model_quietly(MODELS / "spring_mass.xml"), str(mjb), None)
    rc, _, err = _mjrig("run", mjb, "--duration", "0.1", "--out", tmp_path / "o.parquet", cwd=tmp_path)
    assert rc == 0, err
    assert "Joints/slide_x:qpos" in pl.read_parquet(tmp_path / "o.parquet").columns


def test_a_bundled_rig_by_name_writes_under_the_current_folder(tmp_path):
    before = {p for p in MODELS.rglob("*")}
    rc, _, err = _mjrig("run", "spring_mass", "--duration", "0.2", cwd=tmp_path)
    assert rc == 0, err
    assert (tmp_path / "runs" / "spring_mass.parquet").is_file()
    assert {p for p in MODELS.rglob("*")} == before, "something was written into the bundled rigs' folder"
    rc, out, err = _mjrig("check", "spring_mass", cwd=tmp_path)
    assert rc == 0 and "ok" in out, err


def test_an_unknown_target_is_one_line_naming_the_closest_rig(tmp_path):
    rc, _, err = _mjrig("run", "spring_mas", cwd=tmp_path)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "spring_mass" in lines[0], err
    rc, _, err = _mjrig("check", tmp_path / "nope.xml", cwd=tmp_path)
    assert rc == 2 and "not found" in err and len(err.strip().splitlines()) == 1


def test_models_lists_each_rig_with_its_path(tmp_path):
    rc, out, err = _mjrig("models", cwd=tmp_path)
    assert rc == 0, err
    for toml in MODELS.glob("*.toml"):
        assert str(toml) in out, out
