"""Plots as a person reads them: ticking signals of different units gives one plot per unit,
each y axis labelled with its unit; threshold crossings show in the status log (and on stderr);
every signal a filter shows ticked at once, and none."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mjrig.models.scale import many_bodies
from mjrig.widgets.plots.plot_overlay import EVENT_COLOR
from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def test_one_plot_per_unit_and_crossings_are_reported(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, "clearance", home=tmp_path)  # a bundled rig by its name
    try:
        app.tick("paddle_hinge", "qpos")
        app.tick("clearance", "distance")
        plots = wait_for(
            lambda: (
                sorted(it["label"] for it in app.items() if it["type"] == "mvPlot")
                if sum(it["type"] == "mvPlot" for it in app.items()) == 2
                else None
            ),
            what="two plots",
        )
        assert plots == ["m", "rad"], plots
        rects = [it["rect"] for it in app.items() if it["type"] == "mvPlot"]
        assert all(r[3] >= 140 for r in rects), rects  # each readable, not squeezed
        wait_for(lambda: "proximity 'clearance' below" in app.output(), what="the crossing in the log", timeout=60)
        line = next(ln for ln in app.output().splitlines() if "proximity 'clearance' below" in ln)
        assert line.startswith("mjrig: warning:") and "at t=" in line, line

        # the crossing is a thin amber line across the distance plot: not a thick line in the
        # colour of a signal (which looked like a spike of the data)
        def amber_columns():
            x, y, w, h = next(it["rect"] for it in app.items() if it["type"] == "mvPlot" and it["label"] == "m")
            img = desktop.grab(app.panel)[y : y + h, x : x + w].astype(int)
            amber = np.abs(img - np.array(EVENT_COLOR[:3])).max(axis=2) < 30
            return np.flatnonzero(amber.sum(axis=0) > 0.4 * h)

        columns = wait_for(
            lambda: (lambda c: c if len(c) else None)(amber_columns()), what="the crossing's line", timeout=20
        )
        assert 1 <= len(columns) <= 4 * 2, columns  # one or two crossings in view, each 1-2 px wide
        desktop.screenshot("plots_by_unit")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_a_free_flyer_is_followed_and_the_models_cameras_are_offered(tmp_path):
    desktop = Desktop(1280, 800)
    app = App(desktop, "thruster", home=tmp_path)
    try:
        # the viewer follows the flyer from its first view of it
        wait_for(lambda: app.value("camera") == "tracking", what="a free-flying model opening with a tracking camera")
        before = desktop.grab(app.viewer)
        app.key("ctrl+k")  # next camera: the model's own ones (overview, then chase)
        wait_for(lambda: app.value("camera") == "overview", what="the model's overview camera")
        wait_for(
            lambda: (desktop.grab(app.viewer) != before).any(axis=2).sum() > 1000, what="the view to change", timeout=10
        )
        app.click("Fit view")  # back to a free camera that frames the model
        wait_for(lambda: app.value("camera") == "free", what="the free camera after Fit view")
        desktop.screenshot("thruster_fit_view")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_fifty_signals_are_ticked_at_once_from_the_filter_and_unticked_at_once(tmp_path, size):
    """A filter, *tick shown*: every signal it lets through is plotted (60 joint angles of a
    generated 60-body model: a click on the plot lists the value of each at that time, in a box
    of its own under the plots); *none*: no signal is."""
    model = tmp_path / "sixty.xml"
    model.write_text(many_bodies(60))
    desktop = Desktop(*size)
    app = App(desktop, model, home=tmp_path)

    def values() -> str:
        found = app.text(r"at [0-9.]+ s:.*", offscreen=True)
        return found["text"] if found else ""

    try:
        app.run_for(0.5)
        app.type_into("filter signals", "qpos")
        app.click("tick shown")
        plot = wait_for(
            lambda: next((it for it in app.items() if it["type"] == "mvPlot" and it["label"] == "rad"), None),
            what="their plot",
        )
        assert plot["rect"][3] >= 100, plot
        px, py, _, _ = desktop.client_rect(app.panel)
        x, y, w, h = plot["rect"]
        slider = app.widget("timeline")
        app.click_at(px + x + int(0.7 * w), py + y + 2 * h // 3)  # the values at that time
        text = wait_for(lambda: (lambda t: t if t.count(":qpos") == 60 else None)(values()), what="60 values")
        assert all(f"c{c}_j{j}:qpos" in text for c in range(6) for j in range(10)), text
        assert app.widget("timeline") == slider, "the values' box pushed the timeline away"
        desktop.screenshot(f"sixty_ticked_{size[0]}x{size[1]}")
        app.click("none")
        wait_for(lambda: not any(it["type"] == "mvPlot" for it in app.items()), what="no plot left")
        assert app.text(r"tick signals in the tree to plot them; one plot per unit")
        assert ":qpos" not in values()
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


TIP = re.compile(r"(\S+) = (\S+) rad  at t = ([0-9.]+) s")


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_with_sixty_lines_pointing_names_each_line_and_no_legend_is_cut(tmp_path, size):
    """Sixty joint angles in one plot: their legend would not fit, so none is drawn (no name cut
    off); pointing down the plot names the line under the pointer with its value, the values
    falling as the pointer goes down. Two lines: their legend in a row across the plot."""
    model = tmp_path / "sixty.xml"
    model.write_text(many_bodies(60))
    desktop = Desktop(*size)
    app = App(desktop, model, home=tmp_path)
    try:
        app.run_for(1.0)
        app.type_into("filter signals", "qpos")
        app.click("tick shown")
        wait_for(
            lambda: (lambda p: p if p and p["legend"] == "hidden" else None)(_plot(app, "rad")),
            what="the plot of 60 lines, its legend not drawn",
        )
        app.click("Pause")
        wait_for(lambda: app.widget("Play"), what="the run paused")
        px, py, _, _ = desktop.client_rect(app.panel)
        x, y, w, h = _plot(app, "rad")["rect"]
        named = []
        for frac in np.linspace(0.08, 0.85, 23):
            desktop.x("xdotool", "mousemove", "--sync", str(px + x + int(0.6 * w)), str(py + y + int(frac * h)))
            app.redrawn(2, map=True)
            found = app.text(TIP.pattern)
            if found:
                name, value, t = TIP.fullmatch(found["text"]).groups()
                named.append((frac, name, float(value), float(t)))
        assert named, "no line named under the pointer"
        frac = named[len(named) // 2][0]
        desktop.x("xdotool", "mousemove", "--sync", str(px + x + int(0.6 * w)), str(py + y + int(frac * h)))
        app.redrawn(2)
        desktop.screenshot(f"sixty_pointed_{size[0]}x{size[1]}")
        names = [n for _, n, _, _ in named]
        assert len(set(names)) >= 3, named  # different lines at different heights
        assert all(n.endswith(":qpos") for n in names), named
        values = [v for _, _, v, _ in named]
        assert values == sorted(values, reverse=True), named  # lower on the plot, smaller angles
        assert len({t for *_, t in named}) == 1, named  # one time under one x
        app.click("none")
        app.type_into("filter signals", "c0_j1:qpos")
        app.click("tick shown")
        app.type_into("filter signals", "c0_j2:qpos")
        app.click("tick shown")
        two = wait_for(
            lambda: (lambda p: p if p and p["legend"] != "hidden" else None)(_plot(app, "rad")), what="a legend"
        )
        assert two["legend"] == "row", two
        desktop.screenshot(f"two_lines_legend_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def _plot(app: App, label: str) -> dict | None:
    """The plot of unit ``label`` as the map shows it."""
    return next((it for it in app.items() if it["type"] == "mvPlot" and it["label"] == label), None)
