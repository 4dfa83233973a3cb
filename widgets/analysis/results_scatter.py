"""The results window's scatter, on the panel's main thread: one param (x) against one requirement's
or metric's value or a study's objective (y), both chosen in combos above the plot, a point per
trial of the status shown, green pass (feasible), red fail, grey diverged or error
(``trial_colours``), the trial opened last a larger yellow one. Each axis keeps a margin round the
points (a point on the plot's edge is half hidden). A click on a point opens that trial: its
recording, else its set-up (``open_trial``).

Thin: the points come from the opened results (``OpenedResults.scatter``); the results view says
which status is shown and which trial is opened (``show``).
"""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig import commands as C
from mjrig.panel_state.results import ScatterView
from mjrig.widgets.analysis.trial_colours import COLOURS, SELECTED, marker_theme
from mjrig.widgets.kit.themes import PLOT_INPUT

__all__ = ["TrialScatter", "PICK"]

PICK = 0.03
"""A click opens the trial of the nearest point within this share of the plot's size."""
GROUPS = (("pass", "pass"), ("fail", "fail"), ("other", "diverged/error"), ("selected", "opened"))
"""The scatter's series: (group, legend label); "selected" is the trial opened last."""


def _short(column: str) -> str:
    """'Params/k:value' -> 'k'."""
    return column.split("/", 1)[-1].rsplit(":", 1)[0]


class TrialScatter:
    """The scatter of ``results``; ``open_trial(n, scenario=)`` opens trial ``n``: its set-up
    (``scenario=True``: the scenario with its param values) or its recording."""

    def __init__(self, results: C.OpenedResults, *, open_trial: Callable[..., None]) -> None:
        self.results = results
        self._open_trial = open_trial
        self.status = "all"
        """The status whose trials are drawn (the table's filter)."""
        self.selected: int | None = None
        """The trial opened last, drawn larger in yellow."""
        self._x: int | str = 0
        self._y: int | str = 0
        self._axes: tuple[int | str, int | str] = (0, 0)
        self._series: dict[str, int | str] = {}
        self._points: ScatterView | None = None  # the scatter drawn: x, y, trials
        self._y_columns = {_short(c): c for c in results.values}  # the y choices' short names -> columns

    def build(self) -> None:
        """The axes' combos and the plot, in the current container; the points come with ``show``."""
        res = self.results
        params = [_short(c) for c in res.params]
        values = list(self._y_columns)
        first = "objective" if "objective" in res.values else (values[0] if values else "")
        if res.is_pareto:
            first = _short(res.objectives[0])
        with dpg.group(horizontal=True):
            self._x = dpg.add_combo(
                params,
                label="x: param",
                width=120,
                callback=self._on_axes,
                default_value=params[0] if params else "",
            )
            self._y = dpg.add_combo(values, label="y: value", width=140, callback=self._on_axes, default_value=first)
        with dpg.plot(label="##scatter", height=-1, width=-1, **PLOT_INPUT) as plot:
            dpg.add_plot_legend(location=dpg.mvPlot_Location_North, outside=True, horizontal=True)  # never over a point
            xa = dpg.add_plot_axis(dpg.mvXAxis, label=params[0] if params else "")
            ya = dpg.add_plot_axis(dpg.mvYAxis, label=values[0] if values else "")
            self._axes = (xa, ya)
            for group, label in GROUPS:
                self._series[group] = dpg.add_scatter_series([], [], label=label, parent=ya)
                selected = group == "selected"
                theme = marker_theme(SELECTED if selected else COLOURS[group], 8 if selected else 4)
                dpg.bind_item_theme(self._series[group], theme)
        with dpg.item_handler_registry() as handlers:
            dpg.add_item_clicked_handler(callback=self._on_point)
        dpg.bind_item_handler_registry(plot, handlers)

    def show(self, *, status: str, selected: int | None) -> None:
        """Draw the trials of ``status`` ("all" or one of the results' filters), ``selected`` marked."""
        self.status, self.selected = status, selected
        self._draw()

    def _draw(self) -> None:
        """The points of the params and value chosen, and each axis's label and limits."""
        res = self.results
        x, y = dpg.get_value(self._x), dpg.get_value(self._y)
        xcol, ycol = f"Params/{x}:value", self._y_columns.get(y, "")
        if xcol not in res.params or ycol not in res.values:
            return
        points = self._points = res.scatter(xcol, ycol, status=self.status)
        for group in ("pass", "fail", "other"):
            xs, ys = points.group(group)
            dpg.set_value(self._series[group], [xs, ys])
        chosen = points.trials == self.selected
        dpg.set_value(self._series["selected"], [points.x[chosen].tolist(), points.y[chosen].tolist()])
        for axis, name, col in ((self._axes[0], x, xcol), (self._axes[1], y, ycol)):
            dpg.configure_item(axis, label=name + (f" [{res.units[col]}]" if res.units.get(col) else ""))
        for axis, values in zip(self._axes, (points.x, points.y)):
            if values.size:  # a margin round the points: a point on the plot's edge is half hidden
                lo, hi = float(values.min()), float(values.max())
                pad = 0.08 * (hi - lo) if hi > lo else max(abs(hi) * 0.1, 1e-3)
                dpg.set_axis_limits(axis, lo - pad, hi + pad)
            else:
                dpg.set_axis_limits_auto(axis)

    def _on_axes(self) -> None:
        self._draw()

    def _on_point(self, *args: object) -> None:
        """A click on the scatter: the trial of the nearest point within ``PICK`` of the plot."""
        pts = self._points
        if pts is None or not pts.x.size:
            return
        mx, my = dpg.get_plot_mouse_pos()
        (x0, x1), (y0, y1) = (dpg.get_axis_limits(a) for a in self._axes)
        d = np.hypot((pts.x - mx) / max(x1 - x0, 1e-12), (pts.y - my) / max(y1 - y0, 1e-12))
        k = int(np.argmin(d))
        if d[k] <= PICK:
            trial = int(pts.trials[k])
            self._open_trial(trial, scenario=not self.results.has_recording(trial))
