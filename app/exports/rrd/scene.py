"""The 3D part of ``mjrig export --to rrd``: a compiled model's geometry as Rerun's static
archetypes, and where a load's ``at`` point lies in its body.

Each geom goes to ``world/<body>/<geom>`` (the names escaped as one entity-path part each; an
unnamed one is called by its kind and index, ``body3``, ``geom7``), with a static ``Transform3D``
holding its pose in its body's frame (``geom_pos``, metres; ``geom_quat``) and, at that pose, the
primitive: a box as ``Boxes3D`` (half sizes, m), a sphere or an ellipsoid as ``Ellipsoids3D``
(half sizes, m), a capsule as ``Capsules3D`` and a cylinder as ``Cylinders3D`` (radius and full
length along the geom's z, m), a mesh as ``Mesh3D`` (``mesh_vert``/``mesh_face`` of the compiled
model, with vertex normals). The colour is what MuJoCo draws: the geom's ``rgba``, or its
material's when it has one and its own is the default grey. A plane is a flat box 1 mm thick under
its surface, ``PLANE_SIZE`` across where MuJoCo's is infinite (as the MCAP scene draws it). Height
fields and SDF geoms are left out (no primitive).

GUI-free (mujoco, numpy, rerun-sdk, imported lazily). Threading: no shared state; any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Scene", "load_scene", "body_entity", "body_entity_names", "log_geometry", "PLANE_SIZE"]

PLANE_SIZE = 20.0
"""How far across an infinite plane is drawn (m)."""

_DEFAULT_RGBA = np.array([0.5, 0.5, 0.5, 1.0], dtype=np.float32)
"""MuJoCo's default geom colour: a geom with a material and this rgba is drawn in the material's."""


@dataclass(frozen=True)
class Scene:
    """A compiled model's names and geometry, for the rrd's 3D part.

    ``bodies``: each body's name by id (``world`` for body 0). ``model``: the ``mujoco.MjModel``.
    """

    model: Any
    bodies: list[str]

    @property
    def extent(self) -> float:
        """The model's size (m, MuJoCo's ``stat.extent``), for the scale of the loads' arrows."""
        return float(self.model.stat.extent) or 1.0

    def point_in_body(self, text: str) -> tuple[str, np.ndarray] | None:
        """(body name, point in its frame, m, shape (3,)) of an attachment point as a scenario
        writes it (``site``, ``body:NAME``, ``body:NAME@x,y,z``); None when the model lacks it."""
        from mjrig.runtime.errors import ConfigError
        from mjrig.runtime.points import parse_point

        try:
            body, offset = parse_point(text).body_and_offset(self.model)
        except (ConfigError, TypeError, ValueError):
            return None
        return self.bodies[body], np.asarray(offset, dtype=float)


def _name(model: Any, obj: Any, i: int, kind: str) -> str:
    import mujoco

    return mujoco.mj_id2name(model, obj, i) or f"{kind}{i}"


def load_scene(path: Path, *, package_path: Sequence[Path] = ()) -> Scene:
    """The model at ``path`` compiled as is (``rigmodel.load_model_file``: ConfigError, one line);
    ``package_path``: a URDF's package folders beside the usual ones (the recording's)."""
    from mjrig.runtime.rigmodel import load_model_file

    model = load_model_file(path, package_path=package_path)
    return Scene(model, body_entity_names(model))


def body_entity_names(model: Any) -> list[str]:
    """Each body's name by id as the rrd names it (``world`` for body 0, ``body3`` for an unnamed one)."""
    import mujoco

    return ["world"] + [_name(model, mujoco.mjtObj.mjOBJ_BODY, i, "body") for i in range(1, model.nbody)]


def body_entity(body: str) -> str:
    """The entity path of a body's world-frame pose: ``world/<body>``, the name one part."""
    import rerun as rr

    return f"world/{rr.escape_entity_path_part(body)}"


