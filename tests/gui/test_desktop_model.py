"""Opening, switching and saving as a person does it: the panel's lists, the file dialog, the
unsaved-edits question, Recent, and the recording settings a scenario brings."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from tests.gui.desktop import REPO, App, Desktop, read_recording
from tests.waiting import wait_for

MODELS = REPO / "models"
STILL = """<mujoco model="{name}"><worldbody><light pos="0 0 3"/><geom type="plane" size="2 2 .1"/>
  <body name="{name}_box" pos="0 0 .3"><joint type="slide" axis="0 0 1"/><geom type="box" size=".2 .1 .3"/>
  </body></worldbody></mujoco>"""


@pytest.fixture
def laptop():
    d = Desktop(1280, 800)
    yield d
    d.close()


def test_switching_models_leaves_nothing_of_the_old_one(laptop, tmp_path):
    app = App(laptop, "spring_mass", home=tmp_path)
    try:
        app.type_into("search sites / bodies / geoms", "tip")
        app.pick_first("at")
        assert app.value("at") == "tip"
        labels = {it["label"] for it in app.items()}
        assert {"slide_x", "block"} <= labels, "spring_mass's signals are in the plot tree"
        app.reveal("Bundled rigs", "clearance")
        app.click("clearance")
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : clearance", what="clearance to open")
        wait_for(lambda: "paddle_hinge" in {it["label"] for it in app.items()}, what="the panel to show clearance")
        assert app.value("at") == "", "the load form kept a point of the old model"
        assert app.value("clearance") == "True" and app.value("spring_mass") == "False"
        labels = {it["label"] for it in app.items()}
        assert "paddle_hinge" in labels and not {"slide_x", "block"} & labels, labels
        laptop.screenshot("switched_models")
    finally:
        assert app.close() == 0, app.output()


def test_unsaved_edits_are_asked_about_and_saved_rigs_come_back_from_recent(laptop, tmp_path):
    app = App(laptop, "spring_mass", home=tmp_path)
    work = tmp_path / "work"
    try:
        app.click("Start recording")  # a recording the saved scenario must not point at
        app.run_for(0.2)
        app.click("Stop recording")
        wait_for((work / "runs" / "spring_mass.parquet").exists, what="the first recording")
        x, y, w, h = app.widget("k [N/m]")
        laptop.x("xdotool", "mousemove", "--sync", str(x + int(w * 0.8)), str(y + h // 2), "click", "1", check=True)
        _wait_unsaved(app)
        app.reveal("Bundled rigs", "clearance")
        app.click("clearance")
        app.widget("Open without saving")  # the question is on screen
        laptop.screenshot("unsaved_question")
        app.click("Cancel")
        # the question stays until the app no longer waits for an answer: once it goes, the Cancel is taken
        wait_for(lambda: not app.visible("Open without saving"), what="the Cancel taken (the question gone)")
        app.widget("Reload")  # the rig's line (under Open... Reload Save scenario...) in view
        assert app.text(r"bundled rig: spring_mass  \(unsaved changes\)"), "the rig was thrown away"
        assert laptop.title(app.viewer) == "MuJoCo : spring_mass", "the rig was thrown away"
        app.click("clearance")
        app.click("Save scenario first...")
        assert app.value("file name") == "spring_mass_rig.toml"
        app.click("Save")
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : clearance", what="clearance after saving")
        saved = work / "spring_mass_rig.toml"
        doc = tomllib.loads(saved.read_text())
        assert doc["params"]["k"]["value"] > 1000, doc["params"]  # the slider was moved right
        # re-running the saved scenario headless writes a new file, not over the app's recording
        assert doc["recording"]["path"] == "runs/spring_mass-2.parquet", doc["recording"]
        # Recent brings the saved rig back, with its tuned param.
        app.reveal("Recent", "spring_mass_rig.toml")
        app.click("spring_mass_rig.toml")
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : spring_mass", what="the saved rig from Recent")
        x2, y2, _, _ = app.widget("k [N/m]")  # the slider is there again
    finally:
        assert app.close() == 0, app.output()


def test_the_file_dialog_takes_typed_paths_and_double_clicks(laptop, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "first.xml").write_text(STILL.format(name="first"))
    (elsewhere / "second.xml").write_text(STILL.format(name="second"))
    (elsewhere / "notes.toml").write_text("# not a scenario\n")
    app = App(laptop, "spring_mass", home=tmp_path)
    try:
        app.click("Open...")
        app.type_into("file name", str(elsewhere / "first.xml"), enter=True)  # an absolute path, typed
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : first", what="the typed path to open")
        app.click("Open...")  # opens in the folder of the last file
        labels = {it["label"] for it in app.items()}
        assert {"first.xml", "second.xml", "notes.toml"} <= labels, labels
        app.type_into("file name", "seco")
        app.click(".xml")  # the type filter keeps the typed name
        assert app.value("file name") == "seco"
        assert "notes.toml" not in {it["label"] for it in app.items()}
        laptop.screenshot("file_dialog")
        app.double_click("second.xml")
        wait_for(lambda: laptop.title(app.viewer) == "MuJoCo : second", what="the double-clicked file to open")
        # Save is another dialog, and asks before replacing a file.
        app.click("Save scenario...")
        assert "Save" in {it["label"] for it in app.items()} and "Open" not in {it["label"] for it in app.items()}
        app.type_into("file name", "notes")
        app.click("Save")
        app.click("Replace")
        wait_for(lambda: "model" in (elsewhere / "notes.toml").read_text(), what="the replaced scenario")
    finally:
        assert app.close() == 0, app.output()


def test_the_app_records_what_the_scenario_says(laptop, tmp_path):
    rig = tmp_path / "rig"
    rig.mkdir()
    for f in MODELS.glob("spring_mass.*"):
        shutil.copy(f, rig / f.name)
    text = (rig / "spring_mass.toml").read_text()
    head, _, _ = text.partition("[recording]")
    (rig / "spring_mass.toml").write_text(
        head + '[recording]\npath = "out/mine.parquet"\nrate = 100\nsignals = ["joints", "loads"]\n'
    )
    app = App(laptop, rig / "spring_mass.toml", home=tmp_path)
    try:
        app.click("Start recording")
        app.run_for(0.3)  # 30 samples at 100/s
        app.click("Stop recording")
        out = rig / "out" / "mine.parquet"
        wait_for(out.exists, what="the scenario's recording path")
        df = wait_for(lambda: read_recording(out), what="a readable recording")
        groups = {c.split("/")[0] for c in df.columns[2:]}
        assert groups == {"Joints", "Loads"}, df.columns
        dt = df["time"].diff().drop_nulls()
        assert abs(float(dt.median()) - 0.01) < 1e-9, dt.median()  # 100 samples per simulated second
    finally:
        assert app.close() == 0, app.output()


def _wait_unsaved(app: App) -> None:
    """The edit has reached the rig: the panel marks it unsaved (under Open... Reload Save scenario...)."""
    app.widget("Reload")  # that row in view
    wait_for(lambda: app.text(r".*\(unsaved changes\)"), what="the rig marked '(unsaved changes)'", timeout=10)


def test_closing_with_unsaved_edits_asks_first(laptop, tmp_path):
    app = App(laptop, "spring_mass", home=tmp_path)
    x, y, w, h = app.widget("k [N/m]")
    laptop.x("xdotool", "mousemove", "--sync", str(x + int(w * 0.7)), str(y + h // 2), "click", "1", check=True)
    _wait_unsaved(app)
    app.press_close()
    app.click("Keep working")
    wait_for(lambda: not app.visible("Keep working"), what="the question to close")
    # the panel stops drawing at once when it quits: it still draws, fifteen frames on
    assert app.redrawn(3) and app.proc.poll() is None, "the app closed although the rig was not saved"
    app.press_close()
    app.click("Quit without saving")
    assert app.proc.wait(30) == 0, app.output()


def test_closing_the_3d_view_with_unsaved_edits_asks_too(laptop, tmp_path):
    app = App(laptop, "spring_mass", home=tmp_path)
    x, y, w, h = app.widget("k [N/m]")
    laptop.x("xdotool", "mousemove", "--sync", str(x + int(w * 0.7)), str(y + h // 2), "click", "1", check=True)
    _wait_unsaved(app)
    app.press_close(window=app.viewer)  # to the viewer, as a person closes it
    try:
        app.click("Keep working")
    except AssertionError as exc:  # say what the app did with the close (its log: keys, commands)
        raise AssertionError(f"{exc}; the app's log:\n{app.output()[-3000:]}") from exc
    # the question stays until the app no longer asks: once it goes, Keep working is taken; a panel
    # that goes on drawing is an app that goes on (it stops drawing at once when it quits)
    wait_for(lambda: not app.visible("Keep working"), what="Keep working taken (the question gone)")
    assert app.redrawn(3) and app.proc.poll() is None, "the app quit with unsaved edits"
    assert laptop.windows("^MuJoCo"), "the 3D view closed with unsaved edits"
    app.press_close(window=app.viewer)
    app.click("Quit without saving")
    assert app.proc.wait(30) == 0, app.output()
