"""Cameras for the 3D view: frame the whole model, follow a moving one, or use the model's own.

Framing shows every body origin, site, geom (but the ground: planes and huge geoms) and the
rig's attachment points, centred, with a margin (``mjrig.runtime.drawing.framing``, which videos use too).

GUI-free (only mujoco and numpy): the simulation thread applies these to the viewer's
``MjvCamera`` under the viewer lock; videos and screenshots use the same camera.
"""

from __future__ import annotations

import mujoco
import numpy as np

from mjrig.runtime.drawing.framing import frame_free_camera

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


def frame_model(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    cam: mujoco.MjvCamera,
    *,
    aspect: float = 1.5,
    track: bool = False,
    points: np.ndarray | None = None,
    keep_direction: bool = False,
) -> None:
    """Point ``cam`` at the whole model: every body, site and (non-ground) geom, and ``points``
    (world, m, (n, 3): the rig's attachment points), centred in the view with a margin
    (``mjrig.runtime.drawing.framing``).

    ``aspect`` is the view's width/height. ``keep_direction`` keeps the camera's azimuth and
    elevation (Fit view: from where the user looks now), else the model's default direction (a
    first view). ``track`` makes it a tracking camera on the body that moves freely (it keeps a
    drifting model in view), else a free camera.
    """
    body = _moving_root(model) if track else -1
    direction = (float(cam.azimuth), float(cam.elevation)) if keep_direction else None
    # A tracking camera looks at its body's centre of mass whatever lookat says: fit round that.
    frame_free_camera(
        model,
        data,
        cam,
        aspect=aspect,
        points=points,
        direction=direction,
        lookat=data.subtree_com[body] if body >= 0 else None,
    )
    cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING if body >= 0 else mujoco.mjtCamera.mjCAMERA_FREE
    cam.fixedcamid = -1
    cam.trackbodyid = body


def apply_camera(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    cam: mujoco.MjvCamera,
    choice: str,
    *,
    aspect: float = 1.5,
    points: np.ndarray | None = None,
) -> str:
    """Switch ``cam`` to ``choice`` (one of ``camera_choices``); returns the choice applied.

    The free and tracking cameras frame the model and ``points`` (see ``frame_model``) from the
    model's default direction; a model camera is used as it is."""
    if choice == TRACKING and _moving_root(model) >= 0:
        frame_model(model, data, cam, aspect=aspect, track=True, points=points)
        return TRACKING
    cid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, choice) if choice != FREE else -1
    if cid < 0 and choice.startswith("camera") and choice[6:].isdigit() and int(choice[6:]) < model.ncam:
        cid = int(choice[6:])
    if cid >= 0:
        cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
        cam.fixedcamid = cid
        return choice
    frame_model(model, data, cam, aspect=aspect, points=points)
    return FREE
