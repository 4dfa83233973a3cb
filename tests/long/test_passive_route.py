"""MuJoCo's passive-force callback is one pointer for the whole process: two RK4 rigs whose loads
are evaluated in Python, stepped at once on two threads, each get only their own force calls, move
exactly as each does alone, and leave nothing installed. Fast (about 1 s: 2 x 4,000 RK4 steps)."""

from __future__ import annotations

import threading

import mujoco
import numpy as np
import pytest

from mjrig.runtime.compiled import passive_route
from mjrig.runtime.forces.loads import VectorForce
from mjrig.runtime.manager import RuntimeManager
from tests.unit.conftest import build_model

pytestmark = pytest.mark.unit

SLIDE = """<mujoco><option timestep="0.001" gravity="0 0 0"/><worldbody>
  <body name="mass"><joint name="x" type="slide" axis="1 0 0"/><geom type="sphere" size=".05" mass="1"/></body>
</worldbody></mujoco>"""

STEPS = 4000


def _rig(k: float) -> tuple[RuntimeManager, mujoco.MjModel, mujoco.MjData, list[int]]:
    """A 1 kg mass on a Python spring of ``k`` N/m (a callable force), RK4, 0.1 m out; the list
    counts the force calls that came with another simulation's data."""
    wrong: list[int] = [0]
    rm = RuntimeManager(playback_speed=0)
    model, data = build_model(rm, SLIDE, "array", integrator="RK4")

    def spring(_t: float, _m: mujoco.MjModel, d: mujoco.MjData) -> np.ndarray:
        if d is not data:
            wrong[0] += 1
        return np.array([-k * float(d.qpos[0]), 0.0, 0.0])

    rm.add_load(VectorForce(name="spring", action_site="body:mass", vector=spring))
    data.qpos[0] = 0.1
    mujoco.mj_forward(model, data)
    return rm, model, data, wrong


def _run(rm: RuntimeManager, model: mujoco.MjModel, data: mujoco.MjData) -> None:
    for _ in range(STEPS):
        rm.step(model, data)


def test_two_rk4_rigs_with_python_loads_on_two_threads_keep_their_own_forces() -> None:
    before = mujoco.get_mjcb_passive()
    alone = {}
    for k in (100.0, 400.0):  # each rig alone, one after the other: the reference
        rm, model, data, _ = _rig(k)
        with rm:
            _run(rm, model, data)
        alone[k] = (float(data.qpos[0]), float(data.qvel[0]))
    rigs = {k: _rig(k) for k in (100.0, 400.0)}
    threads = [threading.Thread(target=_run, args=rigs[k][:3]) for k in rigs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, (rm, _model, data, wrong) in rigs.items():
        rm.close()
        assert wrong[0] == 0, f"the rig of k = {k} got {wrong[0]} force calls of the other rig"
        assert (float(data.qpos[0]), float(data.qvel[0])) == alone[k], "a rig moved otherwise beside another"
        omega = np.sqrt(k)  # x = 0.1 cos(ωt): the spring is the one acting
        assert float(data.qpos[0]) == pytest.approx(0.1 * np.cos(omega * data.time), abs=1e-7)  # RK4 at 1 ms: ~1e-8
    assert mujoco.get_mjcb_passive() is before, "a callback was left installed"
    assert passive_route.installed() is before
