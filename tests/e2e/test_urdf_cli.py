"""``--package-path`` on the command line: a URDF away from its package is checked and run once
the folder holding the package is given, and is one line (exit 2) without it."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import polars as pl
import pytest
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
    # The recording carries the package path: its exports find the meshes without it given again.
    for kind in ("rrd", "mcap"):
        r = mjrig_here("export", tmp_path / "a.parquet", "--to", kind, "-o", tmp_path / f"a.{kind}", cwd=tmp_path)
        assert r.rc == 0 and len(r.err_lines) == 1 and "wrote 100 rows" in r.stderr, r  # no 3D part left out
    from rerun.chunk import RrdReader

    chunks = [c for c in RrdReader(tmp_path / "a.rrd").stream() if c.is_static]
    meshes = {c.entity_path for c in chunks if "Mesh3D:triangle_indices" in c.to_record_batch().schema.names}
    assert meshes == {"/world/world/geom0", "/world/upper/geom2"}, meshes  # the base (fixed: world's) and the arm


def test_a_public_description_runs_with_its_compiler_notes_one_line_each(tmp_path):
    """Franka's Panda as pybullet's data ships it: MuJoCo reads two of its visual meshes with a
    note on their texture coordinates. Each note is one ``mjrig: MuJoCo warning:`` line on stderr
    (no Python warning with its source line), and the run records its nine joints."""
    spec = importlib.util.find_spec("pybullet_data")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pybullet's data (pip install pybullet) holds the public robot descriptions")
    folder = shutil.copytree(Path(list(spec.submodule_search_locations)[0]) / "franka_panda", tmp_path / "panda")
    r = mjrig("run", folder / "panda.urdf", "--duration", "0.01", "--out", tmp_path / "p.parquet")
    assert r.rc == 0, r
    lines = r.stderr.strip().splitlines()
    notes = [ln for ln in lines if "obj_decoder" in ln]
    assert len(notes) == 2 and all(ln.startswith("mjrig: MuJoCo warning: obj_decoder: ") for ln in notes), lines
    assert "UserWarning" not in r.stderr and "spec.compile" not in r.stderr, r.stderr
    joints = {c.split(":")[0] for c in pl.read_parquet(tmp_path / "p.parquet").columns if c.startswith("Joints/")}
    assert len(joints) == 9, joints
