"""``[[signals]]``: telemetry in another frame, worked out per block of rows.

A ``FrameSignal`` is a load's force and torque on its `at` point (``of = "Loads/<l>"``), or an
attachment point's position and velocity (``of = "body:foot@0.1,0,0"``, a site...), expressed in
a frame: ``"world"``, ``"body:NAME"`` or a site NAME. Its columns:

- of a load: ``Signals/<name>:fx :fy :fz`` (N) and ``:tx :ty :tz`` (N·m): the world force and
  torque vectors in the frame's axes, Rᵀf;
- of a point: ``Signals/<name>:x :y :z`` (m), Rᵀ(p − o), and ``:vx :vy :vz`` (m/s), the point's
  velocity relative to the moving frame in its axes, Rᵀ(v_p − v_o − ω × (p − o)).

Each is one ``Derived`` (``mjrig.runtime.telemetry.signal_sources``) worked out with array operations per
block when it is flushed: from the same rows' ``Bodies/`` and ``Loads/`` columns and each body's
rotation matrix where the recording has them (nothing worked out twice), else (a group not
recorded, the world body) from the raw pose, velocity and load values a row copies. Velocities are MuJoCo's
(``cvel``, as ``mj_objectVelocity`` uses them). GUI-free; the stepping thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names, find_id, parse_point
from mjrig.runtime.telemetry.signal_sources import Derived, entity_name, origin_velocity

__all__ = ["FrameSignal", "frame_sources", "LOAD_ATTRS", "POINT_ATTRS"]

_CATEGORIES = frozenset(
    {
        "Joints",
        "Bodies",
        "Sites",
        "Sensors",
        "Actuators",
        "Proximities",
        "Params",
        "Contacts",
        "Energy",
        "Requirements",
        "Metrics",
        "Signals",
        "Tracers",
    }
)
"""Telemetry categories: an ``of`` starting with one names a column, not a point."""

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
        return self.of[len("Loads/") :] if self.of.startswith("Loads/") else None

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
                if self.of.split("/", 1)[0] in _CATEGORIES:  # a telemetry column, not a point
                    raise ConfigError(
                        f"of: '{self.of}' is neither a load (\"Loads/NAME\") nor a point (a site, "
                        "body:NAME or body:NAME@x,y,z): only a load's force and a point's position "
                        "have a frame to change"
                    ) from None
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


class _Part:
    """What one side of a signal (its frame, or what it expresses) reads: ``raw`` arrays copied
    at each row, ``inputs`` columns of the same rows, and ``read(raw, inputs)`` giving its values
    for a block (``raw``: (rows, raw size), ``inputs``: (rows, len(inputs)))."""

    def __init__(self, raw: list[np.ndarray], inputs: Sequence[str], read: Callable) -> None:
        self.raw, self.inputs, self.read = raw, tuple(inputs), read
        self.size = sum(a.size for a in raw)


def _body(model: mujoco.MjModel, data: mujoco.MjData, body: int, *, columns: bool) -> _Part:
    """A body's (origin, R, ω, v of the origin) per row: from its ``Bodies/`` columns (position,
    velocities) and its rotation matrix (``columns``), or from raw pose and velocity alone."""
    if columns:
        name = entity_name(model, mujoco.mjtObj.mjOBJ_BODY, body, "body")
        names = [f"Bodies/{name}:{a}" for a in ("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz")]
        return _Part([data.xmat[body]], names, lambda r, c: (c[:, 0:3], r.reshape(-1, 3, 3), c[:, 6:9], c[:, 3:6]))
    root = int(model.body_rootid[body])

    def read(r: np.ndarray, c: np.ndarray):
        xpos, rot = r[:, 0:3], r[:, 3:12].reshape(-1, 3, 3)
        v, w = origin_velocity(r[:, 12:18], xpos, r[:, 18:21])
        return xpos, rot, w, v

    return _Part([data.xpos[body], data.xmat[body], data.cvel[body], data.subtree_com[root]], (), read)


def _frame_part(model: mujoco.MjModel, data: mujoco.MjData, frame: str, *, columns: bool) -> _Part:
    """A frame's (origin, R, ω, v of the origin) per row."""
    kind, i = _frame(model, frame)
    if kind == "world":

        def world(r: np.ndarray, c: np.ndarray):
            zero = np.zeros((r.shape[0], 3))
            return zero, np.broadcast_to(np.eye(3), (r.shape[0], 3, 3)), zero, zero

        return _Part([], (), world)
    body = _body(model, data, i if kind == "body" else int(model.site_bodyid[i]), columns=columns)
    if kind == "body":
        return body

    def at_site(r: np.ndarray, c: np.ndarray):
        bpos, _, w, v = body.read(r[:, : body.size], c)
        o, rot = r[:, body.size : body.size + 3], r[:, body.size + 3 : body.size + 12].reshape(-1, 3, 3)
        return o, rot, w, v + np.cross(w, o - bpos)

    return _Part([*body.raw, data.site_xpos[i], data.site_xmat[i]], body.inputs, at_site)


