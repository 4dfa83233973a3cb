"""Every bundled rig, opened from the panel's list on a laptop and a desktop screen: the viewer
title follows, and a screenshot of each is kept in tests/artifacts/ (rig_<name>_<size>.png)."""

from __future__ import annotations

import pytest

from mjrig.scenario.bundled import bundled_models
from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_every_bundled_rig_opens_from_the_list(size, tmp_path):
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path)
    try:
        for rig in bundled_models():
            app.reveal("Bundled rigs", rig.name)
            app.click(rig.name)
            wait_for(lambda: desktop.title(app.viewer) == f"MuJoCo : {rig.name}", what=f"{rig.name} to open")
            wait_for(lambda: app.value(rig.name) == "True", what=f"the panel to show {rig.name} as the open rig")
            app.redrawn()
            desktop.screenshot(f"rig_{rig.name}_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
