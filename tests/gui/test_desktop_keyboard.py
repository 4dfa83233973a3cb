"""The panel without a mouse, as a person who prefers the keyboard drives it: Tab moves a visible
(amber) frame from control to control, Space presses the one it is on, the speed list opens with
Space and takes a choice with the arrows and Enter, REC starts a recording, and the arrows move
the timeline back. Real keys only (xdotool into the panel window); checks are the frame's pixels,
the panel's text and the recording on disk."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mjrig.widgets.kit.themes import FOCUS_FRAME
from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for

SCREENS = pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])


def _framed(app: App, item: dict) -> bool:
    """Whether the keyboard's frame is drawn around ``item`` (amber pixels just outside it)."""
    x, y, w, h = item["rect"]
    img = app.desktop.grab(app.panel)[max(0, y - 4) : y + h + 4, max(0, x - 4) : x + w + 4].astype(int)
    return int((np.abs(img - np.array(FOCUS_FRAME)).max(axis=2) < 40).sum()) > w  # a line along it at least


def _tab_to(app: App, find, what: str, *, key: str = "Tab", most: int = 60) -> dict:
    """Press Tab (or ``key``: shift+Tab goes back, round from the first control to the last) until
    the frame is on the control ``find(items)`` picks, as a person looks where the focus went
    after each press; the control."""
    for _ in range(most):
        item = find(app.items())
        if item is not None and _framed(app, item):
            return item
        app.key(key, window=app.panel)
    shot = app.desktop.screenshot(f"keyboard_never_{re.sub(r'[^a-z]+', '_', what)}")
    raise AssertionError(f"Tab never reached {what}; the screen: {shot}")


def _button(label: str):
    return lambda items: next((it for it in items if it["label"] == label and it["type"] == "mvButton"), None)


def _speed(items):
    return next((it for it in items if it["type"] == "mvCombo" and it.get("value", "").endswith("x")), None)


@SCREENS
def test_tab_space_arrows_and_enter_drive_the_run_bar_and_the_timeline(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        app.run_for(0.3)  # the rig under way (the 3D view can take a while to show it on a busy machine)
        _tab_to(app, _button("Pause"), "Pause")
        desktop.screenshot(f"keyboard_focus_{size[0]}x{size[1]}")
        app.key("space", window=app.panel)
        wait_for(lambda: app.visible("Play"), what="Space to pause the run")
        t = float(app.text(r"t = .*")["text"].split()[2])
        speed = _tab_to(app, _speed, "the speed list")
        assert speed["value"] == "1x"
        app.key("space", window=app.panel)  # opens the list
        app.key("Down", window=app.panel)
        app.key("Return", window=app.panel)
        wait_for(lambda: (_speed(app.items()) or {}).get("value") not in (None, "1x"), what="another speed chosen")
        _tab_to(app, _button("REC"), "REC")
        app.key("space", window=app.panel)
        wait_for(lambda: app.text(r"REC \d+ rows, .*", offscreen=True), what="REC to start a recording")
        # the timeline: back round from the run bar (it is near the panel's end), then its "<"
        # button, which Space presses once per kept instant
        _tab_to(
            app,
            lambda items: next((it for it in items if it["label"] == "timeline"), None),
            "the timeline",
            key="shift+Tab",
        )
        _tab_to(app, _button("<"), "the timeline's <", key="shift+Tab")  # next to it (round again if missed)
        for _ in range(5):
            app.key("space", window=app.panel)
        back = float(wait_for(lambda: app.text(r"t = [0-9.]+ s"), what="the time")["text"].split()[2])
        assert back < t, (back, t)  # the view shows an earlier instant
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
