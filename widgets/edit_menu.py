"""The Edit menu: Undo and Redo, each naming the edit it would take back or do again ("Undo
remove load 'extra'"), greyed where there is none. The same as Ctrl+Z and Ctrl+Y in the panel, and
Ctrl+Z and Ctrl+Shift+Z in the 3D view (``mjrig.settings``); the history is the session's, one per
opened rig (``EntriesPart.undo``/``redo``)."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.settings.panel_keys import panel_key

__all__ = ["EditMenu"]


class EditMenu:
    """Undo and Redo in the panel's menu bar; ``update`` relabels them from the panel state."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._shown = ("", "")

    def build_menu(self) -> None:
        """The Edit menu (call inside the window's menu bar)."""
        with dpg.menu(label="Edit"):
            self._undo = dpg.add_menu_item(
                label="Undo", enabled=False, shortcut=panel_key("undo").key, callback=lambda: self.submit(C.Undo())
            )
            self._redo = dpg.add_menu_item(
                label="Redo", enabled=False, shortcut=panel_key("redo").key, callback=lambda: self.submit(C.Redo())
            )

    def update(self, snap: C.PanelState) -> None:
        labels = (snap.entries.undo, snap.entries.redo)
        if labels == self._shown:
            return
        self._shown = labels
        for item, verb, label in ((self._undo, "Undo", labels[0]), (self._redo, "Redo", labels[1])):
            dpg.configure_item(item, label=f"{verb} {label}" if label else verb, enabled=bool(label))
