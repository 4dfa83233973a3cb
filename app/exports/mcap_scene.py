"""The rig moving in Foxglove: ``/tf`` and ``/scene`` beside a recording's MCAP channels.

``/tf`` (``foxglove.FrameTransforms``) holds, for every row, each body's pose relative to its
parent body (``world`` the root): translation in m, rotation as a quaternion in Foxglove's
order (x, y, z, w; MuJoCo's own is w, x, y, z), from the recording's world poses
(``Bodies/<b>:x..z``, ``:qw..qz``). ``/scene`` (``foxglove.SceneUpdate``) holds the model's
geometry once, at the first row's time: an entity per body in that body's frame, each geom as
Foxglove's primitive (boxes as cubes, spheres and ellipsoids as spheres, cylinders; a capsule as
a cylinder between two spheres; a plane as a thin cube, 20 m across when MuJoCo's is infinite)
and meshes as triangle lists, in the geom's colour. Both are protobuf messages of Foxglove's own
schemas (``foxglove-schemas-protobuf``; the schema records are their file descriptor sets, as
``mcap-protobuf-support`` builds them).

The geometry needs the model: it is compiled from the file the recording names
(``mjrig.model_path``); when that is missing or changed, or the recording has no body poses, the
3D part is left out and ``why`` says so in one line (the signals still go). GUI-free.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from mjrig.exports.rrd.scene import PLANE_SIZE

if TYPE_CHECKING:
    import polars as pl

    from mjrig.exports.mcap_stream import McapStream

__all__ = ["SceneChannels", "scene_channels", "open_scene"]

_POSE = ("x", "y", "z", "qw", "qx", "qy", "qz")
"""A body's world pose columns in a recording (m; unit quaternion w, x, y, z)."""


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of rows of (w, x, y, z) quaternions."""
    aw, ax, ay, az = a.T
    bw, bx, by, bz = b.T
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=1,
    )


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``v`` (rows) rotated by unit quaternions ``q`` (rows, w x y z)."""
    w, u = q[:, :1], q[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


class SceneChannels:
    """The bodies a recording poses and the geometry of its model; ``transforms`` of rows and the
    ``scene`` message."""

    def __init__(self, model: mujoco.MjModel, bodies: list[tuple[int, str]]) -> None:
        self.model = model
        self.bodies = bodies  # (body id, name) of each body the recording poses
        names = {i: n for i, n in bodies}
        self.parent = {i: names.get(int(model.body_parentid[i]), "world") for i, _ in bodies}
        self.tf_id = 0  # the /tf channel's id (/scene's the next) once registered
        self._message: Any = None  # the FrameTransforms refilled for each row

    def register(self, out: McapStream, *, first_id: int) -> None:
        """``/tf`` and ``/scene`` as channels ``first_id`` and the next, with Foxglove's schemas."""
        from foxglove_schemas_protobuf.FrameTransforms_pb2 import FrameTransforms
        from foxglove_schemas_protobuf.SceneUpdate_pb2 import SceneUpdate
        from mcap_protobuf.schema import build_file_descriptor_set

        schemas = (
            ("/tf", FrameTransforms.DESCRIPTOR.full_name, build_file_descriptor_set(FrameTransforms)),
            ("/scene", SceneUpdate.DESCRIPTOR.full_name, build_file_descriptor_set(SceneUpdate)),
        )
        for k, (topic, name, descriptors) in enumerate(schemas):
            out.schema(first_id + k, name, "protobuf", descriptors.SerializeToString())
            out.channel(first_id + k, first_id + k, topic, "protobuf")
        self.tf_id = first_id

    def write_rows(self, out: McapStream, frame: pl.DataFrame, stamps: np.ndarray, *, first_row: int) -> None:
        """The ``/tf`` messages of a block of rows (``frame``, log times ``stamps`` in ns), after
        the ``/scene`` message before the first row."""
        import polars as pl

        poses = {c: frame[c].cast(pl.Float64).to_numpy() for c in self.columns()}
        payloads = self.transforms(poses, stamps)
        channels = np.full(len(payloads), self.tf_id, dtype=np.uint16)
        sequence = np.arange(first_row, first_row + len(payloads), dtype=np.uint32)
        times = np.asarray(stamps, dtype=np.uint64)
        if first_row == 0:
            payloads = [self.scene(int(times[0])), *payloads]
            channels = np.r_[np.uint16(self.tf_id + 1), channels].astype(np.uint16)
            sequence = np.r_[np.uint32(0), sequence].astype(np.uint32)
            times = np.r_[times[0], times].astype(np.uint64)
        out.messages(channels, sequence, times, payloads)

    def columns(self) -> list[str]:
        """The recording's columns the transforms read."""
        return [f"Bodies/{n}:{c}" for _, n in self.bodies for c in _POSE]

    def transforms(self, poses: Mapping[str, np.ndarray], stamps: np.ndarray) -> list[bytes]:
        """One ``FrameTransforms`` per row: ``poses`` are the recording's pose columns (``columns``)
        for these rows, ``stamps`` their log times (ns)."""
        from foxglove_schemas_protobuf.FrameTransforms_pb2 import FrameTransforms

        world = {
            n: (
                np.column_stack([poses[f"Bodies/{n}:{c}"] for c in _POSE[:3]]),
                np.column_stack([poses[f"Bodies/{n}:{c}"] for c in _POSE[3:]]),
            )
            for _, n in self.bodies
        }
        relative = {}
        for i, n in self.bodies:
            p, q = world[n]
            parent = self.parent[i]
            if parent == "world":
                relative[n] = (parent, p, q)
                continue
            pp, pq = world[parent]
            conj = pq * np.array([1.0, -1.0, -1.0, -1.0])
            relative[n] = (parent, _rotate(conj, p - pp), _quat_mul(conj, q))
        # One message kept and refilled row after row: only the numbers change (4 µs a transform,
        # where building each one anew costs 10-17 µs: a wide recording has millions).
        if self._message is None:
            self._message = FrameTransforms()
            for n, (parent, _, _) in relative.items():
                t = self._message.transforms.add()
                t.parent_frame_id, t.child_frame_id = parent, n
        parts = [(t.translation, t.rotation, t.timestamp) for t in self._message.transforms]
        ps = [p.tolist() for _, p, _ in relative.values()]
        qs = [q.tolist() for _, _, q in relative.values()]
        out = []
        for k, stamp in enumerate(stamps.tolist()):
            seconds, nanos = divmod(int(stamp), 1_000_000_000)
            for (translation, rotation, timestamp), p, q in zip(parts, ps, qs):
                timestamp.seconds, timestamp.nanos = seconds, nanos
                translation.x, translation.y, translation.z = p[k]
                rotation.w, rotation.x, rotation.y, rotation.z = q[k]
            out.append(self._message.SerializeToString())
        return out

    def scene(self, stamp: int) -> bytes:
        """The ``SceneUpdate`` with every posed body's geometry (and the world's, in ``world``)."""
        from foxglove_schemas_protobuf.SceneUpdate_pb2 import SceneUpdate

        m = self.model
        msg = SceneUpdate()
        frames = {0: "world", **{i: n for i, n in self.bodies}}
        for body, frame in frames.items():
            geoms = [g for g in range(m.ngeom) if int(m.geom_bodyid[g]) == body]
            if not geoms:
                continue
            entity = msg.entities.add()
            entity.timestamp.FromNanoseconds(int(stamp))
            entity.frame_id, entity.id, entity.frame_locked = frame, f"geoms/{frame}", True
            for g in geoms:
                self._geom(entity, g)
        return msg.SerializeToString()

    def _geom(self, entity: Any, g: int) -> None:
        """Add geom ``g`` to ``entity`` as Foxglove primitives, in its body's frame."""
        m = self.model
        kind, size = int(m.geom_type[g]), m.geom_size[g]
        pos, quat, rgba = m.geom_pos[g], m.geom_quat[g], m.geom_rgba[g]
        T = mujoco.mjtGeom

        def place(prim: Any, offset: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
            centre = pos + _rotate(quat[None, :], np.asarray(offset, float)[None, :])[0]
            prim.pose.position.x, prim.pose.position.y, prim.pose.position.z = (float(v) for v in centre)
            o = prim.pose.orientation
            o.w, o.x, o.y, o.z = (float(v) for v in quat)
            prim.color.r, prim.color.g, prim.color.b, prim.color.a = (float(v) for v in rgba)

        def scale(prim: Any, sx: float, sy: float, sz: float) -> None:
            prim.size.x, prim.size.y, prim.size.z = sx, sy, sz

        if kind == T.mjGEOM_BOX:
            cube = entity.cubes.add()
            place(cube)
            scale(cube, *(2 * float(s) for s in size))
        elif kind in (T.mjGEOM_SPHERE, T.mjGEOM_ELLIPSOID):
            sphere = entity.spheres.add()
            place(sphere)
            radii = [float(size[0])] * 3 if kind == T.mjGEOM_SPHERE else [float(s) for s in size]
            scale(sphere, *(2 * r for r in radii))
        elif kind in (T.mjGEOM_CYLINDER, T.mjGEOM_CAPSULE):
            r, half = float(size[0]), float(size[1])
            cylinder = entity.cylinders.add()
            place(cylinder)
            scale(cylinder, 2 * r, 2 * r, 2 * half)
            cylinder.bottom_scale = cylinder.top_scale = 1.0
            if kind == T.mjGEOM_CAPSULE:
                for end in (-half, half):
                    cap = entity.spheres.add()
                    place(cap, (0.0, 0.0, end))
                    scale(cap, 2 * r, 2 * r, 2 * r)
        elif kind == T.mjGEOM_PLANE:
            cube = entity.cubes.add()
            place(cube)
            sx, sy = (2 * float(s) if s > 0 else PLANE_SIZE for s in size[:2])
            scale(cube, sx, sy, 0.001)
        elif kind == T.mjGEOM_MESH:
            mesh = int(m.geom_dataid[g])
            start, count = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
            verts = m.mesh_vert[start : start + count]
            faces = m.mesh_face[int(m.mesh_faceadr[mesh]) : int(m.mesh_faceadr[mesh]) + int(m.mesh_facenum[mesh])]
            tri = entity.triangles.add()
            place(tri)
            for corner in verts[faces.ravel()]:
                point = tri.points.add()
                point.x, point.y, point.z = (float(v) for v in corner)


def scene_channels(metadata: Mapping[str, str], names: Sequence[str]) -> tuple[SceneChannels | None, str]:
    """The scene of a recording with file ``metadata`` and columns ``names``, or (None, why it
    is left out: one line)."""
    from mjrig.runtime.errors import ConfigError
    from mjrig.runtime.files.paths import file_sha256
    from mjrig.runtime.files.urdf import recorded_package_paths
    from mjrig.runtime.rigmodel import load_model_file

    model_path = Path(metadata.get("mjrig.model_path", ""))
    if not metadata.get("mjrig.model_path") or not model_path.is_file():
        return None, f"the model {model_path} is not there: /tf and /scene (the rig in 3D) were left out"
    sha = metadata.get("mjrig.model_sha256")
    if sha and file_sha256(model_path) != sha:
        return None, f"the model {model_path} changed since the recording: /tf and /scene were left out"
    try:
        model = load_model_file(model_path, package_path=recorded_package_paths(metadata))
    except ConfigError as exc:
        return None, f"the model does not load ({exc}): /tf and /scene were left out"
    have = set(names)
    bodies = []
    for i in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i)
        if name and all(f"Bodies/{name}:{c}" in have for c in _POSE):
            bodies.append((i, name))
    if not bodies:
        return None, "the recording has no body poses (its bodies group): /tf and /scene were left out"
    return SceneChannels(model, bodies), ""


def open_scene(
    metadata: Mapping[str, str], names: Sequence[str], out: McapStream, *, first_id: int
) -> SceneChannels | None:
    """The scene of a recording registered in ``out`` from channel ``first_id`` on, or None
    when it is left out (said on stderr in one line: the signals still go)."""
    channels, why = scene_channels(metadata, names)
    if channels is None:
        print(f"mjrig: {why}", file=sys.stderr)
        return None
    channels.register(out, first_id=first_id)
    return channels
