"""The control panel's keys and dialogs as a person uses them: Ctrl+O, Ctrl+S, Ctrl+Q and Escape
pressed in the panel, File > Quit and its question, typing on in the Open dialog, files dropped
together on the 3D view, and Recent telling two files of one name apart.

Real input only (xdotool keys and clicks, XDND drops); checks are what a person sees: the
windows and menus open (the widget map lists them), files written, the process's exit, the
status lines. Screenshots of the File menu and the Open dialog at both screen sizes go to
tests/artifacts/.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from tests.gui.desktop import REPO, App, Desktop
from tests.gui.test_desktop_model import STILL, _wait_unsaved
from tests.waiting import wait_for

MODELS = REPO / "models"
OPEN_TITLE = "Open a model, scenario, recording or results"
SAVE_TITLE = "Save the rig as a scenario"
QUIT_TITLE = "Quit mjrig?"


@pytest.fixture
def laptop():
    d = Desktop(1280, 800)
    yield d
    d.close()


def _window(app: App, title: str) -> dict | None:
    """The shown window titled ``title`` (a dialog too), from the panel's widget map."""
    return next((it for it in app.items() if it["type"] == "mvWindowAppItem" and it["label"] == title), None)


def _menu(app: App, label: str) -> dict | None:
    return next((it for it in app.items() if it["type"] == "mvMenu" and it["label"] == label), None)


def _menu_entry(app: App, label: str) -> tuple[int, int, int, int]:
    """Screen rectangle of the open menu's item or submenu ``label`` (not a button of that name)."""
    px, py, _, _ = app.desktop.client_rect(app.panel)
    x, y, w, h = wait_for(
        lambda: next(
            (it["rect"] for it in app.items() if it["label"] == label and it["type"] in ("mvMenuItem", "mvMenu")), None
        ),
        what=f"the menu entry {label}",
    )
    return px + x, py + y, w, h


