"""The Simulation section: snapshots, keyframes, the start state, the run's state and step count,
the 3D view's camera and arrow scale (Play, Step, Reset and speed are on the run bar)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.kit.themes import disabled_button_theme, tip

__all__ = ["SimPanel"]


class SimPanel:
    """Snapshot/Restore, keyframe, initial state, the run's state, camera and arrow scale."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._snapshot: int | str = 0
        self._restore: int | str = 0
        self._can_restore: bool | None = None
        self._state: int | str = 0
        self._camera: int | str = 0
        self._cameras: tuple[str, ...] = ()

    def build(self, parent: int | str) -> None:
        state = dpg.add_group(parent=parent, horizontal=True)
        tip(
            dpg.add_button(label="Snapshot", parent=state, callback=self._on_snapshot),
            "save the complete physics state to a file next to the scenario (Ctrl+B in the 3D view)",
        )
        self._restore = dpg.add_button(label="Restore", parent=state, callback=self._on_restore)
        tip(self._restore, "put the last snapshot of this rig back (Ctrl+G in the 3D view)")
        dpg.bind_item_theme(self._restore, disabled_button_theme())
        tip(
            dpg.add_button(label="Save keyframe", parent=state, callback=self._on_keyframe),
            "write a copy of the MJCF with the current state as a <key> (next to the model)",
        )
        tip(
            dpg.add_button(label="Use current as initial", parent=parent, callback=self._on_initial),
            "start from the joints' positions and velocities now: Reset and every run of the scenario "
            "begin here ([initial], saved with the scenario)",
        )
        self._snapshot = dpg.add_text("", parent=parent, color=(150, 150, 150), wrap=0)  # a line of its own
        self._state = dpg.add_text("", parent=parent, wrap=0)
        self._steps = dpg.add_text("", parent=parent, color=(150, 150, 150))
        view = dpg.add_group(parent=parent, horizontal=True)
        fit = dpg.add_button(label="Fit view", parent=view, callback=self._on_fit)
        with dpg.tooltip(fit):
            dpg.add_text("frame the whole model in the 3D view")
        self._camera = dpg.add_combo(
            ["free"], parent=view, width=160, default_value="free", label="camera", callback=self._on_camera
        )
        self._arrows = dpg.add_input_text(
            parent=view, width=60, hint="auto", label="arrows m/N", on_enter=True, callback=self._on_arrows
        )
        tip(
            self._arrows,
            "metres of arrow per newton (torques: 5x per N·m); empty: automatic, the largest "
            "arrow a quarter of the model. Enter applies it ([view] in the scenario)",
        )
        self._arrows_shown: float | None = None

    def _on_fit(self) -> None:
        self.submit(C.SetCamera("fit"))

    def _on_camera(self, sender: int, value: str) -> None:
        self.submit(C.SetCamera(value))

    def _on_snapshot(self) -> None:
        self.submit(C.TakeSnapshot())

    def _on_restore(self) -> None:
        self.submit(C.RestoreSnapshot())

    def _on_arrows(self, sender: int, value: str) -> None:
        text = value.strip().lower()
        try:
            force = None if text in ("", "auto") else float(text)
        except ValueError:
            dpg.set_value(self._arrows, "")
            return
        if force is not None and not force > 0:
            dpg.set_value(self._arrows, "")
            return
        self.submit(C.SetArrowScale(force))

    def _on_initial(self) -> None:
        self.submit(C.UseCurrentAsInitial())

    def _on_keyframe(self) -> None:
        self.submit(C.SaveKeyframe())

    def update(self, snap: C.PanelState) -> None:
        if snap.tools.force_scale != self._arrows_shown and not dpg.is_item_active(self._arrows):
            self._arrows_shown = snap.tools.force_scale
            dpg.set_value(self._arrows, "" if snap.tools.force_scale is None else f"{snap.tools.force_scale:g}")
        snapshot = snap.tools.snapshot_path
        can_restore = bool(snapshot)
        if can_restore != self._can_restore:  # a snapshot belongs to its rig: none after opening another
            self._can_restore = can_restore
            dpg.configure_item(self._restore, enabled=can_restore)
        dpg.set_value(self._snapshot, Path(snapshot).name if snapshot else "no snapshot of this rig yet")
        colour = {
            C.RunState.RUNNING: (120, 220, 120),
            C.RunState.PAUSED: (230, 200, 90),
            C.RunState.ERROR: (240, 60, 60),
        }.get(snap.state, (180, 180, 180))
        text = snap.state.value + (f": {snap.error}" if snap.error else "")
        dpg.set_value(self._steps, f"{snap.steps} steps")
        dpg.set_value(self._state, text)
        dpg.configure_item(self._state, color=colour)
        if snap.model.cameras != self._cameras:
            self._cameras = snap.model.cameras
            dpg.configure_item(self._camera, items=list(self._cameras))
        if dpg.get_value(self._camera) != snap.camera:
            dpg.set_value(self._camera, snap.camera)
