"""Long jobs say so: a fit shows how far it got beside the Status title with a Cancel that stops
it; closing the panel while one runs asks ("Stop it and quit" / "Wait for it"), and stopping quits
at once. A slow fit: two params against 40 s of bench data (each evaluation a 40 s run)."""

from __future__ import annotations

import re
import time

import pytest

from tests.gui.desktop import App, Desktop, wait_for
from tests.gui.test_desktop_measured import run_fit
from tests.unit.test_measured import CSV_ENTRY, csv_bench, scenario


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
