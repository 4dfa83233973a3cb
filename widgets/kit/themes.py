"""Looks and inputs several panels share."""

from __future__ import annotations

import dearpygui.dearpygui as dpg

__all__ = ["disabled_button_theme", "keyboard_focus_theme", "FOCUS_FRAME", "tip", "PLOT_INPUT"]

PLOT_INPUT = {"zoom_mod": dpg.mvKey_ModCtrl, "override_mod": dpg.mvKey_ModSuper}
"""Every plot's mouse: Ctrl+wheel zooms (ImPlot); the wheel alone scrolls the panel past it, as
the wheel does everywhere else. A drag pans, a right-drag zooms to a box. ImPlot ignores all input
while its "override" modifier is held, Ctrl by default: that is Super here (plots are no
drag-and-drop sources in mjrig), or Ctrl+wheel would do nothing."""

FOCUS_FRAME = (255, 190, 60)
"""The colour of the frame around the control the keyboard is on (RGB)."""

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


def keyboard_focus_theme() -> int | str:
    """The panel's global theme: the control the keyboard is on (Tab, arrows) framed in amber, so
    that a person driving the panel without a mouse sees where Space and Enter will act (Dear
    PyGui's own frame is a pale blue hardly told from a hovered button)."""
    with dpg.theme() as theme, dpg.theme_component(dpg.mvAll):
        dpg.add_theme_color(dpg.mvThemeCol_NavHighlight, FOCUS_FRAME)
    return theme


def tip(item: int | str, text: str) -> int | str:
    """Attach a hover tooltip saying ``text`` (wrapped at 360 px) to ``item``; returns ``item``."""
    with dpg.tooltip(item):
        dpg.add_text(text, wrap=360)
    return item
