"""The rig edited from the panel as a person does it: a spring added in Loads from the form
(points picked from the model's names), a distance monitor added in Proximities with the same
kind of form, both listed with what they do now, recorded, and one removed again."""

from __future__ import annotations

import re

import pytest

from tests.gui.desktop import App, Desktop, read_recording
from tests.waiting import wait_for


def _pick(app: App, combo: str, name: str, *, form: int) -> None:
    """Narrow the point pickers of form ``form`` to ``name`` with its search, then pick it."""
    app.type_into("search sites / bodies / geoms", name, index=form)
    for attempt in range(2):  # a click into a combo still opening can miss: a person clicks again
        app.pick_first(combo)
        try:
            wait_for(lambda: app.value(combo) == name, what=f"'{name}' picked in '{combo}'", timeout=10)
            return
        except AssertionError:
            if attempt:
                raise


def _forms(app: App) -> int:
    """How many entry forms the panel has open (the Loads one, the Proximities one), in view or
    scrolled out of it."""
    return sum(it["label"] == "search sites / bodies / geoms" for it in app.items(offscreen=True))


def _row_texts(app: App, pattern: str) -> list[str]:
    return [it["text"] for it in app.items() if re.fullmatch(pattern, it.get("text", ""))]


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_loads_and_proximities_are_added_and_removed_from_their_forms(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "spring_mass", home=tmp_path)  # the spring-mass rig: main_spring and the gap monitor
    try:
        # Loads: a second ideal spring from the tip to the stop
        app.type_into("name", "extra")
        _pick(app, "at", "tip", form=0)
        _pick(app, "to", "stop", form=0)
        app.type_into("stiffness", "300")
        app.click("Add")
        app.widget("extra", kind="mvButton", timeout=30)  # the new spring's row (scrolled to, above the form)
        # its row says what it applies now, in newtons, next to the rig's own spring
        wait_for(lambda: len(_row_texts(app, r"-?[0-9.e+-]+ N")) == 2, what="two loads' readouts in N")
        # Proximities: the same kind of form, another section of the rig
        app.click("Proximities")
        app.widget("b")  # its form in view (scrolled to on a small screen)
        form = _forms(app) - 1  # the last form is the Proximities one
        app.type_into("name", "tip_base", index=form)
        _pick(app, "a", "tip", form=form)
        _pick(app, "b", "base", form=form)
        app.click("Add", index=form)
        app.widget("tip_base", kind="mvButton", timeout=30)  # the new monitor's row (not the plots' tree node)
        distances = wait_for(lambda: _row_texts(app, r"[0-9.e+-]+ m") or None, what="distance readouts in m")
        desktop.screenshot(f"rig_entries_added_{size[0]}x{size[1]}")
        # recorded: the new load's and the new monitor's columns are in the file
        app.click("Start recording")
        app.run_for(0.2)
        app.click("Stop recording")
        runs = tmp_path / "work" / "runs"
        rec = wait_for(lambda: next(iter(runs.glob("*.parquet")), None), what="the recording")
        df = wait_for(lambda: read_recording(rec), what="the recording readable")
        assert {"Loads/extra:fx", "Loads/extra:length", "Proximities/tip_base:distance"} <= set(df.columns)
        assert df["Loads/extra:length"].drop_nulls().len() > 10
        assert len(distances) >= 2, distances
        # removed again: the row's x (the second load's)
        app.widget("extra", kind="mvButton")  # the Loads table in view
        app.click("x", index=1)
        wait_for(lambda: not app.visible("extra"), what="the spring's row gone")
        wait_for(lambda: "removed load 'extra'" in app.output(), what="the removal said in Status")
        desktop.screenshot(f"rig_entries_removed_{size[0]}x{size[1]}")
    finally:
        assert app.quit_discarding() == 0, app.output()  # the monitor is an unsaved edit of the rig
        desktop.close()
