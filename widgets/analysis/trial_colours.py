"""A trial's colours in the results window, on the panel's main thread: its status's (green pass or
feasible, red fail, grey diverged or error), the opened trial's, and the theme of a scatter series
drawn in one of them. The table's texts, the scatter of params against values and a study's
objective by trial all take them from here, so a trial has one colour wherever it shows.
"""

from __future__ import annotations

import dearpygui.dearpygui as dpg

__all__ = ["COLOURS", "SELECTED", "marker_theme"]

COLOURS = {"pass": (90, 200, 110), "fail": (235, 70, 70), "other": (160, 160, 160)}
"""Text and marker colour (RGB 0-255) of a status; "other" is diverged and error."""
SELECTED = (250, 210, 80)
"""The opened trial's marker (and a study's best so far, a trial on the Pareto front in the table)."""


def marker_theme(colour: tuple[int, int, int], size: int) -> int | str:
    """A scatter series' theme: filled circles of ``colour``, ``size`` pixels."""
    with dpg.theme() as theme, dpg.theme_component(dpg.mvScatterSeries):
        dpg.add_theme_color(dpg.mvPlotCol_MarkerFill, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_color(dpg.mvPlotCol_MarkerOutline, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_color(dpg.mvPlotCol_Line, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_style(dpg.mvPlotStyleVar_Marker, dpg.mvPlotMarker_Circle, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_style(dpg.mvPlotStyleVar_MarkerSize, size, category=dpg.mvThemeCat_Plots)
    return theme
