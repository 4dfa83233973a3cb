"""Help: the viewer keys (from the one KEYMAP) and how the panels work."""
from __future__ import annotations

import dearpygui.dearpygui as dpg

__all__ = ["HelpPanel", "KEY_HELP"]

KEY_HELP = (
    ("space", "pause / run"),
    ("right arrow", "one step (pauses)"),
    ("S / F", "slower / faster (0.1x ... 10x, max)"),
    ("V", "start / stop video"),
    ("T", "screenshot (PNG)"),
    ("C", "contact forces on / off"),
    ("R", "transparency on / off"),
    ("L", "reload the model, keeping the rig"),
    ("double-click", "select a point on a body; 'Attach here' uses it"),
    ("drop a file", "open an .xml, .mjb or .toml dropped on the 3D view"),
)


class HelpPanel:
    """Static text; ``update`` does nothing."""

    def build(self, parent: int | str) -> None:
        with dpg.table(parent=parent, header_row=False):
            dpg.add_table_column()
            dpg.add_table_column()
            for key, what in KEY_HELP:
                with dpg.table_row():
                    dpg.add_text(key, color=(230, 200, 90))
                    dpg.add_text(what)
        dpg.add_text("Keys act in the 3D viewer window. Numbers in load forms take a value or a param name.",
                     parent=parent, wrap=420, color=(150, 150, 150))

    def update(self, snapshot: object) -> None:
        return None
