"""Readouts a person reads right: each load's size in its own unit, numbers never split across
lines, a bare model named as a model (not a bundled rig), on a laptop screen and a large one."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.gui.desktop import REPO, App, Desktop
from tests.waiting import wait_for

READOUT = re.compile(r"t = +\d+\.\d{3} s|real-time factor +\d+\.\d\d|steps \d+")


def _texts(app: App) -> list[str]:
    return [it["text"] for it in app.items() if it.get("text")]


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_joint_loads_read_in_newton_metres_and_readouts_break_between_parts(tmp_path, size):
    desktop = Desktop(*size)
    app = App(desktop, "motor_pendulum", home=tmp_path)
    try:
        # the three joint loads (a motor, two bearings' friction) each read in N·m; the friction
        # of the swinging pin pendulum acts all the time: never the "|F| = 0 N" of a point load
        app.widget("motor")  # the Loads table in view (scrolled to, on a small screen)
        cells = wait_for(lambda: [t for t in _texts(app) if re.fullmatch(r"-?[0-9.e+-]+ N·m", t)], what="N·m readouts")
        assert len(cells) == 3, _texts(app)
        wait_for(
            lambda: any(float(t.split()[0]) != 0 for t in _texts(app) if re.fullmatch(r"-?[0-9.e+-]+ N·m", t)),
            what="a joint load acting",
        )
        assert not any(re.fullmatch(r"-?[0-9.e+-]+( N)?", t) for t in _texts(app)), _texts(app)
        app.widget("Snapshot")  # the Simulation section in view
        item = wait_for(
            lambda: next((it for it in app.items(offscreen=True) if it.get("text", "").startswith("t = ")), None),
            what="the readout",
        )
        readout, rect = item["text"], item["rect"]
        for line in readout.split("\n"):  # every line made of whole parts: no "0.⏎001 s"
            assert READOUT.sub("", line).strip() == "", readout
        panel_w = desktop.client_rect(app.panel)[2]
        assert rect[0] + rect[2] <= panel_w, (rect, panel_w)  # nothing cut off at the panel's edge
        app.redrawn()
        desktop.screenshot(f"readouts_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_a_bare_bundled_model_is_labelled_a_model(tmp_path):
    model = tmp_path / "spring_mass.xml"
    shutil.copy(REPO / "models" / "spring_mass.xml", model)
    desktop = Desktop(1280, 800)
    app = App(desktop, REPO / "models" / "spring_mass.xml", home=tmp_path)
    try:
        label = wait_for(
            lambda: next((t for t in _texts(app) if t.startswith(("model:", "bundled rig:"))), None),
            what="the rig's label",
        )
        assert label == f"model: {REPO / 'models' / 'spring_mass.xml'}", label
        info = wait_for(lambda: next((t for t in _texts(app) if "body," in t), None), what="the model's size")
        assert "1 body, 1 joint, 3 sites, 3 sensors, 0 actuators\ntimestep 0.001 s, nq=1, nv=1" in info, info
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
