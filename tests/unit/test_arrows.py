"""Arrows stay readable at every scale: never a flat disc, never longer than the model."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.runtime.drawing.visuals import ArrowConfig, Color
from mjrig.scenario.builder import runtime_of
from mjrig.scenario.parse import load_scenario

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize("force", [1e-3, 1.0, 87.0, 1e6])
@pytest.mark.parametrize("toml", sorted(MODELS.glob("*.toml")), ids=lambda p: p.stem)
def test_arrow_proportions_are_bounded(toml, force):
    model = mujoco.MjModel.from_xml_path(str(load_scenario(toml).model))
    scene = mujoco.MjvScene(model, 10)
    assert ArrowConfig(np.zeros(3), np.array([0.0, force, 0.0]), Color.ACTION).draw_in_scene(model, scene)
    width, _, length = scene.geoms[0].size
    assert length >= 6.0 * width, (width, length)
    assert length <= 1.5 * model.stat.extent + 1e-9, (length, model.stat.extent)


def lengths(model, arrows, scale):
    from mjrig.runtime.drawing.visuals import draw_all

    scene = mujoco.MjvScene(model, 20)
    draw_all(model, scene, arrows, [], scale=scale)
    return [float(scene.geoms[i].size[2]) for i in range(scene.ngeom)]


def force(fx: float, *, torque: bool = False) -> ArrowConfig:
    return ArrowConfig(
        np.zeros(3), np.array([fx, 0.0, 0.0]), Color.TORQUE if torque else Color.ACTION, is_torque=torque
    )


def test_view_scales_set_metres_per_newton_and_per_newton_metre(tmp_path):
    from mjrig.runtime.drawing.visuals import ArrowScale

    toml = tmp_path / "rig.toml"
    toml.write_text(f'model = "{MODELS / "robot_arm.xml"}"\n[view]\nforce_scale = 0.01\ntorque_scale = 0.05\n')
    sc = load_scenario(toml)
    rm = runtime_of(sc)
    assert (rm.arrow_scale.force, rm.arrow_scale.torque) == (0.01, 0.05)
    model = mujoco.MjModel.from_xml_path(str(sc.model))
    got = lengths(model, [force(40.0), force(10.0), force(2.0, torque=True)], rm.arrow_scale)
    np.testing.assert_allclose(got, [0.4, 0.1, 0.1], rtol=1e-6)
    assert runtime_of(load_scenario(MODELS / "robot_arm.toml")).arrow_scale.force is None  # omitted: automatic
    assert isinstance(rm.arrow_scale, ArrowScale)


def test_automatic_scale_makes_the_largest_arrow_a_quarter_of_the_model_and_does_not_flicker():
    from mjrig.runtime.drawing.framing import model_size
    from mjrig.runtime.drawing.visuals import ArrowScale

    model = mujoco.MjModel.from_xml_path(str(MODELS / "robot_arm.xml"))
    quarter = 0.25 * model_size(model)
    scale = ArrowScale()
    got = lengths(model, [force(38.0), force(10.0)], scale)
    np.testing.assert_allclose(got, [quarter, quarter * 10 / 38], rtol=1e-6)  # the 38 N load: visible (float32 geoms)
    # the loads wobble by ±10 %: the arrows follow the forces, the scale keeps still
    rng = np.random.default_rng(1)
    per_newton = []
    for _ in range(200):
        f = 38.0 * (1 + 0.1 * rng.uniform(-1, 1))
        first = lengths(model, [force(f), force(10.0)], scale)[0]
        per_newton.append(first / f)
    assert np.ptp(per_newton) < 1e-6 * np.mean(per_newton)
    # a load four times larger: the scale moves smoothly (never more than 1/5 of the way a frame)
    # and settles with the largest arrow back within the band around a quarter of the model
    seen = [lengths(model, [force(152.0)], scale)[0] for _ in range(40)]
    steps = np.diff(seen)
    assert np.all(steps <= 1e-6) and seen[0] > quarter * 1.25  # shrinking, from too long
    assert 0.8 * quarter <= seen[-1] <= 1.25 * quarter
    ratios = np.array(seen[1:]) / np.array(seen[:-1])
    assert np.all(ratios >= 0.25**0.2 - 1e-6)  # each frame at most a fifth of the way (geometric)


def test_the_panels_arrow_scale_writes_view_and_sets_the_runtime(tmp_path, monkeypatch):
    from mjrig import commands as C
    from mjrig.scenario.parse import load_scenario as load
    from mjrig.session.kernel import Session

    monkeypatch.chdir(tmp_path)
    s = Session()
    s.open(MODELS / "spring_mass.toml")
    assert s.rm.arrow_scale.force is None and s.publish().tools.force_scale is None
    s.handle(C.SetArrowScale(0.02))
    assert (s.rm.arrow_scale.force, s.rm.arrow_scale.torque) == (0.02, 0.1)
    assert (
        s.document.doc["view"] == {"force_scale": 0.02, "torque_scale": 0.1} and s.publish().tools.force_scale == 0.02
    )
    s.handle(C.SaveScenario(str(tmp_path / "saved.toml")))
    assert load(tmp_path / "saved.toml").arrow_scales == (0.02, 0.1)
    s.handle(C.SetArrowScale(None))
    assert s.rm.arrow_scale.force is None and "view" not in s.document.doc


WALKER = """<mujoco><worldbody>
  <geom type="plane" size="40 40 40"/>
  <body name="torso" pos="0 0 1.25"><freejoint/>
    <geom type="capsule" size="0.05 0.2"/>
    <body pos="0 0 -0.45"><geom type="capsule" size="0.05 0.225" pos="0.1 0 -0.3"/></body>
  </body>
</worldbody></mujoco>"""


def test_the_automatic_scale_follows_the_models_bodies_not_its_floor():
    from mjrig.runtime.drawing.framing import framing_points, model_size
    from mjrig.runtime.drawing.visuals import ArrowScale

    model = mujoco.MjModel.from_xml_string(WALKER)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    pts = framing_points(model, data)
    size = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0)))
    assert model_size(model) == pytest.approx(size) and 1.0 < size < 2.0 < model.stat.extent
    got = lengths(model, [force(40.0)], ArrowScale())
    np.testing.assert_allclose(got, [0.25 * size], rtol=1e-6)  # a quarter of the walker, not of its floor
