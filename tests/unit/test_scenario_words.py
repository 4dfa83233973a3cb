"""The Python constructors take the scenario's words: ``at=`` for ``action_site`` and ``to=`` for
``xtion_body`` / ``xtion_site``. A load built either way applies identical forces; giving both
spellings of one thing is a TypeError that names them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np
import pytest

from mjrig.runtime import (
    GeneralLoad,
    Load,
    PointToPointForce,
    RuntimeManager,
    ScalarForce,
    ScalarTorque,
    Sine,
    VectorForce,
    VectorTorque,
)
from mjrig.runtime.forces.springs import SpringLaw

XML = """
<mujoco>
  <option timestep="1e-3" gravity="0 0 -9.81"/>
  <worldbody>
    <site name="anchor" pos="0 0 0.5"/>
    <body name="a" pos="0 0 0">
      <freejoint/>
      <geom type="box" size="0.05 0.04 0.03" mass="1.0" contype="0" conaffinity="0"/>
      <site name="sa" pos="0.02 0.03 0" euler="10 20 30"/>
    </body>
    <body name="b" pos="0.3 0.1 -0.05">
      <freejoint/>
      <geom type="sphere" size="0.05" mass="2.0" contype="0" conaffinity="0"/>
      <site name="sb" pos="-0.01 0 0.04"/>
    </body>
  </worldbody>
</mujoco>
"""

# Each case: the class, the scenario words (at/to), the reference API's names, and the other fields.
CASES: dict[str, tuple[Callable[..., Load], dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "force": (
        VectorForce,
        {"at": "sa", "to": "sb"},
        {"action_site": "sa", "xtion_body": "sb"},
        {"vector": [1.0, -2.0, 3.0], "rel_to_site": "sa"},
    ),
    "torque": (
        VectorTorque,
        {"at": "body:a", "to": "body:b@0.01,0,0"},
        {"action_site": "body:a", "xtion_body": "body:b@0.01,0,0"},
        {"vector": [0.2, 0.1, -0.3]},
    ),
    "general": (
        GeneralLoad,
        {"at": "sa", "to": "sb"},
        {"action_site": "sa", "xtion_body": "sb"},
        {"force": [0.5, 0.0, 1.0], "torque": [0.0, 0.3, 0.0]},
    ),
    "scalar_force": (
        ScalarForce,
        {"at": "sa"},
        {"action_site": "sa"},
        {"magnitude": Sine(amplitude=4.0, frequency=3.0)},
    ),
    "scalar_torque": (
        ScalarTorque,
        {"at": "sa", "to": "sb"},
        {"action_site": "sa", "xtion_body": "sb"},
        {"magnitude": 0.7},
    ),
    "spring": (
        PointToPointForce,
        {"at": "sa", "to": "sb"},
        {"action_site": "sa", "xtion_site": "sb"},
        {"law": SpringLaw(150.0, 1.5, 0.2)},
    ),
    "stroke": (
        PointToPointForce,
        {"at": "anchor", "to": "sb"},
        {"action_site": "anchor", "xtion_site": "sb"},
        {"law": SpringLaw(80.0, 0.0, preload=5.0, max_stroke=0.5, stroke_limited=True)},
    ),
}


def _run(load: Load, steps: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step a fresh model with ``load`` only; (qpos at the end, every step's force, torque)."""
    model = mujoco.MjModel.from_xml_string(XML)
    data = mujoco.MjData(model)
    rm = RuntimeManager(loads=[load], playback_speed=0)
    forces, torques = [], []
    for _ in range(steps):
        rm.step(model, data)
        rm.drawing.load_forces()
        forces.append(np.array(load.last_force))
        torques.append(np.array(load.last_torque))
    return data.qpos.copy(), np.array(forces), np.array(torques)


@pytest.mark.parametrize("case", sorted(CASES))
def test_scenario_words_build_the_same_load(case: str) -> None:
    cls, words, names, rest = CASES[case]
    by_words = cls(name="x", **words, **rest)
    by_names = cls(name="x", **names, **rest)
    for field, _value in names.items():
        assert str(getattr(by_words, field)) == str(getattr(by_names, field)), field
    q_w, f_w, t_w = _run(by_words)
    q_n, f_n, t_n = _run(by_names)
    assert np.abs(f_n).max() + np.abs(t_n).max() > 0.0, "the load must act"
    np.testing.assert_array_equal(f_w, f_n)
    np.testing.assert_array_equal(t_w, t_n)
    np.testing.assert_array_equal(q_w, q_n)


@pytest.mark.parametrize(
    "cls, word, name",
    [
        (VectorForce, "at", "action_site"),
        (VectorForce, "to", "xtion_body"),
        (ScalarForce, "to", "xtion_body"),
        (PointToPointForce, "at", "action_site"),
        (PointToPointForce, "to", "xtion_site"),
    ],
)
def test_both_spellings_of_one_thing_is_a_type_error(cls: type, word: str, name: str) -> None:
    kw: dict[str, Any] = (
        {"action_site": "sa"}
        if cls is not PointToPointForce
        else {"action_site": "sa", "xtion_site": "sb", "law": SpringLaw(1.0)}
    )
    kw[word] = "sa"
    kw[name] = "sb"
    with pytest.raises(TypeError, match=f"'{word}'.*'{name}'"):
        cls(name="x", **kw)


def test_a_users_load_takes_the_words_too() -> None:
    class Thrust(Load):
        newtons: float = 1.0

        def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
            return np.array([self.newtons, 0.0, 0.0]), np.zeros(3)

    a, b = Thrust(name="t", at="sa", newtons=2.0), Thrust(name="t", action_site="sa", newtons=2.0)
    assert str(a.action_site) == str(b.action_site) == "sa"
    np.testing.assert_array_equal(_run(a, 50)[0], _run(b, 50)[0])
