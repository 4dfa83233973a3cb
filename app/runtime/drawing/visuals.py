"""Arrows and lines that loads and proximities draw into any ``MjvScene``.

An ``ArrowScale`` sets the arrows' lengths (m per N, m per N·m: fixed, or automatic with the
largest arrow about a quarter of the model's extent); without one they are scaled like MuJoCo's
own force arrows, length = |F| * vis.map.force / stat.meanmass. Width from vis.scale.forcewidth *
stat.meansize; never longer than 1.5 model extents (a large force stays in view) nor wider than
0.15 of their length (never a flat disc with no direction).
Drawing never overflows ``scene.maxgeom``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import mujoco
import numpy as np

__all__ = [
    "Color",
    "RGBA",
    "rgba_of",
    "ArrowConfig",
    "ArrowScale",
    "LineConfig",
    "Trail",
    "TRAIL_PX",
    "Line",
    "draw_all",
    "net_force_arrows",
    "add_ghost",
    "GHOST_RGBA",
]


class Color(Enum):
    """The rig's palette: Tailwind's 500 shades (and red 600), by name, as hex values.

    ``Color.EMERALD_500.rgba`` is the RGBA tuple (0..1) that ``ArrowConfig``/``LineConfig``
    take (they also take a member itself, or any 3- or 4-tuple). The role names are aliases:
    ACTION (emerald: force on the action point), REACTION (rose: the reaction), TORQUE (amber),
    PROXIMITY (blue: a proximity line), ALARM (red: a proximity below its threshold) and
    NET_FORCE (violet: the net rig force on a body).
    """

    EMERALD_500 = "#10b981"
    AMBER_500 = "#f59e0b"
    ROSE_500 = "#f43f5e"
    BLUE_500 = "#3b82f6"
    VIOLET_500 = "#8b5cf6"
    SKY_500 = "#0ea5e9"
    SLATE_500 = "#64748b"
    RED_600 = "#dc2626"

    ACTION = "#10b981"
    REACTION = "#f43f5e"
    TORQUE = "#f59e0b"
    PROXIMITY = "#3b82f6"
    ALARM = "#dc2626"
    NET_FORCE = "#8b5cf6"

    @property
    def rgba(self) -> tuple[float, float, float, float]:
        """(r, g, b, a), each 0..1 (opaque)."""
        h = self.value.lstrip("#")
        r, g, b = (int(h[i : i + 2], 16) / 255.0 for i in (0, 2, 4))
        return (r, g, b, 1.0)


RGBA = Color | Sequence[float] | np.ndarray
"""A colour: a ``Color``, or (r, g, b) / (r, g, b, a) with components 0..1."""


def rgba_of(color: RGBA) -> np.ndarray:
    """``color`` as a float32 RGBA array (4,) for ``mjv_initGeom``; alpha 1 when only RGB is given.

    Raises ValueError for anything else (wrong length, a component outside 0..1, not a number).
    """
    if isinstance(color, Color):
        return np.array(color.rgba, dtype=np.float32)
    if isinstance(color, tuple) and len(color) == 4 and all(type(c) is float and 0.0 <= c <= 1.0 for c in color):
        return np.array(color, dtype=np.float32)  # the common case, without numpy's checks (a trail's every segment)
    try:
        arr = np.asarray(color, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"a colour is a Color or (r, g, b[, a]) numbers in 0..1, got {color!r}") from None
    if arr.size == 3:
        arr = np.append(arr, 1.0)
    if arr.size != 4 or not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError(f"a colour is a Color or (r, g, b[, a]) numbers in 0..1, got {color!r}")
    return arr.astype(np.float32)


_EYE = np.eye(3).reshape(-1)
_ZERO = np.zeros(3)
_CAPSULE = mujoco.mjtGeom.mjGEOM_CAPSULE
MAX_LENGTH = 1.5
"""Longest arrow, in model extents (``stat.extent``, m)."""
MAX_WIDTH = 0.15
"""Widest arrow, as a fraction of its length."""


def _has_room(scene: mujoco.MjvScene) -> bool:
    return scene.ngeom < scene.maxgeom


@dataclass(frozen=True)
class ArrowConfig:
    """An arrow for a force (N) or torque (N·m) ``vec`` drawn from world point ``pos`` (m).

    ``color`` is a ``Color`` or an (r, g, b[, a]) tuple in 0..1, kept as given.
    """

    pos: np.ndarray
    vec: np.ndarray
    color: RGBA
    is_torque: bool = False

    def __post_init__(self) -> None:
        rgba_of(self.color)  # a bad colour fails here, not when drawn

    def draw_in_scene(self, model: mujoco.MjModel, scene: mujoco.MjvScene, *, per_unit: float | None = None) -> bool:
        """Append the arrow to ``scene``; returns False when the scene is full or the arrow empty.
        ``per_unit``: its length in m per N (per N·m for a torque); None: MuJoCo's own scaling
        (``vis.map.force / stat.meanmass``)."""
        if not _has_room(scene):
            return False
        vec = np.asarray(self.vec, dtype=float)
        mag = float(np.linalg.norm(vec))
        if not np.isfinite(mag) or mag < 1e-9:
            return False
        if per_unit is None:
            per_unit = (model.vis.map.torque if self.is_torque else model.vis.map.force) / max(
                model.stat.meanmass, 1e-9
            )
        length = min(mag * per_unit, MAX_LENGTH * max(model.stat.extent, 1e-3))
        width = min(model.vis.scale.forcewidth * model.stat.meansize, MAX_WIDTH * length)
        start = np.asarray(self.pos, dtype=float)
        end = start + vec / mag * length
        geom = scene.geoms[scene.ngeom]
        kind = mujoco.mjtGeom.mjGEOM_ARROW2 if self.is_torque else mujoco.mjtGeom.mjGEOM_ARROW
        mujoco.mjv_initGeom(geom, kind, np.zeros(3), np.zeros(3), _EYE, rgba_of(self.color))
        mujoco.mjv_connector(geom, kind, width, start, end)
        scene.ngeom += 1
        return True


@dataclass(frozen=True)
class LineConfig:
    """A line from ``start`` to ``end`` (world, m), e.g. a proximity's nearest points.

    ``color`` is a ``Color`` or an (r, g, b[, a]) tuple in 0..1; ``width`` in m (0: a thin line
    scaled to the model).
    """

    start: np.ndarray
    end: np.ndarray
    color: RGBA
    width: float = 0.0

    def __post_init__(self) -> None:
        rgba_of(self.color)

    def draw_in_scene(
        self, scene: mujoco.MjvScene, *, model: mujoco.MjModel | None = None, thin: float | None = None
    ) -> bool:
        """Append the line to ``scene``; returns False when the scene is full. ``thin``: the width
        (m) of a line without its own, when the caller has worked it out (``thin_width``)."""
        n = scene.ngeom
        if n >= scene.maxgeom:
            return False
        start = np.asarray(self.start, dtype=float)
        end = np.asarray(self.end, dtype=float)
        width = self.width if self.width > 0.0 else (thin if thin is not None else thin_width(model))
        geom = scene.geoms[n]
        mujoco.mjv_initGeom(geom, _CAPSULE, _ZERO, _ZERO, _EYE, rgba_of(self.color))
        gap = end - start
        if float(gap @ gap) < 1e-18:
            end = start + np.array([0.0, 0.0, 1e-6])
        mujoco.mjv_connector(geom, _CAPSULE, width, start, end)
        scene.ngeom = n + 1
        return True


TRAIL_PX = 3.0
"""A trail's width on screen (pixels)."""
_LINE = mujoco.mjtGeom.mjGEOM_LINE


