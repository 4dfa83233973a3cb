"""Springs MuJoCo evaluates natively (tendon spring-dampers) against mjrig's array path, and
the springs between helper sites (no tendons: the explicit integrators, ``rigmodel``) against both.

Every path must give the same forces and the same motion for every spring kind on Euler,
implicit and RK4; a param moved mid-run must change a native spring at the next step.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest

from mjrig.runtime import NamedValue, PointToPointForce, RuntimeManager, SignalManager
from tests.unit.unit_util import point_mass_xml

K, C, REST = 400.0, 3.0, 0.25
KINDS = {  # kind -> (factory keywords, start position x0 m, whether MuJoCo can evaluate it natively)
    "ideal_spring": (dict(stiffness=K, damping=C, rest_length=REST), 0.32, True),
    "tension_spring": (dict(stiffness=K, damping=0.0, rest_length=REST), 0.32, True),
    "compression_spring": (dict(stiffness=K, damping=0.0, rest_length=REST), 0.19, True),
    "damped_tension_spring": (dict(stiffness=K, damping=C, rest_length=REST), 0.32, False),
    "stroke_compression_spring": (dict(stiffness=K, damping=C, preload=20.0, max_stroke=0.05), 0.2, False),
}
INTEGRATORS = {
    "Euler": mujoco.mjtIntegrator.mjINT_EULER,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "RK4": mujoco.mjtIntegrator.mjINT_RK4,
}


def _spring(kind: str) -> PointToPointForce:
    kw, _, _ = KINDS[kind]
    factory = getattr(PointToPointForce, kind.replace("damped_", ""))
    return factory("s", "tip", "base", **kw)


def _run(
    kind: str,
    integrator: str,
    *,
    native: bool,
    compiled: bool = False,
    tendons: bool = True,
    seconds: float = 0.6,
    out: Path | None = None,
):
    """(times, positions, recorded x-forces, whether a step runs Python) of the slide run on one
    path: MuJoCo's tendon springs where exact (``native``), the compiled laws (``compiled``), the
    rest in Python. ``tendons``: the rig has helper tendons (compiled for an implicit integrator),
    else helper sites alone (compiled for Euler); either is then stepped with ``integrator``."""
    _, x0, _ = KINDS[kind]
    sm = SignalManager(out, groups=("joints", "loads")) if out is not None else None
    rm = RuntimeManager(
        loads=[_spring(kind)], playback_speed=0, native_springs=native, compiled_laws=compiled, signal_manager=sm
    )
    xml = point_mass_xml(dt=0.0005, mass=1.5, integrator="implicit" if tendons else "Euler")
    model, data = rm.load_model(mujoco.MjSpec.from_string(xml))
    assert model.ntendon == int(tendons)
    model.opt.integrator = INTEGRATORS[integrator]
    data.qpos[0] = x0
    mujoco.mj_forward(model, data)
    ts, xs, fs = [], [], []
    with rm:
        while data.time < seconds - 1e-9:
            rm.step(model, data)
            ts.append(data.time)
            xs.append(float(data.qpos[0]))
            fs.append(float(rm.drawing.load_forces()["s"][0]))
        python = rm.engine.needs_python if rm.engine is not None else True
    return np.array(ts), np.array(xs), np.array(fs), python


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_native_and_array_paths_move_alike(kind: str, integrator: str) -> None:
    t_n, x_n, f_n, python_n = _run(kind, integrator, native=True)
    t_a, x_a, f_a, python_a = _run(kind, integrator, native=False)
    t_c, x_c, f_c, python_c = _run(kind, integrator, native=False, compiled=True)
    t_s, x_s, f_s, python_s = _run(kind, integrator, native=True, tendons=False)
    t_sc, x_sc, f_sc, python_sc = _run(kind, integrator, native=True, tendons=False, compiled=True)
    assert python_a, "the array path evaluates its springs in Python"
    assert python_n == (not KINDS[kind][2]), "native exactly for the kinds MuJoCo computes exactly"
    assert not python_c, "the compiled laws take every spring out of Python"
    assert python_s and not python_sc, "without tendons: Python, or the compiled laws"
    np.testing.assert_array_equal(t_n, t_a)
    np.testing.assert_array_equal(t_s, t_a)
    # The compiled laws are the array path's arithmetic in the same order: the same run.
    np.testing.assert_allclose(x_c, x_a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(f_c, f_a, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(x_sc, x_s)
    np.testing.assert_array_equal(f_sc, f_s)
    # Between sites the geometry and the forces' sums are worked out another way than MuJoCo's
    # tendon's: the same explicit law, to rounding.
    np.testing.assert_allclose(x_s, x_a, rtol=0, atol=1e-9)
    np.testing.assert_allclose(f_s, f_a, rtol=0, atol=1e-6)
    amplitude = float(np.ptp(x_a))
    assert amplitude > 0.01, "the spring must move the mass"
    # Same motion: implicit integrators treat MuJoCo's own damping implicitly, hence a tolerance
    # of 1 % of the motion rather than bit equality.
    assert np.max(np.abs(x_n - x_a)) <= 0.01 * amplitude
    assert np.max(np.abs(f_n - f_a)) <= 0.01 * float(np.max(np.abs(f_a)))


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_undamped_native_spring_has_the_closed_form_period(integrator: str) -> None:
    """Ideal spring, no damping: period 2π√(m/k) within 1 % on every integrator, without Python
    per step (MuJoCo's tendon spring under the implicit ones, the compiled laws between sites
    under the others)."""
    rm = RuntimeManager(
        loads=[PointToPointForce.ideal_spring("s", "tip", "base", stiffness=K, rest_length=REST)], playback_speed=0
    )
    model, data = rm.load_model(mujoco.MjSpec.from_string(point_mass_xml(dt=0.0005, mass=1.5, integrator=integrator)))
    data.qpos[0] = REST + 0.05
    vs, ts = [], []
    with rm:
        while data.time < 1.0:
            rm.step(model, data)
            vs.append(float(data.qvel[0]))
            ts.append(data.time)
        assert not rm.engine.needs_python
    v, t = np.array(vs), np.array(ts)
    down = np.nonzero((v[:-1] > 0) & (v[1:] <= 0))[0]
    period = float(np.mean(np.diff(t[down])))
    assert period == pytest.approx(2 * math.pi * math.sqrt(1.5 / K), rel=0.01)


def test_a_param_moved_mid_run_changes_a_native_spring_at_the_next_step(tmp_path: Path) -> None:
    k = NamedValue("k", 100.0, unit="N/m")
    out = tmp_path / "k.parquet"
    rm = RuntimeManager(
        loads=[PointToPointForce.ideal_spring("s", "tip", "base", stiffness=k, rest_length=REST)],
        playback_speed=0,
        signal_manager=SignalManager(out),
    )
    model, data = rm.load_model(mujoco.MjSpec.from_string(point_mass_xml(dt=0.0005, mass=1.5, integrator="Euler")))
    data.qpos[0] = REST + 0.1
    with rm:
        for _ in range(200):
            rm.step(model, data)
        assert not rm.engine.needs_python
        t_change = data.time
        k.value = 800.0
        for _ in range(200):
            rm.step(model, data)
    df = pl.read_parquet(out)
    stretch = df["Joints/x:qpos"] - REST
    force = df["Loads/s:fx"]
    before = df["time"] < t_change - 1e-9
    np.testing.assert_allclose(force.filter(before), -100.0 * stretch.filter(before), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(force.filter(~before), -800.0 * stretch.filter(~before), rtol=1e-9, atol=1e-12)
    # ... and the physics saw it at once: the first step after the change accelerates the mass
    # by -800·stretch/m (Euler: v' = v + dt·a).
    after = df.filter(~before)
    assert after["Params/k:value"][0] == 800.0
    accel = (after["Joints/x:qvel"][1] - after["Joints/x:qvel"][0]) / model.opt.timestep
    assert accel == pytest.approx(-800.0 * (after["Joints/x:qpos"][0] - REST) / 1.5, rel=1e-9)
