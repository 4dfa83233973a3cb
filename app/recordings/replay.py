"""Recordings played back: ``mjrig RECORDING.parquet [--compare OTHER.parquet]``.

``read_recording`` reads a recording's rows and key-value metadata (one-line ConfigError for a
missing, unreadable or non-mjrig file). ``Replay.open`` loads the model its metadata names
(``mjrig.model_path``; refused with one line when missing; when the file's SHA-256 is not the
recorded ``mjrig.model_sha256``, one warning line and the replay goes on), and maps the
``joints`` group's columns back to ``qpos`` for every joint type (hinge/slide ``:qpos``; ball
``:qw :qx :qy :qz``; free ``:x :y :z :qw :qx :qy :qz``, see ``mjrig.runtime.telemetry.signal_sources``).
A recording without that group is refused with one line. ``qpos_at(t)`` gives the recorded
positions at a recorded instant bit for bit and interpolates linearly between instants
(quaternions: the shorter way round, normalised); ``show(data, t)`` puts them into ``data`` and
computes the kinematics, which is all the 3D view needs.

``OverlaidRecording`` is a second recording drawn over a replay or a live run: its signals on the same
(simulated) time axis, and, when it is of the same model (same SHA-256, or the same joint names),
a ``Replay`` of it for a ghost of its bodies.

GUI-free. Threading: a Replay is used by one thread (the simulation thread in the app).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import file_sha256
from mjrig.runtime.files.urdf import recorded_package_paths
from mjrig.runtime.points import is_rig_name
from mjrig.runtime.rigmodel import load_model_file
from mjrig.runtime.telemetry.signal_sources import entity_name

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = ["Columns", "Recording", "Replay", "OverlaidRecording", "read_recording", "joint_columns"]

_FREE = ("x", "y", "z", "qw", "qx", "qy", "qz")
_BALL = ("qw", "qx", "qy", "qz")


class Columns(Mapping[str, np.ndarray]):
    """A recording's numeric columns by name (float64, NaN for null), each read from the file the
    first time it is asked for and kept: a replay of a 1,000-body recording (16,000 columns, 1 GB
    on disk) reads its joints and what is plotted, not every column (which took 15 s and 4.6 GB).
    Iterating or ``in`` look at the names only. Any thread (one lock)."""

    def __init__(self, file: pq.ParquetFile, names: list[str], *, where: Path) -> None:
        self._file, self._where = file, where
        self._names = dict.fromkeys(names)
        self._read: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> np.ndarray:
        got = self._read.get(name)
        if got is None:
            if name not in self._names:
                raise KeyError(name)
            self.load([name])
            got = self._read[name]
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def load(self, names: Iterable[str]) -> None:
        """Read the columns of ``names`` not read yet in one pass over the file (unknown names are
        left out); ConfigError (one line) when the file can no longer be read."""
        import pyarrow as pa

        with self._lock:
            wanted = [n for n in dict.fromkeys(names) if n in self._names and n not in self._read]
            if not wanted:
                return
            try:
                table = self._file.read(columns=wanted)
            except (OSError, pa.ArrowException) as exc:
                raise ConfigError(f"{self._where}: cannot read {wanted[0]} ({str(exc).splitlines()[0]})") from None
            for name in wanted:
                col = table.column(name)
                self._read[name] = col.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(float, copy=False)


@dataclass(frozen=True)
class Recording:
    """A recording read back: ``times`` (s, simulated, shape (rows,)), its numeric columns as
    float64 arrays (NaN for null; ``Columns``: each read when first asked for), and the file's
    key-value metadata."""

    path: Path
    times: np.ndarray
    columns: Columns
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def model_path(self) -> Path | None:
        raw = self.metadata.get("mjrig.model_path")
        return Path(raw) if raw else None

    @property
    def signals(self) -> list[str]:
        """The signal columns (``time`` and ``wall_time`` left out), in file order."""
        return [c for c in self.columns if c not in ("time", "wall_time")]


def read_recording(path: str | os.PathLike) -> Recording:
    """Open an mjrig recording: its metadata, names and ``time`` now, the other columns when asked
    for (``Columns``); ConfigError (one line) when it is missing or not one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"{path}: recording not found")
    try:
        file = pq.ParquetFile(path)
        schema = file.schema_arrow
    except (OSError, pa.ArrowException) as exc:
        raise ConfigError(f"{path}: not a readable Parquet recording ({str(exc).splitlines()[0]})") from None
    from mjrig.runtime.files.parquet_merge import text_metadata

    metadata = text_metadata(schema)
    if "mjrig.sweep" in metadata:  # File > Open or a drop of RESULTS.parquet in the app
        raise ConfigError(
            f"{path}: a sweep's results, not a recording: browse them with `mjrig {path}` "
            f"and replay a trial from there (its recordings are in {path.with_suffix('')})"
        )
    if "time" not in schema.names:
        raise ConfigError(f"{path}: not an mjrig recording (no 'time' column)")
    numeric = [
        f.name
        for f in schema
        if pa.types.is_floating(f.type) or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type)
    ]
    columns = Columns(file, numeric, where=path)
    try:
        times = columns["time"]
    except (OSError, pa.ArrowException) as exc:
        raise ConfigError(f"{path}: not a readable Parquet recording ({str(exc).splitlines()[0]})") from None
    if times.size and not np.all(np.diff(times) > 0):
        raise ConfigError(f"{path}: its 'time' column does not increase from row to row")
    return Recording(path, times, columns, metadata)


