"""A sweep's results as a person browses them: ``mjrig RESULTS.parquet`` opens the results window
over the sweep's scenario; a click on a column header sorts the trials, the "fail" filter keeps
the failed ones, a trial's button replays its recording and its set-up button opens the scenario
with the trial's param values. The scenario shows lengths in mm (``[units]``): so does the table,
while a trial's set-up still gets the file's SI values. On a 1920x1080 and a 1280x800 screen."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mjrig.campaign.results import SweepResults
from mjrig.campaign.sweep import run_sweep
from mjrig.scenario.parse import load_scenario
from mjrig.widgets.analysis.trial_colours import COLOURS
from tests.gui.desktop import App, Desktop
from tests.sweep_util import write_scenario
from tests.waiting import wait_for

GRID = '[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\nc = { values = [0.0, 5.0] }\n[units]\nlength = "mm"\n'
TITLE = "Results — RESULTS.parquet"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> SweepResults:
    """4 recorded trials of the spring-mass rig, 0.5 s each; only trial 1 (k 100, c 5) passes."""
    folder = tmp_path_factory.mktemp("sweep")
    run_sweep(
        load_scenario(write_scenario(folder, GRID, record=True)),
        out=folder / "RESULTS.parquet",
        workers=1,
        duration=0.5,
    )
    res = SweepResults.open(folder / "RESULTS.parquet")
    assert res.rows(status="fail")["trial"].to_list() == [0, 2, 3]
    return res


def _text(app: App, pattern: str):
    return next((it for it in app.items() if re.fullmatch(pattern, it.get("text", ""), flags=re.S)), None)


def _window(app: App):
    return next((it for it in app.items() if it["label"] == TITLE and it["type"] == "mvWindowAppItem"), None)


def _rows(app: App) -> list[tuple[int, list[int]]]:
    """The table's rows top to bottom: (trial, rect of its trial-<n> button)."""
    found = [
        (int(it["label"].split("-")[1]), it["rect"])
        for it in app.items()
        if re.fullmatch(r"trial-\d+", it["label"]) and it["type"] == "mvButton"
    ]
    return sorted(found, key=lambda r: r[1][1])


def _order(app: App) -> list[int]:
    return [n for n, _ in _rows(app)]


def _click_at(app: App, x: int, y: int) -> None:
    px, py, _, _ = app.desktop.client_rect(app.panel)
    app.desktop.x("xdotool", "mousemove", "--sync", str(px + x), str(py + y), check=True)
    app.rest()  # panel frames with the pointer there before the press
    app.desktop.x("xdotool", "click", "1", check=True)
    app.redrawn(3, timeout=3.0)  # the table's callbacks (sort, open a trial) run


def _click_header(app: App, column: int) -> None:
    """Click the header of the table's ``column``-th column (0: trial), as a person clicks it:
    above the first row, where that column's cells start."""
    trial, (bx, by, bw, bh) = _rows(app)[0]
    cells = sorted(
        it["rect"][0]
        for it in app.items()
        if it["type"] == "mvText" and abs(it["rect"][1] - by) <= 4 and bx < it["rect"][0]
    )
    x = bx if column == 0 else cells[column - 1]
    _click_at(app, x + 8, by - 12)


