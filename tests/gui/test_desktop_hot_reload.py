"""Hot reload as a person meets it: the app runs a scenario; its model file is edited in another
program; the 3D view shows the change, the load stays attached and Status says so. A broken edit
leaves the old model running with one red line. Then the automatic arrows: a 40 N push on a
walker-sized model is an arrow a person sees at 1280x800."""

from __future__ import annotations

import mediapy
import numpy as np
import pytest

from tests import mjcf
from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for

CRATE = 'type="box" size="{size} {size} {size}" rgba="{rgba}" mass="20"'
"""The crate's geom: a cube of half-side ``{size}`` m and colour ``{rgba}`` (format fields), 20 kg."""
FLOOR = '    <light pos="0 0 4" dir="0 0 -1"/>\n    <geom type="plane" size="3 3 0.1" rgba="0.45 0.45 0.45 1"/>'
CRATE_BODY = mjcf.slider("crate", joint="x", pos="0 0 0.3", damping=200, geom=CRATE, site="face", site_pos="{size} 0 0")
MODEL = mjcf.model(CRATE_BODY, option='gravity="0 0 0"', world=FLOOR, name="crate")
SCENARIO = """model = "crate.xml"
[[loads]]
name = "push"
kind = "force"
at = "face"
vector = [40.0, 0.0, 0.0]
"""
RED, BLUE = "0.85 0.1 0.1 1", "0.1 0.2 0.9 1"


def viewer_pixels(desktop: Desktop, app: App, name: str) -> np.ndarray:
    """The 3D view as a person sees it (from a screenshot of the whole screen)."""
    shot = mediapy.read_image(desktop.screenshot(name))[..., :3].astype(int)
    x, y, w, h = desktop.client_rect(app.viewer)
    return shot[y : y + h, x : x + w]


def share(px: np.ndarray, channel: int) -> float:
    """The part of the view in a strong colour of ``channel`` (0 red, 1 green, 2 blue)."""
    others = [c for c in range(3) if c != channel]
    mask = (
        (px[..., channel] > 120)
        & (px[..., channel] > px[..., others[0]] + 60)
        & (px[..., channel] > px[..., others[1]] + 60)
    )
    return float(mask.mean())


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_a_model_edited_on_disk_reloads_with_its_load_and_a_broken_edit_keeps_the_old(tmp_path, size):
    desktop = Desktop(*size)
    work = tmp_path / "rig"
    work.mkdir()
    model = work / "crate.xml"
    model.write_text(MODEL.format(size=0.25, rgba=RED))
    (work / "crate.toml").write_text(SCENARIO)
    app = App(desktop, work / "crate.toml", home=tmp_path)
    try:
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : crate", what="the crate to open")
        app.run_for(0.3)
        # the red crate once drawn (a software-rendered viewer on a busy machine draws late)
        before = wait_for(
            lambda: (lambda px: px if share(px, 0) > 0.002 else None)(
                viewer_pixels(desktop, app, f"hot_reload_before_{size[0]}x{size[1]}")
            ),
            what="the red crate",
        )
        assert share(before, 2) < 0.001  # a red crate, no blue
        model.write_text(MODEL.format(size=0.4, rgba=BLUE))  # another program saves the model
        wait_for(lambda: app.text(r"info: crate\.xml changed on disk: reloaded, loads kept"), what="Status's line")
        app.run_for(0.3)
        after = wait_for(
            lambda: (lambda px: px if share(px, 2) > 0.5 * share(before, 0) else None)(
                viewer_pixels(desktop, app, f"hot_reload_after_{size[0]}x{size[1]}")
            ),
            what="the blue crate",
        )
        assert share(after, 0) < 0.5 * share(before, 0)  # the red crate is gone (the view frames the new one)
        app.widget("push")  # the load is still attached: its row is in Loads (scrolled to, as a person does)
        # a broken edit: MuJoCo refuses it; the blue crate runs on with one red line
        model.write_text(MODEL.format(size=0.4, rgba=BLUE).replace('<geom type="box"', '<gem type="box"'))
        wait_for(lambda: app.text(r"error: .*crate\.xml.*"), what="the red line")
        t = app.newest_time()
        app.run_for(0.3)
        assert app.newest_time() > t and desktop.title(app.viewer) == "MuJoCo : crate"
        kept = viewer_pixels(desktop, app, f"hot_reload_broken_{size[0]}x{size[1]}")
        assert share(kept, 2) > 0.5 * share(before, 0)  # still the blue crate
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