@dataclass(frozen=True, eq=False)
class Trail:
    """Consecutive line segments drawn as one: ``points`` (n+1, 3) world positions (m) joined in
    order, ``rgba`` (n, 4) float32 in 0..1 for each segment, ``px`` wide on screen (pixels). A
    tracer's fading path. Drawn as n flat lines (MuJoCo's line geom: no lighting, no shadow), a
    few triangles each where a capsule has hundreds: a trail of hundreds of segments is drawn
    every frame, and on a software renderer capsules would take most of the frame."""

    points: np.ndarray
    rgba: np.ndarray
    px: float = TRAIL_PX

    def __post_init__(self) -> None:
        if self.points.ndim != 2 or self.points.shape[1] != 3 or self.rgba.shape != (len(self.points) - 1, 4):
            raise ValueError(
                f"a trail needs (n+1, 3) points and (n, 4) colours, got {self.points.shape} and {self.rgba.shape}"
            )

    def __len__(self) -> int:
        """The number of segments."""
        return len(self.rgba)

    def segments(self) -> list[LineConfig]:
        """The segments one by one (oldest first), as thin lines of the model's scale."""
        return [
            LineConfig(start=self.points[i], end=self.points[i + 1], color=tuple(c))
            for i, c in enumerate(self.rgba.astype(float).tolist())
        ]

    def draw_in_scene(
        self, scene: mujoco.MjvScene, *, model: mujoco.MjModel | None = None, thin: float | None = None
    ) -> int:
        """Append as many segments as fit (oldest first) to ``scene``; returns how many.
        (``model`` and ``thin`` are for lines of a width in m; a trail's is in pixels.)"""
        n = scene.ngeom
        count = min(len(self), scene.maxgeom - n)
        if count <= 0:
            return 0
        starts = np.ascontiguousarray(self.points[:count], dtype=float)
        ends = np.array(self.points[1 : count + 1], dtype=float)
        gaps = ends - starts
        ends[np.einsum("ij,ij->i", gaps, gaps) < 1e-18, 2] += 1e-6  # a line needs a direction
        colours = np.ascontiguousarray(self.rgba[:count], dtype=np.float32)
        geoms = scene.geoms
        for i in range(count):
            geom = geoms[n + i]
            mujoco.mjv_initGeom(geom, _LINE, _ZERO, _ZERO, _EYE, colours[i])
            mujoco.mjv_connector(geom, _LINE, self.px, starts[i], ends[i])
            geom.castshadow = 0
        scene.ngeom = n + count
        return count


