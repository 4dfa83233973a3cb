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
import io
import json
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError, exception_text
from mjrig.runtime.points import is_rig_name

__all__ = [
    "PhysicsState",
    "ModelIdentity",
    "STATE_SPEC",
    "model_identity",
    "take_snapshot",
    "put_snapshot",
    "save_snapshot",
    "load_snapshot",
]

STATE_SPEC = int(mujoco.mjtState.mjSTATE_INTEGRATION)
"""What a snapshot holds (MuJoCo's state bits)."""
SNAPSHOT_MEMBERS = ("state", "spec", "model", "rig", "format")
"""The arrays a snapshot file holds (``np.savez`` members, ``.npy`` each)."""
MAX_SNAPSHOT_BYTES = 256 * 2**20
"""Bytes a snapshot may hold, on disk and unpacked (a 1,000-body model's state is about 1 MB):
checked before anything is decompressed, so a small file that unpacks to gigabytes is refused."""


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
    parts: dict[str, str] = field(default_factory=dict)
    """What the digest is made of, each part as itself (a size) or its own short digest (a list
    of names): what differs between two models can be said (empty in older snapshots)."""

    def describe(self) -> str:
        where = f" from {Path(self.source).name}" if self.source else ""
        return f"model '{self.name}'{where} (nq={self.nq}, nv={self.nv}, na={self.na}, nu={self.nu})"

    def differences(self, other: ModelIdentity, *, this: str, that: str) -> list[str]:
        """What differs from ``other``, in words, this one's value labelled ``this`` and the
        other's ``that``, e.g. ``"nuserdata (the rig's own state) 4 in the snapshot, 0 here"``,
        ``"the bodies' names"``; empty when the same model."""
        out = [
            f"{k} {getattr(self, k)} {this}, {getattr(other, k)} {that}"
            for k in ("nq", "nv", "na", "nu")
            if getattr(self, k) != getattr(other, k)
        ]
        for key, words in _PART_WORDS.items():
            mine, theirs = self.parts.get(key), other.parts.get(key)
            if mine is not None and theirs is not None and mine != theirs:
                out.append(words if key in _NAMED_PARTS else f"{words} {mine} {this}, {theirs} {that}")
        if not out and self.digest != other.digest:
            out.append("their bodies, joints or actuators")
        return out

    def same_model(self, other: ModelIdentity) -> bool:
        return (self.nq, self.nv, self.na, self.nu, self.digest) == (
            other.nq,
            other.nv,
            other.na,
            other.nu,
            other.digest,
        )


