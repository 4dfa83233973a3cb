"""Bench data in the app as a person sees it: a rig with ``[[measured]]`` data plots each measured
signal's twin dotted beside it, in a paler shade of its colour, live and when its recording is
replayed (the recording keeps the series); at 1280x800 and 1920x1080."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop, wait_for
from tests.unit.test_measured import CSV_ENTRY, csv_bench, scenario
from mjrig.widgets.plot_overlay import PALETTE, tint

PLOTS = """
[plots]
signals = ["Joints/slide:qpos"]
"""


def _pixels(app: App, desktop: Desktop, colour) -> int:
    """Pixels of ``colour`` inside the plot."""
    x, y, w, h = next(it["rect"] for it in app.items() if it["type"] == "mvPlot")
    img = desktop.grab(app.panel)[y:y + h, x:x + w].astype(int)
    return int((np.abs(img - np.array(colour)).max(axis=2) < 30).sum())


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
    csv_bench(tmp_path, noise=0.05)
    path = scenario(tmp_path, CSV_ENTRY, k=250.0, extra=PLOTS)
    subprocess.run([sys.executable, "-m", "mjrig", "run", str(path), "--out", "rec.parquet"], cwd=tmp_path,
                   check=True, capture_output=True, timeout=120)
    (tmp_path / "bench.csv").unlink()  # the recording holds the series itself
    desktop = Desktop(1280, 800)
    app = App(desktop, tmp_path / "rec.parquet", home=tmp_path / "home")
    try:
        app.tick("slide", "qpos")
        wait_for(lambda: _pixels(app, desktop, tint(PALETTE[0])) > 150, what="the replay's bench line")
    finally:
        app.close()
        desktop.close()
