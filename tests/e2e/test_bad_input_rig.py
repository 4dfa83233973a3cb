"""Bad input in the rig's newer fields (joint loads, controls, tracers, requirements, model-field
params, start states): exit 2 with one stderr line naming file, line and field, in `mjrig run` and `mjrig check`.
A control outside its ctrlrange is a one-line warning, not an error (run as a command). The bad
cases go through mjrig's entry point in this process (``mjrig_here``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import mujoco
import pytest
from e2e_util import mjrig, mjrig_here

XML = """<mujoco model="testrig">
  <option timestep="0.001"/>
  <worldbody>
    <body name="arm"><joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/><site name="tip" pos="0.3 0 0"/></body>
    <body name="block" pos="1 0 0"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size=".05 .05 .05" mass="2"/></body>
    <body name="ball" pos="2 0 1"><joint name="balljoint" type="ball"/><geom size=".05" mass="1"/></body>
  </worldbody>
  <actuator><motor name="shoulder" joint="hinge" gear="2" ctrlrange="-1 1" ctrllimited="true"/></actuator>
  <keyframe><key name="launch" qpos="0.5 0.1 1 0 0 0"/></keyframe>
</mujoco>
"""

SCENARIO = """model = "rig.xml"
[simulation]
duration = 0.05
initial_key = "launch"
[params]
u = 0.5
mass = { value = 3.0, min = 0.5, max = 5.0, unit = "kg", model = "body:block.mass" }
[[loads]]
name = "motor"
kind = "joint_torque"
joint = "hinge"
magnitude = { profile = "step", time = 0.1, before = 0.0, after = 2.0 }
[[loads]]
name = "bearing"
kind = "joint_friction"
joint = "slide"
coulomb = 0.3
breakaway = 0.4
stribeck_velocity = 0.05
coulomb_velocity = 0.001
viscous = 0.01
[[loads]]
name = "pin"
kind = "joint_friction"
joint = "hinge"
mu = 0.2
pin_radius = 0.01
[[controls]]
actuator = "shoulder"
value = "u"
[[tracers]]
name = "tip_path"
at = "tip"
duration = 1.0
color = [1.0, 0.5, 0.0]
[[requirements]]
name = "upright"
signal = "Joints/hinge:qpos"
min = -100.0
max = 100.0
end = 0.04
"""


def sub(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


def foreign_snapshot(folder: Path) -> None:
    from mjrig.runtime.telemetry.snapshots import save_snapshot, take_snapshot

    other = mujoco.MjModel.from_xml_string(
        '<mujoco model="other"><worldbody><body><freejoint/><geom size="1"/></body></worldbody></mujoco>'
    )
    save_snapshot(folder / "other.npz", take_snapshot(other, mujoco.MjData(other)))


# name: (edit, marker on the offending line or None, field named, words the line must say)
CASES: dict[str, tuple] = {
    "unknown_joint": (
        sub('joint = "hinge"', 'joint = "hinj"'),
        'joint = "hinj"',
        "loads[0].joint",
        ("hinj", "closest: hinge"),
    ),
    "ball_joint": (
        sub('joint = "slide"', 'joint = "balljoint"'),
        'joint = "balljoint"',
        "loads[1].joint",
        ("ball joint", "hinge or slide"),
    ),
    "negative_coulomb": (sub("coulomb = 0.3", "coulomb = -0.3"), "coulomb = -0.3", "loads[1].coulomb", ("negative",)),
    "negative_viscous": (sub("viscous = 0.01", "viscous = -1"), "viscous = -1", "loads[1].viscous", ("negative",)),
    "negative_mu": (sub("mu = 0.2", "mu = -0.2"), "mu = -0.2", "loads[2].mu", ("negative",)),
    "breakaway_below_coulomb": (sub("breakaway = 0.4", "breakaway = 0.2"), None, "loads[1]", ("breakaway", "coulomb")),
    "zero_stribeck_velocity": (
        sub("stribeck_velocity = 0.05", "stribeck_velocity = 0"),
        "stribeck_velocity = 0",
        "loads[1].stribeck_velocity",
        ("positive",),
    ),
    "negative_coulomb_velocity": (
        sub("coulomb_velocity = 0.001", "coulomb_velocity = -0.001"),
        "coulomb_velocity = -0.001",
        "loads[1].coulomb_velocity",
        ("positive",),
    ),
    "both_coulomb_and_mu": (sub("mu = 0.2", "coulomb = 1.0\nmu = 0.2"), None, "loads[2]", ("not both",)),
    "neither_coulomb_nor_mu": (sub("coulomb = 0.3\n", ""), None, "loads[1]", ("coulomb", "mu")),
    "mu_without_pin_radius": (sub("pin_radius = 0.01\n", ""), None, "loads[2]", ("pin_radius",)),
    "torque_without_magnitude": (
        sub("magnitude = { profile", "magnitde = { profile"),
        "magnitde",
        "loads[0].magnitde",
        ("closest: magnitude",),
    ),
    "unknown_actuator": (
        sub('actuator = "shoulder"', 'actuator = "shoulde"'),
        '"shoulde"',
        "controls[0].actuator",
        ("shoulde", "closest: shoulder"),
    ),
    "control_unknown_param": (sub('value = "u"', 'value = "uu"'), '"uu"', "controls[0].value", ("closest: u",)),
    "duplicate_control": (
        lambda t: t + '[[controls]]\nactuator = "shoulder"\nvalue = 1.0\n',
        None,
        "controls[1].actuator",
        ("duplicate",),
    ),
    "tracer_negative_duration": (
        sub("duration = 1.0", "duration = -2"),
        "duration = -2",
        "tracers[0].duration",
        ("positive",),
    ),
    "tracer_bad_color": (
        sub("color = [1.0, 0.5, 0.0]", "color = [1.0, 2.0, 0.0]"),
        "color = [1.0, 2.0",
        "tracers[0].color",
        ("between 0 and 1",),
    ),
    "tracer_unknown_point": (sub('at = "tip"', 'at = "tipp"'), 'at = "tipp"', "tracers[0].at", ("closest: tip",)),
    "tracer_duplicate_name": (
        lambda t: t + '[[tracers]]\nname = "tip_path"\nat = "tip"\nduration = 1.0\n',
        None,
        "tracers[1].name",
        ("duplicate",),
    ),
    "tracer_without_name": (sub('name = "tip_path"\n', ""), None, "tracers[0]", ("name",)),
    "requirement_unknown_signal": (
        sub('signal = "Joints/hinge:qpos"', 'signal = "Joints/hinge:qpso"'),
        "qpso",
        "requirements[0].signal",
        ("unknown signal", "closest: Joints/hinge:qpos"),
    ),
    "requirement_unknown_field": (
        sub("max = 100.0", "maxx = 100.0"),
        "maxx",
        "requirements[0].maxx",
        ("closest: max",),
    ),
    "requirement_not_a_number": (
        sub("min = -100.0", 'min = "low"'),
        'min = "low"',
        "requirements[0].min",
        ("must be a number",),
    ),
    "requirement_no_bound": (sub("min = -100.0\nmax = 100.0\n", ""), None, "requirements[0]", ("at least one bound",)),
    "requirement_min_above_max": (
        sub("min = -100.0", "min = 200.0"),
        "max = 100.0",
        "requirements[0].max",
        ("below min",),
    ),
    "requirement_tolerance_without_final": (
        sub("end = 0.04", "end = 0.04\ntolerance = 0.1"),
        "tolerance = 0.1",
        "requirements[0].tolerance",
        ("goes with 'final'",),
    ),
    "requirement_negative_tolerance": (
        sub("end = 0.04", "end = 0.04\nfinal = 0.0\ntolerance = -1"),
        "tolerance = -1",
        "requirements[0].tolerance",
        ("negative",),
    ),
    "requirement_negative_start": (
        sub("end = 0.04", "start = -1\nend = 0.04"),
        "start = -1",
        "requirements[0].start",
        ("negative",),
    ),
    "requirement_end_before_start": (
        sub("end = 0.04", "start = 0.05\nend = 0.04"),
        "end = 0.04",
        "requirements[0].end",
        ("after start",),
    ),
    "requirement_bad_stop_on": (
        sub("end = 0.04", 'end = 0.04\nstop_on = "sometimes"'),
        "sometimes",
        "requirements[0].stop_on",
        ('"fail" or "pass"',),
    ),
    "requirement_without_signal": (sub('signal = "Joints/hinge:qpos"\n', ""), None, "requirements[0]", ("signal",)),
    "requirement_empty_name": (
        sub('name = "upright"', 'name = " "'),
        'name = " "',
        "requirements[0].name",
        ("non-empty",),
    ),
    "requirement_duplicate_name": (
        lambda t: t + '[[requirements]]\nname = "upright"\nsignal = "Joints/slide:qpos"\nmax = 1.0\n',
        None,
        "requirements[1].name",
        ("duplicate",),
    ),
    "model_field_unknown_body": (
        sub("body:block.mass", "body:blok.mass"),
        "body:blok.mass",
        "params.mass.model",
        ("blok", "closest: block"),
    ),
    "model_field_unknown_attribute": (
        sub("body:block.mass", "body:block.mas"),
        "body:block.mas",
        "params.mass.model",
        ("closest: mass",),
    ),
    "model_field_unknown_kind": (
        sub("body:block.mass", "bdy:block.mass"),
        "bdy:block.mass",
        "params.mass.model",
        ("closest: body",),
    ),
    "model_field_unknown_opt": (
        sub("body:block.mass", "opt.timestp"),
        "opt.timestp",
        "params.mass.model",
        ("closest: opt.timestep",),
    ),
    "unknown_keyframe": (
        sub('initial_key = "launch"', 'initial_key = "lanch"'),
        "lanch",
        "simulation.initial_key",
        ("closest: launch",),
    ),
    "missing_snapshot": (
        sub('initial_key = "launch"', 'initial_state = "none.npz"'),
        "none.npz",
        "simulation.initial_state",
        ("not found",),
    ),
    "foreign_snapshot": (
        sub('initial_key = "launch"', 'initial_state = "other.npz"'),
        "other.npz",
        "simulation.initial_state",
        ("belongs to model 'other'",),
    ),
    "key_and_state": (
        sub('initial_key = "launch"', 'initial_key = "launch"\ninitial_state = "x.npz"'),
        None,
        "simulation.initial_state",
        ("not both",),
    ),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Callable[[str], tuple]:
    cache: dict = {}

    def get(name: str) -> tuple:
        if name not in cache:
            edit = CASES[name][0]
            folder = tmp_path_factory.mktemp(name)
            (folder / "rig.xml").write_text(XML, encoding="utf-8")
            foreign_snapshot(folder)
            text = edit(SCENARIO)
            scen = folder / "rig.toml"
            scen.write_text(text, encoding="utf-8")
            out = folder / "out" / "x.parquet"
            cache[name] = (
                folder,
                scen,
                text,
                {"run": mjrig_here("run", scen, "--out", out), "check": mjrig_here("check", scen)},
            )
        return cache[name]

    return get


@pytest.mark.parametrize("cmd", ["run", "check"])
@pytest.mark.parametrize("name", list(CASES))
def test_bad_rig_input_is_one_clear_line(name: str, cmd: str, results):
    _, marker, field, says = CASES[name]
    folder, scen, text, res = results(name)
    r = res[cmd]
    assert r.rc == 2, r
    assert "Traceback" not in r.stderr + r.stdout, r
    assert len(r.stderr.strip("\n").splitlines()) == 1, f"expected exactly one stderr line\n{r}"
    msg = r.stderr.strip()
    assert scen.name in msg and field in msg, msg
    if marker is not None:
        (n,) = [i for i, ln in enumerate(text.splitlines(), start=1) if marker in ln]
        assert re.search(rf":{n}\b", msg), f"line {n} not named: {msg}"
    for word in says:
        assert word.lower() in msg.lower(), f"{word!r} not in: {msg}"
    assert not (folder / "out" / "x.parquet").exists()
    if cmd == "check":
        assert res["check"].stderr == res["run"].stderr


def test_the_valid_rig_runs_and_a_control_out_of_range_is_one_warning(tmp_path):
    (tmp_path / "rig.xml").write_text(XML, encoding="utf-8")
    scen = tmp_path / "rig.toml"
    scen.write_text(SCENARIO.replace('value = "u"', "value = 3.0"), encoding="utf-8")
    out = tmp_path / "x.parquet"
    for r in (mjrig("run", scen, "--out", out), mjrig("check", scen)):
        assert r.rc == 0, r
        warned = [ln for ln in r.stderr.splitlines() if "ctrlrange" in ln]
        assert len(warned) == 1 and "'shoulder'" in warned[0] and "clamped" in warned[0], r
    import polars as pl

    df = pl.read_parquet(out)
    assert df["Actuators/shoulder:ctrl"].to_list()[-1] == 1.0
    assert {"Loads/motor:value", "Loads/bearing:value", "Loads/pin:value", "Params/mass:value"} <= set(df.columns)