Line = LineConfig | Trail
"""What ``draw_all`` draws as lines: a single segment or a trail of them."""


def thin_width(model: mujoco.MjModel | None) -> float:
    """A thin line's width (m), whatever the model's scale: half MuJoCo's force-arrow width, at
    most 0.6 % of the model's extent (5 mm without a model)."""
    if model is None:
        return 0.005
    return min(0.5 * model.vis.scale.forcewidth * model.stat.meansize, 0.006 * max(model.stat.extent, 1e-3))


class ArrowScale:
    """How long the rig's arrows are: ``force`` m per N and ``torque`` m per N·m (``[view]
    force_scale`` / ``torque_scale``), or, where one is None, automatic: the largest arrow of its
    kind about ``fraction`` of the model's size (``framing.model_size``: its bodies, not its
    floor). The automatic scale follows the loads smoothly: it keeps still while the largest arrow stays between 0.8 and 1.25 times
    its target length, and beyond that moves a fifth of the way (geometrically) per frame drawn,
    so arrows neither flicker nor lag far behind a load that jumps.

    Threading: the drawing thread's (the viewer's loop, or a video's frames); settings may be
    replaced from another thread.
    """

    BAND = (0.8, 1.25)
    STEP = 0.2

    def __init__(self, *, force: float | None = None, torque: float | None = None, fraction: float = 0.25) -> None:
        self.force, self.torque, self.fraction = force, torque, fraction
        self._auto: dict[bool, float] = {}  # is_torque -> m per unit, as followed so far
        self._size: tuple[int, float] = (0, 0.0)  # (id of the model, its size in m)

    def size(self, model: mujoco.MjModel) -> float:
        """The model's size (m, ``framing.model_size``), worked out once per model."""
        if self._size[0] != id(model):
            from mjrig.runtime.drawing.framing import model_size

            self._size = (id(model), model_size(model))
        return self._size[1]

    def per_unit(self, model: mujoco.MjModel, arrows: Sequence[ArrowConfig]) -> dict[bool, float | None]:
        """m per N (False) and per N·m (True) for drawing ``arrows`` now (None: nothing to scale)."""
        out: dict[bool, float | None] = {}
        for torque, fixed in ((False, self.force), (True, self.torque)):
            if fixed is not None:
                out[torque] = fixed
                continue
            mags = [float(np.linalg.norm(a.vec)) for a in arrows if a.is_torque == torque]
            biggest = max((m for m in mags if np.isfinite(m)), default=0.0)
            if biggest < 1e-9:
                out[torque] = self._auto.get(torque)
                continue
            target = self.fraction * max(self.size(model), 1e-3) / biggest
            now = self._auto.get(torque)
            if now is None:
                now = target
            elif not self.BAND[0] <= target / now <= self.BAND[1]:
                now *= (target / now) ** self.STEP
            self._auto[torque] = now
            out[torque] = now
        return out

    def forget(self) -> None:
        """Start the automatic scale over (another model)."""
        self._auto.clear()
        self._size = (0, 0.0)


