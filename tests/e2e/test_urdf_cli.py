"""``--package-path`` on the command line: a URDF away from its package is checked and run once
the folder holding the package is given, and is one line (exit 2) without it."""

from __future__ import annotations

import shutil

import polars as pl
from e2e_util import mjrig, mjrig_here

from tests.urdf_util import arm_package


def test_package_path_finds_a_lonely_urdfs_meshes(tmp_path, monkeypatch):
    monkeypatch.setenv("MJRIG_PACKAGE_PATH", "")  # what the in-process command sets is undone after
    lonely = shutil.copy(arm_package(tmp_path / "ws"), tmp_path / "arm.urdf")
    r = mjrig_here("check", lonely, cwd=tmp_path)
    assert r.rc == 2 and "mesh 'package://arm_description/meshes/base.stl' not found" in r.stderr, r
    assert len(r.stderr.strip().splitlines()) == 1
    r = mjrig_here("check", lonely, "--package-path", tmp_path / "ws", cwd=tmp_path)
    assert r.rc == 0 and "model arm.urdf: 1 body, 1 joint" in r.stdout, r
    r = mjrig("run", lonely, "--package-path", tmp_path / "ws", "--duration", "0.2", "--out", tmp_path / "a.parquet")
    assert r.rc == 0, r
    assert "Joints/shoulder:qpos" in pl.read_parquet(tmp_path / "a.parquet").columns
