"""The long jobs under way (a fit, modes, a frequency response, an export) beside the Status
title, always in view: what each is and how far it got, and Cancel, which stops them all; and the
recordings being saved ("saving run.parquet: 62 % (84.2 MB)"), which nothing cancels."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.panel_state import job_text
from mjrig.widgets.kit.themes import tip

__all__ = ["JobsLine"]


class JobsLine:
    """A text and a Cancel button, shown while ``PanelState.jobs`` lists a job (the text also
    while ``PanelState.outputs.saving`` lists a recording being saved)."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._text: int | str = 0
        self._cancel: int | str = 0
        self._shown: tuple[tuple[C.JobInfo, ...], tuple[C.JobInfo, ...]] | None = None

    def build(self, parent: int | str) -> None:
        """The text and the button, inside ``parent`` (a row)."""
        self._cancel = dpg.add_button(
            label="Cancel", parent=parent, show=False, callback=lambda: self.submit(C.CancelJobs())
        )
        tip(self._cancel, "stop the fit, modes or export under way (what it found so far is not kept)")
        self._text = dpg.add_text("", parent=parent, color=(240, 170, 60), show=False)

    def update(self, snap: C.PanelState) -> None:
        shown = (snap.jobs, snap.outputs.saving)
        if shown == self._shown:
            return
        self._shown = shown
        dpg.set_value(self._text, job_text(snap.jobs + snap.outputs.saving))
        dpg.configure_item(self._text, show=bool(snap.jobs or snap.outputs.saving))
        dpg.configure_item(self._cancel, show=bool(snap.jobs))
