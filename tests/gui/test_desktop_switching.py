"""Opening another rig as a person does (the panel's Bundled rigs list) leaves nothing of the
previous one behind: Ctrl+E records what the Recording form shows for the new rig, the filter
and search typed for the old one are gone, there is no snapshot to restore until one is taken,
a rig opened after a replay runs, and the first frame of the new model shows neither the old
camera nor the old rig's drawings. Screenshots: tests/artifacts/switching_*.png."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import mediapy
import numpy as np
import polars as pl

from tests.gui.desktop import ARTIFACTS, App, Desktop, read_recording
from tests.gui.frames import Frame, FrameGrabber
from tests.waiting import wait_for

RATE = "rate (samples/s, empty: every step)"
SEARCH = "search sites / bodies / geoms"
THRUSTERS = {"joints", "bodies", "sensors", "loads", "proximities", "params", "energy"}
"""The signal groups of thruster's [recording] (robot_arm's have no loads or proximities)."""
GROUPS = ("joints", "bodies", "sensors", "actuators", "loads", "proximities", "params", "contacts", "energy")


def _groups(df: pl.DataFrame) -> set[str]:
    return {c.split("/")[0].lower() for c in df.columns[2:]}


def _step(df: pl.DataFrame) -> float:
    return float(df["time"].diff().drop_nulls().median())


def _texts(app: App, pattern: str) -> list[str]:
    return [it["text"] for it in app.items() if re.search(pattern, it.get("text", ""))]


def _settled(app: App, label: str) -> tuple[int, int, int, int]:
    """Where ``label`` is once the panel's layout has settled (texts filled in after opening a
    rig move what is below them)."""

    def still() -> tuple[int, int, int, int] | None:
        before = app.widget(label)
        time.sleep(0.5)  # the layout holds still this long: settled
        return before if app.widget(label) == before else None

    return wait_for(still, what=f"{label} to stay in place", timeout=20)


def _press(app: App, label: str) -> None:
    """Click the widget labelled ``label`` near its left end, once the layout has settled: a
    narrow input's or a checkbox's rectangle takes in its label, and a layout still moving would
    take the click elsewhere."""
    x, y, w, h = _settled(app, label)
    app.desktop.x("xdotool", "mousemove", "--sync", str(x + 12), str(y + h // 2), check=True)
    app.rest()  # the panel sees the pointer over the widget before the click
    app.desktop.x("xdotool", "click", "1", check=True)
    app.redrawn(2, timeout=3.0)  # the focus change and the panel's callbacks settle


def _type_into(app: App, label: str, text: str) -> None:
    """Replace what the input labelled ``label`` holds with ``text``, typed (clicked and typed
    again once, as a person would, when a panel busy starting took the first click elsewhere)."""
    for attempt in range(2):
        _press(app, label)
        app.replace_text(text)
        try:
            wait_for(lambda: app.value(label) == text, what=f"'{text}' in {label}", timeout=6)
            return
        except AssertionError:
            if attempt:
                raise


def _scroll_to(app: App, label: str) -> None:
    """Scroll the controls from the top, one wheel notch at a time, until ``label`` shows: slower
    than ``App.widget`` but it never scrolls past a widget while a busy panel redraws late."""
    px, py, _, _ = app.desktop.client_rect(app.panel)
    app.desktop.x("xdotool", "mousemove", "--sync", str(px + 120), str(py + 120), check=True)
    app.desktop.x("xdotool", "click", "--repeat", "60", "--delay", "5", "4", check=True)
    for _ in range(60):
        app.redrawn(2)  # a widget map from after the wheel, not the frame it came in
        if app.visible(label):
            return
        app.desktop.x("xdotool", "click", "5", check=True)
    shot = app.desktop.screenshot("switching_not_found")
    raise AssertionError(f"widget '{label}' not found on the panel (see {shot})")


def _open_bundled(app: App, name: str) -> None:
    app.reveal("Bundled rigs", name)
    app.click(name)
    wait_for(lambda: app.desktop.title(app.viewer) == f"MuJoCo : {name}", what=f"{name} to open")


def _ticked(app: App, group: str) -> bool:
    box = next(it for it in app.items() if it["label"] == group and it["type"] == "mvCheckbox")  # the form's: first
    return box["value"] == "True"


def test_ctrl_e_records_what_the_recording_form_shows_for_the_rig_now(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, "robot_arm", home=tmp_path)
    runs = tmp_path / "work" / "runs"
    try:
        _type_into(app, RATE, "50")  # robot_arm recorded from its form at 50 samples/s
        app.click("Start recording")
        app.run_for(0.3)  # 15 samples at 50/s
        app.click("Stop recording")
        arm = wait_for(lambda: read_recording(runs / "robot_arm.parquet"), what="robot_arm's recording", timeout=60)
        assert abs(_step(arm) - 0.02) < 1e-9 and "loads" not in _groups(arm)
        _open_bundled(app, "thruster")
        # the form shows thruster's own [recording]
        wait_for(
            lambda: app.value("path") == str(runs / "thruster.parquet"), what="thruster's recording path", timeout=20
        )
        assert app.value(RATE) == ""
        assert {g for g in GROUPS if _ticked(app, g)} == THRUSTERS
        app.key("ctrl+e")  # in the 3D view
        app.run_for(0.3)
        app.key("ctrl+e")
        written = wait_for(
            lambda: sorted({p.name for p in runs.glob("*.parquet")} - {"robot_arm.parquet"}),
            what="Ctrl+E's recording",
            timeout=60,
        )
        assert written == ["thruster.parquet"], f"Ctrl+E recorded to {written}"
        df = wait_for(lambda: read_recording(runs / "thruster.parquet"), what="thruster's recording", timeout=60)
        assert _groups(df) == THRUSTERS, df.columns
        assert abs(_step(df) - 0.002) < 1e-9, _step(df)  # every 2 ms step: no rate in thruster's [recording]
        assert app.value("path") == str(runs / "thruster.parquet") and app.value(RATE) == ""
        # the form edited: Ctrl+E records exactly that
        _type_into(app, RATE, "100")
        _press(app, "energy")
        wait_for(lambda: not _ticked(app, "energy"), what="energy unticked")
        app.key("ctrl+e")
        app.run_for(0.3)
        desktop.screenshot("switching_ctrl_e_1920x1080")
        app.key("ctrl+e")
        edited = wait_for(
            lambda: read_recording(runs / "thruster-2.parquet"), what="the edited form's recording", timeout=60
        )
        assert _groups(edited) == THRUSTERS - {"energy"} and abs(_step(edited) - 0.01) < 1e-9
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_switching_forgets_the_snapshot_filter_search_frozen_plots_and_forms(tmp_path):
    desktop = Desktop(1280, 800)
    app = App(desktop, "spring_mass", home=tmp_path)  # the spring-mass rig
    try:
        _settled(app, "Snapshot")
        app.click("Snapshot")
        wait_for(lambda: _texts(app, r"^snapshot-[0-9-]+\.npz$"), what="the snapshot's name beside Restore")
        _type_into(app, "filter signals", "slide")
        _scroll_to(app, SEARCH)
        _type_into(app, SEARCH, "tip")
        _press(app, "pause")  # the plots frozen
        wait_for(lambda: app.value("pause") == "True", what="the plots paused")
        app.click("Requirements")
        _type_into(app, "requirement name", "gap_ok")  # typed for this rig, never added
        app.click("Metrics")
        _type_into(app, "metric name", "peak_gap")
        _scroll_to(app, "Model")
        _open_bundled(app, "clearance")
        wait_for(lambda: app.value("clearance") == "True", what="the panel to show clearance as the open rig")
        assert app.value("filter signals") == "", "the plot filter of the old rig hides the new signals"
        _scroll_to(app, SEARCH)
        assert app.value(SEARCH) == "", "the Loads search of the old rig narrows the new points to none"
        assert app.value("pause") == "False", "the plots stay frozen at the old rig's time"
        for form in ("requirement name", "metric name"):
            app.widget(form)  # scrolled to, as a person looks
            assert app.value(form) == "", f"the {form} typed for the old rig is still there"
        _scroll_to(app, "Model")
        labels = {it["label"] for it in app.items()}
        assert "paddle_hinge" in labels, "the new signals are not in the tree"
        _scroll_to(app, "Fit view")  # Restore, the text beside it and the run state above it show too
        assert _texts(app, r"^no snapshot of this rig yet$"), "Restore still offers the old rig's snapshot"
        assert _texts(app, r"^running$")
        app.click("Restore")  # greyed: nothing happens
        app.key("ctrl+g")
        wait_for(lambda: _texts(app, r"^info: no snapshot of this rig to restore yet"), what="the one line in Status")
        assert not _texts(app, r"^error: "), _texts(app, r"^error: ")
        desktop.screenshot("switching_clearance_1280x800")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_a_rig_opened_after_a_replay_runs(tmp_path):
    rec = tmp_path / "rec.parquet"
    subprocess.run(
        [sys.executable, "-m", "mjrig", "run", "spring_mass", "--duration", "0.3", "--out", str(rec)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    desktop = Desktop(1920, 1080)
    app = App(desktop, rec, home=tmp_path)
    try:
        wait_for(lambda: _texts(app, r"^paused$"), what="the replay to end (paused)", timeout=60)
        _open_bundled(app, "thruster")
        wait_for(lambda: _texts(app, r"^running$"), what="thruster to run", timeout=10)
        t0 = float(_texts(app, r"^t = ")[0].split()[2])
        wait_for(
            lambda: float(_texts(app, r"^t = ")[0].split()[2]) > t0 + 0.3, what="thruster's time to advance", timeout=10
        )
        desktop.screenshot("switching_after_replay_1920x1080")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


# --- the first frame of the new model --------------------------------------------------------------


def _loading(f: Frame) -> bool:
    """MuJoCo's "LOADING..." label (white, top centre): the frames drawn while the model swaps."""
    h, w, _ = f.rgb.shape
    band = f.rgb[0:45, w // 2 - 110 : w // 2 + 110]
    return int((band.min(axis=2) > 235).sum()) > 50


def _after_loading(frames: list[Frame]) -> int:
    """How many frames titled thruster came after the last "LOADING..." one (0: none seen yet)."""
    frames = list(frames)
    loading = [i for i, f in enumerate(frames) if _loading(f)]
    return sum(f.title == "MuJoCo : thruster" for f in frames[loading[-1] + 1 :]) if loading else 0


def _magenta(f: Frame) -> int:
    """Pixels in robot_arm's tracer colour (1, 0.2, 0.8): its tool's trail and dot."""
    r, g, b = (f.rgb[..., i].astype(int) for i in range(3))
    return int(((r > 170) & (b > 110) & (g < 110) & (r > g + 80)).sum())


def _panels(f: Frame) -> tuple[int, np.ndarray]:
    """Thruster's dark-blue solar panels: (pixels, centre as a fraction of the width and height)."""
    r, g, b = (f.rgb[..., i].astype(int) for i in range(3))
    mask = (r < 75) & (g < 100) & (b > 105) & (b < 210) & (b > r + 60) & (b > g + 45)
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    return int(mask.sum()), np.array([xs.mean() / w, ys.mean() / h]) if len(xs) else np.array([np.nan, np.nan])


def test_the_first_frame_of_the_new_model_shows_nothing_of_the_old_rig(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, "robot_arm", home=tmp_path)  # its tracer draws the tool's path in magenta
    grabber: FrameGrabber | None = None
    try:
        app.reveal("Bundled rigs", "thruster")
        # The arm moves for the first 6.4 s of its run, then holds still (its trail shrinks to a
        # dot): the run starts again from its start, so the arm is moving at the swap.
        app.key("ctrl+BackSpace")
        # the tool's trail is drawn: a first frame showing the old rig would show it
        wait_for(lambda: _magenta(Frame(0.0, "", desktop.grab(app.viewer))) > 300, what="robot_arm's trail", timeout=60)
        grabber = FrameGrabber(desktop.display, app.viewer).start()
        # A software-rendered viewer on a busy machine may draw a frame a second: a few will do.
        wait_for(lambda: len(grabber.frames) >= 2, what="frames of robot_arm before the swap", timeout=60)
        app.click("thruster")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : thruster", what="thruster to open")
        wait_for(
            lambda: _after_loading(grabber.frames) >= 4, what="four frames of thruster after the swap", timeout=120
        )
        frames = grabber.stop()
        swapping = [i for i, f in enumerate(frames) if _loading(f)]
        assert swapping, f"the swap was not seen ({len(frames)} frames in {grabber.grabs} grabs)"
        new = [f for f in frames[swapping[-1] + 1 :] if f.title == "MuJoCo : thruster"]
        assert len(new) >= 3, f"{len(new)} frames of thruster"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        mediapy.write_image(str(ARTIFACTS / "switching_first_frame.png"), new[0].rgb)
        mediapy.write_image(str(ARTIFACTS / "switching_second_frame.png"), new[1].rgb)
        desktop.screenshot("switching_thruster_1920x1080")
        assert all(_magenta(f) < 20 for f in new[:3]), [_magenta(f) for f in new[:3]]  # no old tracer
        (n1, c1), (n2, c2) = _panels(new[0]), _panels(new[1])
        # the first frame is framed as the app frames the model: the craft in the middle of the
        # view, and where it is a frame later -- when that frame came soon after (the craft turns
        # as it flies: a starved renderer's next frame may be a second of flight later)
        assert n1 > 500 and np.abs(c1 - 0.5).max() < 0.08, (n1, c1)
        if new[1].t - new[0].t < 0.5:
            assert 0.6 < n1 / max(n2, 1) < 1.6 and np.abs(c1 - c2).max() < 0.06, (n1, c1, n2, c2)
    finally:
        if grabber is not None:
            grabber.stop()
        assert app.close() == 0, app.output()
        desktop.close()
