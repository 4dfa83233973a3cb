"""Legends that are never clipped, and the line under the pointer named with its value.

ImPlot draws a legend inside the plot and cuts it at the plot's edge: with many lines it named 3
of 25. ``PlotLegends.fit`` lays each plot's legend out in a row when the names fit across the
plot, in a column when they fit down it, and hides it otherwise; ``PlotLegends.point`` names the
line nearest the pointer (in the plot's own pixels) with its value at the pointer's time in a
label on that line, at that time — so with any number of lines each one can be told by pointing
at it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import dearpygui.dearpygui as dpg
import numpy as np

__all__ = ["PlotLegends", "legend_layout", "nearest_line"]

_SWATCH = 26
"""Pixels each legend entry takes besides its name: the colour swatch and the spacing."""
_AXES_W, _AXES_H = 70, 40
"""Pixels of a plot taken by its y axis's labels (left) and by the legend's margins (top)."""
_PAD = 12
"""Pixels a legend takes besides its entries on each side: its frame's padding and its offset from
the plot's edge (a row of names that just fitted by the names alone was cut at the plot's edge)."""
_NEAR_PX = 24
"""A line at most this far (px, vertically) from the pointer is named."""


def legend_layout(widths: Sequence[float], line_h: float, *, plot_w: float, plot_h: float) -> str:
    """ "row", "column" or "hidden": how a legend of names ``widths`` px wide (one line ``line_h``
    px high) fits a plot ``plot_w`` x ``plot_h`` px without being cut."""
    if not widths:
        return "hidden"
    room_w = plot_w - _AXES_W - 2 * _PAD
    if sum(w + _SWATCH for w in widths) <= room_w:
        return "row"
    if max(widths) + _SWATCH <= room_w and len(widths) * line_h <= plot_h - _AXES_H:
        return "column"
    return "hidden"


def nearest_line(values: Mapping[str, float], y: float, *, px_per_unit: float) -> str | None:
    """The name in ``values`` (each line's value at the pointer's time) nearest ``y``, if it is
    within ``_NEAR_PX`` on screen (``px_per_unit``: pixels per unit of the y axis); else None."""
    best, gap = None, np.inf
    for name, v in values.items():
        d = abs(v - y) * px_per_unit
        if np.isfinite(d) and d < gap:
            best, gap = name, d
    return best if gap <= _NEAR_PX else None


class PlotLegends:
    """Each unit plot's legend layout and its pointer's label (GUI thread)."""

    def __init__(self) -> None:
        self._legend: dict[str, tuple[int | str, int | str]] = {}  # unit -> (legend, pointer's label)
        self._shown: dict[str, tuple] = {}  # unit -> what its legend was laid out for
        self._said: set[str] = set()  # units whose plot shows the pointer's label

    def add(self, unit: str, *, plot: int | str, legend: int | str) -> None:
        """Take over ``legend`` of ``plot`` (unit ``unit``) and give the plot its pointer's label."""
        said = dpg.add_plot_annotation(
            label="", parent=plot, offset=(14, -14), clamped=True, show=False, color=(20, 20, 24, 235)
        )
        self._legend[unit] = (legend, said)
        self._shown.pop(unit, None)

    def drop(self, unit: str) -> None:
        """The plot of ``unit`` is gone."""
        self._legend.pop(unit, None)
        self._shown.pop(unit, None)
        self._said.discard(unit)

    def fit(self, unit: str, *, plot: int | str, y_axis: int | str) -> None:
        """Lay out ``unit``'s legend for the plot's size and lines now (only when either changed)."""
        if unit not in self._legend:
            return
        labels = [
            label
            for series in dpg.get_item_children(y_axis, 1) or []
            if not (label := dpg.get_item_label(series) or "").startswith("##")
        ]
        w, h = dpg.get_item_rect_size(plot)
        key = (tuple(labels), w, h)
        if not w or self._shown.get(unit) == key:
            return
        self._shown[unit] = key
        sizes = [dpg.get_text_size(label) or (8.0 * len(label), 15.0) for label in labels]
        layout = legend_layout([s[0] for s in sizes], max(s[1] for s in sizes) + 4 if sizes else 19, plot_w=w, plot_h=h)
        legend = self._legend[unit][0]
        dpg.configure_item(legend, show=layout != "hidden", horizontal=layout == "row")

    def point(
        self,
        unit: str,
        *,
        plot: int | str,
        y_axis: int | str,
        values_at: Callable[[float], Mapping[str, tuple[float, str]]],
    ) -> str | None:
        """While the pointer is over ``plot``: the nearest line's "name = value unit at t = T s"
        on that line (``values_at(t)``: each line's label -> (value, unit) at time ``t`` s); returns it."""
        if unit not in self._legend:
            return None
        annotation = self._legend[unit][1]
        said, at = None, (0.0, 0.0)
        if dpg.is_item_hovered(plot):
            t, y = dpg.get_plot_mouse_pos()
            lo, hi = dpg.get_axis_limits(y_axis)
            h = dpg.get_item_rect_size(plot)[1] - _AXES_H
            values = values_at(t)
            name = nearest_line({k: v for k, (v, _) in values.items()}, y, px_per_unit=h / (hi - lo) if hi > lo else 0)
            if name is not None:
                value, shown_unit = values[name]
                said, at = f"{name} = {value:.4g} {shown_unit}".rstrip() + f"  at t = {t:.3f} s", (t, value)
        if said is not None:
            dpg.set_value(annotation, [*at, 0.0, 0.0])
            dpg.configure_item(annotation, label=said, show=True)
            self._said.add(unit)
        elif unit in self._said:
            dpg.configure_item(annotation, show=False)
            self._said.discard(unit)
        return said
