"""Framing in the 3D view, as a person sees it: spring_mass opens with its whole rig in view (the
anchor post with its yellow site, the spring, the blue block), and after the user zooms far out
and turns the view, Ctrl+F in the viewer frames it all again, at a laptop's and a desktop's
screen size. The run is paused at its initial state first, so the block is where the checks
expect it. Screenshots of the whole screen go to tests/artifacts/framing_*.png.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for

pytestmark = pytest.mark.gui


@pytest.fixture(params=[(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def desktop(request):
    d = Desktop(*request.param)
    yield d
    d.close()


def _blocks_columns(rgb: np.ndarray) -> np.ndarray:
    """Columns (x, pixels) where the block's blue (0.15, 0.45, 0.8) face stands at least 6 px
    tall; the rig's blue lines (spring, proximity) are thinner than that."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    blue = (b > 120) & (b > r + 70) & (b > g + 30)
    return np.flatnonzero(blue.sum(axis=0) >= 6)


def _anchor_x(rgb: np.ndarray) -> float | None:
    """x (pixels) of the leftmost yellow: the anchor site ``base`` (0.9, 0.9, 0.1) on its post."""
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    ys, xs = np.nonzero((r > 150) & (g > 150) & (b < 100) & (abs(r - g) < 50))
    return float(np.sort(xs)[:4].mean()) if xs.size >= 4 else None


def _check_framed(rgb: np.ndarray, what: str) -> int:
    """The anchor and the block both in view, far apart across it, neither at an edge; returns
    the block's width on screen (pixels)."""
    w = rgb.shape[1]
    anchor, block = _anchor_x(rgb), _blocks_columns(rgb)
    assert anchor is not None, f"{what}: the anchor's yellow site is not in view"
    assert block.size >= 4, f"{what}: the blue block is not in view"
    assert 0.04 * w < anchor < block.mean() < 0.96 * w, (what, anchor, block.mean(), w)
    # the rig fills the view: anchor to block is a good part of it. At the initial state the block
    # is pulled 0.1 m towards the anchor: 0.275 m of the rig's 0.8 m, which spans some 0.8 of the
    # view, is about 0.28 of the view's width (a view zoomed out to a speck: under 0.1)
    assert block.mean() - anchor > 0.22 * w, f"{what}: anchor at x={anchor:.0f}, block at x={block.mean():.0f} of {w}"
    return int(block.size)


def test_ctrl_f_frames_the_anchor_and_the_block(desktop, tmp_path):
    w, h = desktop.size
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        wait_for(
            lambda: (lambda rgb: _anchor_x(rgb) is not None and _blocks_columns(rgb).size >= 4)(
                desktop.grab(app.viewer)
            ),
            what="the rig drawn in the 3D view",
        )
        # Paused at the initial state, the block stays where the checks expect it (it swings
        # 0.1 m either way while running).
        app.key("space")
        app.key("ctrl+BackSpace")
        first = desktop.still_view(app.viewer, what="the paused first view")
        desktop.screenshot(f"framing_open_{w}x{h}")
        opened = _check_framed(first, "first view")
        # The user zooms far out with the wheel and turns the view a little with the left button.
        x, y, vw, vh = desktop.client_rect(app.viewer)
        cx, cy = x + vw // 2, y + vh // 2
        desktop.x("xdotool", "mousemove", "--sync", str(cx), str(cy), check=True)
        desktop.x("xdotool", "click", "--repeat", "25", "--delay", "30", "4", check=True)
        desktop.x("xdotool", "mousedown", "1", check=True)
        for step in range(1, 7):
            desktop.x("xdotool", "mousemove", "--sync", str(cx + 8 * step), str(cy), check=True)
            time.sleep(0.05)  # drag pacing: the viewer sees each step of the turn
        desktop.x("xdotool", "mouseup", "1", check=True)
        zoomed = desktop.still_view(
            app.viewer,
            lambda rgb: _blocks_columns(rgb).size < 0.6 * opened,
            what="the view zoomed out and still",
        )
        desktop.screenshot(f"framing_zoomed_out_{w}x{h}")
        far = _blocks_columns(zoomed).size
        assert far < 0.6 * opened, f"the wheel did not zoom out (block {far} px wide, {opened} px at first)"
        app.key("ctrl+f")
        framed = desktop.still_view(
            app.viewer,
            lambda rgb: _blocks_columns(rgb).size > 0.8 * opened,
            what="the view framed again and still",
        )
        desktop.screenshot(f"framing_ctrl_f_{w}x{h}")
        fitted = _check_framed(framed, "after Ctrl+F")
        assert fitted > 0.8 * opened
    finally:
        assert app.close() == 0, app.output()


TINY = """<mujoco model="tiny">
  <worldbody>
    <light pos="0 0 1" dir="0 0 -1"/>
    <geom type="plane" size="1 1 .01" rgba=".8 .8 .8 1"/>
    <body name="cube" pos="0 0 .005"><joint type="slide" axis="1 0 0"/>
      <geom type="box" size=".005 .005 .005" rgba=".15 .45 .8 1"/></body>
  </worldbody>
</mujoco>"""


def test_a_dropped_tiny_model_opens_framed_not_a_close_up_nor_a_speck(tmp_path):
    """A 1 cm cube dropped on the 3D view: its first view shows it whole, filling a good part
    of the view."""
    desktop = Desktop(1280, 800)
    try:
        app = App(desktop, "spring_mass", home=tmp_path)
        try:
            tiny = tmp_path / "tiny.xml"
            tiny.write_text(TINY)
            app.drop(tiny)
            wait_for(lambda: "tiny" in desktop.title(app.viewer), what="the dropped model to open", every=0.2)

            def cube(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                r, g, b = (rgb[..., i].astype(int) for i in range(3))
                return np.nonzero((b > 100) & (b > r + 60) & (b > g + 25))

            rgb = desktop.still_view(app.viewer, lambda rgb: cube(rgb)[1].size > 50, what="the cube in a still view")
            desktop.screenshot("framing_dropped_tiny_1280x800")
            ys, xs = cube(rgb)
            assert xs.size > 50, "the cube is not in view"
            h, w = rgb.shape[:2]
            width, height = (xs.max() - xs.min()) / w, (ys.max() - ys.min()) / h
            assert 0.03 * w < xs.min() and xs.max() < 0.97 * w and 0.03 * h < ys.min() and ys.max() < 0.97 * h, (
                "the cube runs off the view: an extreme close-up"
            )
            assert max(width, height) > 0.3, f"the cube is a speck: {width:.0%} x {height:.0%} of the view"
        finally:
            assert app.close() == 0, app.output()
    finally:
        desktop.close()
