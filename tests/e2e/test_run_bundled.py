"""`mjrig run` / `check` / `models` on every bundled rig, and the Parquet file it writes."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import tomllib
from pathlib import Path

import mujoco
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from e2e_util import REPO, bundled_ids, bundled_scenarios, copy_rig, load_model_quietly, mjrig

from tests.unit.unit_util import CONTRACT_METADATA

SCENARIOS = bundled_scenarios()
ALL_GROUPS = ("joints", "bodies", "sensors", "actuators", "loads", "proximities", "params", "contacts", "energy")
SPRING_KINDS = {"ideal_spring", "compression_spring", "tension_spring", "stroke_compression_spring"}
JOINT_KINDS = {"joint_torque", "joint_friction"}
DURATION = 0.5


def test_there_are_bundled_rigs():
    assert len(SCENARIOS) >= 5, f"expected the bundled rigs in {REPO / 'models'}, found {SCENARIOS}"


def expected_rows(doc: dict, model: mujoco.MjModel, duration: float) -> float:
    rate = doc.get("recording", {}).get("rate")
    if rate is not None:
        return duration * rate
    timestep = doc.get("simulation", {}).get("timestep", model.opt.timestep)
    return duration / timestep


def expected_columns(doc: dict, model: mujoco.MjModel) -> list[str]:
    """The contract's column names for what the scenario and model hold (recorded groups only)."""
    groups = set(doc.get("recording", {}).get("signals", ALL_GROUPS))
    cols: list[str] = []
    if "joints" in groups:
        for j in range(model.njnt):
            if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
                cols += [f"Joints/{name}:qpos", f"Joints/{name}:qvel"]
    if "bodies" in groups:
        for b in range(1, model.nbody):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
            cols += [f"Bodies/{name}:{a}" for a in "xyz"]
    if "loads" in groups:
        for ld in doc.get("loads", []):
            if ld["kind"] in JOINT_KINDS:  # a generalized force on one joint, no attachment point
                cols.append(f"Loads/{ld['name']}:value")
                continue
            cols += [f"Loads/{ld['name']}:{a}" for a in ("fx", "fy", "fz", "tx", "ty", "tz")]
            if ld["kind"] in SPRING_KINDS:
                cols += [f"Loads/{ld['name']}:length", f"Loads/{ld['name']}:velocity"]
    if "proximities" in groups:
        cols += [f"Proximities/{p['name']}:distance" for p in doc.get("proximities", [])]
    if "params" in groups:
        cols += [f"Params/{name}:value" for name in doc.get("params", {})]
    if "actuators" in groups:
        cols += [f"Actuators/{c['actuator']}:ctrl" for c in doc.get("controls", [])]
    if "sensors" in groups:
        for s in range(model.nsensor):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, s) or f"sensor{s}"
            cols += [f"Sensors/{name}:{i}" for i in range(int(model.sensor_dim[s]))]
    return cols


