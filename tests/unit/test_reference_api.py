"""The runtime API as the reference documents it: every name, used the way its examples use it.

``REFERENCE_SCRIPT`` is what a user of the reference would paste (its imports, constructors,
methods and attributes); it runs in a fresh interpreter from an empty folder and reports what it
saw. The other tests check the behaviour behind those names against closed-form physics.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest

from mjrig.runtime import (
    ArrowConfig,
    Body,
    BodyReactionForce,
    Color,
    GeneralLoad,
    LineConfig,
    Load,
    PointToPointForce,
    RuntimeManager,
    ScalarForce,
    ScalarTorque,
    SignalCategory,
    SignalManager,
    Site,
    VectorForce,
    VectorTorque,
)
from tests import mjcf

FREE_XML = mjcf.model(
    mjcf.free_ball("ball", pos="{x0} 0 0", joint="free", size="{r}", mass="{m}", site="c"),
    mjcf.free_ball("other", pos="0 2 0", size="{r}", mass="{mo}"),
    option='timestep="0.001" gravity="0 0 {g}" integrator="Euler"',
    world='    <site name="anchor" pos="0 0 0"/>',
)


def _free(
    *, g: float = 0.0, x0: float = 1.0, r: float = 0.1, m: float = 2.0, mo: float = 5.0
) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = mujoco.MjModel.from_xml_string(FREE_XML.format(g=g, x0=x0, r=r, m=m, mo=mo))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def test_apply_load_then_step_gives_f_over_m_and_t_over_i() -> None:
    m, r = 2.0, 0.1
    model, data = _free(m=m, r=r)
    F = np.array([3.0, -1.0, 0.5])
    VectorForce(name="f", action_site="c", vector=list(F)).apply_load(model, data)
    tau = 0.04
    ScalarTorque(name="t", action_site="c", magnitude=tau).apply_load(model, data)  # about the site's x
    mujoco.mj_step(model, data)
    inertia = 0.4 * m * r * r
    np.testing.assert_allclose(data.qacc[0:3], F / m, atol=1e-12)
    np.testing.assert_allclose(data.qacc[3:6], [tau / inertia, 0.0, 0.0], rtol=1e-9)
    np.testing.assert_allclose(data.qvel[0:3], F / m * model.opt.timestep, atol=1e-15)


def test_apply_load_spring_and_reaction_match_hookes_law_and_newtons_third() -> None:
    m, mo, k, rest, x0 = 2.0, 5.0, 100.0, 0.5, 1.0
    model, data = _free(m=m, mo=mo, x0=x0)
    spring = PointToPointForce.ideal_spring("s", "c", "anchor", stiffness=k, rest_length=rest)
    spring.apply_load(model, data)  # never resolved: r0 is taken now
    # Stretched by x0 - rest: pulls the ball toward the anchor (−x) with k (x0 − rest).
    np.testing.assert_allclose(data.qfrc_applied[0:3], [-k * (x0 - rest), 0.0, 0.0], atol=1e-12)
    data.qfrc_applied[:] = 0.0
    F = np.array([0.0, 1.5, -2.0])
    GeneralLoad(name="g", action_site="c", force=list(F), xtion_body=Body("other")).apply_load(model, data)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.qacc[0:3], F / m, atol=1e-12)
    np.testing.assert_allclose(data.qacc[6:9], -F / mo, atol=1e-12)


def test_apply_load_inactive_adds_nothing_and_non_finite_raises_before_touching_qfrc() -> None:
    model, data = _free()
    load = VectorForce(name="f", action_site="c", vector=[1.0, 0.0, 0.0], active=False)
    load.apply_load(model, data)
    assert not data.qfrc_applied.any()
    load.active = True
    load.apply_load(model, data)
    assert data.qfrc_applied[0] == 1.0
    bad = ScalarForce(name="bad", action_site="c", scalar_func=lambda t, ax, m, d: math.nan)
    with pytest.raises(ValueError, match="non-finite"):
        bad.apply_load(model, data)
    np.testing.assert_array_equal(data.qfrc_applied[:6], [1.0, 0, 0, 0, 0, 0])


def test_apply_load_agrees_with_runtime_manager_step() -> None:
    F = [0.7, 0.0, -0.2]
    model, data = _free()
    VectorForce(name="f", action_site="c", vector=F, xtion_body="body:other").apply_load(model, data)
    mujoco.mj_step(model, data)
    model2, data2 = _free()
    rm = RuntimeManager(
        loads=[VectorForce(name="f", action_site="c", vector=F, xtion_body="body:other")], playback_speed=0.0
    )
    with rm:
        rm.step(model2, data2)
    np.testing.assert_allclose(data2.qacc, data.qacc, atol=1e-12)
    np.testing.assert_allclose(data2.qpos, data.qpos, atol=1e-15)


def test_body_reaction_force_is_a_real_base_with_its_own_reaction() -> None:
    assert BodyReactionForce is not Load and issubclass(BodyReactionForce, Load)
    for cls in (GeneralLoad, VectorForce, VectorTorque, ScalarForce, ScalarTorque):
        assert BodyReactionForce in cls.__mro__, cls
    assert not issubclass(PointToPointForce, BodyReactionForce)
    assert issubclass(GeneralLoad, VectorForce) and issubclass(GeneralLoad, VectorTorque)
    assert not issubclass(ScalarTorque, ScalarForce)
    with pytest.raises(TypeError):
        BodyReactionForce(name="abstract", action_site="c")  # no calculate: abstract

    class Kick(BodyReactionForce):  # a user's load: fields by annotation, no decorator
        newtons: float = 1.0

        def calculate(self, mj_model, mj_data):
            return np.array([0.0, 0.0, self.newtons]), np.zeros(3)

    m, mo = 2.0, 5.0
    model, data = _free(m=m, mo=mo)
    Kick(name="kick", action_site="c", newtons=3.0, xtion_body="body:other").apply_load(model, data)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.qacc[2], 3.0 / m, rtol=1e-12)
    np.testing.assert_allclose(data.qacc[8], -3.0 / mo, rtol=1e-12)


def test_standalone_signal_manager_writes_free_fall_to_parquet(tmp_path: Path) -> None:
    g, x0, n = 9.81, 0.0, 20
    model, data = _free(g=-g, x0=x0)
    dt = model.opt.timestep
    out = tmp_path / "fall.parquet"
    sm = SignalManager(out, batch_size=4, record_decimation=3)
    for _ in range(n):
        mujoco.mj_forward(model, data)
        sm.post(0.5 * 2.0 * float(data.qvel[2]) ** 2, SignalCategory.BODIES, ("ball", "energy"), attr="kinetic")
        sm.record(model, data)
        mujoco.mj_step(model, data)
    sm.close()
    df = pl.read_parquet(out)
    steps = np.arange(0, n, 3)
    assert df.height == len(steps)
    assert df.columns[0] == "time"
    assert {"Joints/free:z", "Joints/free:vz", "Bodies/ball:z", "Bodies/ball/energy:kinetic"} <= set(df.columns)
    np.testing.assert_allclose(df["time"].to_numpy(), steps * dt, atol=1e-12)
    # Semi-implicit Euler from rest: v_n = −g n dt, z_n = −g dt² n (n + 1) / 2.
    np.testing.assert_allclose(df["Joints/free:vz"].to_numpy(), -g * steps * dt, atol=1e-12)
    np.testing.assert_allclose(df["Bodies/ball:z"].to_numpy(), -g * dt * dt * steps * (steps + 1) / 2, atol=1e-12)
    np.testing.assert_allclose(df["Bodies/ball/energy:kinetic"].to_numpy(), (g * steps * dt) ** 2, rtol=1e-9)


def test_tuple_coloured_arrow_is_drawn_with_that_rgba_along_its_vector() -> None:
    model, _ = _free()
    scene = mujoco.MjvScene(model, maxgeom=10)
    rgba = (0.1, 0.2, 0.3, 0.4)
    vec = np.array([0.0, 3.0, 4.0])
    arrow = ArrowConfig(pos=np.array([0.5, 0.0, 0.0]), vec=vec, color=rgba)
    assert arrow.color == rgba  # kept as given
    assert arrow.draw_in_scene(model, scene) and scene.ngeom == 1
    geom = scene.geoms[0]
    np.testing.assert_allclose(geom.rgba, rgba, rtol=1e-6)
    np.testing.assert_allclose(geom.mat[:, 2], vec / 5.0, atol=1e-6)  # the arrow points along vec
    np.testing.assert_allclose(geom.pos, [0.5, 0.0, 0.0], atol=1e-6)
    assert ArrowConfig(pos=np.zeros(3), vec=vec, color=Color.AMBER_500, is_torque=True).draw_in_scene(model, scene)
    np.testing.assert_allclose(scene.geoms[1].rgba, Color.AMBER_500.rgba, rtol=1e-6)
    assert LineConfig(start=np.zeros(3), end=np.ones(3), color=(1.0, 0.0, 0.0)).draw_in_scene(scene)
    np.testing.assert_allclose(scene.geoms[2].rgba, [1.0, 0.0, 0.0, 1.0])  # RGB: opaque
    assert scene.ngeom == 3
    for bad in ((1.0, 0.0), (0.5, 0.5, 1.5, 1.0), "red"):
        with pytest.raises(ValueError, match="colour"):
            ArrowConfig(pos=np.zeros(3), vec=vec, color=bad)


def test_palette_is_tailwinds_and_loads_draw_with_it() -> None:
    hexes = {"EMERALD_500": (16, 185, 129), "AMBER_500": (245, 158, 11), "ROSE_500": (244, 63, 94)}
    for name, rgb in hexes.items():
        assert getattr(Color, name).rgba == (*[c / 255 for c in rgb], 1.0)
    model, data = _free()
    load = GeneralLoad(name="g", action_site="c", force=[1.0, 0, 0], torque=[0, 0, 1.0], xtion_body="body:other")
    load.apply_load(model, data)
    colors = [a.color for a in load.get_visuals(model, data)]
    assert colors == [Color.EMERALD_500.rgba, Color.AMBER_500.rgba, Color.ROSE_500.rgba]


def test_signal_category_is_an_enum_and_names_posted_columns() -> None:
    assert SignalCategory("Bodies") is SignalCategory.BODIES
    assert [c.value for c in SignalCategory][:2] == ["Joints", "Bodies"]
    with pytest.raises(ValueError):
        SignalCategory("Nope")
    sm = SignalManager(None)
    sm.post(1.2, SignalCategory.BODIES, ("Hand", "xpos"), attr="x")
    sm.post(9.81, "Sensors", ("IMU", "Accel"), attr="z")
    assert sm.columns[-2:] == ["Bodies/Hand/xpos:x", "Sensors/IMU/Accel:z"]


def test_site_and_body_objects_are_the_reference_points() -> None:
    model, data = _free(x0=1.5)
    assert Site("c").get_id(model) == mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "c")
    np.testing.assert_allclose(Body("ball").rt_pos(model, data), [1.5, 0.0, 0.0])
    assert Site("c").rt_dm(Site("anchor"), model, data) == pytest.approx(1.5)
