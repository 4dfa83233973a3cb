"""The Modes section as a person uses it, on the bundled robot arm at 1280x800 and 1920x1080:
*Work out modes* lists its two servo modes (the same as ``mjrig modes`` prints), *show 1*
pauses the run and swings the arm in the 3D view while the run's time stands still, less with the
amplitude slider at its left end, *stop 1*
puts the view back; *Bode* draws the elbow's response to the gripper's mass; *Reload* keeps both,
marked as made before the model changed (no mode can be shown), until they are worked out again."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop
from tests.gui.test_desktop_timeline import _time
from tests.waiting import wait_for


def _moved(a: np.ndarray, b: np.ndarray) -> float:
    """The share of the view's pixels that changed between two grabs."""
    return float((np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 24).mean())


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_a_mode_is_listed_animated_and_its_response_drawn(tmp_path, size):
    cli = subprocess.run(
        [sys.executable, "-m", "mjrig", "modes", "robot_arm"], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    first_hz = float(re.match(r"mode 1: ([0-9.]+) Hz", cli.stdout).group(1))
    desktop = Desktop(*size)
    app = App(desktop, "robot_arm", home=tmp_path / "home")
    try:
        app.run_for(0.3)
        app.click("Pause")
        app.click("Reset")  # the initial state: the one `mjrig modes` linearises about
        wait_for(lambda: _time(app) == 0.0, what="the run back at its start")
        app.click("Modes")
        app.click("Work out modes")
        app.widget("amplitude")  # scrolled down to the table, its status line above it in view
        status = wait_for(
            lambda: app.text(r"2 oscillatory modes of 4, at the state shown, t = 0 s", offscreen=True),
            what="the modes listed",
            timeout=60,
        )
        cells = [it["text"] for it in app.items(offscreen=True) if it["type"] == "mvText"]
        assert cells, status
        t_then = _time(app)
        still = desktop.still_view(app.viewer, what="the paused view")
        app.click("show 1")
        wait_for(lambda: app.text(r".*showing mode 1.*", offscreen=True), what="mode 1 shown")
        frames = [still]

        def swinging() -> bool:
            """Grabs a third of a second apart (the arm swings at 1 Hz) until one shows the arm
            away from the paused pose and two in a row differ: a starved software renderer may
            draw only a frame or two a second."""
            time.sleep(0.3)
            frames.append(desktop.grab(app.viewer))
            away = max(_moved(still, f) for f in frames[1:])
            apart = (_moved(a, b) for a, b in zip(frames[1:], frames[2:], strict=False))
            return away > 0.003 and max(apart, default=0.0) > 0.003

        wait_for(swinging, what="the arm swinging in the view", every=0.0, timeout=30)
        swung = max(_moved(still, f) for f in frames[1:])
        x, y, w, h = app.widget("amplitude")
        app.click_at(x + 3, y + h // 2)  # the slider's left end: almost no swing
        wait_for(lambda: float(app.value("amplitude")) < 0.2, what="the amplitude slider at its left end")
        # the view follows a frame or two later (llvmpipe draws one or two a second at 1920x1080), and
        # one grab of the old swing passing its rest pose is small too: the smaller swing is six grabs
        # in a row, 1.8 s (almost two of the old swings), all well inside the old one
        small: list[float] = []

        def smaller() -> bool:
            time.sleep(0.3)
            small.append(_moved(still, desktop.grab(app.viewer)))
            return len(small) >= 6 and max(small[-6:]) < 0.5 * swung

        wait_for(smaller, what="six grabs in a row inside half the old swing", every=0.0, timeout=30)
        assert _time(app) == t_then  # the run stays paused where it was
        desktop.screenshot(str(tmp_path / f"modes-{size[0]}"))
        app.click("stop 1")
        wait_for(lambda: _moved(still, desktop.grab(app.viewer)) < 0.002, what="the view back at the run's state")
        # the first row's frequency is the CLI's
        shown_hz = float(next(c for c in cells if re.fullmatch(r"[0-9.]+", c) and abs(float(c) / first_hz - 1) < 1e-3))
        assert abs(shown_hz / first_hz - 1) < 1e-3
        app.click("Bode")
        done = wait_for(
            lambda: app.text(r"Joints/.*:qpos / .* \d+ frequencies, .* Hz", offscreen=True),
            what="the response drawn",
            timeout=60,
        )
        assert done
        x, y, w, h = app.widget("phase (deg)")  # scrolled into view, as a person would to read it
        assert w > 200 and h > 80
        desktop.screenshot(str(tmp_path / f"bode-{size[0]}"))
        # the model read again (Reload): the modes and the response stay, marked as made before it
        app.click("Reload")
        wait_for(
            lambda: app.text("made before the model changed: work them out again", offscreen=True),
            what="the modes marked stale",
            timeout=30,
        )
        app.click("show 1")  # greyed out: a stale shape is of the old model's joints
        assert app.redrawn(5) and not app.text(r".*showing mode.*", offscreen=True)
        desktop.screenshot(f"modes_stale_{size[0]}x{size[1]}")
        app.click("Work out modes")
        wait_for(
            lambda: app.text(r"2 oscillatory modes of 4, .*", offscreen=True),
            what="the modes current again",
            timeout=60,
        )
    finally:
        app.quit_discarding()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_modes_at_a_time_of_the_run_and_a_bode_of_every_plotted_signal(tmp_path, size):
    """The two-mass chain with both positions plotted: *at t =* 0.5 and *Work out modes* lists
    its two modes linearised where a run from the start is at 0.5 s; *every plotted signal* and
    *Bode* draw both masses' responses to the push, each peaking at the first mode's frequency
    sqrt(k(3 - √5)/2m)/2π."""
    import math

    from tests.unit.test_modes import chain

    k, m = 800.0, 2.0
    path = chain(tmp_path, k=k, m=m, alpha=0.2)
    path.write_text(path.read_text() + '\n[plots]\nsignals = ["Joints/x1:qpos", "Joints/x2:qpos"]\n')
    desktop = Desktop(*size)
    app = App(desktop, path, home=tmp_path / "home")
    try:
        app.click("Modes")
        app.click("at t =")
        app.type_into("s from the start", "0.5", enter=True)
        app.click("Work out modes")
        app.widget("amplitude")  # scrolled down to the table, its status line above it in view
        wait_for(
            lambda: app.text(r"2 oscillatory modes of 2, at t = 0\.5 s of a run from the start", offscreen=True),
            what="the modes at t = 0.5 s",
            timeout=60,
        )
        app.click("every plotted signal")
        app.click("Bode")
        said = wait_for(
            lambda: app.text(r"Joints/x1:qpos / .*\nJoints/x2:qpos / .*", offscreen=True),
            what="both responses drawn",
            timeout=60,
        )
        first = math.sqrt(k * (3 - math.sqrt(5)) / (2 * m)) / (2 * math.pi)
        peaks = [float(x) for x in re.findall(r"at ([0-9.]+) Hz", said["text"])]
        assert len(peaks) == 2 and all(abs(p / first - 1) < 0.02 for p in peaks), said["text"]
        app.widget("phase (deg)")  # scrolled into view, as a person would to read it
        legend = [it for it in app.items() if it.get("legend")]
        assert legend, "the Bode plots have no legend"
        desktop.screenshot(f"bode_two_outputs_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_trim_inputs_holds_a_level_arm_and_says_with_what(tmp_path, size):
    """A bare two-motor arm opened level: *at equilibrium* with *trim inputs* solves the torques
    that hold it there and the status line names them: the shoulder's the whole arm's moment
    about it (m1 g l1/2 + m2 g (l1 + l2/2) = 5.886 N·m), the elbow's 0.981 N·m."""
    from tests.unit.test_linear_bare import _arm

    arm = _arm(tmp_path)
    desktop = Desktop(*size)
    app = App(desktop, arm, home=tmp_path / "home")
    try:
        app.click("Pause")
        app.click("Reset")
        wait_for(lambda: _time(app) == 0.0, what="the run back at its start")
        app.click("Modes")
        app.click("trim inputs")
        app.click("Work out modes")
        app.widget("amplitude")  # scrolled down to the table, its status line above it in view
        said = wait_for(
            lambda: app.text(
                r"0 oscillatory modes of 4, at rest \(solved: .*trimmed inputs: shoulder_motor = .*", offscreen=True
            ),
            what="the trimmed inputs in the status line",
            timeout=60,
        )
        text = said["text"].replace("\n", " ")
        shoulder = float(re.search(r"shoulder_motor = (-?[0-9.]+) N·m", text).group(1))
        elbow = float(re.search(r"elbow_motor = (-?[0-9.]+) N·m", text).group(1))
        assert abs(abs(shoulder) / 5.886 - 1) < 1e-3 and abs(abs(elbow) / 0.981 - 1) < 1e-3, text
        app.see_text(r"0 oscillatory modes of 4, at rest .*")  # scrolled up to it, as a person reads it
        desktop.screenshot(str(tmp_path / f"modes-trim-{size[0]}"))
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
