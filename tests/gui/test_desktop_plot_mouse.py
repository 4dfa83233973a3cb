"""The mouse on a live plot, as a person uses it: a click goes to the time under the pointer
(running or paused), the wheel alone scrolls past a live plot and leaves it following, a drag pans
and Ctrl+wheel zooms a view that then stops following the run, and a double-click follows the run
again with the whole window shown. Both screen sizes: on a
laptop the plots are small and a click is easily read off the wrong place."""

from __future__ import annotations

import pytest

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def _plot(app: App) -> dict:
    """The plot in metres (the default rig's position), as drawn now."""
    return wait_for(
        lambda: next((it for it in app.items() if it["type"] == "mvPlot" and it["label"] == "m"), None),
        what="the plot in m",
    )


def _cursor(app: App, *, moved_from: float | None = None) -> float:
    """The time of the values at the cursor ("at 12.345678 s: ..."); with ``moved_from``, once
    it is another time than that."""

    def now():
        found = app.text(r"at [0-9.]+ s:.*", offscreen=True)
        t = float(found["text"].split()[1]) if found else None
        return t if t is not None and t != moved_from else None

    return wait_for(now, what="the values at the clicked time")


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 800)], ids=["1920x1080", "1280x800"])
def test_click_goes_to_the_time_under_it_drag_and_wheel_look_around_double_click_follows(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path)
    try:
        app.run_for(11.0, timeout=90)  # the 10 s window has left t = 0 behind
        px, py, _, _ = desktop.client_rect(app.panel)
        x, y, w, h = _plot(app)["rect"]
        assert h >= 80, f"a plot {h} px high is too small to click on"
        row = py + y + 2 * h // 3  # under the legend (top right)

        # the wheel alone over a live plot scrolls the panel: no zoom, the plots keep following
        desktop.x("xdotool", "mousemove", "--sync", str(px + x + w // 2), str(row), check=True)
        app.rest()
        for button in ("4", "4", "5", "5"):
            desktop.x("xdotool", "click", button, check=True)
            app.redrawn(2, timeout=2.0)
        assert app.value("pause") == "False", "the wheel paused the plots"
        shown = _plot(app)["x_range"]
        assert shown[1] - shown[0] == pytest.approx(10.0, rel=0.02), f"the wheel zoomed the plot to {shown}"
        x, y, w, h = _plot(app)["rect"]  # where the scrolling left it
        row = py + y + 2 * h // 3
        x1, x2, x3 = int(0.8 * w), int(0.6 * w), int(0.35 * w)  # px into the plot
        app._press(px + x + x1, row)  # running: the run stops at that instant
        t1 = _cursor(app)
        lo, hi = _plot(app)["x_range"]
        assert hi - lo == pytest.approx(10.0, rel=0.02) and lo <= t1 <= hi, (t1, lo, hi)
        app._press(px + x + x2, row)  # paused: other instants, earlier
        t2 = _cursor(app, moved_from=t1)
        app._press(px + x + x3, row)
        t3 = _cursor(app, moved_from=t2)
        assert lo <= t3 < t2 < t1, (t3, t2, t1, lo, hi)
        assert _plot(app)["x_range"] == pytest.approx([lo, hi], abs=1e-6), "the view should stay put"
        # the two paused clicks place the plot's data area inside the plot, right of its y labels
        per_px = (t2 - t3) / (x2 - x3)
        width, left = (hi - lo) / per_px, x2 - (t2 - lo) / per_px
        assert 0.5 * w < width <= w and 10 < left < 0.45 * w and left + width <= w + 3, (width, left, w)
        # the running one went to the time under the pointer then: the view went on a little
        # (a double-click's time) before the run stopped
        assert 0 <= lo + (x1 - left) * per_px - t1 < 2.0, (t1, lo, left, per_px)
        t2 = t3

        # drag: the view pans (and stops following); the cursor stays where it was
        desktop.x("xdotool", "mousemove", "--sync", str(px + x + w // 2), str(row), check=True)
        app.rest()
        desktop.x("xdotool", "mousedown", "1", check=True)
        for dx in range(8, int(0.4 * w), 8):
            desktop.x("xdotool", "mousemove", str(px + x + w // 2 + dx), str(row), check=True)
            app.redrawn(timeout=2.0)
        desktop.x("xdotool", "mouseup", "1", check=True)
        app.rest()
        assert app.value("pause") == "True"
        panned = _plot(app)["x_range"]
        assert panned[0] < lo - 0.1 and panned[1] - panned[0] == pytest.approx(hi - lo, rel=0.05), (panned, lo, hi)
        assert _cursor(app) == pytest.approx(t2, abs=1e-6), "a drag is no click"

        # Ctrl+wheel: zoom in
        desktop.x("xdotool", "mousemove", "--sync", str(px + x + w // 2), str(row), check=True)
        app.rest()
        desktop.x("xdotool", "keydown", "ctrl", check=True)
        app.redrawn(2, timeout=2.0)
        for _ in range(4):
            desktop.x("xdotool", "click", "4", check=True)
            app.redrawn(2, timeout=2.0)
        desktop.x("xdotool", "keyup", "ctrl", check=True)
        zoomed = wait_for(
            lambda: (lambda r: r if r[1] - r[0] < 0.8 * (hi - lo) else None)(_plot(app)["x_range"]),
            what="the plot zoomed in by Ctrl+wheel",
            timeout=10,
        )
        assert app.value("pause") == "True", zoomed

        # double-click: the whole window again, following (the run stays where the click put it)
        app._press(px + x + w // 2, row, clicks=2)
        wait_for(lambda: app.value("pause") == "False", what="the plot following again")
        back = wait_for(
            lambda: (lambda r: r if abs(r[1] - r[0] - 10.0) < 0.2 else None)(_plot(app)["x_range"]),
            what="the whole 10 s window back",
        )
        assert back[0] <= t2 <= back[1], (back, t2)
        assert _cursor(app) == pytest.approx(t2, abs=1e-6), "a double-click is no click"
        desktop.screenshot(f"plot_mouse_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