def draw_all(
    model: mujoco.MjModel,
    scene: mujoco.MjvScene,
    arrows: list[ArrowConfig],
    lines: Sequence[Line],
    *,
    scale: ArrowScale | None = None,
) -> int:
    """Draw every arrow and line that fits; returns how many were drawn. ``scale``: the arrows'
    lengths (None: MuJoCo's own force scaling)."""
    drawn = 0
    per = scale.per_unit(model, arrows) if scale is not None and arrows else {}
    for a in arrows:
        drawn += a.draw_in_scene(model, scene, per_unit=per.get(a.is_torque))
    thin = thin_width(model) if lines else None
    for ln in lines:
        drawn += int(ln.draw_in_scene(scene, model=model, thin=thin))
    return drawn


def net_force_arrows(loads: Sequence[Any], mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> list[ArrowConfig]:
    """One arrow per body ``loads`` act on: the sum of their last forces on it (N), at its centre
    of mass (the loads' outputs must be current)."""

    net: dict[int, np.ndarray] = {}
    for ld in loads:
        if not ld.active or not ld.reports_wrench:
            continue
        f = np.asarray(ld.last_force, dtype=float)
        body, _ = ld.action_site.body_and_offset(mj_model)
        net[body] = net.get(body, np.zeros(3)) + f
        if ld.reaction is not None:
            rbody, _ = ld.reaction.body_and_offset(mj_model)
            net[rbody] = net.get(rbody, np.zeros(3)) - f
    return [
        ArrowConfig(pos=mj_data.xipos[b].copy(), vec=v, color=Color.NET_FORCE.rgba)
        for b, v in net.items()
        if b > 0 and np.linalg.norm(v) > 1e-6
    ]


GHOST_RGBA = (0.78, 0.6, 1.0, 0.35)
"""A compared recording's bodies: lavender, 35 % opaque."""


def add_ghost(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    scene: mujoco.MjvScene,
    *,
    option: mujoco.MjvOption | None = None,
    rgba: RGBA = GHOST_RGBA,
) -> int:
    """Add the moving bodies of ``data`` (kinematics computed) to ``scene`` as a translucent ghost,
    one flat colour, no shadow, not selectable; the geom groups hidden in ``option`` stay hidden.
    Returns how many geoms were added (never past ``scene.maxgeom``)."""
    opt = mujoco.MjvOption()
    opt.flags[:] = 0  # bodies only: no tendons, contacts, joints or labels of the ghost
    if option is not None:
        opt.geomgroup[:] = option.geomgroup
    first = scene.ngeom
    mujoco.mjv_addGeoms(model, data, opt, mujoco.MjvPerturb(), mujoco.mjtCatBit.mjCAT_DYNAMIC, scene)
    color = rgba_of(rgba)
    for i in range(first, scene.ngeom):
        g = scene.geoms[i]
        g.rgba[:] = color
        g.matid, g.texid, g.castshadow, g.transparent = -1, -1, 0, 1
        g.objtype, g.objid, g.segid = int(mujoco.mjtObj.mjOBJ_UNKNOWN), -1, -1
    return scene.ngeom - first
