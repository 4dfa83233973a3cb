"""Bench data in the app as a person sees it: a rig with ``[[measured]]`` data plots each measured
signal's twin dotted beside it, in a paler shade of its colour, live and when its recording is
replayed (the recording keeps the series); at 1280x800 and 1920x1080."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from mjrig.scenario.parse import load_scenario
from mjrig.widgets.plots.plot_overlay import PALETTE, tint
from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_timeline import _drag_to, _text
from tests.unit.test_measured import CSV_ENTRY, csv_bench, scenario
from tests.waiting import wait_for

PLOTS = """
[plots]
signals = ["Joints/slide:qpos"]
"""


def _pixels(app: App, desktop: Desktop, colour, *, close: int = 30) -> int:
    """Pixels of ``colour`` (within ``close`` per channel) inside the plot."""
    x, y, w, h = next(it["rect"] for it in app.items() if it["type"] == "mvPlot")
    img = desktop.grab(app.panel)[y : y + h, x : x + w].astype(int)
    return int((np.abs(img - np.array(colour)).max(axis=2) < close).sum())


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_bench_is_plotted_dotted_beside_its_signal(tmp_path, size):
    csv_bench(tmp_path, noise=0.05)
    path = scenario(tmp_path, CSV_ENTRY, k=250.0, extra=PLOTS)  # a softer spring than the bench's: apart
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.run_for(1.5)
        app.click("pause")
        wait_for(lambda: _pixels(app, desktop, tint(PALETTE[0])) > 150, what="the bench's dotted line")
        own = _pixels(app, desktop, PALETTE[0])
        bench = _pixels(app, desktop, tint(PALETTE[0]))
        assert own > 150 and bench > 150, (own, bench)
        desktop.screenshot(str(tmp_path / f"measured-{size[0]}"))
    finally:
        app.close()
        desktop.close()


def test_a_replayed_recording_shows_its_bench_again(tmp_path):
    """The bench's line, and its value beside the run's in the timeline's readout at the instant
    dragged to (the entry's samples interpolated there, in the plot's unit)."""
    csv_bench(tmp_path, noise=0.05)
    path = scenario(tmp_path, CSV_ENTRY, k=250.0, extra=PLOTS)
    subprocess.run(
        [sys.executable, "-m", "mjrig", "run", str(path), "--out", "rec.parquet"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    times, x = load_scenario(path).measured[0].series("Joints/slide:qpos")
    (tmp_path / "bench.csv").unlink()  # the recording holds the series itself
    desktop = Desktop(1280, 800)
    app = App(desktop, tmp_path / "rec.parquet", home=tmp_path / "home")
    try:
        app.tick("slide", "qpos")
        wait_for(lambda: _pixels(app, desktop, tint(PALETTE[0])) > 150, what="the replay's bench line")
        _drag_to(app, 0.4)
        pattern = r"at ([0-9.]+) s:.*slide:qpos ([-0-9.e]+) (m|mm)\s+\[bench ([-0-9.e]+)\].*"
        shown = wait_for(lambda: _text(app, pattern), what="the bench's value in the timeline's readout")
        at, run, unit, bench = re.fullmatch(pattern, shown["text"], flags=re.S).groups()
        k = 1000.0 if unit == "mm" else 1.0
        assert 0.3 < float(at) < 1.8
        assert float(bench) == pytest.approx(np.interp(float(at), times, x) * k, rel=1e-4, abs=1e-9)
        assert abs(float(run) - float(bench)) > 0.05 * k * 1e-3  # the softer spring's run is elsewhere
        desktop.screenshot(str(tmp_path / "bench-readout"))
    finally:
        app.close()
        desktop.close()


def _mapped(app: App, column: str) -> tuple[dict, dict]:
    """The bench dialog's row of ``column``: its signal combo and, level with it, its unit input."""
    items = app.items()
    combo = next(it for it in items if it["label"] == column)
    unit = next(it for it in items if it["type"] == "mvInputText" and it["rect"][1] == combo["rect"][1])
    return combo, unit


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_a_dropped_csv_is_mapped_onto_signals_and_saved_with_the_rig(tmp_path, size):
    """Dropped on the 3D view, a CSV is offered as bench data: the dialog guesses the time column
    and unit and the signal a column measures; a unit that does not fit is refused in the dialog with the reason, the mapping kept; *Add to
    rig* plots it dotted, and Save scenario
    writes it as a [[measured]] entry that ``mjrig check`` reads back."""
    import tomllib

    path = scenario(tmp_path, "", k=250.0, extra=PLOTS)
    bench = tmp_path / "data" / "drop3.csv"
    bench.parent.mkdir()
    csv_bench(bench.parent, noise=0.05)
    rows = (bench.parent / "bench.csv").read_text().splitlines()[1:]
    bench.write_text(
        "t [ms],slide_qpos [mm],temperature\n" + "".join(f"{r},{20 + i * 1e-3:.3f}\n" for i, r in enumerate(rows))
    )
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.run_for(0.5)
        app.drop(bench)
        wait_for(lambda: app.visible("Add to rig"), what="the measured-data dialog")
        combo, unit = _mapped(app, "slide_qpos [mm]")
        assert combo["value"] == "Joints/slide:qpos" and unit["value"] == "mm", (combo, unit)
        combos = {it["label"]: it.get("value") for it in app.items() if it["type"] == "mvCombo"}
        assert combos["time"] == "t [ms]" and combos["unit"] == "ms" and combos["temperature"] == "(not used)"
        desktop.screenshot(str(tmp_path / f"bench-dialog-{size[0]}"))
        # a unit that does not fit the signal: refused with the reason, the mapping kept
        px, py, _, _ = desktop.client_rect(app.panel)  # the map's rectangles are the panel's own
        x, y, w, h = unit["rect"]
        app.click_at(px + x + w // 2, py + y + h // 2)
        app.replace_text("deg")
        app.click("Add to rig")
        said = wait_for(lambda: app.text(r".*unit 'deg' does not fit.*"), what="the refusal in the dialog")
        desktop.screenshot(f"bench_dialog_refused_{size[0]}x{size[1]}")
        assert app.visible("Add to rig"), "the dialog closed on a refused mapping"
        combo, unit = _mapped(app, "slide_qpos [mm]")
        assert combo["value"] == "Joints/slide:qpos" and unit["value"] == "deg", (combo, unit, said)
        desktop.screenshot(f"bench_dialog_refused_{size[0]}x{size[1]}")
        x, y, w, h = unit["rect"]
        app.click_at(px + x + w // 2, py + y + h // 2)
        app.replace_text("mm")
        app.click("Add to rig")
        wait_for(lambda: not app.visible("Add to rig"), what="the dialog to close")
        app.run_for(1.0)
        app.click("pause")
        wait_for(lambda: _pixels(app, desktop, tint(PALETTE[0])) > 150, what="the dropped bench, dotted")
        app.key("ctrl+s", window=app.panel)
        wait_for(lambda: app.visible("Save"), what="the Save dialog")
        app.key("Return", window=app.panel)
        # the dialog has taken Return: it asks before replacing a file (the scenario's own), or it has gone
        wait_for(lambda: app.visible("Replace") or not app.visible("Save"), what="the Save dialog to take Return")
        if app.visible("Replace"):
            app.click("Replace")
        wait_for(lambda: "measured" in tomllib.loads(path.read_text()), what="the scenario saved with its bench")
        entry = tomllib.loads(path.read_text())["measured"][0]
        assert entry["file"] == "data/drop3.csv" and entry["time"] == "t [ms]" and entry["time_unit"] == "ms"
        assert entry["signals"] == {"Joints/slide:qpos": {"column": "slide_qpos [mm]", "unit": "mm"}}
        check = subprocess.run(
            [sys.executable, "-m", "mjrig", "check", str(path)], capture_output=True, text=True, timeout=120
        )
        assert check.returncode == 0, check.stderr
    finally:
        app.close()
        desktop.close()


def _lab_bench(folder, kind: str):
    """The noisy decay as lab software writes it: a European CSV (``;``, decimal commas) or an
    Excel workbook (its second sheet), each with a units row ``ms, mm, °C`` under the header
    ``t, Position_slide, Temp``."""
    csv_bench(folder, noise=0.05)
    rows = [r.split(",") for r in (folder / "bench.csv").read_text().splitlines()[1:]]
    if kind == "csv":
        bench = folder / "bench_eu.csv"
        text = "".join(f"{t.replace('.', ',')};{x.replace('.', ',')};21,5\n" for t, x in rows)
        bench.write_text("t;Position_slide;Temp\nms;mm;°C\n" + text, encoding="utf-8")
        return bench
    from openpyxl import Workbook

    book = Workbook()
    book.active.title = "notes"
    book.active.append(["operator", "A"])
    sheet = book.create_sheet("run2")
    sheet.append(["t", "Position_slide", "Temp"])
    sheet.append(["ms", "mm", "°C"])
    for t, x in rows:
        sheet.append([float(t), float(x), 21.5])
    bench = folder / "bench_eu.xlsx"
    book.save(bench)
    return bench


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_a_dropped_european_csv_shows_its_units_row_in_the_dialog(tmp_path, size, kind):
    """A bench file from European lab software (``;``, decimal commas, a units row ``ms;mm;°C``),
    or an Excel workbook whose second sheet holds the same, dropped on the 3D view: the dialog
    shows the time column in ms and ``Position_slide`` mapped to the slide's position in mm, and
    *Add to rig* plots it dotted."""
    path = scenario(tmp_path, "", k=250.0, extra=PLOTS)
    bench = _lab_bench(tmp_path, kind)
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.run_for(0.5)
        app.drop(bench)
        wait_for(lambda: app.visible("Add to rig"), what="the measured-data dialog")
        combo, unit = _mapped(app, "Position_slide")
        assert combo["value"] == "Joints/slide:qpos" and unit["value"] == "mm", (combo, unit)
        combos = {it["label"]: it.get("value") for it in app.items() if it["type"] == "mvCombo"}
        assert combos["time"] == "t" and combos["unit"] == "ms" and combos["Temp"] == "(not used)", combos
        desktop.screenshot(str(tmp_path / f"bench-eu-dialog-{kind}-{size[0]}"))
        app.click("Add to rig")
        wait_for(lambda: not app.visible("Add to rig"), what="the dialog to close")
        app.run_for(1.0)
        app.click("pause")
        wait_for(lambda: _pixels(app, desktop, tint(PALETTE[0])) > 150, what="the dropped bench, dotted")
        assert app.quit_discarding() == 0, app.output()  # the bench added is an unsaved edit of the rig
    finally:
        app.close()
        desktop.close()


def run_fit(app: App, *rows: str) -> None:
    """Open the Fit section, tick ``rows`` (their labels: "fit k [N/m]") and press Run fit."""
    app.click("Fit")
    for row in rows:
        app.click(row)
    app.click("Run fit")


FIT_RIG = "\n" + CSV_ENTRY  # the bench's [[measured]] entry of tests/unit/test_measured.py
CHECK = CSV_ENTRY.replace('name = "bench"', 'name = "check"\nrole = "validation"').replace("bench.csv", "check.csv")


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_fit_panel_estimates_the_params_and_uses_the_estimate(tmp_path, size):
    """Fit: tick k, c (bounds from their min and max) and the slide's start position (the
    scenario says 15 mm, the bench released it at 20), Run fit: it runs in the background, the
    verdict, the estimate (within 1 %, 5 % and 2 % of the bench's 400 N/m, 2 N·s/m and 20 mm, from
    160, 5 and 15) and its interval are shown, and each bench's rms error before and after: a
    held-out bench recorded at k = 160 gets worse, in red. Use estimate moves the params' sliders
    there."""
    from mjrig.widgets.analysis.fit_panel import GREW

    csv_bench(tmp_path, noise=0.05, seed=2)
    rows = (tmp_path / "bench.csv").read_text().splitlines()
    t = np.array([float(r.split(",")[0]) for r in rows[1:]]) / 1000 - 0.1
    from tests.unit.test_measured import decay

    x = decay(t, k=160.0) * 1000 + np.random.default_rng(2).normal(0.0, 0.05, t.size)
    (tmp_path / "check.csv").write_text(
        rows[0] + "\n" + "".join(f"{(a + 0.1) * 1000:.6f},{b:.9f}\n" for a, b in zip(t, x))
    )
    csv_bench(tmp_path, noise=0.05, seed=1)
    path = scenario(tmp_path, FIT_RIG + "\n" + CHECK, k=160.0, c=5.0, extra=PLOTS)
    path.write_text(path.read_text().replace("slide = 0.02", "slide = 0.015"))
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        run_fit(app, "fit k [N/m]", "fit c [N·s/m]", "fit initial.slide [m]")
        done = wait_for(
            lambda: app.text(r"converged after \d+ evaluations .*", offscreen=True),
            timeout=180,
            what="the fit to converge",
        )
        assert done
        cells = [it["text"] for it in app.items(offscreen=True) if it["type"] == "mvText"]
        k = float(cells[cells.index("k") + 1])
        c = float(cells[cells.index("c") + 1])
        x0 = float(cells[cells.index("initial.slide") + 1])
        assert abs(k / 400.0 - 1) < 0.01 and abs(c / 2.0 - 1) < 0.05 and abs(x0 / 0.02 - 1) < 0.02, (k, c, x0)
        fitted = cells.index("bench")
        before, after = (float(v) for v in cells[fitted + 1 : fitted + 3])
        assert after < before / 20  # down to the noise, 0.05 mm
        held = cells.index("check (validation)")
        before, after = float(cells[held + 1]), cells[held + 2]
        assert after.endswith(" (worse)") and float(after.split()[0]) > 2 * before
        x, y, w, h = app.see_text(r"[0-9.e-]+ \(worse\)")["rect"]
        img = desktop.grab(app.panel)[y : y + h, x : x + w].astype(int)
        assert (np.abs(img - np.array(GREW)).max(axis=2) < 40).sum() > 10  # drawn in red
        desktop.screenshot(str(tmp_path / f"fit-{size[0]}"))
        app.click("Use estimate")
        wait_for(lambda: abs(float(app.value("k [N/m]")) - k) < 1e-3 * k, what="the k slider at the estimate")
        assert abs(float(app.value("c [N·s/m]")) - c) < 1e-3 * c
        assert list((tmp_path / "home" / "work" / "runs").glob("sm-fit*.parquet"))
    finally:
        app.quit_discarding()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_fit_section_starts_from_the_scenarios_fit(tmp_path, size):
    """A scenario with ``[fit]`` (k in 50..2000 N/m, c in 0.01..50 N·s/m on a log scale): its
    Fit section opens with k and c ticked, those bounds and c's log scale, and the start position
    offered but not ticked."""
    csv_bench(tmp_path)
    fit = "[fit]\nparams = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }\n"
    path = scenario(tmp_path, FIT_RIG, extra=fit + PLOTS)
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.click("Fit")

        def rows() -> list[dict] | None:
            found = app.items(offscreen=True)
            return found if any(it["label"] == "fit k [N/m]" for it in found) else None

        items = wait_for(rows, what="the Fit section's rows")

        def row(label: str) -> tuple[str, float, float, str]:
            """A row's tick, low, high and log scale, as drawn: the widgets level with its tick."""
            tick = next(it for it in items if it["label"] == label)
            level = [it for it in items if abs(it["rect"][1] - tick["rect"][1]) < 8 and it is not tick]
            low, high = sorted((it for it in level if it["type"] == "mvInputFloat"), key=lambda it: it["rect"][0])
            log = next(it for it in level if it["type"] == "mvCheckbox" and it["label"] == "log")
            return str(tick.get("value")), float(low["value"]), float(high["value"]), str(log.get("value"))

        assert row("fit k [N/m]") == ("True", pytest.approx(50.0), pytest.approx(2000.0), "False")
        assert row("fit c [N·s/m]") == ("True", pytest.approx(0.01), pytest.approx(50.0), "True")
        assert row("fit initial.slide [m]")[0] == "False"
        app.run_for(0.3)  # the 3D view drawn
        app.widget("fit initial.slide [m]")  # the rows scrolled into view, as a person looks at them
        desktop.screenshot(str(tmp_path / f"fit-planned-{size[0]}"))
    finally:
        app.quit_discarding()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_twenty_bench_entries_are_drawn_twenty_ways_and_the_readout_stays_in_the_panel(tmp_path, size):
    """Twenty ``[[measured]]`` entries of one signal (the same bench, each clock a little later):
    each is its own shade and dash of the signal's colour, named in the legend, and the timeline's
    readout lists every entry's value on lines that stay inside the panel."""
    from mjrig.widgets.plots.plot_overlay import SHADES

    csv_bench(tmp_path)
    entries = "".join(
        CSV_ENTRY.replace('name = "bench"', f'name = "b{i:02d}"').replace(
            "offset = -0.1", f"offset = {-0.1 + 0.03 * i}"
        )
        for i in range(20)
    )
    path = scenario(tmp_path, entries, k=250.0)
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.tick("slide", "qpos")
        app.run_for(2.0)
        app.click("Pause")
        wait_for(lambda: app.visible("Play"), what="the run to pause")
        shades = [tint(PALETTE[0], toward_white=s) for s in SHADES]
        seen = wait_for(
            lambda: (lambda n: n if min(n) > 40 else None)([_pixels(app, desktop, c, close=12) for c in shades]),
            what="every shade of the entries' lines",
        )
        app.screenshot_clear(f"bench_twenty_{size[0]}x{size[1]}")
        _drag_to(app, 0.5)
        shown = wait_for(lambda: _text(app, r"at [0-9.]+ s:.*\[b19 [-0-9.e]+\].*"), what="the readout of all twenty")
        assert all(f"[b{i:02d} " in shown["text"] for i in range(20)), shown["text"]
        assert shown["text"].count("\n") >= 2, "twenty values on one line run off the panel"
        item = next(it for it in app.items(offscreen=True) if it.get("text") == shown["text"])
        assert not item.get("clipped"), f"the readout is cut off: {item}"
        app.screenshot_clear(f"bench_twenty_readout_{size[0]}x{size[1]}")
        print(f"pixels per shade {seen}")
    finally:
        app.close()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_write_model_saves_the_mjcf_with_the_estimate(tmp_path, size):
    """A rig whose k and c are the slide joint's own stiffness and damping (model fields) and whose
    ``[fit]`` ticks them: Run fit, then Write model... proposes ``sm-fitted.xml`` beside the model;
    Save writes it, and plain MuJoCo reads k within 0.5 % of the bench's 400 N/m from it."""
    import mujoco

    from tests.unit.test_measured import bound_scenario

    path = bound_scenario(tmp_path)
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.click("Fit")
        app.click("Run fit")
        wait_for(lambda: app.text(r"converged after \d+ evaluations .*", offscreen=True), timeout=180, what="the fit")
        app.click("Write model...")
        wait_for(lambda: app.visible("Save"), what="the Save dialog")
        assert app.value("file name") == "sm-fitted.xml"
        desktop.screenshot(str(tmp_path / f"write-model-{size[0]}"))
        app.click("Save")
        out = tmp_path / "sm-fitted.xml"
        wait_for(out.is_file, what="the fitted model written")
        model = mujoco.MjModel.from_xml_path(str(out))
        assert abs(model.jnt_stiffness[0] / 400.0 - 1) < 0.005 and abs(model.dof_damping[0] / 2.0 - 1) < 0.05
        assert "95 % interval" in out.read_text()
        wait_for(lambda: app.text(r"info: wrote the fitted model to .*sm-fitted\.xml"), what="the status line")
    finally:
        app.quit_discarding()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_dialog_offers_each_sheet_of_a_dropped_workbook(tmp_path, size):
    """A workbook of three sheets (words, then two runs) dropped on the 3D view: the dialog opens
    on the first sheet with numbers, its *sheet* choice lists all three, and picking the third
    lists that sheet's columns, guessed anew; *Add to rig* takes them."""
    from openpyxl import load_workbook

    path = scenario(tmp_path, "", k=250.0, extra=PLOTS)
    bench = _lab_bench(tmp_path, "xlsx")
    book = load_workbook(bench)
    third = book.create_sheet("run3")
    third.append(["t", "Displacement_slide"])
    third.append(["ms", "mm"])
    for row in list(book["run2"].iter_rows(min_row=3, values_only=True)):
        third.append([row[0], row[1]])
    book.save(bench)
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.run_for(0.5)
        app.drop(bench)
        wait_for(lambda: app.visible("Add to rig"), what="the measured-data dialog")
        assert app.value("sheet") == "run2" and app.visible("Position_slide")
        app.pick("sheet", 2)
        wait_for(lambda: app.visible("Displacement_slide"), what="the third sheet's columns")
        assert app.value("sheet") == "run3" and not app.visible("Position_slide")
        combo, unit = _mapped(app, "Displacement_slide")
        assert combo["value"] == "Joints/slide:qpos" and unit["value"] == "mm", (combo, unit)
        desktop.screenshot(str(tmp_path / f"bench-sheet-{size[0]}"))
        app.click("Add to rig")
        wait_for(lambda: not app.visible("Add to rig"), what="the dialog to close")
        wait_for(
            lambda: app.text(r"info: measured data 'bench_eu' added: 1 signal from bench_eu.xlsx.*"), what="the line"
        )
        assert app.quit_discarding() == 0, app.output()
    finally:
        app.close()
        desktop.close()