def _names(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    out = [mujoco.mj_id2name(model, obj, i) or "" for i in range(count)]
    return [n for n in out if not is_rig_name(n)]


_PART_WORDS = {
    "nmocap": "nmocap",
    "neq": "neq (equality constraints)",
    "nuserdata": "nuserdata (the rig's own state)",
    "bodies": "the bodies' names",
    "joints": "the joints' names",
    "jnt_type": "the joints' types",
    "actuators": "the actuators' names",
}
"""The parts of a model's identity beyond nq, nv, na, nu, as a mismatch names them."""
_NAMED_PARTS = frozenset({"bodies", "joints", "jnt_type", "actuators"})
"""Parts held as a digest of a list: said to differ, not shown."""


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


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
    parts = {k: str(int(getattr(model, k))) for k in ("nmocap", "neq", "nuserdata")}
    parts.update({k: _digest(structure[k]) for k in _NAMED_PARTS})
    return ModelIdentity(
        name, int(model.nq), int(model.nv), int(model.na), int(model.nu), _digest(structure), str(source), parts
    )


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


def take_snapshot(
    model: mujoco.MjModel, data: mujoco.MjData, *, rig: dict[str, float] | None = None, source: str | os.PathLike = ""
) -> PhysicsState:
    """The state of ``data`` now (a copy)."""
    state = np.empty(mujoco.mj_stateSize(model, STATE_SPEC))
    mujoco.mj_getState(model, data, state, STATE_SPEC)
    return PhysicsState(state, model_identity(model, source=source), STATE_SPEC, dict(rig or {}))


def check_model(snap: PhysicsState, model: mujoco.MjModel, *, what: str = "the snapshot") -> None:
    """ConfigError (one line) unless ``snap`` belongs to ``model``."""
    mine = model_identity(model)
    if not snap.model.same_model(mine) or snap.state.size != mujoco.mj_stateSize(model, snap.spec):
        theirs, ours = snap.model.describe(), mine.describe()
        if theirs == ours:  # the same name and sizes: say what differs instead
            differs = snap.model.differences(mine, this="in the snapshot", that="here") or ["the size of its state"]
            raise ConfigError(f"{what} belongs to another {ours}: {'; '.join(differs)}")
        raise ConfigError(f"{what} belongs to {theirs}, not to {ours}")


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
        np.savez(
            fh,
            state=snap.state,
            spec=np.array(snap.spec),
            model=np.array(ident),
            rig=np.array(json.dumps(snap.rig)),
            format=np.array("mjrig-snapshot-1"),
        )
    return path


def load_snapshot(path: str | os.PathLike, *, model: mujoco.MjModel | None = None) -> PhysicsState:
    """Read a snapshot saved by :func:`save_snapshot`; with ``model``, refuse one of another model.
    ConfigError (one line) for a missing, unreadable or foreign file."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError:
        raise ConfigError(f"snapshot file not found: {path}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{path}: not a regular file (a snapshot is an .npz file)")
    try:
        z = _members(path)
        if str(z["format"]) != "mjrig-snapshot-1":
            raise ValueError("not an mjrig snapshot")
        snap = PhysicsState(
            np.array(z["state"], dtype=float),
            ModelIdentity(**json.loads(str(z["model"]))),
            int(z["spec"]),
            {str(k): float(v) for k, v in json.loads(str(z["rig"])).items()},
        )
    except (OSError, ValueError, KeyError, TypeError, MemoryError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a snapshot saved by mjrig ({exception_text(exc)})") from None
    if model is not None:
        check_model(snap, model, what=f"snapshot {path.name}")
    return snap


def _members(path: Path) -> dict[str, np.ndarray]:
    """A snapshot file's arrays, each read through a bound: the file, its members' count and
    their unpacked sizes are checked against ``MAX_SNAPSHOT_BYTES`` before any is decompressed,
    and no member is read past the size its zip entry declares. ValueError names what is wrong."""
    if path.stat().st_size > MAX_SNAPSHOT_BYTES:
        raise ValueError(f"larger than {MAX_SNAPSHOT_BYTES >> 20} MiB")
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > 4 * len(SNAPSHOT_MEMBERS):
            raise ValueError(f"{len(infos)} entries, a snapshot has {len(SNAPSHOT_MEMBERS)}")
        if sum(i.file_size for i in infos) > MAX_SNAPSHOT_BYTES:
            raise ValueError(f"unpacks to more than {MAX_SNAPSHOT_BYTES >> 20} MiB")
        for info in infos:
            name = info.filename.removesuffix(".npy")
            if name not in SNAPSHOT_MEMBERS:
                continue
            with zf.open(info) as fh:
                raw = fh.read(info.file_size + 1)
            if len(raw) > info.file_size:
                raise ValueError(f"entry {name!r} unpacks to more than it declares")
            out[name] = _array(raw, name)
    return out


def _array(raw: bytes, name: str) -> np.ndarray:
    """The ``.npy`` bytes ``raw`` as an array, its header's shape checked against the bytes that
    follow it (numpy would allocate what the header claims before reading)."""
    fh = io.BytesIO(raw)
    version = np.lib.format.read_magic(fh)
    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = header(fh)
    if dtype.hasobject:  # numpy would unpickle them: code run by a file
        raise ValueError(f"entry {name!r} holds Python objects (a pickle); a snapshot holds plain arrays only")
    if int(np.prod(shape, dtype=np.float64)) * dtype.itemsize > len(raw) - fh.tell():
        raise ValueError(f"entry {name!r} claims more data than it holds")
    fh.seek(0)
    return np.load(fh, allow_pickle=False)
