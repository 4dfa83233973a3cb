"""A Sobol sweep's results as a person reads them: ``mjrig RESULTS.parquet`` of a Saltelli design
shows, above the scatter, each param's first-order (blue) and total (orange) Sobol index as bars
for the value chosen in the combo (a laptop's screen keeps them under their header until it is
clicked). The spring-mass's travel (its lowest point in 3 s) is set by
the damper c; its frequency by k and the mass, not by c -- a person sees c's bars tallest for the
one and flat for the other. On a 1280x800 and a 1920x1080 screen."""

from __future__ import annotations

import numpy as np
import pytest

from mjrig.campaign.results import SweepResults
from mjrig.campaign.sweep import run_sweep
from mjrig.scenario.parse import load_scenario
from mjrig.widgets.analysis.sobol_bars import FIRST_RGB, TOTAL_RGB
from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_results import _click_at
from tests.sweep_util import write_scenario
from tests.waiting import wait_for

TITLE = "Results — RESULTS.parquet"
SWEEP = """[[metrics]]
name = "f"
signal = "Joints/slide_x:qpos"
kind = "frequency"

[sweep]
seed = 4
trials = 32
sensitivity = "sobol"
[sweep.params]
k = { distribution = "uniform", low = 100.0, high = 900.0 }
mass = { distribution = "uniform", low = 0.5, high = 1.5 }
c = { distribution = "uniform", low = 0.0, high = 2.0 }
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> SweepResults:
    """32 base points of k, mass and c: 160 trials of 3 s (a few seconds in lock-step)."""
    folder = tmp_path_factory.mktemp("sobol")
    path = write_scenario(folder, SWEEP)
    path.write_text(path.read_text().replace("duration = 1.0", "duration = 3.0"))
    run_sweep(load_scenario(path), out=folder / "RESULTS.parquet", workers=2)
    res = SweepResults.open(folder / "RESULTS.parquet")
    reading = res.sobol()
    assert reading is not None and reading.params == ["k", "mass", "c"]
    assert all(v.computed for v in reading.values.values())
    return res


def _bars(app: App, plot: list[int]) -> dict[tuple[int, int, int], list[int]]:
    """The heights (px) of each colour's bars in the Sobol plot, left to right, as drawn: pixels
    of the colour grouped into runs of columns (a bar 0 high draws none)."""
    px, py, pw, ph = plot
    img = app.desktop.grab(app.panel)[py + 30 : py + ph, px : px + pw].astype(int)  # below the legend
    out = {}
    for colour in (FIRST_RGB, TOTAL_RGB):
        ys, xs = np.nonzero(np.abs(img - np.array(colour)).max(axis=2) < 30)
        runs: list[list[int]] = []
        for x in np.unique(xs):
            if runs and x - runs[-1][-1] <= 5:  # a whisker drawn over a bar splits it by a pixel or two
                runs[-1].append(x)
            else:
                runs.append([x])
        out[colour] = [int(np.ptp(ys[np.isin(xs, run)])) + 1 for run in runs if len(run) >= 4]
    return out


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_the_sobol_bars_show_which_param_sets_each_value(results, tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, results.path, home=tmp_path)
    try:
        wx, wy, ww, wh = wait_for(
            lambda: next((it for it in app.items() if it["label"] == TITLE), None), what="the results window"
        )["rect"]
        if size[1] < 1000:  # a laptop's screen: the bars wait under their header, the scatter keeps its room
            assert not app.visible("value (Sobol)")
            app.click("Sensitivity (Sobol indices)")
        wait_for(lambda: app.text("32 base points, 95 % intervals"), what="the Sobol bars' header open")
        assert app.value("value (Sobol)") == "travel"  # the first value with indices
        x, y, w, h = next(it["rect"] for it in app.items() if it["label"] == "value (Sobol)")  # on the panel
        plot = next(it["rect"] for it in app.items() if it["type"] == "mvPlot" and it["rect"][1] > y)  # under it
        assert plot[1] + plot[3] <= wy + wh, (plot, (wy, wh))  # the bars fit in the window
        travel = _bars(app, plot)
        assert len(travel[FIRST_RGB]) == 3 and len(travel[TOTAL_RGB]) == 3, travel  # k, mass, c
        assert travel[TOTAL_RGB][2] == max(travel[TOTAL_RGB]) > 25, travel  # c sets the travel
        desktop.screenshot(f"sobol_travel_{size[0]}x{size[1]}")
        # the combo's second entry, f: a click opens the list, one more picks the entry under "travel"
        app.click("value (Sobol)")
        _click_at(app, x + 30, y + h + 12 + (h - 2))
        wait_for(lambda: app.value("value (Sobol)") == "f", what="f chosen in the value combo")
        f = _bars(app, plot)
        assert len(f[TOTAL_RGB]) >= 2 and f[TOTAL_RGB][0] == max(f[TOTAL_RGB]), f  # k first, c flat
        assert len(f[TOTAL_RGB]) == 2 or f[TOTAL_RGB][2] < 5, f
        desktop.screenshot(f"sobol_f_{size[0]}x{size[1]}")
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
