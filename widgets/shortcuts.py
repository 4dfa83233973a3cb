"""The control panel's keys (``mjrig.settings.panel_keys``): each frame, a key pressed in the panel calls
the panel's action of the same name.

Keys are read in ``update``, on the GUI thread once a frame, not by Dear PyGui key handlers: those
run their callbacks on Dear PyGui's callback thread, sometimes a frame or more later, when Ctrl
may already be up (a quick Ctrl+S was then taken for a plain S). The panel window sees every key
press, whatever widget has the keyboard. While a dialog is up only Escape acts, so no key opens a
second dialog over it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dearpygui.dearpygui as dpg

from mjrig.settings.panel_keys import PANEL_KEYS

__all__ = ["Shortcuts"]


class Shortcuts:
    """``actions`` maps each ``PANEL_KEYS`` action to a call without arguments; ``dialog_up()``
    says whether a dialog has the keyboard."""

    def __init__(self, actions: dict[str, Callable[[], Any]], *, dialog_up: Callable[[], bool]) -> None:
        missing = {k.action for k in PANEL_KEYS} - set(actions)
        assert not missing, f"no action for panel keys {sorted(missing)}"
        self.actions = actions
        self.dialog_up = dialog_up
        self._codes = [(k, getattr(dpg, f"mvKey_{k.base}")) for k in PANEL_KEYS]

    def update(self, snapshot: object) -> None:
        """Act on the keys pressed in the frame just drawn."""
        pressed = [k for k, code in self._codes if dpg.is_key_pressed(code)]
        if not pressed:
            return
        # Ctrl down, or let go in this very frame: a quick Ctrl+S (xdotool's, a fast hand) can bring
        # the S and Ctrl's release in one frame, and Dear ImGui takes both at once.
        ctrl = any(
            dpg.is_key_down(code) or dpg.is_key_released(code)
            for code in (dpg.mvKey_ModCtrl, dpg.mvKey_LControl, dpg.mvKey_RControl)
        )
        for key in pressed:
            if ctrl == key.ctrl and (key.in_dialogs or not self.dialog_up()):
                self.actions[key.action]()
                return  # one action a frame: the first may have opened a dialog
