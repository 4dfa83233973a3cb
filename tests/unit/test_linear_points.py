"""Operating points along a run and several inputs and outputs: a pendulum linearised at times of
its swing (its local frequency sqrt(m g l cos θ / I) at the angle the run reached), about a saved
snapshot, a two-input two-output chain's four responses against (K - ω²M + jωC)⁻¹, and the
state-space model's names and units. Each linearisation takes milliseconds."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from mjrig.linear.analysis import analyse, responses, state_space
from mjrig.linear.inputs import used_params
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.snapshots import save_snapshot
from mjrig.scenario.parse import load_scenario
from tests.unit.test_modes import chain, pendulum

G = 9.81


@pytest.mark.parametrize("at", [0.0, 0.3, 0.55])
def test_a_pendulum_at_a_time_of_its_swing_has_its_local_frequency(tmp_path, at):
    """Released at 60° undamped: at time S the run is at some angle θ (read back from the
    point), and the rig linearised there swings at sqrt(m g l cos θ / I) within 0.5 %."""
    m, l, ic = 0.5, 0.4, 2e-3
    path = pendulum(tmp_path, m=m, l=l, ic=ic, c=0.0)
    path.write_text(path.read_text() + "\n[initial]\nqpos = { swing = 1.0471975511965976 }\n")
    an = analyse(load_scenario(path), at=at)
    theta = float(an.linear.qpos[0])
    assert an.linear.time == pytest.approx(at, abs=1e-9) and an.point == f"t = {at:g} s"
    if at > 0:
        assert abs(theta) < 1.0  # it has swung down from 60°
    (mode,) = an.modes
    i = ic + m * l * l
    assert mode.undamped_frequency_hz == pytest.approx(
        math.sqrt(m * G * l * math.cos(theta) / i) / (2 * math.pi), rel=0.005
    )


def test_a_saved_snapshot_is_an_operating_point(tmp_path):
    """The pendulum's state saved at 40°: linearised about it, cos 40° sets its frequency."""
    from mjrig.headless import prepare

    m, l, ic = 0.5, 0.4, 2e-3
    path = pendulum(tmp_path, m=m, l=l, ic=ic, c=0.0)
    setup = prepare(load_scenario(path), out=None, record=False)  # the rig's model: its snapshot's
    setup.data.qpos[0] = math.radians(40)
    mujoco.mj_forward(setup.model, setup.data)
    snap = save_snapshot(tmp_path / "s40.npz", setup.runtime.snapshot(setup.data))
    an = analyse(load_scenario(path), snapshot=snap)
    assert an.point == "snapshot s40.npz" and an.linear.qpos[0] == pytest.approx(math.radians(40))
    i = ic + m * l * l
    (mode,) = an.modes
    want = math.sqrt(m * G * l * math.cos(math.radians(40)) / i) / (2 * math.pi)
    assert mode.undamped_frequency_hz == pytest.approx(want, rel=0.005)
    with pytest.raises(ConfigError, match=r"--snapshot: snapshot file not found"):
        analyse(load_scenario(path), snapshot=tmp_path / "none.npz")


PUSH1 = """
[[loads]]
name = "push1"
kind = "force"
at = "s1"
vector = ["F1", 0.0, 0.0]
"""


def test_a_two_input_two_output_chains_four_responses(tmp_path):
    """Forces on both masses, both positions: each of the four responses is the entry of
    (K - ω²M + jωC)⁻¹ to 1e-5; the state-space model names its states, inputs and outputs."""
    k, m, alpha = 800.0, 2.0, 0.2
    path = chain(tmp_path, k=k, m=m, alpha=alpha)
    text = path.read_text().replace("[params]\n", '[params]\nF1 = { value = 0.0, unit = "N" }\n')
    path.write_text(text + PUSH1)
    sc = load_scenario(path)
    outputs = ("Joints/x1:qpos", "Joints/x2:qpos")
    an = analyse(sc, inputs=("F1", "F"), outputs=outputs)
    doc = responses(an, sc, where="--input")
    K, M, C = np.array([[2 * k, -k], [-k, k]]), m * np.eye(2), alpha * m * np.eye(2)
    assert [(r["input"], r["output"]) for r in doc["responses"]] == [
        ("F1", "Joints/x1:qpos"),
        ("F1", "Joints/x2:qpos"),
        ("F", "Joints/x1:qpos"),
        ("F", "Joints/x2:qpos"),
    ]
    for r in doc["responses"]:
        f = np.array(r["frequency_hz"])
        i, o = ("F1", "F").index(r["input"]), outputs.index(r["output"])
        exact = np.array([np.linalg.inv(K - (2 * math.pi * x) ** 2 * M + 2j * math.pi * x * C)[o, i] for x in f])
        np.testing.assert_allclose(np.array(r["magnitude"]), np.abs(exact), rtol=1e-5)
        np.testing.assert_allclose(np.radians(r["phase_deg"]), np.unwrap(np.angle(exact)), atol=1e-5)
        assert r["unit"] == "m/N"
    model = state_space(an, sc)
    assert model["state_names"] == ["x1:q0", "x2:q0", "x1:v0", "x2:v0"]
    assert model["state_units"] == ["m", "m", "m/s", "m/s"]
    assert (model["input_names"], model["input_units"]) == (["F1", "F"], ["N", "N"])
    assert (model["output_names"], model["output_units"]) == (list(outputs), ["m", "m"])
    assert model["kind"] == "continuous" and "dt" not in model and model["point"] == "initial state"
    assert used_params(sc) == ["F1", "k", "F"]  # the order of [params]; each a load names