@pytest.mark.parametrize("scen", SCENARIOS, ids=bundled_ids())
def test_run_bundled_writes_contract_parquet(scen: Path, tmp_path: Path):
    out = tmp_path / "x.parquet"
    # in tmp_path: a rig's own [video] (clearance) goes under the current folder
    res = mjrig("run", scen, "--out", out, "--duration", DURATION, cwd=tmp_path)
    assert res.rc == 0, res
    assert "Traceback" not in res.stderr, res
    assert out.is_file(), f"{out} not written\n{res}"
    assert not out.with_name(out.name + ".parts").exists(), "segment folder left behind after a clean run"

    text = scen.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    model_file = (scen.parent / doc["model"]).resolve()
    model = load_model_quietly(model_file)

    # readable by all three libraries, with the same shape
    table = pq.read_table(out)
    df_pl = pl.read_parquet(out)
    df_pd = pd.read_parquet(out)
    names = table.column_names
    assert df_pl.columns == names and list(df_pd.columns) == names
    assert df_pl.height == table.num_rows == len(df_pd)

    # time first, wall_time second, both float64
    assert names[:2] == ["time", "wall_time"], names[:5]
    assert table.schema.field("time").type == pa.float64()
    assert table.schema.field("wall_time").type == pa.float64()
    assert df_pl.schema["time"] == pl.Float64 and df_pd["time"].dtype == np.float64
    t = df_pl["time"].to_numpy()
    w = df_pl["wall_time"].to_numpy()
    assert df_pl["time"].null_count() == 0 and np.all(np.isfinite(t))
    assert np.all(np.diff(t) > 0), "time must increase strictly"
    assert t[0] == pytest.approx(0.0, abs=1e-9)
    assert t[-1] <= DURATION + 1e-9, f"recorded past the --duration: last time {t[-1]}"
    assert np.all(np.isfinite(w)) and w[0] >= 0 and np.all(np.diff(w) >= 0), "wall_time must not go backwards"

    # row count = duration x rate (or duration / timestep), within one row
    want = expected_rows(doc, model, DURATION)
    assert abs(table.num_rows - want) <= 1, f"{table.num_rows} rows, expected {want:g}"

    # the contract's column names for every load / spring / proximity / param / joint / body
    want_cols = expected_columns(doc, model)
    n_hinge_slide = int(
        np.isin(model.jnt_type, [int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)]).sum()
    )
    assert sum(c.startswith("Joints/") for c in want_cols) == 2 * n_hinge_slide  # guards expected_columns itself
    assert any(doc.get(k) for k in ("loads", "proximities", "controls", "tracers")), (
        "a bundled rig should attach something"
    )
    missing = [c for c in want_cols if c not in names]
    assert not missing, f"missing columns: {missing}\nhave: {names}"
    assert len(set(names)) == len(names), "duplicate column names"
    for c in names:
        assert table.schema.field(c).type == pa.float64(), f"{c} is {table.schema.field(c).type}"
    for c in want_cols:  # signals that exist from the first step have no nulls
        assert df_pl[c].null_count() == 0, f"{c} has nulls"
    assert not any(c.startswith("Joints/__mjrig") or "__mjrig_" in c for c in names), "rig helpers leaked"

    # key-value file metadata
    md = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    for key in (*sorted(CONTRACT_METADATA), "mjrig.units"):
        assert key in md, f"metadata {key} missing; have {sorted(md)}"
    assert Path(md["mjrig.model_path"]).resolve() == model_file
    assert md["mjrig.model_sha256"] == hashlib.sha256(model_file.read_bytes()).hexdigest()
    assert md["mjrig.scenario"] == text
    assert md["mjrig.mujoco_version"] == mujoco.__version__
    assert md["mjrig.version"].strip() and md["mjrig.version"][0].isdigit(), md["mjrig.version"]
    start = dt.datetime.fromisoformat(md["mjrig.start_time"])
    if start.tzinfo is None:
        start = start.astimezone()
    age = dt.datetime.now(dt.UTC) - start
    assert dt.timedelta(0) <= age < dt.timedelta(minutes=30), f"start_time {start} is not now"

    # units: field metadata `unit` and the JSON schema entry mjrig.units, consistent
    units = json.loads(md["mjrig.units"])
    assert isinstance(units, dict)
    field_units = {f.name: f.metadata[b"unit"].decode() for f in table.schema if f.metadata and b"unit" in f.metadata}
    assert field_units == units, "field-level units and mjrig.units disagree"
    assert units.get("time") == "s" and units.get("wall_time") == "s"
    for c in want_cols:
        if c.startswith("Loads/") and c.endswith((":fx", ":fy", ":fz")):
            assert units.get(c) == "N", (c, units.get(c))
        if c.startswith("Loads/") and c.endswith((":tx", ":ty", ":tz")):
            assert units.get(c) in ("N*m", "N·m", "N m"), (c, units.get(c))
        if c.startswith("Loads/") and c.endswith(":value"):  # joint loads on a hinge (or N on a slide)
            assert units.get(c) in ("N*m", "N·m", "N m", "N"), (c, units.get(c))
        if c.startswith(("Bodies/", "Proximities/")) or c.endswith(":length"):
            assert units.get(c) == "m", (c, units.get(c))
        if c.startswith("Joints/"):
            assert units.get(c), f"{c} has no unit"


@pytest.mark.parametrize("scen", SCENARIOS, ids=bundled_ids())
def test_check_bundled(scen: Path):
    res = mjrig("check", scen)
    assert res.rc == 0, res
    assert "Traceback" not in res.stderr + res.stdout


