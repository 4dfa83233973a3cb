"""Arrows and lines that loads and proximities draw into any ``MjvScene``.

Arrows are scaled like MuJoCo's own force arrows: length = |F| * vis.map.force / stat.meanmass,
width from vis.scale.forcewidth * stat.meansize; but never longer than 1.5 model extents (a large
force stays in view) nor wider than 0.15 of their length (never a flat disc with no direction).
Drawing never overflows ``scene.maxgeom``.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

__all__ = ["Color", "ArrowConfig", "LineConfig", "draw_all"]


class Color:
    """The rig's palette (RGBA, 0..1): action, reaction and torque arrows are distinct."""

    ACTION = np.array([0.06, 0.73, 0.51, 1.0])     # emerald: force on the `at` point
    REACTION = np.array([0.96, 0.25, 0.37, 1.0])   # rose: reaction on the `to` point
    TORQUE = np.array([0.96, 0.62, 0.04, 1.0])     # amber: torques
    PROXIMITY = np.array([0.23, 0.51, 0.96, 1.0])  # blue: a proximity line
    ALARM = np.array([0.94, 0.10, 0.10, 1.0])      # red: a proximity below its threshold


_EYE = np.eye(3).reshape(-1)
MAX_LENGTH = 1.5
"""Longest arrow, in model extents (``stat.extent``, m)."""
MAX_WIDTH = 0.15
"""Widest arrow, as a fraction of its length."""


def _has_room(scene: mujoco.MjvScene) -> bool:
    return scene.ngeom < scene.maxgeom


@dataclass(frozen=True)
class ArrowConfig:
    """An arrow for a force (N) or torque (N·m) ``vec`` drawn from world point ``pos`` (m)."""

    pos: np.ndarray
    vec: np.ndarray
    color: np.ndarray
    is_torque: bool = False

    def draw_in_scene(self, model: mujoco.MjModel, scene: mujoco.MjvScene) -> bool:
        """Append the arrow to ``scene``; returns False when the scene is full or the arrow empty."""
        if not _has_room(scene):
            return False
        vec = np.asarray(self.vec, dtype=float)
        mag = float(np.linalg.norm(vec))
        if not np.isfinite(mag) or mag < 1e-9:
            return False
        scale = model.vis.map.torque if self.is_torque else model.vis.map.force
        length = min(mag * scale / max(model.stat.meanmass, 1e-9), MAX_LENGTH * max(model.stat.extent, 1e-3))
        width = min(model.vis.scale.forcewidth * model.stat.meansize, MAX_WIDTH * length)
        start = np.asarray(self.pos, dtype=float)
        end = start + vec / mag * length
        geom = scene.geoms[scene.ngeom]
        kind = mujoco.mjtGeom.mjGEOM_ARROW2 if self.is_torque else mujoco.mjtGeom.mjGEOM_ARROW
        mujoco.mjv_initGeom(geom, kind, np.zeros(3), np.zeros(3), _EYE, self.color.astype(np.float32))
        mujoco.mjv_connector(geom, kind, width, start, end)
        scene.ngeom += 1
        return True


@dataclass(frozen=True)
class LineConfig:
    """A line from ``start`` to ``end`` (world, m), e.g. a proximity's nearest points."""

    start: np.ndarray
    end: np.ndarray
    color: np.ndarray
    width: float = 0.0

    def draw_in_scene(self, scene: mujoco.MjvScene, *, model: mujoco.MjModel | None = None) -> bool:
        """Append the line to ``scene``; returns False when the scene is full."""
        if not _has_room(scene):
            return False
        start = np.asarray(self.start, dtype=float)
        end = np.asarray(self.end, dtype=float)
        width = self.width
        if width <= 0.0:
            width = (min(0.5 * model.vis.scale.forcewidth * model.stat.meansize, 0.006 * max(model.stat.extent, 1e-3))
                     if model is not None else 0.005)  # a thin line, whatever the model's scale
        geom = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, np.zeros(3), np.zeros(3), _EYE,
                            self.color.astype(np.float32))
        if np.linalg.norm(end - start) < 1e-9:
            end = start + np.array([0.0, 0.0, 1e-6])
        mujoco.mjv_connector(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, width, start, end)
        scene.ngeom += 1
        return True


def draw_all(model: mujoco.MjModel, scene: mujoco.MjvScene, arrows: list[ArrowConfig],
             lines: list[LineConfig]) -> int:
    """Draw every arrow and line that fits; returns how many were drawn."""
    drawn = 0
    for a in arrows:
        drawn += a.draw_in_scene(model, scene)
    for ln in lines:
        drawn += ln.draw_in_scene(scene, model=model)
    return drawn
