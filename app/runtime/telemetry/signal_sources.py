"""What a model offers the recorder: the (array, columns) sources of each signal group.

Each source is a flat float array read in place at every sample and the columns it feeds, as
``[(column name, index into the array, unit)]``. Names follow ``Category/Entity:attribute``
(docs/outputs.md, "Telemetry columns"); unnamed entities are called by kind and index (``Bodies/body3:x``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from mjrig.runtime.points import is_rig_name
from mjrig.runtime.telemetry.sensor_units import angular_transmission, sensor_unit

__all__ = [
    "Source",
    "Derived",
    "entity_name",
    "actuator_units",
    "model_sources",
    "MODEL_GROUPS",
    "origin_velocity",
    "CONTACT_COLUMNS",
    "ENERGY_COLUMNS",
    "contact_values",
]

Source = tuple[np.ndarray, list[tuple[str, int, str]]]
"""A flat float array and the columns it feeds: [(column name, index into the array, unit)]."""


@dataclass(eq=False)
class Derived:
    """Columns worked out for a whole block of rows when it is flushed, not at every row.

    At each row the recorder copies every array of ``raw`` (flat, read in place, fixed size)
    side by side into a hidden row; at flush ``compute(raw_block)`` gets those rows as one
    (rows, total raw size) array and returns (rows, len(columns)) values for ``columns``
    [(name, unit)]. This keeps per-row work to plain copies (e.g. spring forces from lengths,
    rates, end points and coefficients: one vectorised pass per 1000 rows). ``current()``, when
    given, returns the columns' values at the current state as one row, more cheaply than
    ``compute`` on a single raw row (for readers that need a value at every step).
    """

    group: str
    raw: list[np.ndarray]
    columns: list[tuple[str, str]]
    compute: Callable[[np.ndarray], np.ndarray]
    current: Callable[[], np.ndarray] | None = None
    inputs: tuple[str, ...] = ()
    """Columns of the same rows ``compute`` also reads, after the raw values (e.g. a load's force
    worked out by the spring bank's own Derived): used when the recording has every one of them
    by the time this is computed; else ``fallback`` (from raw values alone) stands in."""
    fallback: Derived | None = None


def entity_name(model: mujoco.MjModel, obj: mujoco.mjtObj, i: int, kind: str) -> str:
    """MuJoCo's name verbatim, or ``<kind><index>`` for an unnamed entity."""
    return mujoco.mj_id2name(model, obj, i) or f"{kind}{i}"


def _joint_sources(model: mujoco.MjModel, data: mujoco.MjData) -> list[Source]:
    qp: list[tuple[str, int, str]] = []
    qv: list[tuple[str, int, str]] = []
    for j in range(model.njnt):
        name = entity_name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")
        if is_rig_name(name):
            continue
        jt, pa, va = int(model.jnt_type[j]), int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        base = f"Joints/{name}:"
        if jt == mujoco.mjtJoint.mjJNT_HINGE:
            qp.append((base + "qpos", pa, "rad"))
            qv.append((base + "qvel", va, "rad/s"))
        elif jt == mujoco.mjtJoint.mjJNT_SLIDE:
            qp.append((base + "qpos", pa, "m"))
            qv.append((base + "qvel", va, "m/s"))
        elif jt == mujoco.mjtJoint.mjJNT_BALL:
            qp += [(base + a, pa + i, "") for i, a in enumerate(("qw", "qx", "qy", "qz"))]
            qv += [(base + a, va + i, "rad/s") for i, a in enumerate(("wx", "wy", "wz"))]
        else:  # free
            qp += [(base + a, pa + i, "m") for i, a in enumerate(("x", "y", "z"))]
            qp += [(base + a, pa + 3 + i, "") for i, a in enumerate(("qw", "qx", "qy", "qz"))]
            qv += [(base + a, va + i, "m/s") for i, a in enumerate(("vx", "vy", "vz"))]
            qv += [(base + a, va + 3 + i, "rad/s") for i, a in enumerate(("wx", "wy", "wz"))]
    cons = []  # a hinge's or slide's constraint force (limits, contacts, equalities): N·m or N
    for j in range(model.njnt):
        name = entity_name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")
        if int(model.jnt_type[j]) in _ONE_DOF and not is_rig_name(name):
            unit = "N*m" if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_HINGE else "N"
            cons.append((f"Joints/{name}:constraint", int(model.jnt_dofadr[j]), unit))
    return [(data.qpos, qp), (data.qvel, qv), (data.qfrc_constraint, cons)]


_ONE_DOF = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


def _body_sources(model: mujoco.MjModel, data: mujoco.MjData) -> list[Source | Derived]:
    """Each body's world position (``:x :y :z``, m), orientation (``:qw :qx :qy :qz``, MuJoCo's
    ``xquat``) and, worked out per block, the world velocity of its origin (``:vx :vy :vz``, m/s)
    and its angular velocity (``:wx :wy :wz``, rad/s), as ``mj_objectVelocity`` gives them."""
    names = [entity_name(model, mujoco.mjtObj.mjOBJ_BODY, b, "body") for b in range(model.nbody)]
    pos = [(f"Bodies/{names[b]}:{a}", 3 * b + i, "m") for b in range(1, model.nbody) for i, a in enumerate("xyz")]
    quat = [
        (f"Bodies/{names[b]}:{a}", 4 * b + i, "")
        for b in range(1, model.nbody)
        for i, a in enumerate(("qw", "qx", "qy", "qz"))
    ]
    columns = [
        (f"Bodies/{names[b]}:{a}", u)
        for b in range(1, model.nbody)
        for a, u in (("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s"), ("wx", "rad/s"), ("wy", "rad/s"), ("wz", "rad/s"))
    ]
    root = np.asarray(model.body_rootid, dtype=np.intp)[1:]
    n = model.nbody

    def velocities(raw: np.ndarray) -> np.ndarray:
        """From rows of (cvel, xpos, subtree_com): each body's (v of its origin, ω), world axes."""
        rows = raw.shape[0]
        cvel = raw[:, : 6 * n].reshape(rows, n, 6)[:, 1:]
        xpos = raw[:, 6 * n : 9 * n].reshape(rows, n, 3)[:, 1:]
        com = raw[:, 9 * n :].reshape(rows, n, 3)[:, root]
        v, w = origin_velocity(cvel, xpos, com)
        return np.concatenate([v, w], axis=2).reshape(rows, 6 * (n - 1))

    vel = Derived(
        "bodies", [data.cvel.reshape(-1), data.xpos.reshape(-1), data.subtree_com.reshape(-1)], columns, velocities
    )
    return [(data.xpos.reshape(-1), pos), (data.xquat.reshape(-1), quat), vel]


def origin_velocity(cvel: np.ndarray, xpos: np.ndarray, com: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(world velocity of a body frame's origin (m/s), angular velocity (rad/s)) from MuJoCo's
    ``cvel`` (..., 6), the origin ``xpos`` and its tree's ``subtree_com`` (..., 3): cvel's linear
    part is the velocity of the point at the tree's centre of mass (as ``mj_objectVelocity``)."""
    w = cvel[..., 0:3]
    r = xpos - com
    v = cvel[..., 3:6].copy()  # + w x r, by components (np.cross costs 3x as much on these shapes)
    v[..., 0] += w[..., 1] * r[..., 2] - w[..., 2] * r[..., 1]
    v[..., 1] += w[..., 2] * r[..., 0] - w[..., 0] * r[..., 2]
    v[..., 2] += w[..., 0] * r[..., 1] - w[..., 1] * r[..., 0]
    return v, w


def _site_sources(model: mujoco.MjModel, data: mujoco.MjData) -> list[Source]:
    """Each site's world position (``Sites/<s>:x :y :z``, m); the rig's own helper sites left out."""
    pairs = []
    for s in range(model.nsite):
        name = entity_name(model, mujoco.mjtObj.mjOBJ_SITE, s, "site")
        if not is_rig_name(name):
            pairs += [(f"Sites/{name}:{a}", 3 * s + i, "m") for i, a in enumerate("xyz")]
    return [(data.site_xpos.reshape(-1), pairs)]


def _sensor_sources(model: mujoco.MjModel, data: mujoco.MjData) -> list[Source]:
    pairs = []
    for s in range(model.nsensor):
        name = entity_name(model, mujoco.mjtObj.mjOBJ_SENSOR, s, "sensor")
        unit = sensor_unit(model, s)
        adr = int(model.sensor_adr[s])
        pairs += [(f"Sensors/{name}:{i}", adr + i, unit) for i in range(int(model.sensor_dim[s]))]
    return [(data.sensordata, pairs)]


def actuator_units(model: mujoco.MjModel, a: int) -> tuple[str, str, str]:
    """(force unit, velocity unit, ctrl unit) of actuator ``a``, in its transmission's space.

    MuJoCo's ``actuator_force`` and ``actuator_velocity`` are the actuator's own: a joint gets
    gear × force (``qfrc_actuator``) and the actuator moves at gear × the joint's speed, so force
    × velocity is the mechanical power either way. They are N·m and rad/s for an angular
    transmission (a hinge, a fixed tendon over hinges), N and m/s otherwise. The input
    (``ctrl``) is what MuJoCo is given, so it is converted only where it is a target the actuator
    holds in joint units (a position or velocity servo with gear 1: rad or m, rad/s or m/s) or
    the force itself (a motor of gain 1 and gear 1: N·m or N); a motor's input scaled by another
    gain or gear, and anything else (muscles, filters, custom gains) has no unit ("")."""
    angular = angular_transmission(model, a)
    force, velocity = ("N*m", "rad/s") if angular else ("N", "m/s")
    gear = model.actuator_gear[a]
    plain = float(gear[0]) == 1.0 and not np.any(gear[1:])
    fixed = int(model.actuator_gaintype[a]) == mujoco.mjtGain.mjGAIN_FIXED
    if not (plain and fixed) or int(model.actuator_dyntype[a]) != mujoco.mjtDyn.mjDYN_NONE:
        return force, velocity, ""
    bias, prm = int(model.actuator_biastype[a]), model.actuator_biasprm[a]
    gain = float(model.actuator_gainprm[a, 0])
    if bias == mujoco.mjtBias.mjBIAS_NONE and gain == 1.0:
        return force, velocity, force
    if bias == mujoco.mjtBias.mjBIAS_AFFINE and prm[1] != 0 and prm[1] == -gain:
        return force, velocity, "rad" if angular else "m"
    if bias == mujoco.mjtBias.mjBIAS_AFFINE and prm[1] == 0 and prm[2] != 0 and prm[2] == -gain:
        return force, velocity, velocity
    return force, velocity, ""


def _actuator_sources(model: mujoco.MjModel, data: mujoco.MjData) -> list[Source | Derived]:
    names = [entity_name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a, "actuator") for a in range(model.nu)]
    units = [actuator_units(model, a) for a in range(model.nu)]
    power = Derived(
        "actuators",
        [data.actuator_force, data.actuator_velocity],
        [(f"Actuators/{n}:power", "W") for n in names],
        lambda raw: raw[:, : len(names)] * raw[:, len(names) :],
    )
    return [
        (data.ctrl, [(f"Actuators/{n}:ctrl", i, units[i][2]) for i, n in enumerate(names)]),
        (data.actuator_force, [(f"Actuators/{n}:force", i, units[i][0]) for i, n in enumerate(names)]),
        (data.actuator_velocity, [(f"Actuators/{n}:velocity", i, units[i][1]) for i, n in enumerate(names)]),
        *([power] if names else []),
    ]


CONTACT_COLUMNS = [("Contacts/all:count", 0, ""), ("Contacts/all:max_penetration", 1, "m")]
"""The contacts group's columns, indices into the array :func:`contact_values` fills."""
ENERGY_COLUMNS = [("Energy/all:potential", 0, "J"), ("Energy/all:kinetic", 1, "J")]
"""The energy group's columns, indices into ``data.energy``."""


def contact_values(data: mujoco.MjData, out: np.ndarray) -> None:
    """Write the number of contacts and the deepest penetration (m, >= 0) into ``out[0:2]``."""
    n = data.ncon
    out[0] = n
    if n:  # a few contacts: Python's min over a list beats numpy's reduction set-up
        dist = data.contact.dist
        out[1] = max(0.0, -(min(dist.tolist()) if n <= 32 else float(dist.min())))
    else:
        out[1] = 0.0


def _energy_sources(model: mujoco.MjModel, data: mujoco.MjData) -> list[Source]:
    model.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)  # MuJoCo computes it only when asked
    return [(data.energy, list(ENERGY_COLUMNS))]


_GROUPS: dict[str, Callable[[mujoco.MjModel, mujoco.MjData], Sequence[Source | Derived]]] = {
    "joints": _joint_sources,
    "bodies": _body_sources,
    "sites": _site_sources,
    "sensors": _sensor_sources,
    "actuators": _actuator_sources,
    "energy": _energy_sources,
}
MODEL_GROUPS = ("joints", "bodies", "sites", "sensors", "actuators")
"""The model's own signal groups read at every row (energy, which costs MuJoCo work, apart)."""


def model_sources(model: mujoco.MjModel, data: mujoco.MjData, group: str) -> Sequence[Source | Derived]:
    """The sources of one of the model's own signal groups (joints, bodies, sites, sensors,
    actuators, energy): arrays read in place, or ``Derived`` columns worked out per block; empty
    for the rig's groups (loads, proximities, params) and contacts."""
    fn = _GROUPS.get(group)
    return fn(model, data) if fn is not None else []