def _click_menu_entry(app: App, label: str) -> None:
    x, y, w, h = _menu_entry(app, label)
    app.desktop.x("xdotool", "mousemove", "--sync", str(x + 20), str(y + h // 2), "click", "1", check=True)
    app.redrawn(2, timeout=3.0)  # the menu closes and its callback runs


def _texts(app: App, pattern: str) -> list[str]:
    return [it["text"] for it in app.items() if re.search(pattern, it.get("text", ""))]


def _press(app: App, spec: str) -> None:
    """A key pressed in the panel window (xdotool syntax: ctrl+o, Escape, Return)."""
    app.key(spec, window=app.panel)


def _type(app: App, text: str, *, enter: bool = False) -> None:
    """Type into whatever has the keyboard now (no click first)."""
    app.desktop.x("xdotool", "type", "--delay", "15", text, check=True)
    if enter:
        app.desktop.x("xdotool", "key", "Return", check=True)
    app.redrawn(3, timeout=3.0)  # the panel takes in typed keys a frame at a time, behind xdotool


def _select_all(app: App) -> None:
    app.desktop.x(
        "xdotool", "keydown", "ctrl", "sleep", "0.15", "key", "a", "sleep", "0.15", "keyup", "ctrl", check=True
    )


def _edited_spring_mass(desktop: Desktop, home: Path) -> App:
    """The app on the spring_mass rig with an unsaved edit (``_edit_the_rig``); closed again when
    the edit fails."""
    app = App(desktop, "spring_mass", home=home)
    try:
        _edit_the_rig(app)
    except BaseException:
        app.close()
        raise
    return app


def _edit_the_rig(app: App) -> None:
    """Move the k slider (an unsaved edit), as a person clicks on its track."""
    x, y, w, h = app.widget("k [N/m]")
    app.desktop.x("xdotool", "mousemove", "--sync", str(x + int(w * 0.8)), str(y + h // 2), "click", "1", check=True)
    _wait_unsaved(app)


def _exits(app: App, *, timeout: float = 30.0) -> int | None:
    """The app's exit status once it has exited by itself within ``timeout`` s, else None."""
    try:
        return app.proc.wait(timeout)
    except Exception:  # noqa: BLE001 - still running
        return None


def _press_for(app: App, keys: str, title: str, *, what: str) -> dict:
    """Press ``keys`` in the panel and wait for the window titled ``title`` they open."""
    _press(app, keys)
    return wait_for(lambda: _window(app, title), what=what)


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 800)], ids=["1920", "1280"])
def test_escape_closes_the_file_menu_and_the_open_dialog(size, tmp_path):
    (tmp_path / "work" / "rigs").mkdir(parents=True)
    for f in MODELS.glob("spring_mass.*"):  # something to list in the dialog
        shutil.copy(f, tmp_path / "work" / f.name)
    desktop = Desktop(*size)
    app = App(desktop, "spring_mass", home=tmp_path)
    tag = size[0]
    try:
        app.click("File")
        wait_for(lambda: (_menu(app, "File") or {}).get("open"), what="the File menu down")
        labels = [it["label"] for it in app.items() if it["type"] in ("mvMenuItem", "mvMenu")]
        assert "Quit" in labels, labels
        assert labels.index("Quit") > labels.index("Save scenario..."), labels  # the last entry
        desktop.screenshot(f"keys_file_menu_{tag}")
        _press(app, "Escape")
        wait_for(lambda: _menu(app, "File") and not _menu(app, "File")["open"], what="the File menu to close")
        assert not app.visible("Quit")
        # Ctrl+O opens the Open dialog; Escape closes it, the app goes on
        _press_for(app, "ctrl+o", OPEN_TITLE, what="the Open dialog from Ctrl+O")
        desktop.screenshot(f"keys_open_dialog_{tag}")
        _press(app, "Escape")
        wait_for(lambda: _window(app, OPEN_TITLE) is None, what="Escape to close the Open dialog")
        # the same from the menu: File > Open..., then Escape
        app.click("File")
        _click_menu_entry(app, "Open...")
        wait_for(lambda: _window(app, OPEN_TITLE), what="the Open dialog from File > Open...")
        _press(app, "Escape")
        wait_for(lambda: _window(app, OPEN_TITLE) is None, what="Escape to close the Open dialog")
        assert app.proc.poll() is None, app.output()
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_ctrl_s_saves_asking_before_replacing_and_ctrl_q_quits(laptop, tmp_path):
    work, app = tmp_path / "work", _edited_spring_mass(laptop, tmp_path)
    try:
        _press_for(app, "ctrl+s", SAVE_TITLE, what="the Save dialog from Ctrl+S")
        assert app.value("file name") == "spring_mass_rig.toml"
        _press(app, "Return")  # the name field has the keyboard
        saved = work / "spring_mass_rig.toml"
        wait_for(saved.exists, what="the scenario Ctrl+S saved")
        k_first = tomllib.loads(saved.read_text())["params"]["k"]["value"]
        assert k_first > 1000, k_first  # the slider was moved right
        wait_for(lambda: _window(app, SAVE_TITLE) is None, what="the Save dialog to close")
        # again, after another edit: the same name asks before replacing the file
        x, y, w, h = app.widget("k [N/m]")
        k_shown = app.value("k [N/m]")
        laptop.x("xdotool", "mousemove", "--sync", str(x + int(w * 0.3)), str(y + h // 2), "click", "1", check=True)
        wait_for(lambda: app.value("k [N/m]") != k_shown, what="the k slider moved")
        _wait_unsaved(app)
        _press_for(app, "ctrl+s", SAVE_TITLE, what="the Save dialog again")
        _press(app, "Return")
        wait_for(lambda: _texts(app, r"spring_mass_rig\.toml already exists"), what="the question before replacing")
        assert tomllib.loads(saved.read_text())["params"]["k"]["value"] == k_first, "replaced without asking"
        app.click("Replace")
        wait_for(
            lambda: tomllib.loads(saved.read_text())["params"]["k"]["value"] < k_first,
            what="the replaced scenario with the new k",
        )
        # nothing unsaved: Ctrl+Q quits at once
        _press(app, "ctrl+q")
        assert _exits(app) == 0, f"Ctrl+Q did not quit:\n{app.output()}"
    finally:
        assert app.close() == 0, app.output()


def test_quitting_with_unsaved_edits_offers_to_save_first(laptop, tmp_path):
    work, app = tmp_path / "work", _edited_spring_mass(laptop, tmp_path)
    try:
        _press_for(app, "ctrl+q", QUIT_TITLE, what="the quit question from Ctrl+Q")
        assert app.visible("Save scenario first...") and app.visible("Quit without saving")
        laptop.screenshot("keys_quit_question")
        _press(app, "Escape")  # as Keep working
        wait_for(lambda: _window(app, QUIT_TITLE) is None, what="Escape to close the question")
        # the panel stops drawing at once when it quits: it still draws, fifteen frames on
        assert app.redrawn(3) and app.proc.poll() is None, "the app quit with unsaved edits"
        # File > Quit asks the same; save first, then the app closes
        app.click("File")
        _click_menu_entry(app, "Quit")
        wait_for(lambda: _window(app, QUIT_TITLE), what="the quit question from File > Quit")
        app.click("Save scenario first...")
        wait_for(lambda: _window(app, SAVE_TITLE), what="the Save dialog")
        _select_all(app)  # the name field has the keyboard
        _type(app, "before_quit", enter=True)
        assert _exits(app) == 0, f"the app did not quit after saving:\n{app.output()}"
        doc = tomllib.loads((work / "before_quit.toml").read_text())
        assert doc["params"]["k"]["value"] > 1000, doc["params"]
    finally:
        assert app.close() == 0, app.output()


def test_closing_the_3d_view_with_unsaved_edits_asks_first(laptop, tmp_path):
    app = App(laptop, home=tmp_path)
    try:
        _edit_the_rig(app)
        app.press_close(window=app.viewer)  # the window manager's close, on the 3D view
        wait_for(lambda: _window(app, QUIT_TITLE), what="the quit question from the 3D view's close")
        app.click("Keep working")
        wait_for(lambda: _window(app, QUIT_TITLE) is None, what="the question to close")
        assert app.redrawn(3) and app.proc.poll() is None, "the app quit with unsaved edits"
        assert laptop.windows("^MuJoCo"), "the 3D view closed although the user kept working"
        app.press_close(window=app.viewer)
        wait_for(lambda: _window(app, QUIT_TITLE), what="the quit question again")
        app.click("Quit without saving")
        assert _exits(app) == 0, f"the app did not quit:\n{app.output()}"
    finally:
        assert app.close() == 0, app.output()


def test_the_open_dialog_keeps_the_keyboard_and_forgets_a_stale_message(laptop, tmp_path):
    files = tmp_path / "files"
    (files / "sub").mkdir(parents=True)
    (files / "first.xml").write_text(STILL.format(name="first"))
    (files / "sub" / "second.xml").write_text(STILL.format(name="second"))
    app = App(laptop, "spring_mass", home=tmp_path)
    try:
        app.click("Open...")
        wait_for(lambda: _window(app, OPEN_TITLE), what="the Open dialog")
        _type(app, str(files / "nope.xml"), enter=True)  # typed at once: the field has the keyboard
        wait_for(lambda: _texts(app, r"^no such file: .*nope\.xml$"), what="the red message")
        # the folder typed, Enter: the folder is entered and the message goes with the old folder
        _select_all(app)
        _type(app, str(files), enter=True)
        wait_for(lambda: app.visible("sub/") and app.visible("first.xml"), what="the typed folder listed")
        assert not _texts(app, "no such file"), "a stale message stayed"
        # ... and the keyboard stayed in the field: the next name typed opens
        _type(app, "nope.xml", enter=True)
        wait_for(lambda: _texts(app, r"^no such file: .*files/nope\.xml$"), what="the message about nope.xml")
        app.double_click("sub/")  # navigating the list: the message goes too
        wait_for(lambda: app.visible("second.xml"), what="the sub folder listed")
        assert not _texts(app, "no such file"), "a stale message stayed"
        laptop.screenshot("keys_open_dialog_typing")
        app.type_into("file name", "second.xml", enter=True)  # the field still says nope.xml
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : second", what="second.xml to open")
    finally:
        assert app.close() == 0, app.output()


def test_dropping_two_files_opens_one_and_says_the_other_was_ignored(tmp_path):
    desktop = Desktop(1920, 1080)
    files = tmp_path / "files"
    files.mkdir()
    (files / "first.xml").write_text(STILL.format(name="first"))
    (files / "second.xml").write_text(STILL.format(name="second"))
    for f in MODELS.glob("bumper_drop.*"):
        shutil.copy(f, files / f.name)
    app = App(desktop, "spring_mass", home=tmp_path)
    try:
        app.drop(files / "first.xml", files / "second.xml")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : first", what="the first dropped file to open")
        line = wait_for(lambda: _texts(app, r"2 files dropped"), what="the status line")
        assert len(line) == 1 and "first.xml" in line[0] and "ignored second.xml" in line[0], line
        assert line[0].startswith("warning: ") and "\n" not in line[0], line
        # a scenario among them opens, whatever its place, and the rest are named
        app.drop(files / "second.xml", files / "bumper_drop.toml", files / "first.xml")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : bumper_drop", what="the dropped scenario to open")
        line = wait_for(lambda: _texts(app, r"3 files dropped"), what="the second status line")
        assert len(line) == 1 and "scenario, bumper_drop.toml" in line[0], line
        assert "ignored second.xml, first.xml" in line[0], line
        out = [ln for ln in app.output().splitlines() if "files dropped" in ln]
        assert len(out) == 2, out  # one line per drop in the terminal too
        desktop.screenshot("keys_drop_two_files")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_recent_tells_two_files_of_one_name_apart(laptop, tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for f in MODELS.glob("spring_mass.*"):
            shutil.copy(f, tmp_path / name / f.name)
    app = App(laptop, tmp_path / "a" / "spring_mass.toml", home=tmp_path)
    try:
        app.click("Open...")
        app.type_into("file name", str(tmp_path / "b" / "spring_mass.toml"), enter=True)
        wait_for(lambda: _texts(app, r"^scenario: .*/b/spring_mass\.toml"), what="b's scenario to open")
        app.reveal("Recent", "a/spring_mass.toml")
        labels = [
            it["label"]
            for it in app.items(offscreen=True)  # the list may reach below the controls' view
            if it["type"] == "mvSelectable" and "spring_mass" in it["label"]
        ]
        assert labels == ["b/spring_mass.toml", "a/spring_mass.toml"], labels
        # the full path in the tooltip
        x, y, w, h = app.widget("a/spring_mass.toml")
        laptop.x("xdotool", "mousemove", "--sync", str(x + 20), str(y + h // 2), check=True)
        wait_for(
            lambda: _texts(app, "^" + re.escape(str(tmp_path / "a" / "spring_mass.toml")) + "$"),
            what="the full path in a tooltip",
        )
        laptop.screenshot("keys_recent_tooltip")
        # the File menu's Recent too
        app.click("File")
        rx, ry, rw, rh = _menu_entry(app, "Recent")
        laptop.x("xdotool", "mousemove", "--sync", str(rx + 20), str(ry + rh // 2), check=True)
        wait_for(
            lambda: next((it for it in app.items() if it["label"] == "Recent" and it.get("open")), None),
            what="the Recent submenu open",
        )
        app.redrawn()
        laptop.screenshot("keys_recent_menu")
        _press(app, "Escape")
        app.click("a/spring_mass.toml")
        wait_for(  # at the Model section's top, which the list may have scrolled out of view
            lambda: any(
                re.search(r"^scenario: .*/a/spring_mass\.toml", it.get("text", "")) for it in app.items(offscreen=True)
            ),
            what="a's scenario from Recent",
        )
    finally:
        assert app.close() == 0, app.output()
