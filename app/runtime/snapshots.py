"""State snapshots: the complete physics state of a run, to restore it or to start from it.

A ``PhysicsState`` holds MuJoCo's integration state (``mj_getState`` with ``mjSTATE_INTEGRATION``:
time, qpos, qvel, act, history, warm start, plugin state, ctrl, applied forces, mocap, equality
flags, userdata: everything ``mj_step`` reads, so stepping from a restored snapshot repeats the
original run bit for bit), the rig's own state (e.g. the load a pin friction carries, by load
name) and the identity of the model it belongs to, so a snapshot is never put into another
model. Saved as ``.npz`` (plain arrays and JSON text, no pickles).
"""
from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.rigmodel import is_rig_name

__all__ = ["PhysicsState", "ModelIdentity", "STATE_SPEC", "model_identity", "take_snapshot", "put_snapshot",
           "save_snapshot", "load_snapshot"]

STATE_SPEC = int(mujoco.mjtState.mjSTATE_INTEGRATION)
"""What a snapshot holds (MuJoCo's state bits)."""


@dataclass(frozen=True)
class ModelIdentity:
    """What identifies a model for a snapshot: its name, sizes and a digest of its structure
    (sizes, joint types and the names of bodies, joints and actuators; the rig's hidden helpers
    left out, so the same model with another rig is the same model)."""

    name: str
    nq: int
    nv: int
    na: int
    nu: int
    digest: str
    source: str = ""

    def describe(self) -> str:
        where = f" from {Path(self.source).name}" if self.source else ""
        return f"model '{self.name}'{where} (nq={self.nq}, nv={self.nv}, na={self.na}, nu={self.nu})"

    def same_model(self, other: "ModelIdentity") -> bool:
        return (self.nq, self.nv, self.na, self.nu, self.digest) == (other.nq, other.nv, other.na, other.nu,
                                                                     other.digest)


def _names(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    out = [mujoco.mj_id2name(model, obj, i) or "" for i in range(count)]
    return [n for n in out if not is_rig_name(n)]


def model_identity(model: mujoco.MjModel, *, source: str | os.PathLike = "") -> ModelIdentity:
    """The identity of ``model`` (``source``: the file it came from, for messages only)."""
    raw = bytes(model.names)
    name = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    structure = {
        "sizes": [model.nq, model.nv, model.na, model.nu, model.nmocap, model.neq, model.nuserdata],
        "bodies": _names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody),
        "joints": _names(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt),
        "jnt_type": [int(t) for t in model.jnt_type],
        "actuators": _names(model, mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu),
    }
    digest = hashlib.sha256(json.dumps(structure, sort_keys=True).encode()).hexdigest()[:16]
    return ModelIdentity(name, int(model.nq), int(model.nv), int(model.na), int(model.nu), digest, str(source))


@dataclass(frozen=True)
class PhysicsState:
    """A run's complete state at one instant (see the module docstring).

    ``state`` is MuJoCo's state vector for ``spec``; ``rig`` the rig's own values by load name.
    """

    state: np.ndarray
    model: ModelIdentity
    spec: int = STATE_SPEC
    rig: dict[str, float] = field(default_factory=dict)

    @property
    def time(self) -> float:
        """Simulated time (s) of the snapshot."""
        return float(self.state[0]) if self.spec & int(mujoco.mjtState.mjSTATE_TIME) else float("nan")


def take_snapshot(model: mujoco.MjModel, data: mujoco.MjData, *, rig: dict[str, float] | None = None,
                  source: str | os.PathLike = "") -> PhysicsState:
    """The state of ``data`` now (a copy)."""
    state = np.empty(mujoco.mj_stateSize(model, STATE_SPEC))
    mujoco.mj_getState(model, data, state, STATE_SPEC)
    return PhysicsState(state, model_identity(model, source=source), STATE_SPEC, dict(rig or {}))


def check_model(snap: PhysicsState, model: mujoco.MjModel, *, what: str = "the snapshot") -> None:
    """ConfigError (one line) unless ``snap`` belongs to ``model``."""
    mine = model_identity(model)
    if not snap.model.same_model(mine) or snap.state.size != mujoco.mj_stateSize(model, snap.spec):
        raise ConfigError(f"{what} belongs to {snap.model.describe()}, not to {mine.describe()}")


def put_snapshot(model: mujoco.MjModel, data: mujoco.MjData, snap: PhysicsState) -> None:
    """Set ``data``'s state to ``snap`` and recompute its kinematics (ConfigError if the snapshot
    belongs to another model). MuJoCo's own state only; the rig's part is the caller's."""
    check_model(snap, model)
    mujoco.mj_setState(model, data, np.asarray(snap.state, dtype=float), snap.spec)


def save_snapshot(path: str | os.PathLike, snap: PhysicsState) -> Path:
    """Write ``snap`` to ``path`` (``.npz``; the suffix is added if missing). Returns the path."""
    path = Path(path)
    if path.suffix.lower() != ".npz":
        path = path.with_name(path.name + ".npz")
    ident = json.dumps(snap.model.__dict__)
    with open(path, "wb") as fh:
        np.savez(fh, state=snap.state, spec=np.array(snap.spec), model=np.array(ident),
                 rig=np.array(json.dumps(snap.rig)), format=np.array("mjrig-snapshot-1"))
    return path


def load_snapshot(path: str | os.PathLike, *, model: mujoco.MjModel | None = None) -> PhysicsState:
    """Read a snapshot saved by :func:`save_snapshot`; with ``model``, refuse one of another model.
    ConfigError (one line) for a missing, unreadable or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"snapshot file not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["format"]) != "mjrig-snapshot-1":
                raise ValueError("not an mjrig snapshot")
            snap = PhysicsState(np.array(z["state"], dtype=float), ModelIdentity(**json.loads(str(z["model"]))),
                            int(z["spec"]), {str(k): float(v) for k, v in json.loads(str(z["rig"])).items()})
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a snapshot saved by mjrig ({exc})") from None
    if model is not None:
        check_model(snap, model, what=f"snapshot {path.name}")
    return snap