def _colour(model: Any, g: int) -> np.ndarray:
    """The geom's rgba as MuJoCo draws it, as 0-255 bytes."""
    rgba = np.asarray(model.geom_rgba[g], dtype=np.float32)
    mat = int(model.geom_matid[g])
    if mat >= 0 and np.allclose(rgba, _DEFAULT_RGBA):
        rgba = np.asarray(model.mat_rgba[mat], dtype=np.float32)
    return np.round(np.clip(rgba, 0.0, 1.0) * 255).astype(np.uint8)


def _normals(verts: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Vertex normals: the area-weighted sum of the faces' normals round each vertex, unit length."""
    tri = verts[faces]
    face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normals = np.zeros_like(verts)
    for k in range(3):
        np.add.at(normals, faces[:, k], face_n)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return normals / np.where(length > 0, length, 1.0)


def _primitive(model: Any, g: int, rgba: np.ndarray) -> Any | None:
    """The geom's Rerun archetype in its own frame, or None for a height field or SDF."""
    import mujoco
    import rerun as rr

    kind, size = int(model.geom_type[g]), np.asarray(model.geom_size[g], dtype=float)
    t = mujoco.mjtGeom
    if kind == t.mjGEOM_BOX:
        return rr.Boxes3D(half_sizes=[size], colors=[rgba], fill_mode="solid")
    if kind == t.mjGEOM_SPHERE:
        return rr.Ellipsoids3D(half_sizes=[[size[0]] * 3], colors=[rgba], fill_mode="solid")
    if kind == t.mjGEOM_ELLIPSOID:
        return rr.Ellipsoids3D(half_sizes=[size], colors=[rgba], fill_mode="solid")
    if kind == t.mjGEOM_CAPSULE:  # Rerun's runs from its origin along +z; MuJoCo's is centred
        return rr.Capsules3D(lengths=[2 * size[1]], radii=[size[0]], translations=[[0.0, 0.0, -size[1]]], colors=[rgba])
    if kind == t.mjGEOM_CYLINDER:
        return rr.Cylinders3D(lengths=[2 * size[1]], radii=[size[0]], colors=[rgba], fill_mode="solid")
    if kind == t.mjGEOM_PLANE:  # size: half sizes (m), 0 where infinite
        half = [float(s) if s > 0 else PLANE_SIZE / 2 for s in size[:2]]
        return rr.Boxes3D(half_sizes=[[*half, 0.0005]], centers=[[0.0, 0.0, -0.0005]], colors=[rgba], fill_mode="solid")
    if kind == t.mjGEOM_MESH and int(model.geom_dataid[g]) >= 0:
        m = int(model.geom_dataid[g])
        v0, nv = int(model.mesh_vertadr[m]), int(model.mesh_vertnum[m])
        f0, nf = int(model.mesh_faceadr[m]), int(model.mesh_facenum[m])
        verts = np.asarray(model.mesh_vert[v0 : v0 + nv], dtype=np.float32)
        faces = np.asarray(model.mesh_face[f0 : f0 + nf], dtype=np.uint32)
        return rr.Mesh3D(
            vertex_positions=verts, triangle_indices=faces, vertex_normals=_normals(verts, faces), albedo_factor=rgba
        )
    return None


def log_geometry(scene: Scene, rec: Any) -> int:
    """Every drawable geom of ``scene`` logged static to ``rec`` (a ``rerun.RecordingStream``)
    under ``world/<body>/<geom>``; the number logged."""
    import mujoco
    import rerun as rr

    model, done = scene.model, 0
    for g in range(model.ngeom):
        rgba = _colour(model, g)
        shape = _primitive(model, g, rgba)
        if shape is None or rgba[3] == 0:
            continue
        body = scene.bodies[int(model.geom_bodyid[g])]
        path = f"{body_entity(body)}/{rr.escape_entity_path_part(_name(model, mujoco.mjtObj.mjOBJ_GEOM, g, 'geom'))}"
        w, x, y, z = (float(q) for q in model.geom_quat[g])
        rec.log(
            path,
            rr.Transform3D(translation=model.geom_pos[g], quaternion=rr.Quaternion(xyzw=[x, y, z, w])),
            static=True,
        )
        rec.log(path, shape, static=True)
        done += 1
    return done
