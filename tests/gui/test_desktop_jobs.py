"""Long jobs say so: a fit shows how far it got beside the Status title with a Cancel that stops
it; closing the panel while one runs asks ("Stop it and quit" / "Wait for it"), and stopping quits
at once. A slow fit: two params against 40 s of bench data (each evaluation a 40 s run)."""

from __future__ import annotations

import re
import time

import pytest

from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_measured import run_fit
from tests.unit.test_measured import CSV_ENTRY, csv_bench, scenario
from tests.waiting import wait_for


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_a_fit_shows_its_progress_is_cancelled_and_quitting_during_one_asks(tmp_path, size):
    csv_bench(tmp_path, duration=40.0)  # slow enough that the second fit still runs when the panel closes
    path = scenario(tmp_path, "\n" + CSV_ENTRY, k=160.0, c=5.0)
    path.write_text(path.read_text().replace("duration = 2.0", "duration = 4.0", 1))  # a bench up to 40 s
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        run_fit(app, "fit k [N/m]", "fit c [N·s/m]")
        progress = wait_for(lambda: app.text(r"a fit: \d+ evaluations?"), what="the fit's progress", timeout=60)
        assert progress["rect"][1] > desktop.client_rect(app.panel)[3] // 2  # by the Status title, low down
        desktop.screenshot(f"fit_running_{size[0]}x{size[1]}")
        app.click("Cancel")
        said = wait_for(lambda: app.text(r"info: fit cancelled after \d+ evaluations?"), what="the fit cancelled")
        assert said and not app.visible("Cancel") and not app.text(r"a fit: .*")
        app.click("Run fit")  # again, and close the panel while it runs
        wait_for(lambda: app.text(r"a fit: \d+ evaluations?"), what="the second fit's progress", timeout=60)
        app.press_close()
        asked = r"Running: a fit: \d+ evaluations?\. Quitting stops it.*"
        try:
            wait_for(lambda: app.text(asked), what="the question naming the fit under way", timeout=10)
        except AssertionError:
            raise AssertionError(
                f"no {asked!r} among {[it.get('text') for it in app.items() if it.get('text')]}"
            ) from None
        assert app.visible("Wait for it") and not app.visible("Save scenario first...")
        desktop.screenshot(f"quit_during_fit_{size[0]}x{size[1]}")
        app.click("Wait for it")  # the fit goes on
        wait_for(lambda: not app.visible("Stop it and quit"), what="the question gone")
        n = int(re.search(r"(\d+) evaluation", app.text(r"a fit: \d+ evaluations?")["text"]).group(1))
        wait_for(
            lambda: (lambda t: t and int(re.search(r"(\d+) evaluation", t["text"]).group(1)) > n)(
                app.text(r"a fit: \d+ evaluations?")
            ),
            what="the fit going on after Wait",
            timeout=60,
        )
        app.press_close()
        t0 = time.monotonic()
        app.click("Stop it and quit")
        assert app.proc.wait(30) == 0, app.output()
        print(f"exit {time.monotonic() - t0:.2f} s after Stop it and quit")
    finally:
        if app.proc.poll() is None:
            app.quit_discarding()
        desktop.close()


BOX = '<mujoco model="box"><worldbody><body><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>'


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_switching_rigs_while_a_fit_runs_asks_and_each_answer_does_what_it_says(tmp_path, size):
    """A slow fit (as above) under way while a model is dropped on the view and a bundled rig is
    picked: the question names the fit; Cancel keeps the rig, "Keep it running and open" opens
    the model with the fit going on, "Stop it and open" stops it and opens."""
    tag = f"{size[0]}x{size[1]}"
    csv_bench(tmp_path, duration=40.0)
    path = scenario(tmp_path, "\n" + CSV_ENTRY, k=160.0, c=5.0)
    path.write_text(path.read_text().replace("duration = 2.0", "duration = 4.0", 1))
    box = tmp_path / "box.xml"
    box.write_text(BOX)
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    asked = r"Running: a fit: \d+ evaluations?\. To open {}: stop it .*"
    try:
        rig = wait_for(lambda: (t := desktop.title(app.viewer)).startswith("MuJoCo : ") and t, what="the rig open")
        run_fit(app, "fit k [N/m]", "fit c [N·s/m]")
        wait_for(lambda: app.text(r"a fit: \d+ evaluations?"), what="the fit's progress", timeout=60)
        app.drop(box)
        wait_for(lambda: app.text(asked.format(r"box\.xml")), what="the question naming the fit", timeout=15)
        assert app.visible("Stop it and open") and app.visible("Keep it running and open")
        app.screenshot_clear(f"switch_during_fit_{tag}")
        # the question's own Cancel (the one beside Status would stop the fit), on the row of its answers
        row = app.widget("Keep it running and open")[1]
        app.click("Cancel", index=min(range(2), key=lambda i: abs(app.widget("Cancel", index=i)[1] - row)))
        # the question stays until the app no longer waits for an answer: once it goes, the Cancel is
        # taken, and nothing opened: the rig and its fit stay
        wait_for(lambda: not app.visible("Keep it running and open"), what="the Cancel taken (the question gone)")
        app.widget("Reload")  # the rig's line (under Open... Reload Save scenario...) in view
        assert app.text(f"scenario: {re.escape(str(path))}"), "another rig opened"
        assert desktop.title(app.viewer) == rig and app.text(r"a fit: \d+ evaluations?")
        app.drop(box)
        wait_for(lambda: app.visible("Keep it running and open"), what="the question again", timeout=15)
        app.click("Keep it running and open")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : box", what="the box to open")
        assert app.text(r"a fit: \d+ evaluations?"), "the fit kept running"
        app.reveal("Bundled rigs", "spring_mass")
        app.click("spring_mass")
        try:
            wait_for(lambda: app.text(asked.format("spring_mass\\.toml")), what="the question for the bundled rig")
        except AssertionError:
            desktop.screenshot(f"switch_no_question_{tag}")
            raise
        app.click("Stop it and open")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : spring_mass", what="spring_mass to open")
        wait_for(lambda: app.text(r"info: .*fit.* cancelled.*|info: a fit of .*"), what="the fit's one line")
        wait_for(lambda: not app.text(r"a fit: \d+ evaluations?"), what="the fit gone from the jobs line")
    finally:
        if app.proc.poll() is None:
            app.press_close()
            if app.proc.poll() is None:  # asked: the fit still runs, or the rig has edits
                app.click("Stop it and quit" if app.visible("Stop it and quit") else "Quit without saving")
        assert app.proc.wait(30) == 0, app.output()
        desktop.close()
