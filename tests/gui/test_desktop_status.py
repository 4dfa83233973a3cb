"""Status as a person reads it: new lines show at the bottom; scrolled up to read an older one,
the view stays put while lines come in; scrolled back to the bottom, it follows again."""

from __future__ import annotations

import pytest

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def _snapshot_lines(app: App) -> list[dict]:
    """Status's "snapshot of t = ..." lines, oldest first, in view or scrolled out of it."""
    return [it for it in app.items(offscreen=True) if it.get("text", "").startswith("info: snapshot of t =")]


def _take(app: App) -> str:
    """Click Snapshot; the text of the new Status line it gives."""
    before = len(_snapshot_lines(app))
    app.click("Snapshot")
    return wait_for(
        lambda: (lambda ls: ls[-1]["text"] if len(ls) > before else None)(_snapshot_lines(app)),
        what="a new snapshot line in Status",
    )


def _shown(app: App, text: str) -> bool:
    return any(it.get("text") == text and not it.get("offscreen") for it in app.items(offscreen=True))


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_status_follows_new_lines_unless_scrolled_up(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path)
    try:
        first = _take(app)
        for _ in range(30):  # until the lines fill the Status area
            newest = _take(app)
            assert _shown(app, newest), "a new line should show at the bottom"
            if not _shown(app, first):
                break
        else:
            raise AssertionError("30 lines still fit in Status")
        px, py, _, _ = desktop.client_rect(app.panel)
        x, y, w, h = next(it for it in app.items() if it.get("text") == newest)["rect"]
        desktop.x("xdotool", "mousemove", "--sync", str(px + x + w // 2), str(py + y + h // 2), check=True)
        app.rest()
        desktop.x("xdotool", "click", "--repeat", "3", "--delay", "60", "4", check=True)  # the wheel: up
        wait_for(lambda: not _shown(app, newest), what="Status scrolled up")
        read = [it["text"] for it in _snapshot_lines(app) if not it.get("offscreen")]
        newer = _take(app)
        app.redrawn(6)
        assert not _shown(app, newer), "scrolled up, the view should stay where the reader is"
        assert [it["text"] for it in _snapshot_lines(app) if not it.get("offscreen")] == read
        desktop.x("xdotool", "mousemove", "--sync", str(px + x + w // 2), str(py + y + h // 2), check=True)
        app.rest()
        desktop.x("xdotool", "click", "--repeat", "12", "--delay", "40", "5", check=True)  # back to the bottom
        wait_for(lambda: _shown(app, newer), what="Status at its bottom again")
        latest = _take(app)
        wait_for(lambda: _shown(app, latest), what="the newest line shown: following again")
        desktop.screenshot(f"status_follows_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
