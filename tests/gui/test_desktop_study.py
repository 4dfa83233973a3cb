"""A study as a person browses it: ``mjrig STUDY.parquet`` opens the results window with the
objective by trial and the best so far, and each param's rank correlation with each value;
*Open best* puts the best trial's params on the sliders.
On a 1280x800 and a 1920x1080 screen."""

from __future__ import annotations

import pytest

from mjrig.campaign.optimize import run_optimize
from mjrig.campaign.results import SweepResults
from mjrig.scenario.parse import load_scenario
from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_results import _click_at, _slider
from tests.sweep_util import BASE
from tests.waiting import wait_for

TITLE = "Results — STUDY.parquet"


def results_window(app: App) -> tuple[int, int, int, int]:
    """The results window's rectangle (x, y, width, height), once it is shown."""
    window = wait_for(lambda: next((it for it in app.items() if it["label"] == TITLE), None), what="the results window")
    return window["rect"]


def plots_in(app: App, left: int) -> list[dict]:
    """The plots shown right of ``left`` (the results window's), top to bottom."""
    found = [it for it in app.items() if it["type"] == "mvPlot" and it["rect"][0] >= left]
    return sorted(found, key=lambda it: it["rect"][1])


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> SweepResults:
    """12 trials of 3 s of the spring-mass, searching k for a 2 Hz frequency (no requirement)."""
    folder = tmp_path_factory.mktemp("study")
    path = folder / "opt.toml"
    path.write_text(
        BASE.split("[[requirements]]")[0].replace("duration = 1.0", "duration = 3.0")
        + '\n[[metrics]]\nname = "f"\nsignal = "Joints/slide_x:qpos"\n'
        'kind = "frequency"\n\n[optimize]\nminimize = "Metrics/f"\ntarget = 2.0\ntrials = 12\nseed = 1\n'
        "[optimize.params]\nk = { low = 50.0, high = 500.0 }\n",
        encoding="utf-8",
    )
    run_optimize(load_scenario(path), out=folder / "STUDY.parquet", workers=1)
    return SweepResults.open(folder / "STUDY.parquet")


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_open_a_study_and_its_best_trial_lands_on_the_sliders(study, tmp_path, size):
    best = study.best_trial()
    k_best = float(study.table.filter(study.table["trial"] == best)["Params/k:value"][0])
    desktop = Desktop(*size)
    app = App(desktop, study.path, home=tmp_path)
    try:
        wx, wy, ww, wh = results_window(app)
        plots = plots_in(app, wx)
        assert len(plots) == 2, plots  # the objective's history above the scatter
        assert app.text(rf"best objective [0-9.e-]+ at trial {best}")
        app.click("Sensitivity (rank correlation)")  # which knob matters: f rises with k, rank for rank
        wait_for(lambda: app.text(r"\+1\.00"), what="k's rank correlation with f, +1.00")
        desktop.screenshot(f"study_{size[0]}x{size[1]}")
        app.click("Open best")
        wait_for(
            lambda: app.text(rf"trial {best}: opened its scenario with its param values"),
            what="the view saying the best trial was opened",
        )
        _click_at(app, wx + ww - 12, wy + 10)  # the window's close button, at the right of its title bar
        wait_for(
            lambda: next((it for it in app.items() if it["label"] == TITLE), None) is None,
            what="the results window to close",
        )
        app.widget("k [N/m]")  # scrolled into view, as a person scrolls the controls to the Params
        wait_for(
            lambda: _slider(app, "k [N/m]") == pytest.approx(k_best, rel=1e-9),
            what=f"the best trial's k ({k_best}) on the Params slider",
        )
        desktop.screenshot(f"study_best_{size[0]}x{size[1]}")
    finally:
        assert app.quit_discarding() == 0, app.output()  # the best trial's values are unsaved edits
        desktop.close()


def test_sliders_of_catalogue_and_stepped_params_snap(tmp_path):
    """A scenario whose study takes k from a catalogue and c on whole numbers: clicked anywhere,
    the k slider lands on a catalogue value and c on a whole number -- what the physics gets."""
    from tests.long.test_study_choices import study as choices_study

    path = choices_study(tmp_path, "k = { choices = [150.0, 400.0, 1200.0] }\nc = { low = 1, high = 10, step = 1 }\n")
    desktop = Desktop(1280, 800)
    app = App(desktop, path, home=tmp_path)
    try:
        for label, at, expect in (("k [N/m]", 0.3, 1200.0), ("k [N/m]", 0.05, 150.0), ("c [N·s/m]", 0.27, 10.0)):
            # c: 0..50 on the slider, a click about 13.5 N·s/m is kept on the study's 1..10, whole
            x, y, w, h = app.widget(label)
            before = _slider(app, label)
            desktop.x("xdotool", "mousemove", "--sync", str(x + int(w * at)), str(y + h // 2), "click", "1", check=True)
            wait_for(lambda: _slider(app, label) != before, what=f"the {label} slider moved")
            app.redrawn(3)
            assert _slider(app, label) == expect, (label, _slider(app, label))
        desktop.screenshot("snapped_sliders_1280x800")
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
