"""A URDF robot description is a model wherever an MJCF is (CONTRACT 14): its
``package://NAME/...`` meshes found in the package it sits in, with ``--package-path``
(``MJRIG_PACKAGE_PATH``) or ``ROS_PACKAGE_PATH``; its visuals drawn, its links' inertia kept (the
upright arm's unstable root is sqrt(m g l / I) to 1e-6); a mesh nowhere to be found is one line."""

from __future__ import annotations

import math
import shutil

import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.model_files import model_files
from mjrig.runtime.rigmodel import load_model_file
from mjrig.scenario.targets import load_target
from tests.urdf_util import arm_package


def test_a_urdf_in_its_package_finds_its_meshes_and_draws_them(tmp_path):
    model = load_model_file(arm_package(tmp_path))
    assert model.nmesh == 2 and model.njnt == 1
    visual = [i for i in range(model.ngeom) if model.geom_type[i] == 7]  # meshes
    assert len(visual) == 2 and all(model.geom_contype[i] == 0 and model.geom_group[i] == 1 for i in visual)
    listed = {p.name for _, p in model_files(arm_package(tmp_path))}
    assert listed == {"base.stl", "link.stl"}  # its inputs (an output may never be one) and what reload watches


@pytest.mark.parametrize("variable", ["MJRIG_PACKAGE_PATH", "ROS_PACKAGE_PATH"])
def test_a_urdf_away_from_its_package_finds_it_on_the_package_path(tmp_path, monkeypatch, variable):
    urdf = arm_package(tmp_path / "ws")
    lonely = shutil.copy(urdf, tmp_path / "arm.urdf")
    monkeypatch.delenv("MJRIG_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    with pytest.raises(ConfigError) as err:
        load_model_file(lonely)
    line = str(err.value)
    assert "\n" not in line and "mesh 'package://arm_description/meshes/base.stl' not found" in line, line
    assert "--package-path or ROS_PACKAGE_PATH" in line, line
    monkeypatch.setenv(variable, str(tmp_path / "ws"))
    assert load_model_file(lonely).nmesh == 2


def test_the_urdf_arms_inertia_comes_through(tmp_path):
    """The upper arm (1 kg, its centre 0.2 m above the shoulder, 0.01 kg·m² about it; the joint's
    damping c = 0.1 N·m·s) balanced upright: J s² + c s − m g l = 0, J = I + m l²."""
    from mjrig.linear.analysis import analyse

    an = analyse(load_target(str(arm_package(tmp_path))), equilibrium=True, inputs=(), outputs=())
    import numpy as np

    root = max(m.real for m in np.linalg.eigvals(an.linear.A))
    j, c, k = 0.01 + 1.0 * 0.2**2, 0.1, 1.0 * 9.81 * 0.2
    assert root == pytest.approx((-c + math.sqrt(c * c + 4 * j * k)) / (2 * j), rel=1e-6)


def test_a_relative_mesh_path_and_a_broken_description_are_one_line(tmp_path):
    urdf = arm_package(tmp_path)
    text = urdf.read_text().replace("package://arm_description/meshes/base.stl", "../meshes/base.stl")
    urdf.write_text(text)
    assert load_model_file(urdf).nmesh == 2  # relative to the description's folder
    urdf.write_text(text.replace("../meshes/base.stl", "../meshes/gone.stl"))
    with pytest.raises(ConfigError, match=r"mesh '\.\./meshes/gone\.stl' not found"):
        load_model_file(urdf)
    (tmp_path / "not.urdf").write_text("<mujoco/>")
    with pytest.raises(ConfigError, match="not a URDF robot description"):
        load_model_file(tmp_path / "not.urdf")
