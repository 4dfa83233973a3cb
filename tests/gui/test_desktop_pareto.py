"""A study of two objectives as a person browses it: ``mjrig STUDY.parquet`` opens the results
window with the Pareto front (the front's trials joined, the dominated ones grey) in one tab and
the scatter of a param against a value in the other; a click on the front's last point opens that trial's set-up, and *Open trial* the one
chosen in its list -- their k lands on the Params slider. On a 1280x800 and a 1920x1080 screen."""

from __future__ import annotations

import numpy as np
import pytest

from mjrig.campaign.optimize import run_optimize
from mjrig.campaign.results import SweepResults
from mjrig.scenario.parse import load_scenario
from mjrig.widgets.analysis.pareto_front import FRONT
from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_results import _click_at, _slider
from tests.gui.test_desktop_study import TITLE, plots_in, results_window
from tests.long.test_study_pareto import study as study_file
from tests.waiting import wait_for


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> SweepResults:
    """20 trials of 0.4 s: peak tension against the time to the far end of the swing (about 3 s)."""
    folder = tmp_path_factory.mktemp("pareto")
    path = study_file(folder, objectives='minimize = ["Metrics/peak", "Metrics/half_period"]')
    run_optimize(load_scenario(path), out=folder / "STUDY.parquet", workers=1)
    return SweepResults.open(folder / "STUDY.parquet")


def _k(study: SweepResults, trial: int) -> float:
    return float(study.table.filter(study.table["trial"] == trial)["Params/k:value"][0])


def _opened(app: App, trial: int) -> None:
    wait_for(
        lambda: app.text(rf"trial {trial}: opened its scenario with its param values"),
        what=f"the view saying trial {trial} was opened",
    )


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_the_front_is_drawn_and_any_trial_opens_from_it(study, tmp_path, size):
    front = study.front()
    assert 2 <= len(front) < study.table.height
    desktop = Desktop(*size)
    app = App(desktop, study.path, home=tmp_path)
    try:
        wx, wy, ww, wh = results_window(app)
        assert app.text(rf"Pareto front: {len(front)} of {study.table.height} trials")
        plots = plots_in(app, wx)
        assert len(plots) == 1, plots  # the front's tab; the scatter waits in the other
        # the front's points in its colour; the rightmost is the front's trial of the largest peak
        px, py, pw, ph = plots[0]["rect"]
        img = desktop.grab(app.panel)[py + 30 : py + ph, px : px + pw].astype(int)  # below the legend
        ys, xs = np.nonzero(np.abs(img - np.array(FRONT)).max(axis=2) < 30)
        assert len(xs) > 30, "the front's line and points are drawn"
        right = xs >= xs.max() - 3
        _click_at(app, px + int(xs[right].mean()), py + 30 + int(ys[right].mean()))
        _opened(app, front[-1])
        desktop.screenshot(f"pareto_{size[0]}x{size[1]}")
        app.click("Params against values")  # the other tab: the scatter of a param against a value
        wait_for(
            lambda: app.visible("x: param") and app.visible("y: value"), what="the scatter's tab with its axes' choices"
        )
        wait_for(
            lambda: [
                it for it in app.items() if it["type"] == "mvPlot" and it["rect"][0] >= wx and it["rect"][3] > 150
            ],
            what="the scatter",
        )
        desktop.screenshot(f"pareto_scatter_{size[0]}x{size[1]}")
        app.click("Pareto front")
        # Open trial: the list's first entry, the front's lowest trial number
        chosen = min(front)
        app.click("Open trial")
        _opened(app, chosen)
        _click_at(app, wx + ww - 12, wy + 10)  # the window's close button: the sliders behind it
        wait_for(
            lambda: next((it for it in app.items() if it["label"] == TITLE), None) is None,
            what="the results window to close",
        )
        app.widget("k [N/m]")
        wait_for(
            lambda: _slider(app, "k [N/m]") == pytest.approx(_k(study, chosen), rel=1e-9),
            what=f"trial {chosen}'s k ({_k(study, chosen)}) on the Params slider",
        )
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
