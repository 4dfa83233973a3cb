"""A small robot description as ROS packages lay one out, for the URDF tests: the package
``arm_description`` (``urdf/arm.urdf``, ``meshes/*.stl``) whose URDF names its meshes
``package://arm_description/meshes/...``: a 2 kg base (a box mesh drawn, a box colliding) and a
1 kg upper arm on a revolute ``shoulder`` about y, its centre of mass 0.2 m up."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

ARM_URDF = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base">
    <visual><geometry><mesh filename="package://arm_description/meshes/base.stl"/></geometry></visual>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
    <inertial><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <link name="upper">
    <visual><origin xyz="0 0 0.2"/><geometry><mesh filename="package://arm_description/meshes/link.stl"/></geometry></visual>
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.05"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/><dynamics damping="0.1"/>
  </joint>
</robot>
"""


def box_stl(
    path: Path, half: tuple[float, float, float], *, centre: tuple[float, float, float] = (0.0, 0.0, 0.0)
) -> Path:
    """A binary STL of a box of half-sizes ``half`` (m) about ``centre``."""
    sx, sy, sz = half
    v = np.array([[x, y, z] for x in (-sx, sx) for y in (-sy, sy) for z in (-sz, sz)]) + np.array(centre)
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1)]
    faces += [(2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    out = bytearray(b"box".ljust(80, b" ") + struct.pack("<I", len(faces)))
    for a, b, c in faces:
        n = np.cross(v[b] - v[a], v[c] - v[a])
        n = n / np.linalg.norm(n)
        out += struct.pack("<12fH", *n, *v[a], *v[b], *v[c], 0)
    path.write_bytes(bytes(out))
    return path


def arm_package(folder: Path) -> Path:
    """``folder/arm_description`` laid out as a ROS package; the URDF's path."""
    package = folder / "arm_description"
    (package / "urdf").mkdir(parents=True, exist_ok=True)
    (package / "meshes").mkdir(exist_ok=True)
    box_stl(package / "meshes" / "base.stl", (0.1, 0.1, 0.05))
    box_stl(package / "meshes" / "link.stl", (0.03, 0.03, 0.2))
    urdf = package / "urdf" / "arm.urdf"
    urdf.write_text(ARM_URDF, encoding="utf-8")
    return urdf