def joint_columns(model: mujoco.MjModel) -> list[tuple[str, int]]:
    """(column, qpos index) of every position the ``joints`` group records for ``model``."""
    out = []
    for j in range(model.njnt):
        name = entity_name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")
        if is_rig_name(name):
            continue
        jt, adr = int(model.jnt_type[j]), int(model.jnt_qposadr[j])
        attrs = (
            ("qpos",)
            if jt in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
            else (_BALL if jt == mujoco.mjtJoint.mjJNT_BALL else _FREE)
        )
        out += [(f"Joints/{name}:{a}", adr + i) for i, a in enumerate(attrs)]
    return out


def _quaternions(model: mujoco.MjModel) -> np.ndarray:
    """qpos index of the first component (qw) of every ball and free joint's quaternion."""
    out = []
    for j in range(model.njnt):
        jt, adr = int(model.jnt_type[j]), int(model.jnt_qposadr[j])
        if jt == mujoco.mjtJoint.mjJNT_BALL:
            out.append(adr)
        elif jt == mujoco.mjtJoint.mjJNT_FREE:
            out.append(adr + 3)
    return np.array(out, dtype=np.intp)


class Replay:
    """A recording's joint positions on its model: ``qpos_at(t)``, ``show(data, t)``."""

    def __init__(self, recording: Recording, model: mujoco.MjModel) -> None:
        pairs = [(c, i) for c, i in joint_columns(model) if c in recording.columns]
        if not pairs:
            raise ConfigError(
                f"{recording.path}: the recording has no joint positions (the 'joints' signal "
                "group was not recorded), so it cannot be replayed"
            )
        self.recording = recording
        self.model = model
        self.times = recording.times
        self.missing = [c for c, _ in joint_columns(model) if c not in recording.columns]
        q = np.tile(model.qpos0, (self.times.size, 1))
        recording.columns.load(c for c, _ in pairs)  # in one pass over the file
        for c, i in pairs:
            q[:, i] = recording.columns[c]
        self.qpos = q
        self._quat = _quaternions(model)

    @classmethod
    def open(cls, path: str | os.PathLike, *, on_warning: Callable[[str], None] | None = None) -> Replay:
        """Read the recording at ``path`` and load the model its metadata names (see the module)."""
        rec = read_recording(path)
        model_path = rec.model_path
        if model_path is None:
            raise ConfigError(f"{rec.path}: its metadata names no model (mjrig.model_path)")
        if not model_path.is_file():
            raise ConfigError(f"{rec.path}: its model {model_path} is not found")
        recorded = rec.metadata.get("mjrig.model_sha256", "")
        if recorded and on_warning is not None and file_sha256(model_path) != recorded:
            on_warning(
                f"{model_path.name} changed since {rec.path.name} was recorded (SHA-256 differs); "
                "replaying on the model as it is now"
            )
        replay = cls(rec, load_model_file(model_path, package_path=recorded_package_paths(rec.metadata)))
        if replay.missing and on_warning is not None:
            on_warning(
                f"{rec.path.name} has no positions for {len(replay.missing)} joint column(s) of the model "
                f"(e.g. {replay.missing[0]}); they stay at the model's initial pose"
            )
        return replay

    @property
    def start(self) -> float:
        return float(self.times[0]) if self.times.size else 0.0

    @property
    def end(self) -> float:
        return float(self.times[-1]) if self.times.size else 0.0

    def index_at(self, t: float) -> int:
        """The last recorded row at or before ``t`` (s); 0 before the first."""
        return max(0, int(np.searchsorted(self.times, t, side="right")) - 1)

    def qpos_at(self, t: float) -> np.ndarray:
        """The recorded ``qpos`` at ``t`` (s): a recorded row exactly at a recorded instant, linear
        in between (quaternions the shorter way round, normalised), held at both ends."""
        k = self.index_at(t)
        a = self.qpos[k]
        if k + 1 >= self.times.size or t <= self.times[k]:
            return a.copy()
        t0, t1 = self.times[k], self.times[k + 1]
        b = self.qpos[k + 1].copy()
        for i in self._quat:
            if np.dot(a[i : i + 4], b[i : i + 4]) < 0:
                b[i : i + 4] *= -1.0
        q = a + (t - t0) / (t1 - t0) * (b - a)
        for i in self._quat:
            n = np.linalg.norm(q[i : i + 4])
            if n > 0:
                q[i : i + 4] /= n
        return q

    def show(self, data: mujoco.MjData, t: float, *, model: mujoco.MjModel | None = None) -> None:
        """Put the positions at ``t`` into ``data`` (time too, velocities zero) and compute the
        kinematics (``mj_kinematics``, enough to draw the bodies). ``model``: ``data``'s model
        when it is not :attr:`model` (the same file compiled again, e.g. by the session)."""
        data.qpos[:] = self.qpos_at(t)
        data.qvel[:] = 0.0
        data.time = t
        mujoco.mj_kinematics(model if model is not None else self.model, data)


