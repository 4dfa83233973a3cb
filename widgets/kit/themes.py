"""Themes several panels share."""

from __future__ import annotations

import dearpygui.dearpygui as dpg

__all__ = ["disabled_button_theme"]

_made: dict[str, int | str] = {}


def disabled_button_theme() -> int | str:
    """Greyed text and frame for a button that cannot act now (Dear PyGui draws a disabled button
    as an enabled one unless told); made once per Dear PyGui context, on first use."""
    theme = _made.get("disabled")
    if theme is None or not dpg.does_item_exist(theme):
        with dpg.theme() as theme, dpg.theme_component(dpg.mvButton, enabled_state=False):
            for col in (dpg.mvThemeCol_Button, dpg.mvThemeCol_ButtonHovered, dpg.mvThemeCol_ButtonActive):
                dpg.add_theme_color(col, (45, 45, 48))
            dpg.add_theme_color(dpg.mvThemeCol_Text, (110, 110, 110))
        _made["disabled"] = theme
    return theme
