"""Proximities: distance monitors between two points, or clearance between two geoms."""

from __future__ import annotations

import collections
import logging
from dataclasses import dataclass

import mujoco
import numpy as np

from mjrig.runtime.drawing.visuals import Color, LineConfig
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import AnySite, Geom, parse_point

__all__ = ["Proximity"]

log = logging.getLogger("mjrig")


@dataclass(eq=False, kw_only=True)
class Proximity:
    """Distance (m) between ``a`` and ``b``.

    Two points (sites, ``body:NAME``, ``body:NAME@x,y,z``): the straight-line distance. Two
    geoms (``geom:NAME``): their clearance, surface to surface, negative when penetrating (as
    ``mj_geomDistance`` computes it). Below ``threshold`` (m) the line turns red and an event is
    logged once per crossing.
    """

    name: str
    a: AnySite
    b: AnySite
    threshold: float | None = None
    active: bool = True

    def __post_init__(self) -> None:
        self.a = parse_point(self.a, allow_geom=True)
        self.b = parse_point(self.b, allow_geom=True)
        if isinstance(self.a, Geom) != isinstance(self.b, Geom):
            raise ConfigError(
                f"proximity '{self.name}': both ends must be geoms, or neither (got '{self.a}' and '{self.b}')"
            )
        self._geoms = isinstance(self.a, Geom)
        self._fromto = np.zeros(6)
        self.distance = float("nan")
        self.below = False
        self.events: collections.deque[tuple[float, str]] = collections.deque(maxlen=100)
        """Threshold crossings not yet taken by a viewer: (time s, one-line description)."""
        self._ids: tuple[int, int] | None = None
        self._distmax = 10.0

    def resolve(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Check both ends against the model (ConfigError naming the unknown one)."""
        self._ids = (self.a.get_id(model), self.b.get_id(model))
        self._distmax = max(10.0, 4.0 * float(model.stat.extent))

    def measure(self, model: mujoco.MjModel, data: mujoco.MjData) -> float:
        """Current distance (m); also logs a threshold crossing. Needs current kinematics."""
        if self._ids is None:
            self.resolve(model, data)
        if self._geoms:
            g1, g2 = self._ids  # type: ignore[misc]
            dist = mujoco.mj_geomDistance(model, data, g1, g2, self._distmax, self._fromto)
        else:
            pa, pb = self.a.rt_pos(model, data), self.b.rt_pos(model, data)
            self._fromto[:3], self._fromto[3:] = pa, pb
            dist = float(np.linalg.norm(pb - pa))
        self.distance = float(dist)
        below = self.threshold is not None and self.distance < self.threshold
        if below != self.below:
            text = (
                f"proximity '{self.name}' {'below' if below else 'back above'} {self.threshold:g} m "
                f"at t={data.time:.6g} s (distance {self.distance:.6g} m)"
            )
            log.info(text)
            self.events.append((float(data.time), text))
        self.below = below
        return self.distance

    def get_visuals(self, model: mujoco.MjModel, data: mujoco.MjData) -> LineConfig | None:
        """The line between the nearest points, red while below the threshold."""
        if not self.active:
            return None
        if self._ids is None or np.isnan(self.distance):
            self.measure(model, data)
        return LineConfig(
            start=self._fromto[:3].copy(),
            end=self._fromto[3:].copy(),
            color=Color.ALARM if self.below else Color.PROXIMITY,
        )