class OverlaidRecording:
    """A second recording over the first: its signals on the same time axis, and a ghost."""

    def __init__(self, recording: Recording, *, ghost: Replay | None) -> None:
        self.recording = recording
        self.ghost = ghost

    @classmethod
    def open(cls, path: str | os.PathLike, *, model: mujoco.MjModel, sha256: str = "") -> OverlaidRecording:
        """Read ``path``; a ghost of its bodies when it is of ``model`` (whose file's SHA-256 is
        ``sha256``): the same SHA-256, or, when either is unknown, the same joint columns."""
        rec = read_recording(path)
        theirs = rec.metadata.get("mjrig.model_sha256", "")
        joints = {c for c in rec.columns if c.startswith("Joints/")}
        same_joints = bool(joints) and joints == {c for c, _ in joint_columns(model)}
        same = (sha256 == theirs) if (sha256 and theirs) else same_joints
        return cls(rec, ghost=Replay(rec, model) if same and joints else None)

    def signal_at(self, name: str, times: np.ndarray) -> np.ndarray:
        """Signal ``name`` at ``times`` (s), linear between recorded rows, NaN outside them."""
        values = self.recording.columns.get(name)
        if values is None:
            raise ConfigError(f"{self.recording.path.name} has no signal '{name}'")
        return np.interp(times, self.recording.times, values, left=np.nan, right=np.nan)
