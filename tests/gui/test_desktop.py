"""The desktop as a person meets it: real windows on a managed screen, real clicks, keys, drops.

Every test starts the app in its own process on an Xvfb screen managed by openbox and drives
it with xdotool and XDND only; checks are what a person sees (titles, window frames, pixels,
files written). Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import mujoco
import numpy as np
import polars as pl
import pytest

from tests.gui.desktop import ARTIFACTS, REPO, App, Desktop
from tests.waiting import wait_for

MODELS = REPO / "models"

STATIC = """<mujoco model="still">
  <worldbody>
    <light pos="0 0 3"/>
    <geom type="plane" size="2 2 .1" rgba=".8 .8 .8 1"/>
    <body name="box" pos="0 0 .3"><geom type="box" size=".2 .1 .3" rgba=".2 .4 .9 1"/><site name="top" pos="0 0 .3"/></body>
  </worldbody>
</mujoco>"""


@pytest.fixture(params=[(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def desktop(request):
    d = Desktop(*request.param)
    yield d
    d.close()


@pytest.fixture
def laptop():
    d = Desktop(1280, 800)
    yield d
    d.close()


def _overlap(a, b) -> bool:
    return not (a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1])


def _on_screen(r, size) -> bool:
    return r[0] >= 0 and r[1] >= 0 and r[0] + r[2] <= size[0] and r[1] + r[3] <= size[1]


def test_windows_tile_the_screen_and_remember_where_the_user_put_them(desktop, tmp_path):
    app = App(desktop, home=tmp_path)
    try:
        seen: list = []

        def placed():  # both frames where they were the last two looks: the windows are placed
            seen.append((desktop.frame_rect(app.viewer), desktop.frame_rect(app.panel)))
            return len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3] and seen[-1]

        v, p = wait_for(placed, what="the windows to be placed", every=0.2)
        w, h = desktop.size
        name = f"desktop_{w}x{h}"
        desktop.screenshot(name)
        assert _on_screen(v, desktop.size), f"viewer frame {v} leaves the {w}x{h} screen"
        assert _on_screen(p, desktop.size), f"panel frame {p} leaves the {w}x{h} screen"
        assert not _overlap(v, p), f"viewer {v} and panel {p} overlap"
        assert v[2] * v[3] + p[2] * p[3] > 0.85 * w * h, "the windows leave much of the screen unused"
        # The user makes the panel shorter and moves it down; the next start puts it back there.
        x, y, pw, ph = desktop.client_rect(app.panel)
        desktop.x("xdotool", "windowsize", str(app.panel), str(pw), str(ph - 200), check=True)
        desktop.x("xdotool", "windowmove", str(app.panel), str(x), str(y + 40), check=True)
        moved = wait_for(
            lambda: desktop.client_rect(app.panel)[1] >= y + 30 and desktop.client_rect(app.panel),
            what="the panel to move",
        )
        app.redrawn(2)  # the panel notes its placement where it writes its widget map, every 5th frame
    finally:
        assert app.close() == 0, app.output()
    again = App(desktop, home=tmp_path)
    try:
        now = desktop.client_rect(again.panel)
        assert all(abs(a - b) <= 3 for a, b in zip(now, moved)), (now, moved)
    finally:
        again.close()


def test_dropping_models_and_scenarios_on_the_viewer_opens_them(laptop, tmp_path):
    work = tmp_path / "files"
    work.mkdir()
    for f in MODELS.glob("bumper_drop.*"):
        shutil.copy(f, work / f.name)
    still = work / "still.xml"
    still.write_text(STATIC)
    mjb = work / "still_binary.mjb"
    mujoco.mj_saveModel(mujoco.MjModel.from_xml_string(STATIC.replace('"still"', '"still_binary"')), str(mjb), None)
    broken = work / "broken.xml"
    broken.write_text("<mujoco><worldbody><geom type='nonsense'/></worldbody></mujoco>")
    app = App(laptop, home=tmp_path)
    try:
        # the default rig (the view names it once it has drawn it: a frame after it opened)
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : shaker", what="the default rig's title", timeout=10)
        app.drop(still)
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : still", what="the dropped .xml to open")
        app.drop(mjb)
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : still_binary", what="the dropped .mjb to open")
        app.drop(work / "bumper_drop.toml")
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : bumper_drop", what="the dropped scenario to open")
        # The scenario came with its rig: a recording (started with the key) has its loads.
        app.key("ctrl+e")
        app.run_for(0.2)
        app.key("ctrl+e")
        rec = wait_for(lambda: next(iter((work / "runs").glob("*.parquet")), None), what="the recording")
        cols = wait_for(lambda: _columns(rec), what="a readable recording")
        assert "Loads/bumper:fz" in cols and "Loads/press:fz" in cols, cols
        # A broken file: one error line, the model before it keeps running.
        before = app.output()
        app.drop(broken)
        wait_for(lambda: "broken.xml" in app.output(), what="the error line")
        new = app.output()[len(before) :].strip().splitlines()
        errors = [ln for ln in new if "broken.xml" in ln]
        assert len(errors) == 1 and errors[0].startswith("mjrig: error:"), new
        time.sleep(0.5)  # nothing to wait for: time in which a wrong switch would show in the title
        assert laptop.title(app.viewer) == "MuJoCo : bumper_drop"
        laptop.screenshot("drop_broken_file")
        # ... and keeps running: a second recording has a second of new rows.
        app.key("ctrl+e")
        app.run_for(1.0)  # a second of rows (500 a second)
        app.key("ctrl+e")
        second = wait_for(
            lambda: len(list((work / "runs").glob("*.parquet"))) == 2 and sorted((work / "runs").glob("*.parquet"))[0],
            what="the second recording",
        )
        wait_for(lambda: _columns(second), what="a readable second recording")
        rows = pl.read_parquet(second)
        assert rows.height > 300 and "Loads/bumper:fz" in rows.columns
    finally:
        assert app.close() == 0, app.output()


def _drawn(rgb: np.ndarray) -> bool:
    """Whether the view shows a drawn frame of the scene: no "LOADING..." on black, and no part of
    the window the viewer has not drawn into since it was resized (X leaves it black or white)."""
    black = (rgb.max(axis=2) <= 10).mean()
    white = (rgb.min(axis=2) >= 250).mean()
    return black < 0.05 and white < 0.05


def _columns(path: Path) -> list[str] | None:
    try:
        return pl.read_parquet(path).columns
    except Exception:  # noqa: BLE001 - still being merged
        return None


def test_mjrig_keys_never_change_the_viewers_own_settings(laptop, tmp_path):
    model = tmp_path / "still.xml"
    model.write_text(STATIC)
    cfg = tmp_path / "config" / "mjrig"
    cfg.mkdir(parents=True)
    # A remapped key, and one MuJoCo already uses (refused with a warning).
    (cfg / "keys.toml").write_text('[keys]\nscreenshot = "ctrl+y"\nvideo = "w"\n')
    app = App(laptop, model, home=tmp_path, cwd=tmp_path / "work")
    try:
        assert "video = 'w': MuJoCo's viewer uses that key" in app.output(), app.output()
        # the base as the keys will find the view: raised and focused (a window over it, or a
        # frame drawn before the focus, would count as a change the key made)
        laptop.x("xdotool", "windowactivate", "--sync", str(app.viewer))
        # still for 3 s: a software-rendered view on a busy machine draws a frame a second or
        # less, so two equal grabs may be one frame while the view is still settling (the
        # lighter rendering for the CPU goes in after the first frames)
        base = laptop.still_view(app.viewer, _drawn, what="a still 3D view", still_s=3.0)
        for key in (
            "minus",
            "equal",
            "ctrl+r",
            "ctrl+f",
            "ctrl+k",
            "ctrl+e",
            "ctrl+e",
            "ctrl+v",
            "ctrl+v",
            "ctrl+y",
            "Right",
            "space",
            "ctrl+BackSpace",
            "space",
        ):
            app.key(key)  # returns once mjrig has the key
            app.redrawn(2)  # ... and has drawn the frames after it: the command is carried out
            # the view as it settles, not a frame on the way: MuJoCo's "LOADING..." shows while a
            # reload goes in (seconds on a busy machine, drawn from the old camera); a key that
            # changed a setting of the viewer's never gets back to the base
            seen = [base]

            def back(seen=seen):
                seen[0] = laptop.grab(app.viewer)
                return np.array_equal(seen[0], base)

            try:
                wait_for(back, what=f"the view after {key}", every=0.25, timeout=20)
            except AssertionError:
                pass
            now = seen[0]
            assert now.shape == base.shape, f"{key} resized the 3D view: {base.shape[1::-1]} -> {now.shape[1::-1]}"
            changed = int(np.count_nonzero(np.any(now != base, axis=2)))
            if changed:
                laptop.screenshot(f"keys_changed_view_{key}")
                import mediapy

                mediapy.write_image(ARTIFACTS / f"keys_changed_view_{key}_base.png", base)
            assert changed == 0, f"{key} changed {changed} pixels of the 3D view (screenshot keys_changed_view_{key})"
        # The comparison sees MuJoCo's own flags: plain S (once mjrig's "slower") toggles shadows.
        app.key("s")
        wait_for(
            lambda: np.count_nonzero(np.any(laptop.grab(app.viewer) != base, axis=2)) > 100,
            what="S to toggle the shadows",
            timeout=10,
        )
        runs = tmp_path / "work" / "runs"  # outputs go to the working folder
        assert len(list(runs.glob("screenshot-*.png"))) == 1, "Ctrl+Y (remapped) took no screenshot"
        wait_for(lambda: len(list(runs.glob("video-*.mp4"))) == 1, what=f"the Ctrl+V video\n{app.output()}")
        app.key("space")  # run again; a second video never replaces the first
        app.key("ctrl+v")
        app.run_for(0.5)  # half a second of video
        app.key("ctrl+v")
        wait_for(lambda: len(list(runs.glob("video-*.mp4"))) == 2, what="a second video beside the first")
        wait_for(lambda: len(list(runs.glob("*.parquet"))) == 1, what="the Ctrl+E recording")
    finally:
        assert app.close() == 0, app.output()


def test_recording_twice_from_the_panel_keeps_both_files(laptop, tmp_path):
    app = App(laptop, home=tmp_path)
    try:
        for _ in range(2):
            app.click("Start recording")
            wait_for(lambda: app.widget("Stop recording"), what="recording to start")
            app.run_for(0.2)
            app.click("Stop recording")
            wait_for(lambda: app.widget("Start recording"), what="recording to stop")
        runs = tmp_path / "work" / "runs"
        files = wait_for(
            lambda: sorted(p.name for p in runs.glob("*.parquet")) if len(list(runs.glob("*.parquet"))) == 2 else None,
            what="two recordings",
            timeout=30,
        )
        # the bundled rig's [recording] names the file; the second one gets a new name
        assert files == ["shaker-2.parquet", "shaker.parquet"], files
        for f in files:
            assert wait_for(lambda: _columns(runs / f), what=f"{f} readable")
    finally:
        assert app.close() == 0, app.output()
    assert not (MODELS / "runs").exists() or not any((MODELS / "runs").glob("recording*.parquet"))


def test_buttons_explain_themselves_on_hover(laptop, tmp_path):
    app = App(laptop, home=tmp_path)
    try:
        x, y, w, h = app.widget("Fit view")
        px, py, _, _ = laptop.client_rect(app.panel)
        laptop.x("xdotool", "windowactivate", "--sync", str(app.panel))  # hover shows in the focused window
        laptop.x("xdotool", "mousemove", "--sync", str(px + 5), str(py + 5), check=True)
        app.redrawn(2)  # drawn with the pointer away from every widget
        before = laptop.grab(app.panel)
        laptop.x("xdotool", "mousemove", "--sync", str(x + w // 2), str(y + h // 2), check=True)
        # the tooltip box opens just below and right of the pointer (after the pointer rests a while)
        ry, rx = y - py + h + 4, x - px + w // 2
        tip = lambda img: (before != img)[ry : ry + 30, rx : rx + 250].any(axis=2)  # noqa: E731
        after = wait_for(
            lambda: (lambda img: img if tip(img).sum() > 500 else None)(laptop.grab(app.panel)),
            what="the tooltip under 'Fit view'",
            timeout=10,
        )
        region = tip(after)
        laptop.screenshot("tooltip_fit_view")
        assert region.sum() > 500, (
            f"no tooltip under 'Fit view' ({int(region.sum())} pixels changed; "
            f"{int((before != after).any(axis=2).sum())} in the panel)"
        )
        laptop.screenshot("tooltip_fit_view")
    finally:
        assert app.close() == 0, app.output()


def test_a_video_of_a_paused_view_says_that_nothing_was_written(laptop, tmp_path):
    app = App(laptop, home=tmp_path)
    try:
        app.key("space")
        wait_for(lambda: app.widget("Play"), what="the run paused")  # as a person sees it did
        app.key("ctrl+v")
        wait_for(lambda: "mjrig: info: video recording to" in app.output(), what="the video started")
        app.key("ctrl+v")
        wait_for(lambda: "mjrig: warning: no video written" in app.output(), what="the warning")
        assert not list((tmp_path / "work" / "runs").glob("*.mp4"))
    finally:
        assert app.close() == 0, app.output()


LONG_JOINT = "slide_x_of_the_block_on_its_rail_named_at_length_to_make_a_long_message"


def test_a_diverging_run_says_so_in_full_and_reset_recovers(laptop, tmp_path):
    work = tmp_path / "files"
    work.mkdir()
    for f in MODELS.glob("spring_mass.*"):
        shutil.copy(f, work / f.name)
    model = work / "spring_mass.xml"  # a long joint name makes a message longer than the panel is wide
    model.write_text(model.read_text(encoding="utf-8").replace('"slide_x"', f'"{LONG_JOINT}"'), encoding="utf-8")
    scenario = work / "spring_mass.toml"
    scenario.write_text(
        scenario.read_text(encoding="utf-8").replace(
            "k = { value = 200.0, min = 0.0, max = 5000.0", "k = { value = 1e13, min = 0.0, max = 1e13"
        ),
        encoding="utf-8",
    )
    app = App(laptop, scenario, home=tmp_path)
    try:
        state = wait_for(
            lambda: next((it for it in app.items() if it.get("text", "").startswith("error: physics diverged")), None),
            what="the divergence message on the panel",
        )
        px, py, pw, ph = laptop.client_rect(app.panel)
        x, y, w, h = state["rect"]
        laptop.screenshot("divergence_message")
        # The whole message shows: it wraps inside the panel instead of running off its edge.
        assert LONG_JOINT in state["text"], state
        assert len(state["text"]) * 6 > pw, "the message is too short to test wrapping"
        assert 0 <= x and x + w <= pw, (state, pw)
        assert h > 25, f"one line only: {state}"
        assert "paused (reset to go on)" in app.output()
        app.click("Reset")
        wait_for(
            lambda: any(it.get("text", "").startswith("paused") for it in app.items(offscreen=True)),
            what="paused after Reset",
        )  # the Simulation readout, maybe scrolled out of view
    finally:
        assert app.close() == 0, app.output()
