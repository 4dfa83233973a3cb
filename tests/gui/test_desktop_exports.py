"""A recording handed out of the app as a person does it: File > Export recording... with nothing
recorded says what to do; the record key records a short run; File > Export recording... then
proposes NAME.csv beside it, its type filters change the name's suffix, a typed name is saved as
CSV; File > Report... writes the HTML report; the plots' Save plot... writes a PNG of the ticked
signal; a sweep's results window's Report... writes the results' report. Real input only
(xdotool clicks on the menu, the dialog's filters and buttons, typing in its name field, the
viewer's Ctrl+E); checks read the files back and the Status lines the panel shows. On a 1280x800
and a 1920x1080 screen; screenshots go to tests/artifacts/."""

from __future__ import annotations

import re

import polars as pl
import pytest

from mjrig.campaign.sweep import run_sweep
from mjrig.scenario.parse import load_scenario
from mjrig.session.reports import NO_RECORDING
from tests.gui.desktop import App, Desktop, read_recording
from tests.gui.test_desktop_keys_dialogs import _click_menu_entry, _window
from tests.sweep_util import write_scenario
from tests.waiting import wait_for

EXPORT_TITLE = "Export the recording"
REPORT_TITLE = "Write a report"
PLOT_TITLE = "Save the plot"


def _status(app: App, pattern: str) -> dict | None:
    """The Status line (``level: text``) matching ``pattern`` in full, else None."""
    return app.text(pattern)


def _menu(app: App, entry: str, shows, what: str) -> None:
    """File > ``entry``, clicked as a person clicks it, until ``shows()`` (a person clicks the
    menu again when a click was lost: a busy panel may miss the first one)."""
    for attempt in range(3):
        app.click("File")
        _click_menu_entry(app, entry)
        try:
            wait_for(shows, what=what, timeout=15)
            return
        except AssertionError:
            if attempt == 2:
                raise
            app.desktop.x("xdotool", "key", "Escape")  # close a menu left open


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_record_then_export_to_csv_and_write_a_report_from_the_file_menu(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "spring_mass", home=tmp_path)  # the bundled spring-mass
    runs = tmp_path / "work" / "runs"
    tag = f"{size[0]}x{size[1]}"
    try:
        # nothing recorded yet: no dialog, a warning says what to do
        _menu(
            app,
            "Export recording...",
            lambda: _status(app, re.escape(f"warning: {NO_RECORDING}")),
            "the no-recording warning",
        )
        assert _window(app, EXPORT_TITLE) is None
        # a short run recorded with the app's own key (Ctrl+E in the 3D view)
        app.key("ctrl+e")
        wait_for(
            lambda: _status(app, r"info: recording to .*spring_mass\.parquet.*"),
            what="the recording to start",
            timeout=90,
        )
        app.run_for(0.4)
        app.key("ctrl+e")
        rec = runs / "spring_mass.parquet"
        wait_for(
            lambda: _status(
                app, r"info: recording stopped: \d+ rows saved to " + re.escape(str(rec)) + r" \([\d.]+ MB\)"
            ),
            what="the recording saved",
        )
        recorded = wait_for(lambda: read_recording(rec), what="a readable recording")
        assert recorded.height > 100, recorded.height
        # File > Export recording...: NAME.csv beside it; the type filters change the suffix
        _menu(app, "Export recording...", lambda: _window(app, EXPORT_TITLE), "the export dialog")
        assert app.value("file name") == "spring_mass.csv"
        app.click(".mat")
        wait_for(lambda: app.value("file name") == "spring_mass.mat", what="the name to follow the .mat type")
        desktop.screenshot(f"exports_dialog_{tag}")
        app.click(".csv")
        wait_for(lambda: app.value("file name") == "spring_mass.csv", what="the name back to .csv")
        app.type_into("file name", "exported")  # no suffix: the type picked adds it
        app.click("Save")
        out = runs / "exported.csv"
        said = rf"info: exported \d+ rows of spring_mass\.parquet to {re.escape(str(out))}"
        line = wait_for(lambda: _status(app, said), what="the export's Status line")
        assert _window(app, EXPORT_TITLE) is None
        csv = pl.read_csv(out)
        assert csv.columns[0] == "time [s]"  # each column's unit in its header
        csv = csv.rename({h: re.sub(r" \[[^\]]*\]$", "", h) for h in csv.columns})
        assert csv.height == recorded.height and csv.columns == recorded.columns
        assert int(line["text"].split()[2]) == recorded.height
        assert csv["time"].to_list() == recorded["time"].to_list()
        # File > Report...: SPRING_MASS.html beside the recording, saved as proposed
        _menu(app, "Report...", lambda: _window(app, REPORT_TITLE), "the report dialog")
        assert app.value("file name") == "spring_mass.html"
        app.click("Save")
        html = runs / "spring_mass.html"
        wait_for(
            lambda: _status(app, re.escape(f"info: report written: {html}")),
            what="the report's Status line",
            timeout=90,
        )
        text = html.read_text(encoding="utf-8")
        assert "<html" in text and "spring_mass.parquet" in text
        desktop.screenshot(f"exports_written_{tag}")
        # Save plot...: a PNG of the ticked signal
        app.tick("slide_x", "qpos")
        app.click("Save plot...")
        wait_for(lambda: _window(app, PLOT_TITLE), what="the plot dialog")
        assert app.value("file name") == "plot.png"
        app.click("Save")
        png = runs / "plot.png"
        wait_for(
            lambda: _status(app, re.escape(f"info: plot saved: {png} (") + r"[0-9]+ signals?\)"),
            what="the plot's Status line",
            timeout=60,
        )
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        app.redrawn(2, timeout=3.0)
        desktop.screenshot(f"exports_plot_{tag}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A sweep's RESULTS.parquet: 2 trials of the spring-mass rig, 0.2 s each."""
    folder = tmp_path_factory.mktemp("sweep")
    grid = "[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\n"
    out = folder / "RESULTS.parquet"
    run_sweep(load_scenario(write_scenario(folder, grid)), out=out, workers=1, duration=0.2)
    return out


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_the_results_windows_report_button_writes_the_sweeps_report(tmp_path, size, results):
    desktop = Desktop(*size)
    app = App(desktop, results, home=tmp_path)
    try:
        wait_for(lambda: _window(app, "Results — RESULTS.parquet"), what="the results window")
        app.click("Report...")
        wait_for(lambda: _window(app, REPORT_TITLE), what="the report dialog")
        name = app.value("file name")  # RESULTS.html, or RESULTS-2.html beside the other size's
        assert re.fullmatch(r"RESULTS(-\d+)?\.html", name), name
        assert not (results.parent / name).exists()
        app.click("Save")
        out = results.parent / name
        wait_for(
            lambda: _status(app, re.escape(f"info: report written: {out}")), what="the report's Status line", timeout=90
        )
        assert "RESULTS.parquet" in out.read_text(encoding="utf-8")
        # the results window may cover the Status log: its note says where, too
        assert wait_for(lambda: app.text(re.escape(f"report written: {out}")), what="the results view's note")
        desktop.screenshot(f"exports_results_report_{size[0]}x{size[1]}")
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
