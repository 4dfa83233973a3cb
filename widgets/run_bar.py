"""The run bar: the controls a person reaches for all the time, in one row under the menu bar that
never scrolls away — Play/Pause, Step, Reset, the speed, REC, simulated time (s) and how fast the
run goes against the wall clock (with the reason when a video slows it)."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.kit.themes import tip

__all__ = ["RunBar", "speed_label", "HEIGHT", "SLOW_VIDEO"]

HEIGHT = 30
"""Height (px) the bar takes at the top of the panel, its spacing included."""

SLOW_VIDEO = 0.9
"""Below this real-time factor (wall seconds per simulated second, inverted) while a video
records at 1x, the bar says that the video is what slows the run."""

_SLOW = (240, 170, 60)
_PLAIN = (200, 200, 200)
_REC = (200, 50, 50)


def speed_label(speed: float) -> str:
    """'1x', '0.25x' or 'max' (as fast as possible)."""
    return "max" if speed <= 0 else f"{speed:g}x"


class RunBar:
    """Play/Pause, Step, Reset, speed, REC and the time readout; each submits the command the 3D
    view's keys submit (Space, Right arrow, Backspace, Ctrl+E)."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._play: int | str = 0
        self._speed: int | str = 0
        self._rec: int | str = 0
        self._time: int | str = 0
        self._rate: int | str = 0
        self._recording: bool | None = None

    def build(self, parent: int | str) -> None:
        """The row, inside ``parent`` (the panel's window, before its panes)."""
        with dpg.group(parent=parent, horizontal=True):
            self._play = dpg.add_button(label="Pause", width=60, callback=lambda: self.submit(C.TogglePause()))
            tip(self._play, "pause or run the simulation (Space in the 3D view)")
            step = dpg.add_button(label="Step", callback=lambda: self.submit(C.StepOnce(1)))
            tip(step, "one timestep, then pause (Right arrow in the 3D view)")
            reset = dpg.add_button(label="Reset", callback=lambda: self.submit(C.Reset()))
            tip(
                reset,
                "back to the start state: the scenario's keyframe or snapshot and its [initial], else the model's own",
            )
            self._speed = dpg.add_combo(
                [speed_label(s) for s in C.SPEEDS],
                label="##speed",  # a name for the widget map, none drawn
                width=62,
                default_value="1x",
                callback=self._on_speed,
            )
            tip(self._speed, "how fast the run goes against the wall clock; max: as fast as the machine can")
            self._rec = dpg.add_button(label="REC", width=44, callback=lambda: self.submit(C.ToggleRecording()))
            tip(
                self._rec,
                "start or stop recording what the Recording section says (Ctrl+E in the 3D view); "
                "an existing file is never replaced",
            )
            with dpg.theme() as recording, dpg.theme_component(dpg.mvButton):
                dpg.add_theme_color(dpg.mvThemeCol_Button, _REC)
                dpg.add_theme_color(dpg.mvThemeCol_ButtonHovered, (225, 70, 70))
            self._rec_theme = recording
            self._time = dpg.add_text("t = 0.000 s")
            self._rate = dpg.add_text("", color=_PLAIN)
            tip(self._rate, "simulated seconds per second of wall time (1x: real time)")

    def _on_speed(self, sender: int, value: str) -> None:
        self.submit(C.SetSpeed(0.0 if value == "max" else float(value.rstrip("x"))))

    def update(self, snap: C.PanelState) -> None:
        running = snap.state == C.RunState.RUNNING
        dpg.configure_item(self._play, label="Pause" if running else "Play")
        if not dpg.is_item_active(self._speed):
            dpg.set_value(self._speed, speed_label(snap.speed))
        recording = snap.outputs.recording_path is not None
        if recording != self._recording:
            self._recording = recording
            dpg.bind_item_theme(self._rec, self._rec_theme if recording else 0)
            dpg.configure_item(self._rec, label="● REC" if recording else "REC", width=60 if recording else 44)
        dpg.set_value(self._time, f"t = {snap.time:.3f} s")
        rate, text, colour = snap.realtime_factor, "", _PLAIN
        if running and rate > 0:  # a replay's: the recorded motion's speed, 1.00x as it happened
            text = f"replay {rate:.2f}x real time" if snap.timeline.replay else f"{rate:.2f}x real time"
            slow = snap.speed > 0 and rate < SLOW_VIDEO * snap.speed
            if slow and snap.outputs.video_path is not None:
                text, colour = f"{rate:.2f}x real time: the video renders every frame", _SLOW
            elif slow:
                colour = _SLOW
        dpg.set_value(self._rate, text)
        dpg.configure_item(self._rate, color=colour)
