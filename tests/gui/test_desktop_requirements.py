"""Requirements as a person sets them: tick a signal in the plots, add a requirement on it from
the Requirements panel, and watch its badge turn red at the violation, marked on the plot."""

from __future__ import annotations

import re

from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for


def _text(app: App, pattern: str):
    return next((it for it in app.items() if re.fullmatch(pattern, it.get("text", ""))), None)


def test_a_requirement_added_on_a_plotted_signal_turns_red_at_its_violation(tmp_path):
    desktop = Desktop(1920, 1080)
    app = App(
        desktop, "spring_mass", home=tmp_path
    )  # the spring-mass rig: its gap closes to 0.05 m on the first swings
    try:
        app.tick("gap", "distance")
        app.click("Requirements")
        app.type_into("requirement name", "keeps_clear")
        app.type_into(">= min", "0.06")
        app.click("Add requirement")
        wait_for(lambda: _text(app, "keeps_clear"), what="the requirement's row")
        desktop.screenshot("requirement_added")
        app.click("Reset")  # from the start, where the gap first closes in at about 0.19 s
        badge = wait_for(lambda: _text(app, "FAIL"), what="the FAIL badge", timeout=20)
        failed_at = wait_for(  # in the requirement's row, beside its badge (the run bar has a time too)
            lambda: next(
                (
                    it
                    for it in app.items()
                    if re.fullmatch(r"t = [0-9.]+ s", it.get("text", "")) and abs(it["rect"][1] - badge["rect"][1]) < 6
                ),
                None,
            ),
            what="the first failure's time",
        )
        t_fail = float(failed_at["text"].split()[2])
        assert 0.05 < t_fail < 0.19, failed_at  # before the 0.05 m threshold crossing (0.19 s)
        x, y, w, h = badge["rect"]

        def red_pixels() -> int:
            patch = desktop.grab(app.panel)[y : y + h, x : x + w, :3].reshape(-1, 3).astype(int)
            return int(((patch[:, 0] > 180) & (patch[:, 1] < 110) & (patch[:, 2] < 110)).sum())

        wait_for(lambda: red_pixels() > 10, what="the FAIL badge drawn red", timeout=10)
        red = red_pixels()
        assert red > 10, f"the FAIL badge is not red ({red} red pixels)"
        said = re.search(
            r"requirement 'keeps_clear' failed at t=(0\.1[0-9]*) s \(Proximities/gap:distance was "
            r"([0-9.]+); wanted >= 0\.06\)",
            app.output(),
        )
        assert said and float(said.group(1)) == t_fail and float(said.group(2)) < 0.06, app.output()
        desktop.screenshot("requirement_failed")
    finally:
        assert app.quit_discarding() == 0, app.output()  # the requirement is an unsaved edit of the rig
        desktop.close()
