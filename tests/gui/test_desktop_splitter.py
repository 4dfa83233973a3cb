"""A person gives the plots more room by dragging the splitter after the controls, and the panel
keeps that room at the next start (laptop screen: controls above plots; large screen: beside).
The bundled rig opens with its [plots] ticked, so a plot is there from the start."""

from __future__ import annotations

import json

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def _drag(app: App, grip: str, *, dx: int = 0, dy: int = 0) -> None:
    """Press on the grip, move in small steps as a hand does, let go."""
    x, y, w, h = app.widget(grip)
    d = app.desktop
    sx, sy = x + w // 2, y + h // 2
    # drag pacing: the panel (30 frames/s) sees the pointer rest on the grip, the press, each step
    # of the way and the last place before the release
    d.x("xdotool", "mousemove", "--sync", str(sx), str(sy), check=True)
    app.rest()
    d.x("xdotool", "mousedown", "1", check=True)
    app.rest()
    for i in range(1, 11):
        d.x("xdotool", "mousemove", "--sync", str(sx + dx * i // 10), str(sy + dy * i // 10), check=True)
        app.redrawn(2, timeout=3.0)
    d.x("xdotool", "mouseup", "1", check=True)
    app.redrawn(5)  # ten frames past the release


def _saved(home, ok) -> dict | None:
    """The panel layout saved in ``home``'s config, once ``ok`` says it is the one expected."""
    try:
        saved = json.loads((home / "config" / "mjrig" / "panel.json").read_text())
    except (OSError, ValueError):
        return None
    return saved if ok(saved) else None


def _plot_box(app: App) -> tuple[int, int, int, int]:
    """The rectangle of the first plot (panel pixels)."""
    return wait_for(lambda: next((it["rect"] for it in app.items() if it["type"] == "mvPlot"), None), what="a plot")


def test_the_splitter_moves_room_between_controls_and_plots_on_a_laptop_and_is_remembered(tmp_path):
    desktop = Desktop(1280, 800)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        before = app.widget("fit y")  # the plots' bar: the top of the plots
        _drag(app, "⋯", dy=120)  # the controls take 120 px from the plots
        after = wait_for(
            lambda: (lambda r: r if r[1] > before[1] + 90 else None)(app.widget("fit y")),
            what="the plots' bar lower after the drag",
        )
        saved = wait_for(
            lambda: _saved(tmp_path, lambda v: 0.3 < v["controls_height"] < 0.6),
            what="the splitter's place saved",
            timeout=10,
        )
        assert 0.3 < saved["controls_height"] < 0.6, saved
        app.screenshot_clear("splitter_1280x800")  # no tooltip over the picture
    finally:
        assert app.close() == 0, app.output()
    app = App(desktop, "spring_mass", home=tmp_path)  # the next start keeps the room
    try:
        again = app.widget("fit y")
        assert abs(again[1] - after[1]) <= 20, (again, after)
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_the_splitter_widens_the_plots_on_a_large_screen(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        before = _plot_box(app)
        _drag(app, "⋮", dx=-180)  # the controls column gives up 180 px
        after = wait_for(
            lambda: (lambda r: r if r[2] > before[2] + 120 else None)(_plot_box(app)), what="wider plots after the drag"
        )
        assert after[0] < before[0] - 120, (before, after)
        app.screenshot_clear("splitter_1920x1080")  # no tooltip over the picture
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
