"""Driving a model from the panel: a slider bound to an actuator in one click moves the arm; a
tracer draws the tool's path in the 3D view; Snapshot, then running on, then Restore brings the
view back. Real clicks and keys only; checks are pixels, the panel's text and recordings."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop, read_recording
from tests.waiting import wait_for

ARM = """<mujoco model="arm">
  <option timestep="0.002"/>
  <visual><global offwidth="1280" offheight="960"/></visual>
  <worldbody>
    <light pos="0 -1 3" dir="0 0.3 -1"/>
    <geom type="plane" size="1 1 .1" rgba=".85 .85 .85 1"/>
    <geom type="cylinder" pos="0 0 .25" size=".05 .25" rgba=".3 .3 .35 1" contype="0" conaffinity="0"/>
    <body name="upper" pos="0 0 .55">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="2" armature="0.05"/>
      <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04" rgba=".15 .35 .85 1" mass="1"/>
      <site name="tool" pos=".44 0 0" size=".02"/>
    </body>
  </worldbody>
  <actuator>
    <position name="shoulder" joint="shoulder" kp="60" ctrllimited="true" ctrlrange="-1.4 1.4"/>
  </actuator>
</mujoco>"""

TRACED = """model = "arm.xml"

[[controls]]
actuator = "shoulder"
value = {{ profile = "sine", amplitude = 1.0, frequency = 0.7 }}