def _row_button(app: App, trial: int, label: str) -> None:
    """Click ``label`` (a button) in ``trial``'s row."""
    _, (bx, by, bw, bh) = next(r for r in _rows(app) if r[0] == trial)
    hit = next(it for it in app.items() if it["label"] == label and abs(it["rect"][1] - by) <= 2)
    x, y, w, h = hit["rect"]
    _click_at(app, x + w // 2, y + h // 2)


def _slider(app: App, label: str) -> float | None:
    """A Params slider's value, None while it is not shown (a replay has no params)."""
    hit = next((it for it in app.items() if it["label"] == label and it["type"] == "mvSliderDouble"), None)
    return None if hit is None else float(hit["value"])


def _close_window(app: App) -> None:
    """The results window's close button, at the right end of its title bar."""
    x, y, w, h = _window(app)["rect"]
    _click_at(app, x + w - 12, y + 10)


def test_sort_filter_and_open_a_trial_on_a_wide_screen(results, tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, results.path, home=tmp_path)
    try:
        wait_for(lambda: _window(app), what="the results window")
        desktop.x("xdotool", "windowactivate", "--sync", str(app.panel))
        assert wait_for(lambda: _text(app, "info: opened sweep.toml"), what="the sweep's scenario in the 3D view")
        assert _order(app) == [0, 1, 2, 3]
        desktop.screenshot("results_1920")
        # a click on the scatter's one green point (the trial that passed) replays that trial
        wx, wy, ww, wh = _window(app)["rect"]
        px, py, pw, ph = next(it["rect"] for it in app.items() if it["type"] == "mvPlot" and it["rect"][0] >= wx)
        img = desktop.grab(app.panel)[py + 40 : py + ph, px : px + pw].astype(int)  # below the legend
        ys, xs = np.nonzero(np.abs(img - np.array(COLOURS["pass"])).max(axis=2) < 30)
        assert 10 < len(xs) < 400, len(xs)  # one marker
        for attempt in range(3):  # a busy panel may miss a click: a person clicks again
            _click_at(app, px + int(xs.mean()), py + 40 + int(ys.mean()))
            try:
                wait_for(
                    lambda: _text(app, r"info: replaying trial-1\.parquet: .*"),
                    what="the clicked point's trial replayed",
                    timeout=20,
                )
                break
            except AssertionError:
                if attempt == 2:
                    raise
        # sort by the requirement's value (the 6th column: trial, status, k, c, mass, travel)
        _click_header(app, 5)
        up = results.rows(sort_by="Requirements/travel:value")["trial"].to_list()
        wait_for(lambda: _order(app) == up, what=f"the rows sorted by travel ({up})")
        assert up != [0, 1, 2, 3]
        _click_header(app, 5)  # again: the other way
        wait_for(lambda: _order(app) == up[::-1], what="the rows sorted by travel, descending")
        app.click("fail (3)")
        fails = [n for n in up[::-1] if n in (0, 2, 3)]
        wait_for(lambda: _order(app) == fails, what=f"only the failed trials ({fails})")
        assert _text(app, "3 of 4 trials")
        desktop.screenshot("results_1920_failed")
        # a trial's button replays its recording
        _row_button(app, 2, "trial-2")
        wait_for(lambda: _text(app, r"info: replaying trial-2\.parquet: .*"), what="the trial's replay in the log")
        wait_for(
            lambda: _text(app, r"0\.000 \.\.\. 0\.[45]\d\d s \(recording\)"),
            what=f"the timeline over the recording: {[it.get('text') for it in app.items()]}",
        )
        assert wait_for(lambda: _text(app, r"trial 2: opened trial-2\.parquet"), what="the view's note")
        desktop.screenshot("results_1920_replay")
        # its set-up button opens the sweep's scenario with the trial's values
        _row_button(app, 3, "set-up")
        wait_for(
            lambda: _slider(app, "k [N/m]") == 400.0 and _slider(app, "c") == 5.0,
            what="trial 3's k and c on the Params sliders",
        )
        desktop.screenshot("results_1920_setup")
        # close the window, and bring it back from the Results menu
        _close_window(app)
        wait_for(lambda: _window(app) is None, what="the results window to close")
        x, y, w, h = app.widget("Results")
        app.click("Results")
        _click_at(app, x - desktop.client_rect(app.panel)[0] + 30, y - desktop.client_rect(app.panel)[1] + h + 10)
        wait_for(lambda: _window(app), what="the results window again")
        assert _order(app) == fails  # as it was left
    finally:
        assert app.quit_discarding() == 0, app.output()  # a trial's values are unsaved edits
        desktop.close()


def test_on_a_laptop_screen_the_window_fits_and_a_trial_sets_the_sliders(results, tmp_path):
    desktop = Desktop(1280, 800)
    app = App(desktop, results.path, home=tmp_path)
    try:
        wx, wy, ww, wh = wait_for(lambda: _window(app), what="the results window")["rect"]
        _, _, pw, ph = desktop.client_rect(app.panel)
        assert wx >= 0 and wy >= 0 and wx + ww <= pw and wy + wh <= ph, ((wx, wy, ww, wh), (pw, ph))
        for _n, (_x, y, _w, _h) in _rows(app):  # no column clipped: every set-up button inside the window
            setup = next(it["rect"] for it in app.items() if it["label"] == "set-up" and abs(it["rect"][1] - y) <= 2)
            assert setup[0] + setup[2] <= wx + ww - 8, (setup, (wx, ww))
        plot = next(it["rect"] for it in app.items() if it["type"] == "mvPlot" and it["rect"][0] >= wx)
        assert plot[1] + plot[3] <= wy + wh and plot[3] > 200, plot
        desktop.screenshot("results_1280")
        travel = results.row(0)["Requirements/travel:value"]  # SI in the file, mm in the table
        _, (bx, by, bw, bh) = next(r for r in _rows(app) if r[0] == 0)
        cells = [it["text"] for it in app.items() if it["type"] == "mvText" and abs(it["rect"][1] - by) <= 4]
        assert f"{1000.0 * travel:.6g}" in cells and f"{travel:.6g}" not in cells, (travel, cells)
        _row_button(app, 1, "set-up")
        _close_window(app)  # the panel behind it, as a person sees it
        wait_for(lambda: _window(app) is None, what="the results window to close")
        app.widget("k [N/m]")  # scrolled into view, as a person scrolls the controls to the Params
        wait_for(
            lambda: _slider(app, "k [N/m]") == 100.0 and _slider(app, "c") == 5.0,
            what="trial 1's k and c on the Params sliders",
        )
        desktop.screenshot("results_1280_setup")
    finally:
        assert app.quit_discarding() == 0, app.output()  # a trial's values are unsaved edits
        desktop.close()
