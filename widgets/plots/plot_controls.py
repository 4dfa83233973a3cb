"""The live plots' controls, on the panel's main thread: the row above the plots (the span shown in
simulated seconds, *fit y*, *pause*, *Save plot...*) and, over the signal tree, the filter and
*tick shown* / *none*.

Each control calls the ``PlotPanel`` setter it stands for with what the person set; it keeps no
state of its own. ``show`` mirrors the panel's state into the controls (a setter called by the
command API, a double-click on a plot that follows the run again), ``clear_filter`` empties the
filter when another rig opens.
"""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

__all__ = ["PlotControls", "TICK_SHOWN_MAX", "TREE_WIDTH"]

TREE_WIDTH = 150
"""Width (px) of the signal tree and of the filter and buttons over it."""
TICK_SHOWN_MAX = 100
"""Signals *tick shown* plots at most (a filter left empty on a big model lets thousands through)."""


class PlotControls:
    """The plot panel's controls; each ``on_*`` is called (on Dear PyGui's callback thread) with
    what the person set: ``on_window(s)`` the span shown, ``on_autofit(on)`` *fit y*,
    ``on_pause(on)`` *pause*, ``on_save()`` *Save plot...*, ``on_filter(text)`` the filter,
    ``on_tick_shown()`` and ``on_untick()`` the buttons under it."""

    def __init__(
        self,
        *,
        on_window: Callable[[float], None],
        on_autofit: Callable[[bool], None],
        on_pause: Callable[[bool], None],
        on_save: Callable[[], None],
        on_filter: Callable[[str], None],
        on_tick_shown: Callable[[], object],
        on_untick: Callable[[], None],
    ) -> None:
        self._on_window, self._on_autofit, self._on_pause, self._on_save = on_window, on_autofit, on_pause, on_save
        self._on_filter, self._on_tick_shown, self._on_untick = on_filter, on_tick_shown, on_untick
        self._window_input: int | str | None = None  # the items, once built
        self._autofit_box: int | str | None = None
        self._pause_box: int | str | None = None
        self._filter_input: int | str | None = None

    def build_row(self, *, window_s: float, autofit: bool, paused: bool) -> None:
        """The row above the plots, in the current container, showing the values given."""
        with dpg.group(horizontal=True):
            self._window_input = dpg.add_input_float(
                label="s shown",
                default_value=window_s,
                width=95,
                format="%.1f",
                step=1.0,
                min_value=0.01,
                min_clamped=True,
                on_enter=True,
                callback=lambda _s, value, _u: self._on_window(max(float(value), 0.01)),
            )
            self._autofit_box = dpg.add_checkbox(
                label="fit y",
                default_value=autofit,
                callback=lambda _s, value, _u: self._on_autofit(bool(value)),
            )
            self._pause_box = dpg.add_checkbox(
                label="pause",
                default_value=paused,
                callback=lambda _s, value, _u: self._on_pause(bool(value)),
            )
            dpg.add_button(label="Save plot...", callback=lambda: self._on_save())

    def build_filter(self, *, filter_text: str) -> None:
        """The filter (showing ``filter_text``) and *tick shown* / *none* under it, in the current
        container, ``TREE_WIDTH`` wide."""
        self._filter_input = dpg.add_input_text(
            hint="filter signals",
            width=TREE_WIDTH,
            default_value=filter_text,
            callback=lambda _s, value, _u: self._on_filter(value),
        )
        with dpg.group(horizontal=True, width=(TREE_WIDTH - 8) // 2):  # half the tree's each
            shown = dpg.add_button(label="tick shown", callback=lambda: self._on_tick_shown())
            none = dpg.add_button(label="none", callback=lambda: self._on_untick())
        for item, tip in (
            (shown, f"plot every signal the filter lets through (the first {TICK_SHOWN_MAX} of more)"),
            (none, "plot no signal"),
        ):
            with dpg.tooltip(item):
                dpg.add_text(tip, wrap=300)

    def show(self, *, window_s: float, autofit: bool, paused: bool) -> None:
        """Mirror the panel's span, *fit y* and *pause* (once built)."""
        for item, value in ((self._window_input, window_s), (self._autofit_box, autofit), (self._pause_box, paused)):
            if item is not None:
                dpg.set_value(item, value)

    def clear_filter(self) -> None:
        """Empty the filter box (once built)."""
        if self._filter_input is not None:
            dpg.set_value(self._filter_input, "")
