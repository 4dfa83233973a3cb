"""A URDF robot description dropped on the 3D view opens like an MJCF (CONTRACT 14): the view
names the robot, its meshes are drawn (the package's STL base and arm, pixels of the mesh colour
where the model is), and the app offers it a rig like a bare model (Save scenario names it); one
whose mesh is not found is one error line and the rig before runs on. Public descriptions as
pybullet's data ships them (KUKA's LBR iiwa, Franka's Panda) open the same way. 1280x800 and
1920x1080."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop
from tests.urdf_util import arm_package
from tests.waiting import wait_for


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_a_dropped_urdf_opens_with_its_meshes_drawn(tmp_path, size):
    urdf = arm_package(tmp_path / "ws")
    lonely = shutil.copy(urdf, tmp_path / "lonely.urdf")  # away from its package, no package path
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path / "home")
    try:
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : shaker", what="the default rig", timeout=30)
        before = app.output()
        app.drop(lonely)
        wait_for(lambda: "lonely.urdf" in app.output()[len(before) :], what="the error line")
        errors = [ln for ln in app.output()[len(before) :].splitlines() if "lonely.urdf" in ln]
        assert len(errors) == 1 and "mesh 'package://arm_description/meshes/base.stl' not found" in errors[0], errors
        assert desktop.title(app.viewer) == "MuJoCo : shaker"  # the rig before runs on
        empty = desktop.grab(app.viewer)
        app.drop(urdf)
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : two_link", what="the dropped URDF to open")
        app.run_for(1.0)
        shot = desktop.grab(app.viewer)
        assert float((np.abs(shot.astype(int) - empty.astype(int)).max(axis=2) > 24).mean()) > 0.01
        desktop.screenshot(str(tmp_path / f"urdf-{size[0]}"))
        assert "error" not in app.output()[len(before) :].split("lonely.urdf")[-1].lower(), app.output()
    finally:
        app.quit_discarding()
        desktop.close()


def _pybullet_data() -> Path:
    spec = importlib.util.find_spec("pybullet_data")  # the data only: pybullet itself is not imported
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pybullet's data (pip install pybullet) holds the public robot descriptions")
    return Path(list(spec.submodule_search_locations)[0])


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_public_robot_descriptions_open_by_drop(tmp_path, size):
    """KUKA's LBR iiwa (meshes beside its URDF, .obj drawn and .stl colliding) is drawn where the
    empty view was; Franka's Panda, whose visual meshes MuJoCo reads with a note on their texture
    coordinates, opens too, each note one warning line in the status log and none an error.
    Copies in a temporary folder: nothing is written beside pybullet's own files."""
    data = _pybullet_data()
    iiwa = shutil.copytree(data / "kuka_iiwa", tmp_path / "kuka_iiwa") / "model.urdf"
    panda = shutil.copytree(data / "franka_panda", tmp_path / "franka_panda") / "panda.urdf"
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path / "home")
    try:
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : shaker", what="the default rig", timeout=30)
        before = app.output()
        app.drop(iiwa)
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : lbr_iiwa", what="the iiwa to open", timeout=60)
        app.run_for(1.0)
        desktop.screenshot(str(tmp_path / f"iiwa-{size[0]}"))
        iiwa_shot = desktop.grab(app.viewer)
        app.drop(panda)
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : panda", what="the panda to open", timeout=60)
        app.run_for(1.0)
        desktop.screenshot(str(tmp_path / f"panda-{size[0]}"))
        panda_shot = desktop.grab(app.viewer)
        assert float((np.abs(panda_shot.astype(int) - iiwa_shot.astype(int)).max(axis=2) > 24).mean()) > 0.01
        app.see_text(r"warning: MuJoCo: obj_decoder: .*link\d\.obj.*")
        out = app.output()[len(before) :]
        assert "error" not in out.lower() and "Traceback" not in out, out
    finally:
        app.quit_discarding()
        desktop.close()
