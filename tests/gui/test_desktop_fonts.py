"""Names in Chinese, Japanese or Korean read as themselves in the panel (not "??"), and the
panel's own font comes back with the next rig that has no such names."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from mjrig.widgets.kit.fonts import find_font
from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for

MODEL = """<mujoco model="人形">
  <worldbody>
    <geom name="地面" type="plane" size="2 2 0.1"/>
    <body name="躯干" pos="0 0 0.5">
      <joint name="滑块" type="slide" axis="1 0 0"/>
      <geom name="箱子" type="box" size="0.1 0.1 0.1"/>
    </body>
    <body name="ロボット" pos="0.5 0 0.5">
      <joint name="관절" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.05"/>
    </body>
  </worldbody>
</mujoco>
"""


def _text_pixels(shot: np.ndarray, rect, *, width: int) -> np.ndarray:
    """A tree node's text pixels against the background: ``width`` px right of its arrow."""
    x, y, w, h = rect
    crop = shot[y : y + h, x + 22 : x + 22 + width]
    return np.abs(crop - crop[0, 0]).max(axis=2) > 60


def test_cjk_joint_names_are_drawn_with_their_own_glyphs(tmp_path):
    if shutil.which("fc-list") is None:
        pytest.skip("needs fontconfig and a CJK font (scripts/test.sh installs fonts-wqy-microhei)")
    model = tmp_path / "人形.xml"
    model.write_text(MODEL, encoding="utf-8")
    desktop = Desktop(1280, 800)
    app = App(desktop, model, home=tmp_path)
    try:
        slide = wait_for(
            lambda: next((it["rect"] for it in app.items() if it["label"] == "滑块"), None),
            what="the slide joint in the signal tree",
        )
        hinge = wait_for(
            lambda: next((it["rect"] for it in app.items() if it["label"] == "관절"), None),
            what="the hinge in the signal tree",
        )
        shot = desktop.grab(app.panel).astype(int)
        a, b = (_text_pixels(shot, r, width=2 * 15) for r in (slide, hinge))  # as wide as two glyphs
        assert a.sum() > 40 and b.sum() > 40, (a.sum(), b.sum())
        # a font without these glyphs draws the same two "?" for both names
        assert (a != b).sum() > 0.3 * max(a.sum(), b.sum()), (a != b).sum()
        assert "need a font" not in app.output()
        desktop.screenshot("cjk_names_1280x800")

        def reload_button():  # a Latin label, as drawn now
            x, y, w, h = app.widget("Reload")
            px, py, _, _ = desktop.client_rect(app.panel)
            return desktop.grab(app.panel)[y - py : y - py + h, x - px : x - px + w].astype(int)

        cjk = reload_button()
        app.reveal("Bundled rigs", "spring_mass")
        app.click("spring_mass")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : spring_mass", what="spring_mass to open")
        wait_for(lambda: any(it["label"] == "slide_x" for it in app.items()), what="spring_mass's signals")
        app.redrawn(4)
        latin = reload_button()
        # another font draws "Reload" at another width, or other pixels at the same
        assert latin.shape != cjk.shape or (np.abs(latin - cjk).max(axis=2) > 60).sum() > 20, (
            "the panel should draw its labels in its own font again"
        )
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


THAI = """<mujoco model="แขนกล">
  <worldbody>
    <body name="แขน" pos="0 0 0.5">
      <joint name="ไหล่" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="มือ" pos="0.3 0 0">
        <joint name="ข้อมือ" type="hinge" axis="0 1 0"/>
        <geom type="sphere" size="0.05"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_names_in_another_script_dejavu_lacks_find_their_font(tmp_path, size):
    """Thai names (not CJK): the panel takes a Thai font found through fontconfig, so the two
    joints' names are drawn as themselves, not as the same row of "?"."""
    if shutil.which("fc-list") is None or find_font("ข้อต่อ") is None:
        pytest.skip("needs fontconfig and a Thai font (scripts/test.sh installs fonts-tlwg-garuda-ttf)")
    model = tmp_path / "arm.xml"
    model.write_text(THAI, encoding="utf-8")
    desktop = Desktop(*size)
    app = App(desktop, model, home=tmp_path)
    try:
        rects = [
            wait_for(lambda n=name: next((it["rect"] for it in app.items() if it["label"] == n), None), what=name)
            for name in ("ไหล่", "ข้อมือ")
        ]
        app.redrawn(3)
        shot = desktop.grab(app.panel).astype(int)
        a, b = (_text_pixels(shot, r, width=40) for r in rects)
        assert a.sum() > 40 and b.sum() > 40, (a.sum(), b.sum())
        assert (a != b).sum() > 0.3 * max(a.sum(), b.sum()), (a != b).sum()
        assert "need a font" not in app.output()
        desktop.screenshot(f"thai_names_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
