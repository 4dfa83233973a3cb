"""A URDF robot description dropped on the 3D view opens like an MJCF (CONTRACT 14): the view
names the robot, its meshes are drawn (the package's STL base and arm, pixels of the mesh colour
where the model is), and the app offers it a rig like a bare model (Save scenario names it); one
whose mesh is not found is one error line and the rig before runs on. 1280x800 and 1920x1080."""

from __future__ import annotations

import shutil

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
