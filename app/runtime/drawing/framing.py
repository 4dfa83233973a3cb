"""Framing: where a free camera must stand to show a whole model and its rig.

The points framed are every body origin, site and geom (but the ground: planes and huge geoms)
and any extra points (the rig's attachment points); the camera looks along a given direction at
their centre, from the smallest distance at which each point is inside the view's frustum (the
vertical field of view is the model's ``vis.global_.fovy``, the width set by the aspect ratio)
with a margin. Used by the 3D view (``mjrig.runtime.drawing.camera``) and by videos with no camera named.

Only mujoco and numpy: runs with no display.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.errors import MjrigError

__all__ = [
    "model_size",
    "framing_points",
    "rig_points",
    "fit_view",
    "view_axes",
    "frame_free_camera",
    "MARGIN",
    "HUGE_M",
]

HUGE_M = 1e3
"""A geom reaching further than this (m) from its centre is ground or sky, not part of the model."""
MARGIN = 0.2
"""Share of the half-view left empty round the framed model: 10 % of the view's width (height)
on each side of the widest (tallest) framing."""
_MIN_HALF_M = 1e-4
"""Smallest half-size (m) framed: a model that is a single point still gets a view."""


def _geom_shown(model: mujoco.MjModel, i: int) -> bool:
    """Whether geom ``i`` is framed: not a plane, not huge or infinite, not fully transparent."""
    if model.geom_type[i] == mujoco.mjtGeom.mjGEOM_PLANE:
        return False
    half = model.geom_aabb[i, 3:]
    rbound = float(model.geom_rbound[i])
    if not (np.all(np.isfinite(half)) and np.isfinite(rbound)) or max(rbound, float(half.max())) > HUGE_M:
        return False
    mat = int(model.geom_matid[i])
    alpha = model.mat_rgba[mat, 3] if mat >= 0 else model.geom_rgba[i, 3]
    return bool(alpha > 0)


def framing_points(model: mujoco.MjModel, data: mujoco.MjData, *, points: np.ndarray | None = None) -> np.ndarray:
    """The world points (m, shape (n, 3)) a framed view must show, from ``data``'s kinematics.

    Every body's origin (the world's only when it holds geoms or sites of its own besides planes),
    the 8 corners of every framed geom's bounding box (not planes, nor huge or transparent geoms:
    see ``_geom_shown``), every site, and ``points`` (e.g. the rig's attachment points,
    ``rig_points``). Points that are not finite are left out.
    """
    out: list[np.ndarray] = []
    shown = [i for i in range(model.ngeom) if _geom_shown(model, i)]
    world_has_own = bool(np.any(model.site_bodyid == 0)) or any(model.geom_bodyid[i] == 0 for i in shown)
    out.append(data.xpos[0 if world_has_own else 1 :])
    if shown:
        ids = np.asarray(shown)
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        local = model.geom_aabb[ids, None, :3] + signs[None] * model.geom_aabb[ids, None, 3:]  # (g, 8, 3)
        rot = data.geom_xmat[ids].reshape(-1, 3, 3)
        out.append((data.geom_xpos[ids, None, :] + np.einsum("gij,gkj->gki", rot, local)).reshape(-1, 3))
    out.append(data.site_xpos)
    if points is not None:
        out.append(np.asarray(points, dtype=float).reshape(-1, 3))
    pts = np.concatenate(out, axis=0)
    return pts[np.all(np.isfinite(pts), axis=1)]


def model_size(model: mujoco.MjModel) -> float:
    """The model's size (m): the diagonal of the box round its framing points (``framing_points``:
    bodies, sites and geoms, not the ground) at ``qpos0``. MuJoCo's ``stat.extent`` where that box
    is empty or a point (``stat.extent`` also counts the floor: 8 m for a 1.5 m walker on a plane)."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    pts = framing_points(model, data)
    size = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0))) if len(pts) else 0.0
    return size if size > _MIN_HALF_M else float(model.stat.extent)


def rig_points(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    *,
    loads: Iterable[Any] = (),
    proximities: Iterable[Any] = (),
    tracers: Iterable[Any] = (),
) -> np.ndarray:
    """World positions (m, shape (n, 3)) of every point a rig names, from ``data``'s kinematics:
    each load's points (``Load.points()``: ``at``, ``to``, a reference site), both ends of each
    proximity (``a``, ``b``) and each tracer's point, switched off or not. Pass a
    ``RuntimeManager``'s ``loads``, ``proximities`` and ``tracers``. A point the model lacks
    is left out (a rig being edited may name one)."""
    named = [p for ld in loads for p in ld.points()]
    named += [p for prox in proximities for p in (prox.a, prox.b)]
    named += [tr.point for tr in tracers]
    out = []
    for p in named:
        try:
            out.append(p.rt_pos(model, data))
        except (MjrigError, AttributeError, TypeError, IndexError, ValueError):  # e.g. a user load's own points
            continue
    return np.asarray(out, dtype=float).reshape(-1, 3)


