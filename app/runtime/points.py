"""Attachment points: where a load acts, where its reaction goes, what a proximity measures.

A point is written as a string in scenarios and the GUI:

- ``"NAME"``             the site NAME;
- ``"body:NAME"``        the frame origin of body NAME;
- ``"body:NAME@x,y,z"``  a point fixed in body NAME at local coordinates (metres);
- ``"geom:NAME"``        a geom's surface (proximities only).

The classes resolve their ids lazily against a compiled model and answer world positions,
frames and velocities. They are small frozen values, safe to share between threads.
"""

from __future__ import annotations

import difflib
import math
import weakref
from dataclasses import dataclass
from typing import ClassVar

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError

__all__ = [
    "RIG_PREFIX",
    "is_rig_name",
    "AnySite",
    "Point",
    "Site",
    "Body",
    "BodyPoint",
    "Geom",
    "parse_point",
    "closest_names",
    "model_names",
    "find_id",
]

RIG_PREFIX = "__mjrig_"


def is_rig_name(name: str) -> bool:
    """True for the names of the rig's own helper elements."""
    return name.startswith(RIG_PREFIX)


def model_names(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    """Every non-empty name of one object type, in id order."""
    names = []
    for i in range(count):
        n = mujoco.mj_id2name(model, obj, i)
        if n:
            names.append(n)
    return names


def closest_names(name: str, candidates: list[str], *, n: int = 3) -> str:
    """A short 'closest: a, b, c' hint for an unknown name (empty when nothing is close)."""
    close = difflib.get_close_matches(name, candidates, n=n, cutoff=0.4)
    if not close:
        close = candidates[:n]
    return f" (closest: {', '.join(close)})" if close else " (the model has none)"


def find_id(model: mujoco.MjModel, obj: mujoco.mjtObj, name: str, *, kind: str, count: int) -> int:
    """The id of ``obj`` NAME in ``model`` (``count`` of them); ConfigError naming the closest
    names of that ``kind`` ("site", "camera", ...) when there is none."""
    idx = mujoco.mj_name2id(model, obj, name)
    if idx < 0:
        raise ConfigError(f"unknown {kind} '{name}'{closest_names(name, model_names(model, obj, count))}")
    return idx


@dataclass(frozen=True)
class Point:
    """Base of the attachment points. Subclasses say how to find themselves in a model.

    The id found for a model is remembered (per model, weakly), since loads ask every step.
    """

    name: str
    """The site's, body's or geom's name in the model (each subclass's dataclass field)."""
    _kind: ClassVar[str] = ""
    _obj: ClassVar[mujoco.mjtObj] = mujoco.mjtObj.mjOBJ_SITE

    def get_id(self, model: mujoco.MjModel) -> int:
        """The MuJoCo id of the site/body/geom this point names; raises ConfigError if unknown."""
        cached = self.__dict__.get("_id_cache")
        if cached is not None and cached[0]() is model:
            return cached[1]
        count = {
            mujoco.mjtObj.mjOBJ_SITE: model.nsite,
            mujoco.mjtObj.mjOBJ_BODY: model.nbody,
            mujoco.mjtObj.mjOBJ_GEOM: model.ngeom,
        }[self._obj]
        idx = find_id(model, self._obj, self.name, kind=self._kind, count=count)
        object.__setattr__(self, "_id_cache", (weakref.ref(model), idx))
        return idx

    def body_and_offset(self, model: mujoco.MjModel) -> tuple[int, np.ndarray]:
        """(body id, point in that body's frame, metres, shape (3,))."""
        raise NotImplementedError

    def rt_pos(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """World position (m, shape (3,)) from the current kinematics in ``data``."""
        body, off = self.body_and_offset(model)
        return data.xpos[body] + data.xmat[body].reshape(3, 3) @ off

    def rt_mat(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """World orientation (3x3) of the frame this point carries."""
        body, _ = self.body_and_offset(model)
        return data.xmat[body].reshape(3, 3).copy()

    def rt_vel(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """World linear velocity of the point (m/s, shape (3,))."""
        body, _ = self.body_and_offset(model)
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, vel, 0)
        spin = np.zeros(3)
        mujoco.mju_cross(spin, vel[:3], self.rt_pos(model, data) - data.xpos[body])
        return vel[3:] + spin

    def rt_dm(self, other: Point, model: mujoco.MjModel, data: mujoco.MjData) -> float:
        """Distance (m) from this point to ``other``."""
        return float(np.linalg.norm(other.rt_pos(model, data) - self.rt_pos(model, data)))


@dataclass(frozen=True)
class _Element(Point):
    """A named site or geom: MuJoCo keeps its body, local and world position in ``<prefix>_*``."""

    name: str
    _prefix: ClassVar[str] = ""

    def body_and_offset(self, model: mujoco.MjModel) -> tuple[int, np.ndarray]:
        i = self.get_id(model)
        return int(getattr(model, f"{self._prefix}_bodyid")[i]), getattr(model, f"{self._prefix}_pos")[i].copy()

    def rt_pos(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        return getattr(data, f"{self._prefix}_xpos")[self.get_id(model)].copy()


@dataclass(frozen=True)
class Site(_Element):
    """A named site of the model."""

    _kind: ClassVar[str] = "site"
    _prefix: ClassVar[str] = "site"
    _obj: ClassVar[mujoco.mjtObj] = mujoco.mjtObj.mjOBJ_SITE

    def rt_mat(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        return data.site_xmat[self.get_id(model)].reshape(3, 3).copy()

    def rt_vel(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_SITE, self.get_id(model), vel, 0)
        return vel[3:]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Body(Point):
    """The frame origin of a named body (``"body:NAME"``; ``"world"`` is the world)."""

    name: str
    _kind: ClassVar[str] = "body"
    _obj: ClassVar[mujoco.mjtObj] = mujoco.mjtObj.mjOBJ_BODY

    def body_and_offset(self, model: mujoco.MjModel) -> tuple[int, np.ndarray]:
        return self.get_id(model), np.zeros(3)

    def __str__(self) -> str:
        return f"body:{self.name}"


@dataclass(frozen=True)
class BodyPoint(Point):
    """A point fixed in a body at local coordinates ``offset`` (m)."""

    name: str
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    _kind: ClassVar[str] = "body"
    _obj: ClassVar[mujoco.mjtObj] = mujoco.mjtObj.mjOBJ_BODY

    def body_and_offset(self, model: mujoco.MjModel) -> tuple[int, np.ndarray]:
        return self.get_id(model), np.array(self.offset, dtype=float)

    def __str__(self) -> str:
        x, y, z = self.offset
        return f"body:{self.name}@{x:g},{y:g},{z:g}"


@dataclass(frozen=True)
class Geom(_Element):
    """A named geom; as a proximity end it means the geom's surface."""

    _kind: ClassVar[str] = "geom"
    _prefix: ClassVar[str] = "geom"
    _obj: ClassVar[mujoco.mjtObj] = mujoco.mjtObj.mjOBJ_GEOM

    def __str__(self) -> str:
        return f"geom:{self.name}"


AnySite = Point
"""Anything a load or proximity accepts as a point (the reference's name for it)."""


def parse_point(text: str | Point, *, allow_geom: bool = False) -> Point:
    """Turn the contract's attachment-point string into a Point.

    Raises ConfigError with one line that quotes the bad text.
    """
    if isinstance(text, Point):
        if isinstance(text, Geom) and not allow_geom:
            raise ConfigError(f"'{text}': a geom is only allowed as a proximity end")
        return text
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"an attachment point must be a non-empty string, got {text!r}")
    text = text.strip()
    if text.startswith("geom:"):
        if not allow_geom:
            raise ConfigError(f"'{text}': a geom is only allowed as a proximity end (use a site or body:NAME@x,y,z)")
        name = text[5:]
        if not name:
            raise ConfigError(f"'{text}': missing geom name after 'geom:'")
        return Geom(name)
    if text.startswith("body:"):
        rest = text[5:]
        if "@" not in rest:
            if not rest:
                raise ConfigError(f"'{text}': missing body name after 'body:'")
            return Body(rest)
        name, _, coords = rest.rpartition("@")
        if not name:
            raise ConfigError(f"'{text}': missing body name before '@'")
        parts = coords.split(",")
        try:
            values = tuple(float(p) for p in parts)
        except ValueError:
            values = ()
        if len(values) != 3 or not all(math.isfinite(v) for v in values):
            raise ConfigError(f"'{text}': the offset after '@' must be three finite numbers x,y,z in metres")
        return BodyPoint(name, values)
    return Site(text)
