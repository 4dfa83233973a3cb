"""Recording: output path, signal groups and rate; start/stop; rows written and file size; video;
the live rows streamed to a Rerun viewer.

The form is what Start and Ctrl+E (in the 3D view) record: each edit is sent to the session
(``PlanRecording``), and the form shows the session's plan again when the session sets it (a rig
opened with its [recording], a recording started: ``PanelState.outputs.plan_revision``)."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.panel_state import job_text
from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS

__all__ = ["RecordingPanel"]


class RecordingPanel:
    """Start submits StartRecording with the form's settings; stop finalizes a valid Parquet;
    every edit of the form submits PlanRecording."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._path: int | str = 0
        self._rate: int | str = 0
        self._groups: dict[str, int | str] = {}
        self._button: int | str = 0
        self._status: int | str = 0
        self._recording = False
        self._video_button: int | str = 0
        self._video_status: int | str = 0
        self._recover_group: int | str = 0
        self._rerun_address: int | str = 0
        self._rerun_button: int | str = 0
        self._rerun_status: int | str = 0
        self._streaming = False
        self._interrupted: tuple[str, ...] = ()
        self._revision = -1

    def build(self, parent: int | str) -> None:
        self._path = dpg.add_input_text(label="path", parent=parent, width=260, callback=self._on_form)
        self._rate = dpg.add_input_text(
            label="rate (samples/s, empty: every step)", parent=parent, width=80, callback=self._on_form
        )
        row = None
        for i, g in enumerate(SIGNAL_GROUPS):
            if i % 3 == 0:
                row = dpg.add_group(parent=parent, horizontal=True)
            self._groups[g] = dpg.add_checkbox(label=g, parent=row, default_value=True, callback=self._on_form)
        # Each live status sits above its button: a button's tooltip opens below the pointer and
        # would cover a status drawn under it.
        self._status = dpg.add_text("", parent=parent)
        self._button = dpg.add_button(label="Start recording", parent=parent, callback=self._on_toggle)
        with dpg.tooltip(self._button):
            dpg.add_text(
                "record the ticked groups to Parquet; an existing file is never replaced (NAME-2...)", wrap=360
            )
        dpg.add_separator(parent=parent)
        self._video_status = dpg.add_text("", parent=parent, wrap=0)
        self._video_button = dpg.add_button(label="Start video", parent=parent, callback=self._on_video)
        with dpg.tooltip(self._video_button):
            dpg.add_text("record what the 3D view shows, with the rig drawn, to runs/video-*.mp4", wrap=360)
        dpg.add_separator(parent=parent)
        self._rerun_status = dpg.add_text("", parent=parent, wrap=0)
        self._rerun_address = dpg.add_input_text(
            label="Rerun viewer", hint="host:port; empty: start one", parent=parent, width=200
        )
        self._rerun_button = dpg.add_button(label="Stream to Rerun", parent=parent, callback=self._on_rerun)
        with dpg.tooltip(self._rerun_button):
            dpg.add_text(
                "send every signal and the rig in 3D to a Rerun viewer while it runs (needs rerun-sdk)", wrap=360
            )
        self._recover_group = dpg.add_group(parent=parent)

    def _read(self) -> tuple[str, float | None, tuple[str, ...]]:
        """The form as it reads now: (path, rate samples/s or None, ticked groups)."""
        rate_text = dpg.get_value(self._rate).strip()
        try:
            rate = float(rate_text) if rate_text else None
        except ValueError:
            rate = None
        groups = tuple(g for g, item in self._groups.items() if dpg.get_value(item))
        return dpg.get_value(self._path).strip(), rate, groups

    def _on_form(self) -> None:
        self.submit(C.PlanRecording(*self._read()))

    def _on_toggle(self) -> None:
        if self._recording:
            self.submit(C.StopRecording())
            return
        self.submit(C.StartRecording(*self._read()))

    def _on_recover(self, sender: int, app_data: object, path: str) -> None:
        self.submit(C.RecoverRecording(path))

    def _show_interrupted(self, paths: tuple[str, ...]) -> None:
        for child in dpg.get_item_children(self._recover_group, 1) or []:
            dpg.delete_item(child)
        for path in paths:
            row = dpg.add_group(parent=self._recover_group, horizontal=True)
            dpg.add_button(label="Recover", parent=row, callback=self._on_recover, user_data=path)
            dpg.add_text(f"interrupted: {path}", parent=row, color=(230, 200, 90), wrap=360)

    def _on_video(self) -> None:
        self.submit(C.ToggleVideo())

    def _on_rerun(self) -> None:
        self.submit(C.StreamToRerun(on=not self._streaming, address=dpg.get_value(self._rerun_address).strip()))

    def _show_rerun(self, part: C.RerunPart) -> None:
        self._streaming = bool(part.address)
        dpg.configure_item(self._rerun_button, label="Stop stream" if self._streaming else "Stream to Rerun")
        if not self._streaming:
            dpg.set_value(self._rerun_status, "")
            return
        text = f"Rerun: {part.rows} rows sent to {part.address}"
        text += f" ({part.dropped} dropped: the viewer fell behind)" if part.dropped else ""
        dpg.set_value(self._rerun_status, text + (f"\n{part.error}" if part.error else ""))
        dpg.configure_item(self._rerun_status, color=(240, 60, 60) if part.error else (120, 200, 240))

    def _show_plan(self, plan: dict) -> None:
        """Fill the form from the session's plan (a rig's [recording]: what `mjrig run` would record)."""
        dpg.set_value(self._path, str(plan.get("path", "")))
        rate = plan.get("rate")
        dpg.set_value(self._rate, "" if rate is None else f"{float(rate):g}")
        signals = plan.get("signals")
        for g, item in self._groups.items():
            dpg.set_value(item, signals is None or g in signals)

    def update(self, snap: C.PanelState) -> None:
        if snap.outputs.plan_revision != self._revision:
            self._revision = snap.outputs.plan_revision
            self._show_plan(snap.outputs.recording_plan)
        if snap.outputs.interrupted != self._interrupted:
            self._interrupted = snap.outputs.interrupted
            self._show_interrupted(snap.outputs.interrupted)
        self._show_rerun(snap.part(C.RerunPart))
        video = snap.outputs.video_path is not None
        dpg.configure_item(self._video_button, label="Stop video" if video else "Start video")
        dpg.set_value(self._video_status, f"REC video {snap.outputs.video_path}" if video else "")
        self._recording = snap.outputs.recording_path is not None
        dpg.configure_item(self._button, label="Stop recording" if self._recording else "Start recording")
        if self._recording:
            text = f"REC {snap.outputs.recording_rows} rows, {snap.outputs.recording_bytes / 1e6:.2f} MB on disk\n{snap.outputs.recording_path}"
            if snap.outputs.recording_error:
                text += f"\n{snap.outputs.recording_error}"
            dpg.set_value(self._status, text)
            dpg.configure_item(self._status, color=(240, 60, 60) if snap.outputs.recording_error else (240, 120, 120))
        elif snap.outputs.saving:  # stopped, the file being finished: not "stopped" until it exists
            dpg.set_value(self._status, job_text(snap.outputs.saving))
            dpg.configure_item(self._status, color=(240, 170, 60))
        else:
            dpg.set_value(self._status, "not recording")
            dpg.configure_item(self._status, color=(150, 150, 150))