def _in_frame(vec: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Rᵀ·vec for each row: (rows, 3) in the frame's axes."""
    return np.einsum("rji,rj->ri", rot, vec)


def _signal(
    sig: FrameSignal, model: mujoco.MjModel, data: mujoco.MjData, extra: Sequence[Any], *, columns: bool
) -> Derived:
    """``sig`` as one Derived: from the recording's own columns where it can (``columns``), else
    from raw values alone."""
    frame = _frame_part(model, data, sig.frame, columns=columns)
    load = sig.of_load
    if load is not None:
        names = tuple(f"Loads/{load}:{a}" for a, _ in LOAD_ATTRS)
        what = _Part([], names, lambda r, c: c) if columns else _Part(*_load_values(load, extra))
        out = [(f"Signals/{sig.name}:{a}", u) for a, u in LOAD_ATTRS]

        def values(f, wrench):
            _, rot, _, _ = f
            return [_in_frame(wrench[:, 0:3], rot), _in_frame(wrench[:, 3:6], rot)]
    else:
        body, offset = parse_point(sig.of).body_and_offset(model)
        what = _body(model, data, body, columns=columns)
        out = [(f"Signals/{sig.name}:{a}", u) for a, u in POINT_ATTRS]
        local = np.asarray(offset, dtype=float)

        def values(f, b):
            o, rot, w_f, v_o = f
            bpos, brot, w_b, v_b = b
            p = bpos + np.einsum("rij,j->ri", brot, local)
            r = p - o
            return [_in_frame(r, rot), _in_frame(v_b + np.cross(w_b, p - bpos) - v_o - np.cross(w_f, r), rot)]

    nr, ni = frame.size, len(frame.inputs)
    nraw = nr + what.size

    def compute(x: np.ndarray) -> np.ndarray:
        raw, cols = x[:, :nraw], x[:, nraw:]
        return np.concatenate(
            values(frame.read(raw[:, :nr], cols[:, :ni]), what.read(raw[:, nr:], cols[:, ni:])), axis=1
        )

    return Derived("signals", [*frame.raw, *what.raw], out, compute, inputs=frame.inputs + what.inputs)


def frame_sources(
    signals: Sequence[FrameSignal], model: mujoco.MjModel, data: mujoco.MjData, extra: Sequence[Any]
) -> list[Derived]:
    """One ``Derived`` per signal (group ``"signals"``), reading the rig's ``extra`` sources: from
    the recording's ``Bodies/`` and ``Loads/`` columns of the same rows when it records them
    (nothing worked out twice), else from raw values alone."""
    out = []
    for sig in signals:
        alone = _signal(sig, model, data, extra, columns=False)
        out.append(replace(_signal(sig, model, data, extra, columns=True), fallback=alone))
    return out


def _load_values(load: str, extra: Sequence[Any]) -> tuple[list[np.ndarray], tuple[()], Callable]:
    """(raw arrays, no input columns, reader) of a load's six world values, as ``_Part`` takes
    them: the spring bank's Derived (worked out from its raw rows), or six entries of an array
    read in place (each as a one-value view)."""
    names = [f"Loads/{load}:{a}" for a, _ in LOAD_ATTRS]
    for item in extra:
        if isinstance(item, Derived):
            cols = [n for n, _ in item.columns]
            if all(n in cols for n in names):
                idx = [cols.index(n) for n in names]
                return list(item.raw), (), lambda raw, c, d=item, idx=idx: d.compute(raw)[:, idx]
        else:
            pairs = {n: i for n, i, _ in item[2]}
            if all(n in pairs for n in names):
                arr = item[1]
                return [arr[pairs[n] : pairs[n] + 1] for n in names], (), lambda raw, c: raw
    raise ConfigError(f"of: load '{load}' records no force and torque")
