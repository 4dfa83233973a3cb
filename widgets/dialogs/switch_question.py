"""The question asked before another rig opens (a drop, File > Open, Recent, a bundled rig) or the
model is read again (Reload, a file changed on disk) while a long job of the rig runs
(``PanelState.pending_switch``): stop it and go on, keep it running and go on (it reports to
Status only), or cancel."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C

__all__ = ["SwitchQuestion"]

WIDTH = 480
WAIT_FRAMES = 3
"""Frames to wait before showing it: Dear PyGui drops a modal opened in the frame another one
(the Open dialog) closes."""


class SwitchQuestion:
    """A modal with three answers, shown while the session waits for one."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._window: int | str = 0
        self._text: int | str = 0
        self._stop: int | str = 0
        self._keep: int | str = 0
        self._asked: tuple[str, str] | None = None
        self._due = 0

    def build(self) -> None:
        with dpg.window(
            label="A job is running", modal=True, show=False, no_saved_settings=True, width=WIDTH, on_close=self.cancel
        ) as self._window:
            self._text = dpg.add_text("", wrap=WIDTH - 20)
            with dpg.group(horizontal=True):
                self._stop = dpg.add_button(label="Stop it and open", callback=lambda: self._answer("stop"))
                self._keep = dpg.add_button(label="Keep it running and open", callback=lambda: self._answer("keep"))
                dpg.add_button(label="Cancel", callback=self.cancel)

    @property
    def shown(self) -> bool:
        return bool(self._window) and dpg.is_item_shown(self._window)

    def update(self, snap: C.PanelState) -> None:
        if snap.pending_switch != self._asked:
            self._asked = snap.pending_switch
            self._due = WAIT_FRAMES if self._asked else 0
            if not self._asked:
                dpg.configure_item(self._window, show=False)
        if self._due:
            self._due -= 1
            if not self._due and self._asked:
                self._show(*self._asked)

    def _show(self, what: str, jobs: str) -> None:
        verb = what.split(" ", 1)[0]  # "open" or "reload"
        dpg.set_value(
            self._text,
            f"Running: {jobs}. To {what}: stop it (what it found so far is not kept), or keep it "
            "running (it reports to Status when it ends, and shows nothing on the next rig)?",
        )
        dpg.configure_item(self._stop, label=f"Stop it and {verb}")
        dpg.configure_item(self._keep, label=f"Keep it running and {verb}")
        vw = dpg.get_viewport_client_width()
        dpg.configure_item(self._window, show=True, pos=(max(0, (vw - WIDTH) // 2), 140))

    def _answer(self, jobs: C.JobsOnSwitch) -> None:
        dpg.configure_item(self._window, show=False)
        self.submit(C.AnswerSwitch(jobs))

    def cancel(self, *args: object) -> None:
        """Answer Cancel (also the Escape key and the window's close button): nothing opens. The
        question goes once the session no longer waits for an answer (``update``), so that its
        going shows the Cancel taken."""
        self.submit(C.KeepRig())
