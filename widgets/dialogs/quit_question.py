"""The question asked before quitting with unsaved rig edits or a long job under way (the panel's
or the 3D view's close button, File > Quit, Ctrl+Q): save first, quit without saving (stopping the
job), or keep working (let the job finish)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dearpygui.dearpygui as dpg

__all__ = ["QuitQuestion"]

WIDTH = 460


class QuitQuestion:
    """A modal with three answers; each button calls the callback of the same name.

    ``on_save`` is expected to open the Save dialog a few frames later (Dear PyGui drops a modal
    opened in the frame another one closes) and to quit once the file is written, as the question
    before opening another file does.
    """

    def __init__(self, *, on_save: Callable[[], Any], on_quit: Callable[[], Any], on_keep: Callable[[], Any]) -> None:
        self.on_save, self.on_quit, self.on_keep = on_save, on_quit, on_keep
        self._window: int | str = 0
        self._recording: int | str = 0
        self._unsaved: int | str = 0
        self._jobs: int | str = 0
        self._save: int | str = 0
        self._quit: int | str = 0
        self._keep: int | str = 0
        self._held = False  # the session asks: Keep working leaves the question up until ``hide``

    def build(self) -> None:
        with dpg.window(
            label="Quit mjrig?", modal=True, show=False, no_saved_settings=True, width=WIDTH, on_close=self._on_keep
        ) as self._window:
            self._unsaved = dpg.add_text(
                "The rig has changes that are not saved in a scenario (File > Save scenario...).", wrap=WIDTH - 20
            )
            self._jobs = dpg.add_text("", wrap=WIDTH - 20, show=False, color=(240, 170, 60))
            self._recording = dpg.add_text("", wrap=WIDTH - 20, show=False, color=(230, 200, 90))
            with dpg.group(horizontal=True):
                self._save = dpg.add_button(label="Save scenario first...", callback=self._on_save)
                self._quit = dpg.add_button(label="Quit without saving", callback=self._on_quit)
                self._keep = dpg.add_button(label="Keep working", callback=self._on_keep)

    @property
    def shown(self) -> bool:
        return bool(self._window) and dpg.is_item_shown(self._window)

    def show(self, *, recording: str | None = None, unsaved: bool = True, jobs: str = "", held: bool = False) -> None:
        """Ask; ``recording``: the file being recorded, which quitting closes (a complete file);
        ``unsaved``: the rig has unsaved edits; ``jobs``: the long jobs under way, which quitting
        stops ("a fit: 12 evaluations"); ``held``: the session asks (the 3D view was closed), and
        after Keep working the question stays until ``hide()``, once the session no longer asks."""
        self._held = held
        dpg.configure_item(self._unsaved, show=unsaved)
        dpg.configure_item(self._save, show=unsaved)
        dpg.set_value(self._jobs, f"Running: {jobs}. Quitting stops it; what it found so far is not kept.")
        dpg.configure_item(self._jobs, show=bool(jobs))
        dpg.configure_item(self._quit, label="Quit without saving" if unsaved else "Stop it and quit")
        dpg.configure_item(self._keep, label="Keep working" if unsaved or not jobs else "Wait for it")
        if recording:
            dpg.set_value(
                self._recording, f"A recording is running: quitting closes it as a complete file, {recording}"
            )
        dpg.configure_item(self._recording, show=bool(recording))
        vw = dpg.get_viewport_client_width()
        dpg.configure_item(self._window, show=True, pos=(max(0, (vw - WIDTH) // 2), 140))

    def hide(self) -> None:
        """Take the question down (a held one: the session has taken Keep working)."""
        dpg.configure_item(self._window, show=False)

    def _on_save(self) -> None:
        self.hide()
        self.on_save()

    def _on_quit(self) -> None:
        self.on_quit()

    def _on_keep(self, *args: object) -> None:
        if not self._held:
            self.hide()
        self.on_keep()

    def keep(self) -> None:
        """Answer "Keep working" (the Escape key)."""
        self._on_keep()
