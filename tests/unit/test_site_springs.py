"""Springs between helper sites (no tendons: Euler and RK4, ``rigmodel``) against MuJoCo's own
tendon spring-dampers on a branched floating tree: at random states, the generalized force the
rig applies (compiled, and in Python) is MuJoCo's ``qfrc_spring + qfrc_damper`` of the same
springs as tendons, and the recorded length and rate are MuJoCo's tendon length and velocity.

The springs cover each way two ends' chains meet: two branches of one tree (the free joint's dofs
are shared and cancel), a body and its own ancestor, a body and the world, two trees, a body
welded to a moving parent, and both ends on one body (no force at all)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mjrig.runtime import PointToPointForce, RuntimeManager
from mjrig.runtime.rigmodel import compile_rig

XML = """
<mujoco>
  <option timestep="0.001" integrator="Euler" gravity="0 0 0"/>
  <worldbody>
    <site name="anchor" pos="0.4 -0.3 1.2"/>
    <body name="torso" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.08 0.15" mass="3"/>
      <body name="left" pos="0 0.1 0">
        <joint name="l1" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0.2 0" size="0.03" mass="0.5"/>
        <body name="lhand" pos="0 0.2 0">
          <joint name="l2" type="ball"/>
          <geom type="sphere" size="0.04" mass="0.2"/>
          <body name="lfinger" pos="0.05 0 0">
            <geom type="sphere" size="0.01" mass="0.01"/>
          </body>
        </body>
      </body>
      <body name="right" pos="0 -0.1 0">
        <joint name="r1" type="hinge" axis="0 0 1"/>
        <joint name="r2" type="slide" axis="0 -1 0"/>
        <geom type="capsule" fromto="0 0 0 0 -0.2 0" size="0.03" mass="0.5"/>
      </body>
    </body>
    <body name="ball" pos="0.5 0.5 1">
      <freejoint/>
      <geom type="sphere" size="0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""

SPRINGS = [  # (name, at, to): every way the two ends' chains can meet
    ("branches", "body:lhand@0.01,0.02,0", "body:right@0,-0.15,0.01"),
    ("ancestor", "body:lfinger@0,0,0.01", "body:torso@0.05,0,0.1"),
    ("to_world", "body:right@0,-0.2,0", "anchor"),
    ("two_trees", "body:ball@0.02,0,0", "body:left@0,0.1,0"),
    ("one_body", "body:lhand@0.03,0,0", "body:lhand@-0.03,0,0"),
]
K, C = 120.0, 3.5


def _loads() -> list[PointToPointForce]:
    return [PointToPointForce.ideal_spring(n, a, b, stiffness=K, damping=C, rest_length=0.1) for n, a, b in SPRINGS]


def _tendon_reference() -> tuple[mujoco.MjModel, mujoco.MjData, dict[str, int]]:
    """The same springs as MuJoCo's own tendon spring-dampers (rest length 0.1 m)."""
    model, layout = compile_rig(mujoco.MjSpec.from_string(XML), _loads(), tendons=True)
    tendons = {n: int(t) for n, t in layout.helper_of.items()}  # type: ignore[arg-type]
    for t in tendons.values():
        model.tendon_stiffness[t], model.tendon_damping[t] = K, C
        model.tendon_lengthspring[t] = 0.1, 0.1
    return model, mujoco.MjData(model), tendons


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_site_springs_apply_what_mujocos_tendon_springs_apply(compiled: bool) -> None:
    rm = RuntimeManager(loads=_loads(), playback_speed=0, compiled_laws=compiled)
    model, data = rm.load_model(mujoco.MjSpec.from_string(XML))
    assert model.ntendon == 0 and model.nsite > 1
    ref_m, ref_d, tendons = _tendon_reference()
    assert (ref_m.nq, ref_m.nv) == (model.nq, model.nv)
    rng = np.random.default_rng(7)
    with rm:
        rm.resolve(model, data)
        engine = rm.engine
        assert engine is not None and engine.bank is not None and engine.bank.by_sites
        assert (engine.table is not None) == compiled
        for _ in range(5):
            qpos = model.qpos0 + rng.normal(scale=0.3, size=model.nq)
            mujoco.mj_normalizeQuat(model, qpos)  # free and ball joints: unit quaternions
            qvel = rng.normal(scale=1.0, size=model.nv)
            for d in (data, ref_d):
                d.qpos[:], d.qvel[:] = qpos, qvel
                d.time += 0.001  # a state no step has been taken at: the outputs are worked out again
            mujoco.mj_forward(ref_m, ref_d)
            mujoco.mj_forward(model, data)
            engine.update_outputs()
            expected = ref_d.qfrc_spring + ref_d.qfrc_damper
            scale = float(np.max(np.abs(expected)))
            assert scale > 1.0, "the springs must be loaded"
            np.testing.assert_allclose(data.qfrc_applied, expected, rtol=0, atol=1e-10 * scale)
            rows = [ld.name for ld in engine.loads]
            for name, t in tendons.items():
                length, rate, _ = engine.lv[rows.index(name)]
                assert length == pytest.approx(ref_d.ten_length[t], rel=1e-12, abs=1e-14)
                assert rate == pytest.approx(ref_d.ten_velocity[t], rel=1e-9, abs=1e-12)
