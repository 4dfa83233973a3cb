"""A real model as an engineer brings it: gymnasium's walker2d with a 40 N push on the torso. The
push's arrow is one a person sees (the automatic scale makes the largest arrow about a quarter of
the model); after the walker has fallen, *Use current as initial* makes that pose the start, and
Reset returns the view to it at t = 0. Real input only (clicks on the panel's buttons); checks are
pixels of the 3D view and the panel's text."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def walker2d() -> Path:
    """gymnasium's walker2d model file (its assets; gymnasium itself is not imported)."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("gymnasium is not installed (scripts/test.sh installs it)")
    return Path(spec.submodule_search_locations[0]) / "envs" / "mujoco" / "assets" / "walker2d_v5.xml"


SCENARIO = """model = "{model}"

[[loads]]
name = "push"
kind = "force"
at = "body:torso"
vector = [40.0, 0.0, 0.0]
"""


def view(desktop: Desktop, app: App, name: str, ok=lambda px: True, *, what: str) -> np.ndarray:
    """The 3D view as a person sees it once it has stopped changing and ``ok`` holds for it (a
    software-rendered viewer may draw the reset pose a second after the panel says t = 0); a
    screenshot of the whole screen is kept under ``name``."""
    px = desktop.still_view(app.viewer, lambda rgb: ok(rgb.astype(int)), what=what).astype(int)
    desktop.screenshot(name)
    return px


def arrow_mask(px: np.ndarray) -> np.ndarray:
    """Pixels of the force arrows' emerald green (#10b981, shaded): green well above red and blue."""
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (g > 90) & (g > r + 60) & (g > b + 25)


def walker_mask(px: np.ndarray) -> np.ndarray:
    """Pixels of the walker's purple legs (rgba .7 .3 .6, shaded)."""
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (r > g + 40) & (b > g + 25)


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_a_40_newton_push_on_walker2d_is_a_visible_arrow_and_the_fallen_pose_becomes_the_start(tmp_path, size):
    tag = f"{size[0]}x{size[1]}"
    (tmp_path / "walker.toml").write_text(SCENARIO.format(model=walker2d().as_posix()))
    desktop = Desktop(*size)
    app = App(desktop, tmp_path / "walker.toml", home=tmp_path)
    try:
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : walker2d", what="walker2d to open")
        # it falls at once: paused and reset, it stands as it opened (the view framed it so)
        app.click("Pause")
        wait_for(lambda: app.visible("Play"), what="the run to pause")
        app.click("Reset")
        wait_for(lambda: app.text(r"t = +0\.000 s.*", offscreen=True), what="t = 0 after Reset")
        px = view(desktop, app, f"walker_arrow_{tag}", lambda px: arrow_mask(px).mean() > 0.001, what="the arrow drawn")
        arrow = arrow_mask(px)
        ys, xs = np.nonzero(arrow)
        assert arrow.mean() > 0.001, f"the arrow covers {arrow.mean():.5f} of the view"
        legs = walker_mask(px)
        ly, lx = np.nonzero(legs)
        assert legs.mean() > 0.002  # the walker is in view too
        # 40 N along +x: a horizontal arrow about a quarter of the walker's size (1.5 m), so
        # a fifth of its legs' height on screen at least, and longer than its head is wide
        assert xs.max() - xs.min() > 0.2 * (ly.max() - ly.min()), (xs.min(), xs.max(), ly.min(), ly.max())
        assert xs.max() - xs.min() > 1.5 * (ys.max() - ys.min())

        app.click("Play")
        # the walker falls; paused there, its pose becomes the start
        app.run_for(1.5)
        app.click("Pause")
        wait_for(lambda: app.visible("Play"), what="the run to pause")
        # the pose differs from the start (a software-rendered view on a busy machine may draw its
        # next frame seconds later: until then it holds the last one still)
        fallen = walker_mask(
            view(
                desktop,
                app,
                f"walker_fallen_{tag}",
                lambda px: (walker_mask(px) & ~legs).mean() > 0.002,
                what="the fallen walker, not where it stood",
            )
        )
        app.click("Use current as initial")
        wait_for(
            lambda: app.text(r"info: the state at t = [0-9.]+ s is the rig's \[initial\] now .*"), what="Status's line"
        )
        app.click("Play")
        app.run_for(0.5)
        app.click("Pause")
        wait_for(lambda: app.visible("Play"), what="the run to pause again")
        app.click("Reset")
        wait_for(lambda: app.text(r"t = +0\.000 s.*", offscreen=True), what="t = 0 after Reset")
        again = walker_mask(
            view(
                desktop,
                app,
                f"walker_reset_{tag}",
                lambda px: (walker_mask(px) & fallen).sum() > 0,
                what="the reset view",
            )
        )
        overlap = (again & fallen).sum() / max(1, (again | fallen).sum())
        assert overlap > 0.8, f"the view after Reset overlaps the fallen pose by {overlap:.2f}"
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