[[tracers]]
name = "tool_path"
at = "tool"
duration = 2.5
color = [1.0, 0.0, 1.0, 1.0]
{extra}
"""


@pytest.fixture
def laptop():
    d = Desktop(1280, 800)
    yield d
    d.close()


def _arm(tmp_path, scenario: str | None = None):
    folder = tmp_path / "rig"
    folder.mkdir(exist_ok=True)
    (folder / "arm.xml").write_text(ARM)
    if scenario is None:
        return folder / "arm.xml"
    (folder / "arm.toml").write_text(scenario)
    return folder / "arm.toml"


def _time(app: App) -> float:
    text = next(it["text"] for it in app.items() if it.get("text", "").startswith("t = "))
    return float(text.split()[2])


def test_a_slider_bound_to_an_actuator_in_one_click_moves_the_arm(laptop, tmp_path):
    app = App(laptop, _arm(tmp_path), home=tmp_path)
    try:
        app.click("Controls")
        app.click("Slider")  # the one actuator's row
        app.click("Start recording")
        app.run_for(0.3)  # a stretch recorded with the arm at rest
        before = laptop.grab(app.viewer)
        x, y, w, h = _slider(app, "shoulder_input")  # a new slider in Params, over the ctrlrange
        # Ctrl+click a slider to type a value into it (Dear ImGui), as a person sets an exact input.
        laptop.x("xdotool", "mousemove", "--sync", str(x + 30), str(y + h // 2), check=True)
        laptop.x(
            "xdotool", "keydown", "ctrl", "sleep", "0.15", "click", "1", "sleep", "0.15", "keyup", "ctrl", check=True
        )
        app.redrawn(2, timeout=3.0)  # the slider turns into a text field on the panel's next frames
        laptop.x(
            "xdotool", "keydown", "ctrl", "sleep", "0.15", "key", "a", "sleep", "0.15", "keyup", "ctrl", check=True
        )
        laptop.x("xdotool", "type", "--delay", "15", "1.2", check=True)
        laptop.x("xdotool", "key", "Return", check=True)
        app.run_for(1.5)  # the arm gets there (it settles in about 0.5 s)
        app.click("Stop recording")
        after = laptop.grab(app.viewer)
        laptop.screenshot("actuator_slider")
        runs = tmp_path / "work" / "runs"
        rec = wait_for(lambda: next(iter(runs.glob("*.parquet")), None), what="the recording")
        df = wait_for(lambda: read_recording(rec), what="the recording readable")
        ctrl, q = df["Actuators/shoulder:ctrl"].to_numpy(), df["Joints/shoulder:qpos"].to_numpy()
        target = ctrl[-1]
        assert target == pytest.approx(1.2), f"1.2 typed into the slider gave an input of {target}"
        assert abs(q[0]) < 0.05 and abs(q[-1] - target) < 0.1, (q[0], q[-1], target)  # the arm went there
        changed = (before.astype(int) - after.astype(int)).any(axis=2).mean()
        assert changed > 0.005, f"the view did not change ({changed:.4f} of its pixels)"
        app.widget("Release")  # the Controls row back in view, as a person scrolls up to it
        assert any(it.get("text") == "shoulder_input" for it in app.items()), "the actuator's row names its slider"
    finally:
        assert app.quit_discarding() == 0, app.output()  # the new slider is an unsaved edit of the rig


def _slider(app: App, label: str):
    """Screen rectangle of the Params slider ``label`` (the plots' signal tree has a node of that
    name too), scrolled into view."""
    return app.widget(label, kind="mvSliderDouble")


def _image(path):
    import mediapy

    try:
        return mediapy.read_image(path)
    except Exception:  # noqa: BLE001 - still being written
        return None


def _wait_paused(app: App) -> None:
    """The run is paused: the status says so and the time readout holds still."""
    seen: list[float] = []

    def still() -> bool:
        items = app.items(offscreen=True)  # the readouts may be scrolled out of view
        paused = any(it.get("text") == "paused" for it in items)
        t = next((it["text"] for it in items if it.get("text", "").startswith("t = ")), None)
        ok = paused and t is not None and seen[-1:] == [t]
        seen.append(t)
        return ok

    wait_for(still, what="the run to pause", timeout=10)


def _magenta(img: np.ndarray) -> int:
    r, g, b = (img[..., i].astype(int) for i in range(3))
    return int(((r > 150) & (b > 150) & (g < 90)).sum())


def test_a_tracer_draws_the_tool_path_in_the_view_and_in_screenshots(laptop, tmp_path):
    app = App(laptop, _arm(tmp_path, TRACED.format(extra="")), home=tmp_path)
    try:
        # the arm swings; the trail grows
        view = wait_for(
            lambda: (lambda v: v if _magenta(v) > 300 else None)(laptop.grab(app.viewer)),
            what="the trail in the 3D view",
            timeout=30,
        )
        laptop.screenshot("tracer")
        assert _magenta(view) > 300, f"no trail in the 3D view ({_magenta(view)} magenta pixels)"
        app.key("ctrl+t")
        runs = tmp_path / "work" / "runs"
        shot = wait_for(lambda: next(iter(runs.glob("screenshot-*.png")), None), what="the screenshot file")
        img = wait_for(lambda: _image(shot), what="the screenshot written out")
        assert _magenta(img) > 300, f"no trail in the saved screenshot ({_magenta(img)} magenta pixels)"
    finally:
        assert app.close() == 0, app.output()


def test_snapshot_then_running_on_then_restore_returns_the_view(laptop, tmp_path):
    scenario = TRACED.format(extra="").split("[[tracers]]")[0]  # the swinging arm, no trail
    app = App(laptop, _arm(tmp_path, scenario), home=tmp_path)
    try:
        app.run_for(0.5)  # the arm is on its way
        app.key("space")  # pause
        _wait_paused(app)
        app.click("Snapshot")
        saved = wait_for(
            lambda: next(iter((tmp_path / "rig").glob("arm-snapshot*.npz")), None),
            what="the snapshot file next to the scenario",
        )
        t_snap = _time(app)
        # the paused view once it holds still (a software-rendered view on a busy machine draws the
        # state it paused at a frame or two later)
        first = laptop.still_view(app.viewer, what="the paused view", still_s=1.5)
        app.key("space")  # run on
        app.run_for(0.5)
        app.key("space")
        _wait_paused(app)
        moved = laptop.still_view(app.viewer, what="the view paused again", still_s=1.5)
        assert _time(app) > t_snap + 0.3
        assert (first != moved).any(axis=2).mean() > 0.003, "the arm did not move after the snapshot"
        app.key("ctrl+g")  # Restore, from the 3D view
        wait_for(lambda: abs(_time(app) - t_snap) < 1e-3, what="the time to go back to the snapshot's")
        wait_for(
            lambda: (
                ((first.astype(int) - laptop.grab(app.viewer).astype(int)).__abs__().max(axis=2) > 24).mean() < 0.001
            ),
            what="the 3D view to show the snapshot",
            timeout=30,  # a frame or two a second on a busy machine
        )
        back = laptop.grab(app.viewer)
        laptop.screenshot("snapshot_restored")
        differ = (first.astype(int) - back.astype(int)).__abs__().max(axis=2) > 24
        assert differ.mean() < 0.001, f"the view is not the snapshot's ({differ.mean():.4f} of pixels differ)"
        assert saved.stat().st_size > 0
    finally:
        assert app.close() == 0, app.output()
