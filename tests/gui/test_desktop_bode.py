"""Bode out of the box: on the bundled shaker, at rest, the Modes section offers its drive (a
joint force with a sine profile, no param) as the input and a plotted signal as the output; one
click draws the spring-mass's response, peaking at sqrt(k/m)/2π = 2.25 Hz."""

from __future__ import annotations

import math
import re

import pytest

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_the_shakers_drive_is_a_bode_input_with_no_param(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "shaker", home=tmp_path)
    try:
        app.click("Pause")
        app.click("Modes")
        assert wait_for(lambda: app.value("input"), what="an input offered") == "Loads/drive:magnitude"
        assert app.value("output") == "Joints/slide_x:qpos"  # the first signal the rig plots
        app.click("Bode")
        said = wait_for(
            lambda: app.text(r"Joints/slide_x:qpos / Loads/drive:magnitude \(m/1\): .*", offscreen=True),
            what="the response drawn",
            timeout=60,
        )
        peak = float(re.search(r"at ([0-9.]+) Hz$", said["text"]).group(1))
        assert peak == pytest.approx(math.sqrt(200.0) / (2 * math.pi), rel=0.01), said["text"]
        x, y, w, h = app.widget("phase (deg)")  # scrolled into view, as a person would to read it
        assert w > 200 and h > 80
        desktop.screenshot(f"bode_shaker_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
