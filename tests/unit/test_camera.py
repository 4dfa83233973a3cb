"""Framing: the camera chosen on open sees every moving part of every bundled rig."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mjrig.runtime.drawing.camera import TRACKING, apply_camera, camera_choices, frame_model, next_camera
from mjrig.runtime.drawing.framing import rig_points
from mjrig.scenario.parse import load_scenario

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


# --- framing: every body, site, geom and rig point in view, near enough to fill it ----------


def _project(model, cam, pts, aspect):
    """Screen coordinates of world points ``pts`` (n, 3) seen by a free/tracking ``cam`` in a view
    of ``aspect`` width/height: (n, 2), -1..1 from edge to edge, and each point's depth (m)."""
    az, el = math.radians(cam.azimuth), math.radians(cam.elevation)
    forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    right = np.cross(forward, [0, 0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    eye = np.asarray(cam.lookat) - cam.distance * forward
    tan_v = math.tan(math.radians(model.vis.global_.fovy) / 2)
    v = np.asarray(pts, dtype=float).reshape(-1, 3) - eye
    depth = v @ forward
    return np.stack([(v @ right) / depth / (tan_v * aspect), (v @ up) / depth / tan_v], axis=1), depth


def _model_points(model, data):
    """What a person expects to see: body origins, sites, and the corners of every geom's box
    but the ground plane's."""
    pts = [data.xpos[1:], data.site_xpos]
    for i in range(model.ngeom):
        if model.geom_type[i] == mujoco.mjtGeom.mjGEOM_PLANE:
            continue
        half = model.geom_aabb[i, 3:]
        for corner in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3):
            local = model.geom_aabb[i, :3] + corner * half
            pts.append((data.geom_xpos[i] + data.geom_xmat[i].reshape(3, 3) @ local)[None])
    return np.concatenate(pts)


def _spring_mass_rig():
    from mjrig.scenario.builder import build_rig

    rig = build_rig(load_scenario(MODELS / "spring_mass.toml"))
    mujoco.mj_forward(rig.model, rig.data)
    return rig


def _rig_points(rig):
    rm = rig.runtime
    return rig_points(rig.model, rig.data, loads=rm.loads, proximities=rm.proximities, tracers=rm.tracers)


def _fill(uv) -> float:
    """How far the framed points reach towards the view's edges: 1.0 touches an edge."""
    return float(np.abs(uv).max())


@pytest.mark.parametrize("aspect", [1.5, 726 / 762, 4 / 3, 0.6])
def test_fit_frames_the_whole_spring_mass_rig_with_a_margin(aspect):
    rig = _spring_mass_rig()
    m, d = rig.model, rig.data
    rig_points = _rig_points(rig)
    # the anchor (site base), the block's tip and the proximity's far end (site stop)
    for site in ("base", "tip", "stop"):
        assert np.min(np.linalg.norm(rig_points - d.site(site).xpos, axis=1)) < 1e-9, site
    cam = mujoco.MjvCamera()
    frame_model(m, d, cam, aspect=aspect, points=rig_points)
    pts = np.concatenate([_model_points(m, d), rig_points])
    uv, depth = _project(m, cam, pts, aspect)
    assert np.all(depth > 0.05), "a framed point is behind the camera or at its lens"
    assert _fill(uv) <= 0.92, f"a point is at the edge of the view or out of it: {_fill(uv):.2f}"
    # near enough: the rig fills the view along its larger extent (no speck in the middle) ...
    assert _fill(uv) >= 0.7, f"the rig fills only {_fill(uv):.0%} of the half-view"
    # ... and centred
    centre = (uv.max(axis=0) + uv.min(axis=0)) / 2
    assert np.all(np.abs(centre) < 0.1), centre
    # the anchor and the block are far apart on the screen, not one over the other
    anchor, block = _project(m, cam, np.array([d.site("base").xpos, d.body("block").xpos]), aspect)[0]
    assert abs(block[0] - anchor[0]) > 0.5
    # the bounding sphere of the rig fills at least half of the view's smaller dimension
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    radius = float(np.linalg.norm(hi - lo)) / 2
    eye_to_centre = float(np.linalg.norm((lo + hi) / 2 - (cam.lookat - cam.distance * _forward(cam))))
    half_small = math.tan(math.radians(m.vis.global_.fovy) / 2) * min(1.0, aspect)
    assert math.tan(math.asin(min(radius / eye_to_centre, 1.0))) / half_small >= 0.5


def _forward(cam) -> np.ndarray:
    az, el = math.radians(cam.azimuth), math.radians(cam.elevation)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def test_fit_view_keeps_the_direction_the_user_looks_from():
    rig = _spring_mass_rig()
    m, d = rig.model, rig.data
    cam = mujoco.MjvCamera()
    cam.azimuth, cam.elevation, cam.distance = 30.0, -20.0, 40.0  # turned and zoomed far out
    frame_model(m, d, cam, aspect=1.5, points=_rig_points(rig), keep_direction=True)
    assert (cam.azimuth, cam.elevation) == (30.0, -20.0)
    uv, _ = _project(m, cam, np.concatenate([_model_points(m, d), _rig_points(rig)]), 1.5)
    assert 0.7 <= _fill(uv) <= 0.92
    # a first view (no direction kept) looks from the model's default direction
    frame_model(m, d, cam, aspect=1.5)
    assert cam.azimuth == m.vis.global_.azimuth and cam.elevation == m.vis.global_.elevation


def test_rig_points_far_from_every_geom_are_framed():
    """An anchor given only by the rig (a point of the world body, no site or geom there)."""
    xml = """<mujoco><worldbody><geom type="plane" size="0 0 1"/>
      <body name="b" pos="0 0 .2"><joint type="slide" axis="1 0 0"/><geom type="box" size=".05 .05 .05"/></body>
      </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    anchor = np.array([[-1.5, 0.0, 0.6]])
    cam = mujoco.MjvCamera()
    frame_model(m, d, cam, aspect=1.5, points=anchor)
    uv, _ = _project(m, cam, np.concatenate([_model_points(m, d), anchor]), 1.5)
    assert 0.7 <= _fill(uv) <= 0.92


@pytest.mark.parametrize("floor", ['size="50 50 .1"', 'size="0 0 1"'], ids=["plane50m", "infinite_plane"])
def test_the_floor_plane_is_not_framed(floor):
    xml = f"""<mujoco><worldbody><geom name="floor" type="plane" {floor}/>
      <body name="b" pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
      </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    for track in (False, True):
        cam = mujoco.MjvCamera()
        frame_model(m, d, cam, aspect=1.5, track=track)
        _as_the_viewer_draws(m, d, cam)
        uv, _ = _project(m, cam, _box_corners(m, d, 1), 1.5)
        assert 0.7 <= _fill(uv) <= 0.92, (track, _fill(uv))
        assert cam.distance < 2.0  # the box is 0.2 m wide: a metre away, not the floor's 100 m


def test_a_huge_geom_is_not_framed():
    """A ground slab 10 km wide: left out, so the box is what the view shows; the camera stays
    only as far back as MuJoCo's near clipping plane (its ``znear`` times the model's extent,
    which the slab makes huge) asks, else the box would be clipped away."""
    xml = """<mujoco><worldbody>
      <geom name="ground_slab" type="box" pos="0 0 -5000" size="5000 5000 4999"/>
      <body name="b" pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
      </worldbody></mujoco>"""
    m, cam, uv, depth = _frame_the_box(xml)
    assert _fill(uv) <= 0.92 and np.all(np.abs(uv.mean(axis=0)) < 0.05)
    near = m.vis.map.znear * m.stat.extent
    assert depth.min() > near and cam.distance < 3 * near  # framing the slab would be ~20 km away


def _as_the_viewer_draws(m, d, cam) -> None:
    """Let MuJoCo update ``cam`` as a viewer does before drawing (a tracking camera's lookat
    jumps to its body's centre of mass)."""
    scene = mujoco.MjvScene(m, maxgeom=100)
    mujoco.mjv_updateScene(m, d, mujoco.MjvOption(), mujoco.MjvPerturb(), cam, mujoco.mjtCatBit.mjCAT_ALL, scene)


def _frame_the_box(xml: str) -> tuple[mujoco.MjModel, mujoco.MjvCamera, np.ndarray, np.ndarray]:
    """Compile ``xml``, frame it in a view of aspect 1.5 and project the corners of its box (geom
    1): the model, the camera, the corners' screen coordinates (see ``_project``) and depths (m)."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    cam = mujoco.MjvCamera()
    frame_model(m, d, cam, aspect=1.5)
    uv, depth = _project(m, cam, _box_corners(m, d, 1), 1.5)
    return m, cam, uv, depth


def _box_corners(m, d, geom):
    half = m.geom_aabb[geom, 3:]
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3) * half
    return d.geom_xpos[geom] + corners @ d.geom_xmat[geom].reshape(3, 3).T


@pytest.mark.parametrize("half", [0.005, 0.0005])
def test_a_tiny_model_fills_the_view_not_an_extreme_close_up_nor_a_speck(half):
    xml = f"""<mujoco><worldbody><geom type="plane" size="0 0 1"/>
      <body name="b" pos="0 0 {half}"><joint type="slide" axis="1 0 0"/><geom type="box" size="{half} {half} {half}"/></body>
      </worldbody></mujoco>"""
    m, cam, uv, depth = _frame_the_box(xml)
    assert 0.5 <= _fill(uv) <= 0.92, _fill(uv)
    # nothing of it is nearer than the renderer's near clipping plane (it would be cut away)
    assert depth.min() > m.vis.map.znear * m.stat.extent


def test_a_tracking_camera_frames_the_rig_round_its_body():
    """The viewer puts a tracking camera's lookat on the body's centre of mass: framing must hold
    from there (a world anchor beside a free-flying body)."""
    xml = """<mujoco><worldbody><site name="anchor" pos="-1 0 1.5"/>
      <body name="b" pos="0 0 1"><freejoint/><geom type="sphere" size=".1"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    cam = mujoco.MjvCamera()
    frame_model(m, d, cam, aspect=1.5, track=True)
    _as_the_viewer_draws(m, d, cam)
    assert np.allclose(cam.lookat, d.subtree_com[1])
    uv, _ = _project(m, cam, _model_points(m, d), 1.5)
    assert 0.7 <= _fill(uv) <= 0.92
