"""Framing: the camera chosen on open sees every moving part of every bundled rig."""
from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.camera import TRACKING, apply_camera, camera_choices, frame_model, next_camera
from mjrig.scenario import load_scenario

MODELS = Path(__file__).resolve().parents[2] / "models"


def _visible_fraction(model, data, cam, aspect=1.5) -> float:
    """Share of the moving geoms' centres inside the camera's view cone (free/tracking camera)."""
    az, el = math.radians(cam.azimuth), math.radians(cam.elevation)
    forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    eye = np.asarray(cam.lookat) - cam.distance * forward
    half_v = math.radians(model.vis.global_.fovy) / 2
    half_h = math.atan(math.tan(half_v) * aspect)
    right = np.cross(forward, [0, 0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    ids = [i for i in range(model.ngeom) if model.geom_bodyid[i] > 0]
    inside = 0
    for i in ids:
        v = data.geom_xpos[i] - eye
        z = v @ forward
        inside += z > 0 and abs(math.atan2(v @ right, z)) < half_h and abs(math.atan2(v @ up, z)) < half_v
    return inside / len(ids)


@pytest.mark.parametrize("toml", sorted(MODELS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_bundled_rig_opens_framed(toml):
    model = mujoco.MjModel.from_xml_path(str(load_scenario(toml).model))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    cam = mujoco.MjvCamera()
    frame_model(model, data, cam, aspect=1.5)
    assert _visible_fraction(model, data, cam) == 1.0
    # near enough: the model is not a speck (the camera is within a few model sizes)
    assert cam.distance < 20 * max(float(model.stat.extent), 0.1)


def test_cameras_cycle_free_tracking_and_the_models_own():
    xml = """<mujoco><worldbody><camera name="side" pos="0 -3 1" xyaxes="1 0 0 0 0 1"/>
      <body name="b" pos="0 0 1"><freejoint/><geom size=".1"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert camera_choices(m) == ["free", "tracking", "side"]
    assert next_camera(m, "side") == "free"
    cam = mujoco.MjvCamera()
    assert apply_camera(m, d, cam, TRACKING) == TRACKING
    assert cam.type == mujoco.mjtCamera.mjCAMERA_TRACKING and cam.trackbodyid == 1
    assert apply_camera(m, d, cam, "side") == "side"
    assert cam.type == mujoco.mjtCamera.mjCAMERA_FIXED and cam.fixedcamid == 0
