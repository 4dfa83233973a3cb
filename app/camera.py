"""Cameras for the 3D view: frame the whole model, follow a moving one, or use the model's own.

GUI-free (only mujoco and numpy): the simulation thread applies these to the viewer's
``MjvCamera`` under the viewer lock; videos and screenshots use the same camera.
"""
from __future__ import annotations

import math

import mujoco
import numpy as np

__all__ = ["camera_choices", "apply_camera", "frame_model", "next_camera", "FREE", "TRACKING"]

FREE = "free"
TRACKING = "tracking"


def _moving_root(model: mujoco.MjModel) -> int:
    """The first body with a free joint (followed by the tracking camera), else -1."""
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return int(model.jnt_bodyid[j])
    return -1


def camera_choices(model: mujoco.MjModel) -> list[str]:
    """``free``, ``tracking`` (when a body moves freely), then the model's cameras by name."""
    out = [FREE]
    if _moving_root(model) >= 0:
        out.append(TRACKING)
    for i in range(model.ncam):
        out.append(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) or f"camera{i}")
    return out


def next_camera(model: mujoco.MjModel, current: str) -> str:
    """The choice after ``current`` (wrapping round)."""
    choices = camera_choices(model)
    i = choices.index(current) if current in choices else -1
    return choices[(i + 1) % len(choices)]


def _bounds(model: mujoco.MjModel, data: mujoco.MjData) -> tuple[np.ndarray, float]:
    """Centre and radius (m) of the sphere around every visible geom that is not an infinite
    plane; geoms of moving bodies decide when there are any, the ground alone does not."""
    moving = np.flatnonzero(model.geom_bodyid > 0)
    static = np.flatnonzero(model.geom_bodyid == 0)
    def boxed(ids: np.ndarray) -> np.ndarray:
        keep = [i for i in ids if model.geom_type[i] != mujoco.mjtGeom.mjGEOM_PLANE
                and 0 < model.geom_rbound[i] < 1e3 and model.geom_rgba[i, 3] > 0]
        return np.asarray(keep, dtype=int)
    ids = boxed(moving)
    if ids.size:
        # Static parts close to the moving ones (posts, walls, stops) belong to the rig.
        centre = data.geom_xpos[ids].mean(axis=0)
        span = max(float(np.ptp(data.geom_xpos[ids], axis=0).max()), float(model.geom_rbound[ids].max()) * 2)
        near = [i for i in boxed(static) if np.linalg.norm(data.geom_xpos[i] - centre) < 2.0 * span + 0.5]
        ids = np.concatenate([ids, np.asarray(near, dtype=int)])
    else:
        ids = boxed(static)
    if not ids.size:
        return np.asarray(model.stat.center, dtype=float), max(float(model.stat.extent), 0.1)
    r = model.geom_rbound[ids][:, None]
    lo = (data.geom_xpos[ids] - r).min(axis=0)
    hi = (data.geom_xpos[ids] + r).max(axis=0)
    # rbound is a sphere around each geom: generous for long thin ones, so trim a little.
    return (lo + hi) / 2, max(0.8 * float(np.linalg.norm(hi - lo)) / 2, 0.02)


def frame_model(model: mujoco.MjModel, data: mujoco.MjData, cam: mujoco.MjvCamera, *,
                aspect: float = 1.5, track: bool = False) -> None:
    """Point ``cam`` at the whole model, near enough to fill the view.

    ``aspect`` is the view's width/height; ``track`` makes it a tracking camera on the body that
    moves freely (it keeps a drifting model in view), else a free camera.
    """
    centre, radius = _bounds(model, data)
    fovy = math.radians(float(model.vis.global_.fovy))
    half = math.tan(fovy / 2) * min(1.0, max(aspect, 0.2))
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.fixedcamid = -1
    cam.trackbodyid = -1
    body = _moving_root(model)
    if track and body >= 0:
        cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        cam.trackbodyid = body
    cam.lookat[:] = centre
    cam.distance = radius / half * 1.3
    cam.azimuth = float(model.vis.global_.azimuth)
    cam.elevation = min(-10.0, float(model.vis.global_.elevation))


def apply_camera(model: mujoco.MjModel, data: mujoco.MjData, cam: mujoco.MjvCamera, choice: str, *,
                 aspect: float = 1.5) -> str:
    """Switch ``cam`` to ``choice`` (one of ``camera_choices``); returns the choice applied."""
    if choice == TRACKING and _moving_root(model) >= 0:
        frame_model(model, data, cam, aspect=aspect, track=True)
        return TRACKING
    cid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, choice) if choice != FREE else -1
    if cid < 0 and choice.startswith("camera") and choice[6:].isdigit() and int(choice[6:]) < model.ncam:
        cid = int(choice[6:])
    if cid >= 0:
        cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
        cam.fixedcamid = cid
        return choice
    frame_model(model, data, cam, aspect=aspect)
    return FREE
