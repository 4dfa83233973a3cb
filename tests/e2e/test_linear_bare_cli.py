"""The linear commands on bare models as a controls engineer types them: ``linearise`` of a
two-motor arm (both motors the inputs, the trimmed torques in the JSON's ``ctrl``, transfer
functions with ``--tf``), ``modes --equilibrium`` of a pendulum started off upright (the unstable
root printed), ``bode --sigma`` drawn, and bad input as one line. Each command is one process of
about 1 s."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from e2e_util import mjrig, mjrig_here

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_linear_bare import G, _arm, _pendulum  # noqa: E402


def test_a_bare_arm_linearises_about_both_motors_with_trimmed_torques_and_transfer_functions(tmp_path):
    arm = _arm(tmp_path, gear=2.0)
    out = tmp_path / "arm.json"
    r = mjrig("linearise", arm, "--equilibrium", "--trim-inputs", "--tf", "-o", out, cwd=tmp_path)
    assert r.rc == 0, r
    assert "linearise: 4 states, 2 inputs, 2 outputs (continuous)" in r.stdout, r.stdout
    assert "trimmed inputs: shoulder_motor = " in r.stderr and "N·m" in r.stderr, r.stderr
    doc = json.loads(out.read_text())
    assert doc["input_names"] == ["Actuators/shoulder_motor:ctrl", "Actuators/elbow_motor:ctrl"]
    assert doc["output_names"] == ["Joints/shoulder:qpos", "Joints/elbow:qpos"]
    shoulder = 1.0 * G * 0.25 + 0.5 * G * (0.5 + 0.2)
    assert abs(2.0 * doc["ctrl"][0]) == pytest.approx(shoulder, rel=1e-6)  # gear·ctrl = the arm's moment
    pairs = {(t["input"], t["output"]) for t in doc["tf"]}
    assert len(pairs) == 4 and all({"num", "den", "poles", "zeros", "gain"} <= set(t) for t in doc["tf"])


def test_modes_of_a_pendulum_near_upright_solve_the_upright_state(tmp_path):
    r = mjrig("modes", _pendulum(tmp_path, l=0.5), "--equilibrium", cwd=tmp_path)
    assert r.rc == 0, r
    root = float(r.stdout.split("(root +")[1].split(" /s")[0])
    assert root == pytest.approx(math.sqrt(G / 0.5), rel=0.01), r.stdout
    assert "at rest (solved: residual acceleration" in r.stderr, r.stderr


def test_bode_sigma_draws_the_singular_values(tmp_path):
    arm = _arm(tmp_path)
    args = ["--input", "Actuators/shoulder_motor:ctrl", "--input", "Actuators/elbow_motor:ctrl"]
    args += ["--output", "Joints/shoulder:qpos", "--output", "Joints/elbow:qpos"]
    r = mjrig("bode", arm, "--trim-inputs", *args, "--sigma", "-o", tmp_path / "s.png", "--json", tmp_path / "s.json")
    assert r.rc == 0, r
    sigma = json.loads((tmp_path / "s.json").read_text())["sigma"]
    assert all(a >= b for a, b in sigma["values"])  # largest first
    assert (tmp_path / "s.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("modes", "ARM", "--settle", "--trim-inputs"), "--trim-inputs solves the controls at a solved equilibrium"),
        (("modes", "PEND", "--trim-inputs"), "--trim-inputs: the model has no actuators"),
        (("linearise", "ARM", "--input", "Actuators/wrist:ctrl", "-o", "x.json"), "its actuators: shoulder_motor"),
        (
            ("bode", "ARM", "--input", "Actuators/shoulder_motor:ctrl", "--output", "Joints/shoulder:qpos", "--sigma"),
            "--sigma",
        ),
    ],
)
def test_bad_linear_input_is_one_line(tmp_path, args, words):
    files = {"ARM": str(_arm(tmp_path)), "PEND": str(_pendulum(tmp_path))}
    r = mjrig_here(*(files.get(a, a) for a in args), cwd=tmp_path)
    assert r.rc == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r


def test_tf_of_more_than_fifty_states_warns_and_gives_poles_and_zeros(tmp_path):
    """A chain of 26 sliders (52 states): the polynomials are left out with one warning."""
    bodies = "".join(
        f'<body name="b{i}" pos="0 {i} 0"><joint name="x{i}" type="slide" axis="1 0 0" stiffness="{10 + i}"/>'
        '<geom size="0.05" mass="1"/></body>'
        for i in range(26)
    )
    (tmp_path / "chain.xml").write_text(
        f'<mujoco><option gravity="0 0 0"/><worldbody>{bodies}</worldbody>'
        '<actuator><motor name="push" joint="x0"/></actuator></mujoco>'
    )
    r = mjrig_here("linearise", tmp_path / "chain.xml", "--output", "Joints/x0:qpos", "--tf", "-o", tmp_path / "c.json")
    assert r.rc == 0 and "--tf: 52 states" in r.stderr and "only poles, zeros and gains" in r.stderr, r
    (tf,) = json.loads((tmp_path / "c.json").read_text())["tf"]
    assert "num" not in tf and len(tf["poles"]) == 52


def test_the_linearisation_report_overlays_a_step_of_the_linear_model_and_the_rig(tmp_path):
    """A pendulum hanging under a torque motor: the report's step of 1 % of the motor's unit is
    answered alike by the linear model and by the rig's own run (within 1 % of the peak: the
    swing is 3 mrad), and the page says so."""
    from html import unescape

    (tmp_path / "hang.xml").write_text(
        '<mujoco><option timestep="0.001"/><worldbody><body name="arm" pos="0 0 1">'
        '<joint name="hinge" type="hinge" axis="0 1 0" damping="0.05"/>'
        '<geom type="capsule" fromto="0 0 0 0 0 -0.6" size="0.01" mass="0.2"/>'
        '<geom type="sphere" pos="0 0 -0.6" size="0.03" mass="1"/></body></worldbody>'
        '<actuator><motor name="torque" joint="hinge"/></actuator></mujoco>'
    )
    r = mjrig("linearise", tmp_path / "hang.xml", "-o", tmp_path / "l.json", "--report", tmp_path / "l.html")
    assert r.rc == 0, r
    within = float(r.stderr.split("within ")[1].split(" %")[0])
    assert 0 < within < 1.0, r.stderr
    page = unescape((tmp_path / "l.html").read_text())
    assert "Actuators/torque:ctrl stepped by 0.01 N·m" in page and "data:image/png;base64," in page
    assert "hinge +1" in page
