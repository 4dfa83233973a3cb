"""Metrics as a person adds them: tick a signal in the plots, add a metric on it from the Metrics
panel, and read its value grow as the run goes -- the block's top speed of the bundled
spring-mass, against the damped oscillator's closed form."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop, wait_for
from tests.gui.test_desktop_plots import _click_node


def top_speed(until: float) -> float:
    """The spring-mass's largest qvel up to ``until`` s: released 0.1 m stretched, k = 200 N/m,
    c = 1 N·s/m, m = 1 kg (its scenario's defaults)."""
    w, zeta = math.sqrt(200.0), 1.0 / (2 * math.sqrt(200.0))
    wd = w * math.sqrt(1 - zeta ** 2)
    t = np.linspace(0.0, until, 200_001)
    v = -0.1 * w / math.sqrt(1 - zeta ** 2) * np.exp(-zeta * w * t) * np.sin(wd * t)  # toward the base first
    return float(v.max())


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_a_metric_added_on_a_plotted_signal_shows_its_live_value(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path)  # the bundled spring-mass
    try:
        _click_node(app, "slide_x", "mvTreeNode")
        _click_node(app, "qvel", "mvCheckbox")
        app.click("Metrics")
        app.type_into("metric name", "top_speed")
        app.click("Add metric")  # kind "max" (the first), on the ticked signal, over the whole run
        wait_for(lambda: app.text("top_speed"), what="the metric's row")
        assert app.text("slide_x:qvel") and app.text("max") and app.text(r"0\.\.end s")
        app.click("Reset")  # from the release: the log starts over when time goes back
        app.run_for(0.6)  # past the first return swing (half a period is 0.22 s)
        shown = wait_for(lambda: app.text(r"[0-9.]+ m/s"), what="the metric's value in m/s", timeout=20)
        value = float(shown["text"].split()[0])
        assert value == pytest.approx(top_speed(3.0), rel=0.01), (value, top_speed(3.0))
        desktop.screenshot(f"metric_added_{size[0]}x{size[1]}")
    finally:
        desktop.x("xdotool", "windowactivate", "--sync", str(app.panel))
        desktop.x("xdotool", "key", "alt+F4")
        app.click("Quit without saving")  # the metric is an unsaved edit of the rig
        assert app.proc.wait(30) == 0, app.output()
        desktop.close()
