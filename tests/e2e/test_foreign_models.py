"""Any MJCF MuJoCo loads runs under `mjrig run`: dm_control and gymnasium models with a rig attached."""

from __future__ import annotations

import hashlib
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from e2e_util import load_model_quietly, mjrig

ALL_GROUPS = ["joints", "bodies", "sensors", "actuators", "loads", "proximities", "params", "contacts", "energy"]


def _dm_control(name: str) -> Path | None:
    try:
        import dm_control
    except ImportError:
        return None
    return Path(dm_control.__file__).resolve().parent / "suite" / name


def _gymnasium(name: str) -> Path | None:
    try:
        import gymnasium
    except ImportError:
        return None
    return Path(gymnasium.__file__).resolve().parent / "envs" / "mujoco" / "assets" / name


MODELS = {
    "dm_control-humanoid": lambda: _dm_control("humanoid.xml"),
    "dm_control-cheetah": lambda: _dm_control("cheetah.xml"),
    "gymnasium-ant": lambda: _gymnasium("ant.xml"),
    "gymnasium-hopper": lambda: _gymnasium("hopper.xml"),
}


def named_body(model: mujoco.MjModel) -> str:
    """The first named body after the world (the torso in all four)."""
    for b in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
        if name:
            return name
    pytest.skip("model has no named body")


@pytest.mark.parametrize("key", list(MODELS))
def test_foreign_model_runs_with_a_rig(key: str, tmp_path: Path):
    xml = MODELS[key]()
    if xml is None or not xml.is_file():
        pytest.skip(f"{key} not installed")
    model = load_model_quietly(xml)
    body = named_body(model)
    scen = tmp_path / "foreign.toml"
    scen.write_text(
        f"""# {key} with a pushed torso and a bungee to the sky
model = {str(xml)!r}

[[loads]]
name = "push"
kind = "force"
at = "body:{body}@0,0,0.05"
vector = [{{ profile = "step", time = 0.05, before = 0.0, after = 30.0 }}, 0.0, 0.0]

[[loads]]
name = "bungee"
kind = "ideal_spring"
at = "body:{body}"
to = "body:world@0,0,2"
stiffness = 50.0
damping = 1.0
rest_length = 0.5

[[proximities]]
name = "to_sky"
a = "body:{body}"
b = "body:world@0,0,2"

[recording]
signals = {ALL_GROUPS!r}
""".replace("'", '"'),
        encoding="utf-8",
    )
    out = tmp_path / "foreign.parquet"
    res = mjrig("run", scen, "--out", out, "--duration", 0.2)
    assert res.rc == 0, res
    assert "Traceback" not in res.stderr

    df = pl.read_parquet(out)
    assert df.columns[:2] == ["time", "wall_time"]
    assert abs(df.height - 0.2 / model.opt.timestep) <= 1, (df.height, model.opt.timestep)
    t = df["time"].to_numpy()
    assert np.all(np.diff(t) > 0)
    for name in ("push", "bungee"):
        for a in ("fx", "fy", "fz", "tx", "ty", "tz"):
            col = f"Loads/{name}:{a}"
            assert col in df.columns, f"{col} missing"
            assert df[col].null_count() == 0
    for a in ("length", "velocity"):
        assert f"Loads/bungee:{a}" in df.columns and df[f"Loads/bungee:{a}"].null_count() == 0
    assert "Loads/push:length" not in df.columns, "a force is not point-to-point"
    # the step profile switches the push on at 0.05 s: 0 N before, 30 N after (world x)
    before = df.filter(pl.col("time") < 0.05 - 1e-9)["Loads/push:fx"]
    after = df.filter(pl.col("time") > 0.05 + 1e-9)["Loads/push:fx"]
    assert before.len() > 0 and after.len() > 0
    assert before.abs().max() == pytest.approx(0.0, abs=1e-9)
    assert after.min() == pytest.approx(30.0) and after.max() == pytest.approx(30.0)
    # the bungee's length is the distance from the torso to (0,0,2)
    assert (df["Loads/bungee:length"] - df["Proximities/to_sky:distance"]).abs().max() < 1e-6
    x, y, z = (df[f"Bodies/{body}:{a}"] for a in "xyz")
    dist = (x**2 + y**2 + (z - 2.0) ** 2) ** 0.5
    assert (dist - df["Proximities/to_sky:distance"]).abs().max() < 1e-6

    hinge_slide = 0
    for j in range(model.njnt):
        if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
            for a in ("qpos", "qvel"):
                col = f"Joints/{name}:{a}"
                assert col in df.columns, f"{col} missing"
                assert df[col].null_count() == 0 and df[col].is_finite().all(), f"{col} has null/NaN"
            hinge_slide += 1
    assert hinge_slide > 0
    for b in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        assert f"Bodies/{name}:z" in df.columns, f"Bodies/{name}:z missing"
    if model.nu:
        assert any(c.startswith("Actuators/") for c in df.columns)
    if model.nsensor:
        assert any(c.startswith("Sensors/") for c in df.columns)
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(out).metadata.items()}
    assert meta["mjrig.model_sha256"] == hashlib.sha256(xml.read_bytes()).hexdigest()
    assert Path(meta["mjrig.model_path"]).resolve() == xml
