"""What a person sees first, and the panel's room: the default rig opens with its ``[plots]``
signals plotted (CONTRACT 13) and *Save scenario...* keeps the ticked ones; on a laptop screen the
plots get about a third of the panel, the splitter leaves both sides 120 px and Status four lines;
no label is cut off at either screen size."""

from __future__ import annotations

import tomllib

import pytest

from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_splitter import _drag
from tests.waiting import wait_for

SHAKER_PLOTS = ["Joints/slide_x:qpos", "Loads/main_spring:tension"]


def _plots(app: App) -> list[dict]:
    return sorted(
        (it for it in app.items() if it["type"] == "mvPlot" and it["label"] in ("m", "N")), key=lambda it: it["label"]
    )


def _clipped(app: App) -> list[str]:
    return [f"{it['type']} '{it['label'] or it.get('text', '')[:30]}'" for it in app.items() if it.get("clipped")]


def test_the_default_rig_opens_plotted_and_saving_keeps_the_ticks(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, home=tmp_path)
    try:
        plots = wait_for(
            lambda: (lambda p: p if len(p) == 2 else None)(_plots(app)),
            what="the rig's [plots]: a plot in m and one in N from the first frames",
        )
        first = desktop.grab(app.panel)
        app.run_for(0.3)
        x, y, w, h = plots[0]["rect"]
        assert (desktop.grab(app.panel)[y : y + h, x : x + w] != first[y : y + h, x : x + w]).any(axis=2).sum() > 200, (
            "the position's line should move"
        )
        assert app.value("qpos") == "True" and app.value("tension") == "True"
        app.click("qvel")  # one more ticked, then saved
        wait_for(
            lambda: len(_plots(app)) == 2 and any(it["label"] == "m/s" for it in app.items() if it["type"] == "mvPlot"),
            what="a plot in m/s",
        )
        app.key("ctrl+s", window=app.panel)
        wait_for(lambda: app.visible("Replace") or app.visible("Save"), what="the Save dialog")
        app.key("Return", window=app.panel)
        saved = tmp_path / "work" / "shaker_rig.toml"
        wait_for(saved.exists, what="the saved scenario")
        assert tomllib.loads(saved.read_text())["plots"]["signals"] == [*SHAKER_PLOTS, "Joints/slide_x:qvel"]
        desktop.screenshot("first_look_1920x1080")
        assert not _clipped(app), _clipped(app)
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_a_laptop_panel_gives_the_plots_about_a_third_and_status_four_lines(tmp_path):
    desktop = Desktop(1280, 800)
    app = App(desktop, home=tmp_path)
    try:
        _, py, _, panel_h = desktop.client_rect(app.panel)
        plots = wait_for(lambda: (lambda p: p if len(p) == 2 else None)(_plots(app)), what="the two plots")
        top = min(p["rect"][1] for p in plots)
        bottom = max(p["rect"][1] + p["rect"][3] for p in plots)
        assert bottom - top >= 0.3 * panel_h, (bottom - top, panel_h)  # about a third
        status = app.widget("copy last error")
        timeline = app.widget("Compare with...")
        assert py + panel_h - (status[1] + status[3]) >= 4 * 17, "Status should show four lines"
        assert timeline[1] - py > bottom
        assert not _clipped(app), _clipped(app)
        desktop.screenshot("first_look_1280x800")
        _drag(app, "⋯", dy=600)  # controls as tall as they go: the plots keep 120 px
        plots = wait_for(lambda: (lambda p: p if len(p) == 2 else None)(_plots(app)), what="the plots after")
        assert sum(p["rect"][3] for p in plots) >= 120 - 10, [p["rect"] for p in plots]
        _drag(app, "⋯", dy=-600)  # and as short: the controls keep 120 px
        assert app.widget("⋯")[1] - py >= 120, app.widget("⋯")
        desktop.screenshot("first_look_split_1280x800")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


@pytest.mark.both_screens
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_no_label_is_cut_off(tmp_path, size):
    """Every section open: each widget drawn whole within its window."""
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path)
    try:
        for header in ("Proximities", "Controls", "Requirements", "Metrics", "Keys"):
            app.click(header)
        app.redrawn(5)
        assert not _clipped(app), _clipped(app)
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
