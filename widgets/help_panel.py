"""Keys: the viewer's keys, generated from the one key table (``mjrig.settings.keys``), as remapped, and
the panel's own (``mjrig.settings.panel_keys``)."""

from __future__ import annotations

import dearpygui.dearpygui as dpg

from mjrig.settings import panel_keys
from mjrig.settings.keys import EXTRA_HELP, KeyMap, config_dir

__all__ = ["HelpPanel"]


class HelpPanel:
    """Static table of the key map in force; ``update`` does nothing."""

    def __init__(self, keymap: KeyMap) -> None:
        self.keymap = keymap

    def build(self, parent: int | str) -> None:
        _table(parent, self.keymap.rows() + list(EXTRA_HELP))
        dpg.add_text(
            f"Keys act in the 3D viewer window; change them in {config_dir() / 'keys.toml'}. "
            "Plain letters are MuJoCo's own (T transparency, F contact forces, ...).",
            parent=parent,
            wrap=400,
            color=(150, 150, 150),
        )
        dpg.add_text("In this panel:", parent=parent)
        _table(parent, [(k.key, k.help) for k in panel_keys.PANEL_KEYS] + list(panel_keys.EXTRA_HELP))

    def update(self, snapshot: object) -> None:
        return None


def _table(parent: int | str, rows: list[tuple[str, str]]) -> None:
    with dpg.table(parent=parent, header_row=False):
        dpg.add_table_column(width_fixed=True)
        dpg.add_table_column()
        for key, what in rows:
            with dpg.table_row():
                dpg.add_text(key, color=(230, 200, 90))
                dpg.add_text(what, wrap=0)