def test_models_lists_every_rig():
    res = mjrig("models")
    assert res.rc == 0, res
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    names = bundled_ids()
    assert all(len(ln) <= 80 for ln in lines if not ln.strip().startswith("/")), res.stdout
    listed: dict[str, str] = {}
    for ln in lines:  # a rig's name starts a line; its description and path are indented below it
        if not ln.startswith(" "):
            name, _, desc = ln.partition(" ")
            listed[name] = desc.strip()
        elif not ln.strip().startswith("/"):
            listed[name] += " " + ln.strip()
    assert sorted(listed) == sorted(names)
    for name, desc in listed.items():
        assert desc, f"{name} has an empty description"


def test_cli_out_and_duration_override_scenario(tmp_path: Path):
    """--out and --duration win over [recording] path and [simulation] duration."""
    scen = copy_rig("spring_mass", tmp_path / "rig")
    text = scen.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    assert doc["simulation"]["duration"] != 0.3
    scenario_out = scen.parent / doc["recording"]["path"]
    out = tmp_path / "elsewhere" / "deep" / "o.parquet"
    res = mjrig("run", scen, "--out", out, "--duration", 0.3)
    assert res.rc == 0, res
    assert out.is_file()
    assert not scenario_out.exists(), "wrote to the scenario's recording path despite --out"
    n = pl.read_parquet(out).height
    assert abs(n - 0.3 / doc["simulation"]["timestep"]) <= 1, n


def test_scenario_duration_and_path_used_without_overrides(tmp_path: Path):
    """Without the options the scenario's own path (relative to the file) and duration hold."""
    scen = copy_rig("spring_mass", tmp_path / "rig")
    text = scen.read_text(encoding="utf-8")
    text = text.replace("duration = 5.0", "duration = 0.2")
    assert "duration = 0.2" in text
    scen.write_text(text, encoding="utf-8")
    doc = tomllib.loads(text)
    out = scen.parent / doc["recording"]["path"]
    res = mjrig("run", scen)
    assert res.rc == 0, res
    assert out.is_file(), f"expected the scenario's path {out}"
    assert abs(pl.read_parquet(out).height - 0.2 / doc["simulation"]["timestep"]) <= 1


def test_cli_duration_overrides_with_rate(tmp_path: Path):
    """--duration with a [recording] rate: rows = duration x rate."""
    scen = copy_rig("bumper_drop", tmp_path / "rig")
    doc = tomllib.loads(scen.read_text(encoding="utf-8"))
    out = tmp_path / "b.parquet"
    res = mjrig("run", scen, "--out", out, "--duration", 0.25)
    assert res.rc == 0, res
    n = pl.read_parquet(out).height
    assert abs(n - 0.25 * doc["recording"]["rate"]) <= 1, n


def run_whole(name: str, tmp_path: Path) -> tuple[dict, pl.DataFrame]:
    """Run bundled rig NAME for its own duration; (its scenario as a dict, the recording)."""
    out = tmp_path / f"{name}.parquet"
    res = mjrig("run", name, "--out", out, cwd=tmp_path)
    assert res.rc == 0, res
    assert all(ln.startswith("wrote ") for ln in res.err_lines), res  # no warnings
    doc = tomllib.loads((REPO / "models" / f"{name}.toml").read_text(encoding="utf-8"))
    return doc, pl.read_parquet(out)


