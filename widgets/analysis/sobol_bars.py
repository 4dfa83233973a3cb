"""A Saltelli sweep's Sobol indices in the results window (``sensitivity = "sobol"``).

A collapsing header over the scatter (opened on a tall panel, closed on a laptop's): a combo chooses the value (a requirement's or a metric's),
and a bar plot shows each param's first-order index S (blue, left: the share of the value's
variance the param explains alone) and total index ST (orange, right: with its interactions),
each with its bootstrap interval as an error bar. A value the sweep has no indices for (holes in
the design, no variance) shows the reason instead of bars. The numbers and where each bar goes
come from the opened results (``SobolReading``/``SobolValue``: ``mjrig.campaign.sobol``); this
view only draws them.
"""

from __future__ import annotations

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig.panel_state import SobolIndicesView
from mjrig.widgets.kit.themes import PLOT_INPUT

__all__ = ["SobolBars", "FIRST_RGB", "TOTAL_RGB"]

FIRST_RGB = (31, 119, 180)
"""The first-order bars' colour (RGB 0-255; the report's too)."""
TOTAL_RGB = (255, 127, 14)
"""The total bars' colour."""
WIDTH = 0.38
"""A bar's width, in param places (a param's pair of bars is twice this)."""
ORDERS = (("first_order", "first-order S", FIRST_RGB), ("total_order", "total ST", TOTAL_RGB))


def _short(column: str) -> str:
    """'Metrics/f:value' -> 'f'."""
    return column.split("/", 1)[-1].rsplit(":", 1)[0]


class SobolBars:
    """The bars of ``reading`` (a ``SobolReading``) for one value at a time."""

    def __init__(self, reading: SobolIndicesView) -> None:
        self.reading = reading
        self._columns = {_short(c): c for c in reading.values}
        self._combo: int | str = 0
        self._note: int | str = 0
        self._axes: tuple[int | str, int | str] = (0, 0)
        self._series: dict[str, tuple[int | str, int | str]] = {}

    OPEN_FROM = 1000
    """px: a panel at least this tall shows the bars opened; a shorter one (a laptop's) keeps the
    header closed, so the scatter below keeps its room until the bars are asked for."""

    def build(self, parent: int | str = 0, *, default_open: bool = True) -> None:
        """The header (opened or not), the combo and the plot, under ``parent`` (0: the container
        being built)."""
        reading = self.reading
        names = list(self._columns)
        first = next((n for n in names if reading.values[self._columns[n]].computed), names[0] if names else "")
        with dpg.collapsing_header(label="Sensitivity (Sobol indices)", default_open=default_open, parent=parent):
            with dpg.group(horizontal=True):
                self._combo = dpg.add_combo(
                    names, label="value (Sobol)", width=160, default_value=first, callback=self._on_value
                )
                dpg.add_text(
                    f"{reading.base_points} base points, {100 * reading.confidence_level:g} % intervals",
                    color=(150, 150, 150),
                )
            self._note = dpg.add_text("", color=(235, 70, 70), wrap=520, show=False)
            with dpg.plot(label="##sobol", height=170, width=-1, **PLOT_INPUT):
                dpg.add_plot_legend(location=dpg.mvPlot_Location_North, outside=True, horizontal=True)
                xa = dpg.add_plot_axis(dpg.mvXAxis)  # the ticks name the params
                ya = dpg.add_plot_axis(dpg.mvYAxis, label="Sobol index")
                self._axes = (xa, ya)
                ticks = tuple((p, float(i)) for i, p in enumerate(reading.params))
                if ticks:
                    dpg.set_axis_ticks(xa, ticks)
                dpg.set_axis_limits(xa, -0.6, len(reading.params) - 0.4)
                for order, label, colour in ORDERS:
                    bars = dpg.add_bar_series([], [], label=label, weight=WIDTH, parent=ya)
                    whiskers = dpg.add_error_series([], [], [], [], label=f"##{order} interval", parent=ya)
                    dpg.bind_item_theme(bars, _bar_theme(colour))
                    dpg.bind_item_theme(whiskers, _whisker_theme())
                    self._series[order] = (bars, whiskers)
        self.show(first)

    def show(self, name: str) -> None:
        """Draw the bars of value ``name`` (its short name: "f" for Metrics/f:value)."""
        value = self.reading.values.get(self._columns.get(name, ""))
        if value is None:
            return
        dpg.set_value(self._combo, name)
        dpg.configure_item(self._note, show=not value.computed)
        dpg.set_value(self._note, f"{name}: no indices: {value.reason}" if not value.computed else "")
        none = np.zeros(0)  # no bars: the value has no indices
        for order, _, _ in ORDERS:
            bars, whiskers = self._series[order]
            x, height, below, above = value.bars(order, width=WIDTH) if value.computed else (none, none, none, none)
            dpg.set_value(bars, [list(map(float, x)), list(map(float, height))])
            dpg.set_value(whiskers, [list(map(float, x)), list(map(float, height)), list(below), list(above)])
        lo, hi = value.limits() if value.computed else (-0.05, 1.05)
        dpg.set_axis_limits(self._axes[1], lo, hi)

    def _on_value(self, sender: int | str, name: str) -> None:
        self.show(name)


def _bar_theme(colour: tuple[int, int, int]) -> int | str:
    """A bar series filled with ``colour``."""
    with dpg.theme() as theme, dpg.theme_component(dpg.mvBarSeries):
        dpg.add_theme_color(dpg.mvPlotCol_Fill, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_color(dpg.mvPlotCol_Line, colour, category=dpg.mvThemeCat_Plots)
    return theme


def _whisker_theme() -> int | str:
    """Error bars in a light grey that shows on the dark plot and on both bar colours."""
    with dpg.theme() as theme, dpg.theme_component(dpg.mvErrorSeries):
        dpg.add_theme_color(dpg.mvPlotCol_ErrorBar, (225, 225, 225), category=dpg.mvThemeCat_Plots)
        dpg.add_theme_color(dpg.mvPlotCol_Line, (225, 225, 225), category=dpg.mvThemeCat_Plots)
    return theme
