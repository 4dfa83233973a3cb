"""A second recording over a replay, as a person uses it: ``mjrig A.parquet --compare B.parquet``
draws B's signals dashed beside A's in the same colour and B's bodies as a ghost in the 3D view;
"Stop comparing" takes both away and "Compare with..." brings them back from the panel;
"Report" writes the HTML report of the two."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
import polars as pl
import pytest

from mjrig.widgets.plots.plot_overlay import PALETTE, tint
from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_timeline import _drag_to, _text, _time
from tests.waiting import wait_for


def _record(folder, name: str, *extra: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "mjrig", "run", "spring_mass", "--duration", "3", "--out", name, *extra],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=120,
    )


def _line_pixels(app: App, desktop: Desktop, *, colour=PALETTE[0]) -> int:
    """Pixels of ``colour`` (default: the first plotted signal's) inside its plot."""
    plot = next(it["rect"] for it in app.items() if it["type"] == "mvPlot")
    x, y, w, h = plot
    img = desktop.grab(app.panel)[y : y + h, x : x + w].astype(int)
    return int((np.abs(img - np.array(colour)).max(axis=2) < 30).sum())


Q = "Joints/slide_x:qpos"
SCREENS = pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
TWIN = tint(PALETTE[0])
"""B's line: a paler shade of A's colour, so the two runs are told apart at a glance."""


def _changed(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of pixels that differ visibly between two grabs of one window."""
    return float((np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 24).mean())


def test_compare_draws_the_second_recording_dashed_and_its_ghost(tmp_path):
    _record(tmp_path, "A.parquet")
    _record(tmp_path, "B.parquet", "--set", "k=120")  # softer: the block swings slower and wider apart
    desktop = Desktop(1920, 1080)
    app = App(desktop, tmp_path / "A.parquet", "--compare", tmp_path / "B.parquet", home=tmp_path / "home")
    try:
        wait_for(lambda: _text(app, r".*compared with B\.parquet.*"), what="the timeline to name the comparison")
        app.tick("slide_x", "qpos")
        _drag_to(app, 0.45)  # about 1.3 s in: A and B are well apart there
        wait_for(lambda: _text(app, "paused"), what="the replay to pause at the dragged instant")
        t = _time(app)
        assert 0.5 < t < 2.5, t
        shown = wait_for(  # the rig's own signals (the spring's tension) on the lines after it
            lambda: _text(app, r"at [0-9.]+ s:   slide_x:qpos \S+ \(\S+\) m(\n.*)?"), what="both values at the cursor"
        )
        at, a, b = re.match(r"at (\S+) s:   slide_x:qpos (\S+) \((\S+)\)", shown["text"]).groups()
        rec_a, rec_b = (pl.read_parquet(tmp_path / n) for n in ("A.parquet", "B.parquet"))
        for rec, value in ((rec_a, a), (rec_b, b)):  # each the recorded position at that instant
            assert abs(np.interp(float(at), rec["time"], rec["Joints/slide_x:qpos"]) - float(value)) < 2e-4
        assert abs(float(a) - float(b)) > 5e-3  # two different runs
        # the view once drawn and still: on a busy machine a software-rendered viewer draws its
        # first frame late (black for 5-7 s)
        view_cmp = desktop.still_view(
            app.viewer, lambda rgb: rgb.mean() > 40, what="the paused view with B's ghost drawn", still_s=2.0
        )
        with_cmp = _line_pixels(app, desktop, colour=TWIN)
        own_cmp = _line_pixels(app, desktop)
        app.screenshot_clear("compare_1920x1080")  # no tooltip over the picture
        app.click("Stop comparing")
        wait_for(lambda: not _text(app, r".*compared with.*"), what="the comparison to go")
        wait_for(
            lambda: (
                _line_pixels(app, desktop, colour=TWIN) < 0.25 * with_cmp
                and _changed(view_cmp, desktop.grab(app.viewer)) > 0.0005
            ),
            what="B's line and ghost to go",
            timeout=30,  # the viewer may draw a frame a second on a busy machine
        )
        alone = _line_pixels(app, desktop, colour=TWIN)
        view_alone = desktop.still_view(app.viewer, lambda rgb: rgb.mean() > 40, what="the view alone", still_s=2.0)
        assert abs(_time(app) - t) < 1e-4  # still the same instant
        # B's dashed line is drawn in its own paler shade (a dashed line's worth of pixels), A's
        # line stays in its colour
        assert with_cmp > 200 and alone < 0.25 * with_cmp, (with_cmp, alone)  # (anti-aliased text comes close)
        assert _line_pixels(app, desktop) > 200 and own_cmp > 200
        # the ghost of B's block is drawn where B had it: part of the 3D view differs
        assert _changed(view_cmp, view_alone) > 0.0005, _changed(view_cmp, view_alone)
        app.click("Compare with...")
        app.type_into("file name", str(tmp_path / "B.parquet"), enter=True)
        wait_for(lambda: _text(app, r".*compared with B\.parquet.*"), what="the comparison back from the panel")
        seen: list[tuple[int, float, float]] = []

        def back() -> bool:
            seen.append(
                (_line_pixels(app, desktop, colour=TWIN), _changed(desktop.grab(app.viewer), view_alone), _time(app))
            )
            return seen[-1][0] > 0.5 * with_cmp and seen[-1][1] > 0.0005

        try:
            wait_for(back, what="B's line and ghost back", timeout=30)  # the viewer may draw a frame a second
        except AssertionError:
            desktop.screenshot("compare_ghost_not_back")  # what a person saw then
            raise AssertionError(
                f"B's line and ghost not back: (pixels, view changed, t) {seen[-3:]}, t was {t}"
            ) from None
        assert _line_pixels(app, desktop, colour=TWIN) > 0.5 * with_cmp
        # the ghost again, against the view without it from the same camera: a block's worth of
        # the view, not all of it (a busy machine's viewer may show its first framing late, so the
        # view before "Stop comparing" is no reference)
        view_back = desktop.still_view(
            app.viewer, lambda rgb: _changed(rgb, view_alone) > 0.0005, what="the ghost drawn again", still_s=2.0
        )
        assert 0.0005 < _changed(view_back, view_alone) < 0.02, _changed(view_back, view_alone)
        assert re.search(r"comparing with B\.parquet \(with a ghost of its bodies\)", app.output() + str(app.items()))
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_compare_on_a_laptop_screen(tmp_path):
    _record(tmp_path, "A.parquet")
    _record(tmp_path, "B.parquet", "--set", "k=120")
    desktop = Desktop(1280, 800)
    app = App(desktop, tmp_path / "A.parquet", "--compare", tmp_path / "B.parquet", home=tmp_path / "home")
    try:
        wait_for(lambda: _text(app, r".*compared with B\.parquet.*"), what="the timeline to name the comparison")
        app.tick("slide_x", "qpos")
        _drag_to(app, 0.45)
        t = _time(app)
        time.sleep(0.6)  # nothing to wait for: time passes, in which a running replay would move on
        assert _time(app) == t and 0.5 < t < 2.5, t  # paused at the dragged instant
        assert _line_pixels(app, desktop) > 200 and _line_pixels(app, desktop, colour=TWIN) > 100
        app.screenshot_clear("compare_1280x800")  # no tooltip over the picture
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


@SCREENS
def test_the_comparison_report_button_writes_the_report_beside_a(tmp_path, size):
    """ "Report" beside "Stop comparing" writes ``mjrig compare A B --report``'s page under
    a free name beside A (an A-vs-B.html already there stays), the Status line naming it; the page
    names both recordings and the first time outside A's band that numpy finds in the files."""
    _record(tmp_path, "A.parquet")
    _record(tmp_path, "B.parquet", "--set", "k=120")
    older = tmp_path / "A-vs-B.html"
    older.write_text("an older report", encoding="utf-8")
    desktop = Desktop(*size)
    app = App(desktop, tmp_path / "A.parquet", "--compare", tmp_path / "B.parquet", home=tmp_path / "home")
    tag = f"{size[0]}x{size[1]}"
    try:
        wait_for(lambda: _text(app, r".*compared with B\.parquet.*"), what="the timeline to name the comparison")
        app.click("Report")
        out = tmp_path / "A-vs-B-2.html"  # A-vs-B.html is taken
        said = re.escape(f"info: comparison report written: {out}")
        wait_for(lambda: _text(app, said), what="the report's Status line", timeout=120)
        assert older.read_text(encoding="utf-8") == "an older report"
        html = out.read_text(encoding="utf-8")
        a, b = (pl.read_parquet(tmp_path / n, columns=["time", Q]) for n in ("A.parquet", "B.parquet"))
        t, xa = a["time"].to_numpy(), a[Q].to_numpy()
        xb = np.interp(t, b["time"].to_numpy(), b[Q].to_numpy())
        first = float(t[np.flatnonzero(np.abs(xb - xa) > 1e-6 * np.abs(xa) + 1e-9)[0]])
        assert str(tmp_path / "A.parquet") in html and str(tmp_path / "B.parquet") in html
        assert f"first outside the band at t = {first:.6g} s" in html
        app.screenshot_clear(f"compare_report_{tag}")  # no tooltip over the picture
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