def view_axes(azimuth: float, elevation: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(forward, right, up) unit vectors of a free camera at ``azimuth``/``elevation`` (degrees),
    as MuJoCo orients it (azimuth about +z from +x, elevation up from the horizontal)."""
    az, el = math.radians(azimuth), math.radians(elevation)
    forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    right = np.array([math.sin(az), -math.cos(az), 0.0])
    up = np.cross(right, forward)
    return forward, right, up


def fit_view(
    pts: np.ndarray,
    *,
    azimuth: float,
    elevation: float,
    fovy: float,
    aspect: float,
    margin: float = MARGIN,
    near: float = 0.0,
    lookat: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Lookat (m, (3,)) and distance (m) of a free camera looking along ``azimuth``/``elevation``
    (degrees) that shows every point of ``pts`` (m, (n, 3)) with ``margin`` of each half-view
    left empty, centred in the view unless ``lookat`` (m, (3,)) is imposed (a tracking camera
    looks at its body's centre of mass).

    ``fovy`` is the vertical field of view (degrees), ``aspect`` the view's width/height; the
    nearest point stays at least ``near`` (m, the renderer's near clipping distance) in front of
    the eye. A centred lookat sits at the depth of the points' bounding box centre, so turning
    the view with the mouse turns it about the model.
    """
    forward, right, up = view_axes(azimuth, elevation)
    pts = np.asarray(pts, dtype=float).reshape(-1, 3)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = np.maximum(_MIN_HALF_M - (hi - lo) / 2, 0.0)
    if np.any(pad > 0):  # a point-like model: frame a small box round it instead
        lo, hi = lo - pad, hi + pad
        pts = np.concatenate([pts, [[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for c in (lo[2], hi[2])]])
    centre = (lo + hi) / 2 if lookat is None else np.asarray(lookat, dtype=float)
    tan_v = math.tan(math.radians(fovy) / 2) * (1.0 - margin)
    tan_h = tan_v * max(aspect, 1e-3)
    rel = pts - centre
    x, y, z = rel @ right, rel @ up, rel @ forward

    def distance_for(sx: float, sy: float) -> float:
        """The nearest distance (m) at which every point is inside the narrowed view."""
        return float(
            max(np.max(np.abs(x - sx) / tan_h - z), np.max(np.abs(y - sy) / tan_v - z), near - z.min(), _MIN_HALF_M)
        )

    sx = sy = 0.0
    if lookat is None:
        # Centre across the view as seen from afar, then correct for perspective (near points
        # look bigger, so the picture leans their way) by shifting by what is left off centre.
        sx, sy = (x.max() + x.min()) / 2, (y.max() + y.min()) / 2
        for _ in range(4):
            distance = distance_for(sx, sy)
            depth = distance + z
            u, v = (x - sx) / depth, (y - sy) / depth
            sx += (u.max() + u.min()) / 2 * distance
            sy += (v.max() + v.min()) / 2 * distance
    return centre + sx * right + sy * up, distance_for(sx, sy)


def frame_free_camera(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    cam: mujoco.MjvCamera,
    *,
    aspect: float,
    points: np.ndarray | None = None,
    direction: tuple[float, float] | None = None,
    lookat: np.ndarray | None = None,
) -> None:
    """Set ``cam``'s lookat, distance, azimuth and elevation (not its type) to frame the model
    in ``data``'s state and ``points`` (world, m, (n, 3)) in a view of ``aspect`` width/height.

    ``direction`` is (azimuth, elevation) in degrees; None: the model's default
    (``vis.global_``), looking down at least 10 degrees. ``lookat`` (m, (3,)) imposes the
    point looked at (a tracking camera's body centre of mass), else the framed points' centre.
    """
    if direction is None:
        azimuth = float(model.vis.global_.azimuth)
        elevation = min(-10.0, float(model.vis.global_.elevation))
    else:
        azimuth, elevation = (float(v) for v in direction)
    elevation = max(-89.0, min(89.0, elevation))  # straight down or up has no "right"
    pts = framing_points(model, data, points=points)
    if len(pts) == 0:
        pts = np.asarray(model.stat.center, dtype=float)[None]
    near = 2.0 * float(model.vis.map.znear) * float(model.stat.extent)  # closer is clipped away
    centre, distance = fit_view(
        pts,
        azimuth=azimuth,
        elevation=elevation,
        fovy=float(model.vis.global_.fovy),
        aspect=aspect,
        near=near,
        lookat=lookat,
    )
    cam.lookat[:] = centre
    cam.distance = distance
    cam.azimuth = azimuth
    cam.elevation = elevation
