"""One timeline for the 3D view and the plots, as a person uses it: drag the timeline slider
back, step with the keys, read the plotted value at the cursor, Play from there (a branch), and
replay the recording with ``mjrig RECORDING.parquet``."""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from tests.gui.desktop import App, Desktop, read_recording
from tests.waiting import wait_for


def _text(app: App, pattern: str):
    """The first text matching ``pattern``, in view or scrolled out of it (a readout a person scrolls to)."""
    return next((it for it in app.items(offscreen=True) if re.fullmatch(pattern, it.get("text", ""), flags=re.S)), None)


def _time(app: App) -> float:
    return float(_text(app, r"t = .*")["text"].split()[2])


def _end(app: App) -> float:
    """The newest kept instant (s), from the timeline's range text."""
    return float(_text(app, r"[0-9.]+ \.\.\. [0-9.]+ s .*")["text"].split()[2])


def _slider(app: App):
    px, py, _, _ = app.desktop.client_rect(app.panel)
    hit = next(it for it in app.items() if it["label"] == "timeline" and it["type"] == "mvSliderDouble")
    x, y, w, h = hit["rect"]
    return px + x, py + y, w, h


def _drag_to(app: App, fraction: float) -> None:
    """Press on the slider's grab, move along it and let go, as a person drags it."""
    x, y, w, h = _slider(app)
    frame = w - 70  # the slider's own frame; its label "timeline" sits to the right of it
    d = app.desktop
    d.x("xdotool", "mousemove", "--sync", str(x + int(frame * 0.95)), str(y + h // 2), check=True)
    d.x("xdotool", "mousedown", "1", check=True)
    for f in np.linspace(0.95, fraction, 8):
        d.x("xdotool", "mousemove", "--sync", str(x + int(frame * f)), str(y + h // 2), check=True)
        app.redrawn(2, timeout=3.0)  # the panel sees the pointer on its way
    d.x("xdotool", "mouseup", "1", check=True)
    seen: list[float] = []

    def settled() -> bool:
        """Paused, with the same time in two widget maps in a row: the drag is taken in."""
        items = app.items(offscreen=True)  # the readouts may be scrolled out of view
        paused = any(it.get("text") == "paused" for it in items)
        t = next((it["text"] for it in items if it.get("text", "").startswith("t = ")), None)
        still = paused and t is not None and seen[-1:] == [t]
        seen.append(t)
        return still

    wait_for(settled, what="the run paused at the dragged instant", timeout=20)


def test_scrubbing_back_shows_that_instant_and_play_branches_from_it(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(desktop, "spring_mass", home=tmp_path)  # the spring-mass rig
    runs = tmp_path / "work" / "runs"
    try:
        app.tick("gap", "distance")
        app.click("Start recording")
        t_recorded = _time(app)
        app.run_for(3.0)  # a recorded stretch to drag back into
        start_text = _text(app, r"[0-9.]+ \.\.\. [0-9.]+ s .*")["text"].split()
        first, end = float(start_text[0]), float(start_text[2])
        # back into the middle of the recorded stretch, however long the clicks before it took
        _drag_to(app, (t_recorded + 0.5 * (end - t_recorded) - first) / (end - first))
        wait_for(lambda: _text(app, "paused"), what="the run to pause when the timeline is dragged")
        shown = wait_for(
            lambda: _text(app, r"at [0-9.]+ s:.*gap:distance [-0-9.e]+ m.*"), what="the value at the cursor"
        )
        t_back = float(shown["text"].split()[1])
        value_back = float(re.search(r"gap:distance ([-0-9.e]+) m", shown["text"]).group(1))
        assert abs(_time(app) - t_back) < 5e-4  # the readout (ms) says the same instant
        assert t_recorded < t_back < _end(app) - 0.3, (t_recorded, t_back)
        # drawn, not a blank grab of a window being redrawn (held still too, and then nothing matched it)
        desktop.still_view(app.viewer, lambda rgb: float(rgb.std()) > 10, what="the scrubbed instant drawn")
        desktop.screenshot("timeline_scrubbed")
        # The view compared with is the one after a step back and forward again: the first frame
        # after a drag has been seen held still for seconds with the camera and lighting of the
        # viewer's start (a software renderer on a loaded machine, once in a few runs).
        app.key("Left")
        app.key("Right")
        wait_for(lambda: abs(_time(app) - t_back) < 5e-4, what="the instant after a step back and forward")
        view_back = desktop.still_view(app.viewer, lambda rgb: float(rgb.std()) > 10, what="the instant drawn again")
        app.key("Left")
        app.key("Left")
        app.key("Right")
        app.key("Right")  # two instants back and forward again: the same instant, the same view
        seen: list[tuple[float, float]] = []  # (s off the instant, fraction of the view differing)

        def back_again() -> bool:
            diff = np.abs(desktop.grab(app.viewer).astype(int) - view_back.astype(int)).max(axis=2) > 24
            seen[:] = [(abs(_time(app) - t_back), float(diff.mean()))]
            return seen[0][0] < 5e-4 and seen[0][1] < 0.003

        try:  # a software renderer on a loaded machine redraws the view seconds late
            wait_for(back_again, what="the same instant and view", timeout=30)
        except AssertionError:
            desktop.screenshot("timeline_not_back")
            off, differs = seen[0]
            raise AssertionError(
                f"not back at {t_back} s: {off:.4f} s off it, {differs:.2%} of the view differs"
            ) from None
        assert abs(_time(app) - t_back) < 5e-4  # the readout shows ms
        again = desktop.grab(app.viewer)
        assert (np.abs(again.astype(int) - view_back.astype(int)).max(axis=2) > 24).mean() < 0.003  # and stays
        app.key("space")  # Play from the past instant: a branch
        app.run_for(0.5)
        app.click("Stop recording")
        branch = wait_for(
            lambda: next(iter(runs.glob("*-branch-*.parquet")), None), what="the branch recording", timeout=30
        )
        main = runs / "spring_mass.parquet"
        wait_for(main.exists, what="the first recording")
        first = pl.read_parquet(main)
        row = first.filter((pl.col("time") - t_back).abs() < 1e-6)  # a row at every 1 ms step
        assert len(row) == 1, f"no recorded row at t = {t_back}"
        # The plots keep 200 samples/s: the value at the cursor is interpolated between two of them
        # (for this 2.25 Hz, 0.1 m swing, within 1e-4 m of the state itself).
        assert abs(row["Proximities/gap:distance"][0] - value_back) < 1e-4, (row, value_back)
        b = wait_for(lambda: read_recording(branch), what="the branch readable")
        assert b["time"][0] == row["time"][0], (b["time"][0], row["time"][0])  # the branch starts there
        meta = pq.read_schema(branch).metadata
        said = json.loads(meta[b"mjrig.branched_from"])
        assert said["time"] == row["time"][0] and said["recording"].endswith("spring_mass.parquet"), said
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
    # the recording replays in the app, on the same timeline
    desktop = Desktop(1920, 1080)
    app = App(desktop, main, home=tmp_path / "replay")
    try:
        wait_for(lambda: desktop.title(app.viewer).endswith("spring_mass"), what="the replayed model")
        wait_for(lambda: _text(app, r"[0-9.]+ \.\.\. [0-9.]+ s .*"), what="the replay's timeline")
        _drag_to(app, 0.3)
        t0, t1 = float(first["time"][0]), float(first["time"][-1])  # the recording's own span
        assert t0 <= _time(app) < t0 + 0.6 * (t1 - t0), (_time(app), t0, t1)
        desktop.screenshot("timeline_replay")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