def test_motor_pendulum_sticks_breaks_away_and_sticks_again(tmp_path: Path):
    """The bearing holds the motor pendulum until the motor torque passes the breakaway level,
    then it slips, sticks again while the torque still rises, slips again, and ends at rest;
    the pin pendulum's amplitude falls by nearly equal steps (Coulomb), not by a ratio."""
    doc, df = run_whole("motor_pendulum", tmp_path)
    breakaway = doc["params"]["bearing_breakaway"]["value"]
    t = df["time"].to_numpy()
    q = df["Joints/motor_hinge:qpos"].to_numpy()
    v = df["Joints/motor_hinge:qvel"].to_numpy()
    motor = df["Loads/motor:value"].to_numpy()
    assert np.allclose(df["Params/bearing_breakaway:value"].to_numpy(), breakaway)

    # stuck while the motor is below the breakaway torque: creeping at a few mrad/s at most
    t_cross = t[np.argmax(motor >= breakaway)]
    held = (motor < 0.9 * breakaway) & (t < t_cross)
    assert held.sum() > 500  # over 1 s at 500 rows/s
    assert np.abs(v[held]).max() < 0.02 and np.abs(q[held]).max() < 0.01, (np.abs(v[held]).max(), np.abs(q[held]).max())
    # ... and it breaks away within half a second of passing it
    after = (t >= t_cross) & (t < t_cross + 0.5)
    assert v[after].max() > 0.3, v[after].max()

    # stick-slip while the torque still rises: stuck for a while after the first slip, then moving again
    ramp = (t > t_cross + 0.5) & (t < 5.5)
    stuck = ramp & (np.abs(v) < 0.02)
    assert stuck.sum() > 0.3 * 500, "never stuck again during the ramp"
    t_stuck = t[stuck][0]
    q_stuck = q[stuck][0]
    assert q_stuck > 0.1, q_stuck  # it climbed before sticking
    later = ramp & (t > t_stuck + 0.3)
    assert q[later].max() > q_stuck + 0.1 and v[later].max() > 0.3, "never broke away a second time"

    # at rest at the end, the motor off
    end = t > t[-1] - 0.5
    assert np.abs(motor[end]).max() == 0.0 and np.abs(v[end]).max() < 0.01

    # pin pendulum: the decrements between successive peaks stay alike (an exponential decay from
    # 53 to 5 deg would shrink them tenfold)
    qp = np.abs(df["Joints/pin_hinge:qpos"].to_numpy())
    peaks = [i for i in range(1, len(qp) - 1) if qp[i] >= qp[i - 1] and qp[i] > qp[i + 1] and qp[i] > 0.05]
    amp = qp[peaks]
    assert len(amp) >= 8, amp
    drops = -np.diff(amp)
    assert drops.min() > 0 and drops.min() > 0.5 * drops.max(), np.degrees(drops)
    assert df["Loads/pin:value"].abs().max() > 0.1  # mu·pin_radius·|R| with R about 12 to 22 N


def test_robot_arm_follows_its_tables(tmp_path: Path):
    """The servos track the controls' table profiles: settled during the holds and at the end,
    the tool on the pads when the tables say so; the tracer samples the tool's path."""
    doc, df = run_whole("robot_arm", tmp_path)
    t = df["time"].to_numpy()
    for c in doc["controls"]:
        name, table = c["actuator"], c["value"]
        assert table["profile"] == "table"
        ctrl = df[f"Actuators/{name}:ctrl"].to_numpy()
        q = df[f"Joints/{name}:qpos"].to_numpy()
        assert ctrl[-1] == pytest.approx(table["value"][-1])
        assert abs(q[-1] - table["value"][-1]) < 0.02, (name, q[-1], table["value"][-1])
        for lo, hi in ((1.6, 1.7), (4.4, 4.5)):  # the holds at the pick and place pads
            hold = (t >= lo) & (t <= hi)
            assert np.abs(ctrl[hold] - q[hold]).max() < 0.02, (name, lo)
        assert np.abs(ctrl - q).max() < 0.2, name  # never far behind, even in the swings

    model = load_model_quietly(REPO / "models" / "robot_arm.xml")
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    tool = df.select("Sensors/tool_pos:0", "Sensors/tool_pos:1", "Sensors/tool_pos:2").to_numpy()
    for pad, when in (("pick", 1.65), ("place", 4.45)):
        site = data.site(pad).xpos
        row = int(np.argmin(np.abs(t - when)))
        gap = tool[row] - site
        assert np.hypot(gap[0], gap[1]) < 0.02 and 0.0 < gap[2] < 0.05, (pad, gap)

    from mjrig.scenario.builder import build_rig
    from mjrig.scenario.parse import load_scenario

    rig = build_rig(load_scenario(REPO / "models" / "robot_arm.toml"))
    (tracer,) = rig.runtime.tracers
    with rig.runtime:
        for _ in range(int(round(1.0 / rig.model.opt.timestep))):
            rig.runtime.step(rig.model, rig.data)
    times, pos = tracer.samples()
    assert len(times) >= 60 and times[-1] == pytest.approx(1.0, abs=0.05)
    assert np.ptp(pos[:, 0]) > 0.15 and np.ptp(pos[:, 2]) > 0.3  # from home out and down to the pick pad
    assert sum(map(len, rig.runtime.drawing.visuals(rig.model, rig.data)[1])) >= 60  # drawn as a trail
