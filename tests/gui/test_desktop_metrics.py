"""Metrics as a person adds them: tick a signal in the plots, add a metric on it from the Metrics
panel with a window, and read its value as the run goes -- the bundled spring-mass's highest
point after its first swing, against the damped oscillator's closed form. Added mid-run, a
metric covers the steps kept from before."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def highest_return(after: float, until: float) -> float:
    """The spring-mass's highest position (qpos, m) between ``after`` and ``until`` s: released
    0.1 m stretched (qpos 0, rest at -0.1 m), k = 200 N/m, c = 1 N·s/m, m = 1 kg (its scenario's
    defaults), an underdamped oscillator about the rest point."""
    w, zeta = math.sqrt(200.0), 1.0 / (2 * math.sqrt(200.0))
    wd = w * math.sqrt(1 - zeta**2)
    t = np.linspace(after, until, 200_001)
    x = -0.1 + 0.1 * np.exp(-zeta * w * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2) * np.sin(wd * t))
    return float(x.max())


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_a_metric_added_on_a_plotted_signal_shows_its_live_value(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "spring_mass", home=tmp_path)  # the bundled spring-mass
    try:
        app.tick("slide_x", "qpos")
        app.click("Metrics")
        app.run_for(0.8)  # past the first return swing (half a period is 0.22 s) before the metric is added
        app.type_into("metric name", "back_swing")
        app.type_into("start", "0.1")  # the form's start field (s), from the registry
        app.click("Add metric")  # kind "max" (the first), on the ticked signal, from 0.1 s on
        wait_for(lambda: app.text("back_swing"), what="the metric's row")
        assert app.text("slide_x:qpos") and app.text("max") and app.text(r"0\.1\.\.end s")
        expected = highest_return(0.1, 0.6)  # the first swing back, at 2π/ωd = 0.44 s
        app.widget("Metrics")  # the section's heading, its rows under it, in view as a person scrolls there
        shown = wait_for(lambda: app.text(r"-0\.0[0-9]+ m"), what="the metric's value in m", timeout=20)
        # added mid-run, it covers the steps kept from before it was added (the swing it came after)
        assert float(shown["text"].split()[0]) == pytest.approx(expected, abs=2e-4), (shown, expected)
        app.click("Reset")  # from the release: the log starts over when time goes back
        app.run_for(0.6)
        app.widget("Metrics")  # the Metrics section back in view, as a person scrolls to it
        shown = wait_for(lambda: app.text(r"-0\.0[0-9]+ m"), what="the metric's value in m", timeout=20)
        value = float(shown["text"].split()[0])
        assert value == pytest.approx(expected, abs=2e-4), (value, expected)
        desktop.screenshot(f"metric_added_{size[0]}x{size[1]}")
    finally:
        desktop.screenshot(f"metric_end_{size[0]}x{size[1]}")  # what was on the screen, pass or fail
        assert app.quit_discarding() == 0, app.output()  # the metric is an unsaved edit of the rig
        desktop.close()
