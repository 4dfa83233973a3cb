"""Opening as a person does, with unsaved edits and with results files: File > Open... (a typed
path and Enter, or the .parquet filter and a double-click) asks the one question first and
*Open without saving* goes on; a study or a sweep's results opens the results view from the Open
dialog or a drop on the 3D view, as ``mjrig STUDY.parquet`` does. On a 1280x800 and a 1920x1080
screen."""

from __future__ import annotations

import re

import pytest

from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_study import study  # noqa: F401 - the module's study fixture
from tests.waiting import wait_for

TITLE = "Results — STUDY.parquet"
QUESTION = "Unsaved rig changes"


def _shown(app: App, title: str) -> dict | None:
    return next((it for it in app.items() if it["label"] == title and it["type"] == "mvWindowAppItem"), None)


def _says(app: App, pattern: str) -> bool:
    """Whether a text of the panel matches ``pattern``, in view or scrolled out of it."""
    return any(re.fullmatch(pattern, it.get("text", ""), flags=re.S) for it in app.items(offscreen=True))


def _make_an_edit(app: App) -> None:
    app.click("Use current as initial")  # the rig's [initial] changes: an unsaved edit
    wait_for(lambda: _says(app, r".*\(unsaved changes\)"), what="the rig marked as having unsaved changes")


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_open_asks_about_unsaved_edits_and_opens_a_study_in_the_results_view(study, tmp_path, size):  # noqa: F811
    desktop = Desktop(*size)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        _make_an_edit(app)
        app.click("Open...")
        wait_for(lambda: _shown(app, "Open a model, scenario, recording or results"), what="the Open dialog")
        app.type_into("file name", str(study.path.parent), enter=True)  # a folder typed: entered
        app.click(".parquet")  # the type filter
        assert not app.visible("opt.toml"), "the .parquet filter should hide the scenario"
        app.double_click("STUDY.parquet")
        wait_for(lambda: _shown(app, QUESTION), what="the unsaved-edits question after a double-click")
        assert app.text(r"The rig has changes .* Open STUDY\.parquet anyway, and lose them\?")
        desktop.screenshot(f"open_question_{size[0]}x{size[1]}")
        app.click("Open without saving")
        window = wait_for(lambda: _shown(app, TITLE), what="the study's results window", timeout=30)
        assert app.text(rf"best objective [0-9.e-]+ at trial {study.best_trial()}")
        assert _shown(app, QUESTION) is None
        assert _says(app, r"scenario: .*opt\.toml"), "the study's scenario should be the rig shown"
        desktop.screenshot(f"open_study_{size[0]}x{size[1]}")
        x, y, w, h = window["rect"]
        assert w > 300 and h > 200, window
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()


def test_a_study_dropped_on_the_3d_view_opens_the_results_view_and_open_best_is_no_unsaved_edit(study, tmp_path):  # noqa: F811
    desktop = Desktop(1920, 1080)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        app.drop(study.path)
        wait_for(lambda: _shown(app, TITLE), what="the results window after the drop", timeout=30)
        app.click("Open best")
        wait_for(
            lambda: app.text(rf"trial {study.best_trial()}: opened its scenario with its param values"),
            what="the best trial opened",
        )
        app.redrawn(5)
        assert not _says(app, r".*\(unsaved changes\)"), "a trial's own values are not the user's unsaved edits"
    finally:
        assert app.close() == 0, app.output()  # no question: nothing of the user's to lose
        desktop.close()
