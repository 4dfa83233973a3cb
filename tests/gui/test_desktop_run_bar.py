"""The run bar under the menu bar stays in view however far the controls are scrolled: Pause,
Step, Reset and REC work from it, the time beside them, and Status says the recording stopped
only once its file holds the rows it names; the recording dropped on the 3D view replays with its
speed on the bar; on a large screen the plots get a third of the panel's width or more."""

from __future__ import annotations

import pytest

from tests.gui.desktop import App, Desktop, read_recording
from tests.waiting import wait_for

BAR = ("Pause", "Step", "Reset", "REC")


def _time(app: App) -> float:
    found = wait_for(lambda: app.text(r"t = -?[0-9]+\.[0-9]{3} s"), what="the run bar's time")
    return float(found["text"].split()[2])


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_the_run_bar_stays_in_view_and_pauses_steps_resets_and_records(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "robot_arm", home=tmp_path)
    try:
        app.widget("Keys")  # the controls scrolled to their last section, as a person scrolls down
        app.click("Keys")
        app.widget("Keys")
        for label in BAR:
            hit = next((it for it in app.items() if it["label"] == label), None)
            assert hit is not None and not hit.get("offscreen"), (label, hit)
            assert hit["rect"][1] < 80, hit  # just under the menu bar
        app.click("Pause")
        wait_for(lambda: app.widget("Play"), what="Play on the bar (paused)")
        t0 = _time(app)
        app.click("Step")
        wait_for(lambda: _time(app) == pytest.approx(t0 + 0.002, abs=1e-9), what="one 2 ms step")
        app.click("Reset")
        wait_for(lambda: _time(app) == 0.0, what="t = 0.000 s after Reset")
        app.click("REC")
        app.click("Play")
        wait_for(lambda: app.widget("● REC"), what="the bar saying it records")
        app.run_for(3.0)  # a replay of 3 s: time to read its speed on the bar
        desktop.screenshot(f"run_bar_recording_{size[0]}x{size[1]}")
        app.click("● REC")
        wait_for(lambda: app.widget("REC"), what="recording stopped")
        rec = tmp_path / "work" / "runs" / "robot_arm.parquet"
        # "recording stopped" is said once the file is there, with the rows it holds
        said = wait_for(lambda: app.text(r"info: recording stopped: \d+ rows saved to .*"), what="recording stopped")
        assert said["text"].startswith("info: recording stopped: ") and str(rec) in said["text"], said
        df = read_recording(rec)
        assert df is not None and f": {df.height} rows saved to " in said["text"], (said, df)
        span = df["time"].max() - df["time"].min()
        assert df["time"].min() < 0.05 and span >= 3.0, (df["time"].min(), span)  # recorded from the reset
        # the recording dropped on the 3D view replays at its recorded speed, which the bar says
        app.drop(rec)
        bar = wait_for(  # once the 3D view has the model: about the recorded speed (1.00x)
            lambda: (
                (hit := app.text(r"replay [0-9]+\.[0-9]{2}x real time"))
                and float(hit["text"].split()[1][:-1]) >= 0.5
                and hit
            ),
            what="the replay's speed on the bar",
        )
        desktop.screenshot(f"run_bar_replay_{size[0]}x{size[1]}")
        assert bar["rect"][1] < 80, bar  # on the bar, under the menu bar
        if size[0] >= 1920:
            panel_w = desktop.client_rect(app.panel)[2]
            plot = wait_for(lambda: next((it for it in app.items() if it["type"] == "mvPlot"), None), what="a plot")
            assert plot["rect"][2] >= panel_w / 3, (plot["rect"], panel_w)
            assert plot["legend"] != "hidden", plot  # three joint angles: their names across the plot
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
