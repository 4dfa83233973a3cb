"""``[[signals]]``: telemetry in another frame, worked out per block of rows.

A ``FrameSignal`` is a load's force and torque on its `at` point (``of = "Loads/<l>"``), or an
attachment point's position and velocity (``of = "body:foot@0.1,0,0"``, a site...), expressed in
a frame: ``"world"``, ``"body:NAME"`` or a site NAME. Its columns:

- of a load: ``Signals/<name>:fx :fy :fz`` (N) and ``:tx :ty :tz`` (N·m): the world force and
  torque vectors in the frame's axes, Rᵀf;
- of a point: ``Signals/<name>:x :y :z`` (m), Rᵀ(p − o), and ``:vx :vy :vz`` (m/s), the point's
  velocity relative to the moving frame in its axes, Rᵀ(v_p − v_o − ω × (p − o)).

Each is one ``Derived`` (``mjrig.runtime.signal_sources``): a row copies the few numbers it needs
in place (the frame's and the point's body pose and velocity; the load's source values), and a
block is worked out with array operations when it is flushed. Velocities are MuJoCo's
(``cvel``, as ``mj_objectVelocity`` uses them). GUI-free; the stepping thread.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names, find_id, parse_point
from mjrig.runtime.signal_sources import Derived, origin_velocity

__all__ = ["FrameSignal", "frame_sources", "LOAD_ATTRS", "POINT_ATTRS"]

LOAD_ATTRS = (("fx", "N"), ("fy", "N"), ("fz", "N"), ("tx", "N*m"), ("ty", "N*m"), ("tz", "N*m"))
POINT_ATTRS = (("x", "m"), ("y", "m"), ("z", "m"), ("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s"))


@dataclass(frozen=True)
class FrameSignal:
    """``of`` (``Loads/<load>`` or an attachment point) expressed in ``frame`` (``world``,
    ``body:NAME`` or a site's name), recorded as ``Signals/<name>:...``."""

    name: str
    of: str
    frame: str = "world"

    @property
    def of_load(self) -> str | None:
        """The load's name when ``of`` names one, else None (a point)."""
        return self.of[len("Loads/"):] if self.of.startswith("Loads/") else None

    def check(self, model: mujoco.MjModel, load_names: Sequence[str]) -> None:
        """ConfigError (one line, for the caller to place) naming what ``of`` or ``frame`` lacks;
        the message starts with the field's name."""
        load = self.of_load
        if load is not None:
            if load not in load_names:
                raise ConfigError(f"of: unknown load '{load}'{closest_names(load, list(load_names))}")
        else:
            try:
                parse_point(self.of).body_and_offset(model)
            except ConfigError as exc:
                raise ConfigError(f"of: {exc}") from None
        try:
            _frame(model, self.frame)
        except ConfigError as exc:
            raise ConfigError(f"frame: {exc}") from None


def _frame(model: mujoco.MjModel, frame: str) -> tuple[str, int]:
    """("world" | "body" | "site", id) of a frame's text."""
    if frame == "world":
        return "world", 0
    if frame.startswith("body:"):
        return "body", find_id(model, mujoco.mjtObj.mjOBJ_BODY, frame[5:], kind="body", count=model.nbody)
    return "site", find_id(model, mujoco.mjtObj.mjOBJ_SITE, frame, kind="site", count=model.nsite)


class _Body:
    """A body's pose and velocity at each row: raw arrays (views into MjData) and their reading."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, body: int) -> None:
        root = int(model.body_rootid[body])
        self.raw = [data.xpos[body], data.xmat[body], data.cvel[body], data.subtree_com[root]]

    @staticmethod
    def read(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """From (rows, 21): origin (rows, 3), rotation (rows, 3, 3), ω and the origin's velocity."""
        xpos, rot = raw[:, 0:3], raw[:, 3:12].reshape(-1, 3, 3)
        v, w = origin_velocity(raw[:, 12:18], xpos, raw[:, 18:21])
        return xpos, rot, w, v


def _frame_reader(model: mujoco.MjModel, data: mujoco.MjData, frame: str):
    """(raw arrays, reader) of a frame; the reader gives (origin, R, ω, v of the origin) per row."""
    kind, i = _frame(model, frame)
    if kind == "world":
        def world(raw: np.ndarray):
            rows = raw.shape[0]
            zero = np.zeros((rows, 3))
            return zero, np.broadcast_to(np.eye(3), (rows, 3, 3)), zero, zero
        return [], world
    body = i if kind == "body" else int(model.site_bodyid[i])
    b = _Body(model, data, body)
    if kind == "body":
        return b.raw, _Body.read
    site = [data.site_xpos[i], data.site_xmat[i]]

    def at_site(raw: np.ndarray):
        bpos, _, w, v = _Body.read(raw[:, :21])
        o, rot = raw[:, 21:24], raw[:, 24:33].reshape(-1, 3, 3)
        return o, rot, w, v + np.cross(w, o - bpos)
    return b.raw + site, at_site


def _in_frame(vec: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Rᵀ·vec for each row: (rows, 3) in the frame's axes."""
    return np.einsum("rji,rj->ri", rot, vec)


def frame_sources(signals: Sequence[FrameSignal], model: mujoco.MjModel, data: mujoco.MjData,
                  extra: Sequence[Any]) -> list[Derived]:
    """One ``Derived`` per signal (group ``"signals"``), reading the rig's ``extra`` sources."""
    out = []
    for sig in signals:
        fraw, frame = _frame_reader(model, data, sig.frame)
        nf = sum(a.size for a in fraw)
        load = sig.of_load
        if load is not None:
            sraw, values = _load_values(load, extra)
            columns = [(f"Signals/{sig.name}:{a}", u) for a, u in LOAD_ATTRS]

            def compute(raw: np.ndarray, nf=nf, frame=frame, values=values) -> np.ndarray:
                _, rot, _, _ = frame(raw[:, :nf])
                wrench = values(raw[:, nf:])
                return np.concatenate([_in_frame(wrench[:, 0:3], rot), _in_frame(wrench[:, 3:6], rot)], axis=1)
        else:
            body, offset = parse_point(sig.of).body_and_offset(model)
            b = _Body(model, data, body)
            sraw = b.raw
            columns = [(f"Signals/{sig.name}:{a}", u) for a, u in POINT_ATTRS]
            local = np.asarray(offset, dtype=float)

            def compute(raw: np.ndarray, nf=nf, frame=frame, local=local) -> np.ndarray:
                o, rot, w_f, v_o = frame(raw[:, :nf])
                bpos, brot, w_b, v_b = _Body.read(raw[:, nf:])
                p = bpos + np.einsum("rij,j->ri", brot, local)
                v_p = v_b + np.cross(w_b, p - bpos)
                r = p - o
                return np.concatenate([_in_frame(r, rot), _in_frame(v_p - v_o - np.cross(w_f, r), rot)], axis=1)
        out.append(Derived("signals", [*fraw, *sraw], columns, compute))
    return out


def _load_values(load: str, extra: Sequence[Any]) -> tuple[list[np.ndarray], Callable[[np.ndarray], np.ndarray]]:
    """(raw arrays, reader) of a load's six world values: the spring bank's Derived (worked out
    from its raw rows), or six entries of an array read in place (each as a one-value view)."""
    names = [f"Loads/{load}:{a}" for a, _ in LOAD_ATTRS]
    for item in extra:
        if isinstance(item, Derived):
            cols = [n for n, _ in item.columns]
            if all(n in cols for n in names):
                idx = [cols.index(n) for n in names]
                return list(item.raw), lambda raw, d=item, idx=idx: d.compute(raw)[:, idx]
        else:
            pairs = {n: i for n, i, _ in item[2]}
            if all(n in pairs for n in names):
                arr = item[1]
                return [arr[pairs[n]: pairs[n] + 1] for n in names], lambda raw: raw
    raise ConfigError(f"of: load '{load}' records no force and torque")
