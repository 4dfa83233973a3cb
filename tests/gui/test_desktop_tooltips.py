"""A button's tooltip never covers the live readout a person is watching: the recording's
status while recording, the values at the timeline's cursor while scrubbing."""

from __future__ import annotations

import numpy as np

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def _hover_keeps(app: App, desktop: Desktop, *, button: str, text: dict) -> None:
    """Hover ``button`` until its tooltip shows; the pixels of ``text`` (a widget-map entry) stay."""
    px, py, _, _ = desktop.client_rect(app.panel)
    x, y, w, h = text["rect"]
    desktop.x("xdotool", "mousemove", "--sync", str(px + 5), str(py + 5))
    app.redrawn(2)  # drawn with the pointer away from every widget
    before = desktop.grab(app.panel)
    bx, by, bw, bh = app.widget(button)
    desktop.x("xdotool", "mousemove", "--sync", str(bx + bw // 2), str(by + bh // 2))
    diff = lambda img: np.abs(img.astype(int) - before.astype(int)).max(axis=2) > 24  # noqa: E731
    # the tooltip is up (after the pointer rests a while)
    after = wait_for(
        lambda: (lambda img: img if diff(img).sum() > 500 else None)(desktop.grab(app.panel)),
        what=f"the tooltip of '{button}'",
        timeout=10,
    )
    app.redrawn()  # and drawn whole
    after = desktop.grab(app.panel)
    changed = diff(after)
    assert changed.sum() > 500, "no tooltip appeared"  # the test itself hovered something
    assert changed[y : y + h, x : x + w].mean() < 0.02, f"the tooltip of '{button}' covers '{text['text']}'"


def test_tooltips_leave_the_recording_status_and_the_cursor_values_readable(tmp_path):
    desktop = Desktop(1280, 800)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        app.click("Pause")  # a still readout: only a tooltip can change its pixels
        app.click("Start recording")
        status = wait_for(
            lambda: next((it for it in app.items() if "rows" in it.get("text", "")), None),
            what="the recording's status",
        )
        _hover_keeps(app, desktop, button="Stop recording", text=status)
        # scrubbed back: the values at the cursor stay readable under the timeline's tooltips
        app.widget("Compare with...")
        values = wait_for(
            lambda: next((it for it in app.items() if it.get("text") == "live"), None), what="the values line"
        )
        _hover_keeps(app, desktop, button="Compare with...", text=values)
        desktop.screenshot("tooltips_1280x800")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
