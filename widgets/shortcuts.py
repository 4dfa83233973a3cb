"""The control panel's keys (``mjrig.panel_keys``): a Dear PyGui key handler per key that calls
the panel's action of the same name.

Dear PyGui's handlers see every key press in the window, whatever widget has the keyboard; Ctrl
is read at the press. While a dialog is up only Escape acts, so no key opens a second dialog
over it.
"""
from __future__ import annotations

from typing import Any, Callable

import dearpygui.dearpygui as dpg

from mjrig.panel_keys import PANEL_KEYS

__all__ = ["Shortcuts"]


class Shortcuts:
    """``actions`` maps each ``PANEL_KEYS`` action to a call without arguments; ``dialog_up()``
    says whether a dialog has the keyboard."""

    def __init__(self, actions: dict[str, Callable[[], Any]], *, dialog_up: Callable[[], bool]) -> None:
        missing = {k.action for k in PANEL_KEYS} - set(actions)
        assert not missing, f"no action for panel keys {sorted(missing)}"
        self.actions = actions
        self.dialog_up = dialog_up

    def build(self) -> None:
        with dpg.handler_registry():
            for k in PANEL_KEYS:
                dpg.add_key_press_handler(key=getattr(dpg, f"mvKey_{k.base}"), user_data=k, callback=self._on_key)

    def _on_key(self, sender: int | str, app_data: object, key: Any) -> None:
        ctrl = any(dpg.is_key_down(code) for code in (dpg.mvKey_ModCtrl, dpg.mvKey_LControl, dpg.mvKey_RControl))
        if ctrl != key.ctrl or (not key.in_dialogs and self.dialog_up()):
            return
        self.actions[key.action]()
