"""Display units as a person chooses them: Units > Length: mm turns the plot's axis, the value at
the cursor and a length slider into millimetres; Units > Force: lbf turns the spring's readout into
pounds-force; a value typed into the slider or a requirement's bound in mm is the SI value the
rig gets; the chosen units
are saved with the scenario as ``[units]``. Real input only (clicks on the menu bar, the signal
tree, Ctrl+click typing into the slider, keys to the viewer); checks are what the panel shows and
the scenario file written."""

from __future__ import annotations

import re
import shutil
import tomllib

import pytest

from mjrig.scenario.bundled import MODELS_DIR
from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_keys_dialogs import SAVE_TITLE, _click_menu_entry, _press, _window
from tests.waiting import wait_for

RIG = """model = "spring_mass.xml"

[params]
k = { value = 200.0, min = 0.0, max = 5000.0, unit = "N/m" }
rest = { value = 0.25, min = 0.1, max = 0.5, unit = "m" }

[[loads]]
name = "main_spring"
kind = "ideal_spring"
at = "tip"
to = "base"
stiffness = "k"
rest_length = "rest"

[[proximities]]
name = "gap"
a = "tip"
b = "stop"
threshold = 0.02            # m: not reached, so Status stays quiet
"""


def _units(app: App, entry: str, status: str) -> None:
    """Units > ``entry``, clicked again when a busy panel lost the click, until Status says ``status``."""
    for attempt in range(3):
        app.click("Units")
        _click_menu_entry(app, entry)
        try:
            wait_for(lambda: app.text(status), what=f"Status after Units > {entry}", timeout=15)
            return
        except AssertionError:
            if attempt == 2:
                raise
            app.desktop.x("xdotool", "key", "Escape")


def _plots(app: App) -> list[str]:
    return sorted(it["label"] for it in app.items() if it["type"] == "mvPlot")


def _slider(app: App, label: str) -> tuple[tuple[int, int, int, int], str]:
    """Screen rectangle and shown value of the Params slider ``label`` (scrolled into view)."""
    px, py, _, _ = app.desktop.client_rect(app.panel)
    for _ in range(3):
        app.widget(label)
        hit = next((it for it in app.items() if it["label"] == label and it["type"] == "mvSliderDouble"), None)
        if hit is not None:
            x, y, w, h = hit["rect"]
            return (px + x, py + y, w, h), str(hit.get("value"))
    raise AssertionError(f"no slider '{label}' on the panel")


def _at_cursor(app: App) -> tuple[float, str]:
    found = wait_for(lambda: app.text(r"at [0-9.]+ s:\s+gap:distance \S+ \S+"), what="the value at the cursor")
    value, unit = re.search(r"gap:distance (\S+) (\S+)", found["text"]).groups()
    return float(value), unit


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_the_units_menu_converts_plots_cursor_values_sliders_and_readouts(tmp_path, size):
    tag = f"{size[0]}x{size[1]}"
    work = tmp_path / "rig"
    work.mkdir()
    shutil.copy(MODELS_DIR / "spring_mass.xml", work)
    (work / "rig.toml").write_text(RIG)
    desktop = Desktop(*size)
    app = App(desktop, work / "rig.toml", home=tmp_path)
    try:
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : spring_mass", what="the rig to open")
        app.type_into("filter signals", "gap distance")  # the tree is short on a laptop screen
        wait_for(lambda: app.visible("gap"), what="gap in the filtered tree")
        app.tick("gap", "distance")  # a filter opens the nodes it finds
        wait_for(lambda: _plots(app) == ["m"], what="the distance plot in m")
        assert _slider(app, "rest [m]")[1] in ("0.25", "0.250")

        _units(app, "Length: mm", r"info: length shown in mm .*")
        wait_for(lambda: _plots(app) == ["mm"], what="the plot's axis in mm")
        (x, y, w, h), shown = _slider(app, "rest [mm]")
        assert float(shown) == pytest.approx(250.0)
        # a value typed into the slider in mm: Ctrl+click makes it a text field (Dear ImGui)
        desktop.x("xdotool", "mousemove", "--sync", str(x + w // 3), str(y + h // 2), check=True)
        desktop.x("xdotool", "keydown", "ctrl", "click", "1", "keyup", "ctrl", check=True)
        app.redrawn(2, timeout=3.0)  # the slider turns into a text field on the panel's next frames
        app.replace_text("300")
        desktop.x("xdotool", "key", "Return", check=True)
        wait_for(lambda: float(_slider(app, "rest [mm]")[1]) == pytest.approx(300.0), what="300 mm on the slider")

        # a requirement's bound typed in mm: its row says it in mm, the scenario holds m
        app.click("Requirements")
        app.type_into("requirement name", "near")
        app.type_into("<= max", "500")
        app.click("Add requirement")
        wait_for(lambda: app.text(r"<= 500 mm"), what="the requirement's bound in mm")

        # the value at the cursor: pause and step back one instant (a key to the 3D view)
        app.click("Pause")
        wait_for(lambda: app.visible("Play"), what="the run to pause")
        app.key("Left")
        in_mm, unit = _at_cursor(app)
        assert unit == "mm"
        desktop.screenshot(f"units_mm_{tag}")

        app.widget("main_spring")  # its row in Loads, scrolled to as a person does
        newton = float(
            wait_for(lambda: app.text(r"-?[0-9.e+-]+ N"), what="the spring's readout in N")["text"].split()[0]
        )
        _units(app, "Force: lbf", r"info: force shown in lbf .*")
        app.widget("main_spring")
        lbf = float(
            wait_for(lambda: app.text(r"-?[0-9.e+-]+ lbf"), what="the spring's readout in lbf")["text"].split()[0]
        )
        assert newton != 0 and lbf == pytest.approx(newton / 4.4482216152605, rel=1e-2)  # paused: the same force
        desktop.screenshot(f"units_lbf_{tag}")

        _units(app, "Length: m", r"info: length shown in m .*")
        app.widget("<= max")  # the Requirements form, its table just above (scrolled to as a person does)
        wait_for(lambda: app.text(r"<= 0\.5 m"), what="the requirement's bound in m")
        wait_for(lambda: _plots(app) == ["m"], what="the plot back in m")
        in_m, unit = _at_cursor(app)
        assert unit == "m" and in_mm == pytest.approx(1000 * in_m, rel=1e-5)  # the same instant, 1000x
        assert float(_slider(app, "rest [m]")[1]) == pytest.approx(0.3)  # the rig got 0.3 m

        # saved with the scenario: [units] holds the force choice, length is SI again
        _press(app, "ctrl+s")
        wait_for(lambda: _window(app, SAVE_TITLE), what="the save dialog")
        app.type_into("file name", "saved.toml", enter=True)

        def written() -> dict | None:  # the whole file (it is written while the test looks)
            try:
                doc = tomllib.loads((work / "saved.toml").read_text())
            except (OSError, tomllib.TOMLDecodeError):
                return None
            return doc if "requirements" in doc else None

        doc = wait_for(written, what="saved.toml written")
        assert doc["units"] == {"force": "lbf"} and doc["params"]["rest"]["value"] == pytest.approx(0.3)
        assert doc["requirements"] == [
            {"name": "near", "signal": "Proximities/gap:distance", "max": pytest.approx(0.5)}
        ]
    finally:
        assert app.quit_discarding() == 0, app.output()
        desktop.close()
