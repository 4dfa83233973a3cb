"""A study of several objectives in the results view: its Pareto front, and Open trial.

Two objectives: every feasible trial a point in objective space (grey: dominated), the front's
trials joined in order of the first objective (yellow-orange), the trial opened last ringed; a
click on a point opens that trial's set-up. More objectives: parallel coordinates, one vertical
axis per objective scaled from its best (bottom) to its worst (top) over the feasible trials, a
line per trial (at most ``LINES`` dominated ones), the front's in colour. Above the plot: how many trials the front holds
and its hypervolume after the last trial (the objectives' units multiplied), a list of them and
*Open trial*, which opens the chosen trial's scenario with its param values.

Thin: the numbers come from the opened results (``SweepResults.objective_points``, ``front``,
``hypervolume``).
"""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig import commands as C
from mjrig.widgets.kit.themes import PLOT_INPUT

__all__ = ["ParetoFront"]

FRONT = (255, 170, 60)
DOMINATED = (150, 150, 150)
RING = (250, 230, 120)
LINES = 400
"""Dominated trials drawn at most in parallel coordinates (evenly picked; every front trial is)."""


class ParetoFront:
    """The front of ``results`` (a study of several objectives); ``open_trial(n)`` opens trial
    ``n``'s set-up; ``height``: the plot's, in pixels."""

    def __init__(self, results: C.OpenedResults, *, open_trial: Callable[[int], None], height: int = 200) -> None:
        self.results = results
        self.open_trial = open_trial
        self.height = height
        self.trials, self.values, self.on_front = results.objective_points()
        self.names = [c.split("/", 1)[-1].rsplit(":", 1)[0] for c in results.objectives]
        self.maximize = results.maximized()
        self._choice: int | str = 0
        self._ring: int | str = 0
        self._axes: tuple[int | str, int | str] = (0, 0)

    def build(self) -> None:
        res, front = self.results, self.results.front()
        labels = [f"trial {n}" for n in sorted(front)]
        with dpg.group(horizontal=True):
            dpg.add_text(f"Pareto front: {len(front)} of {res.table.height} trials" if front else "no feasible trial")
            if volume := self._hypervolume():
                self._tip(
                    dpg.add_text(volume),
                    "the volume of objective space the feasible trials dominate, up to the reference "
                    "point ([optimize] reference, else each objective's worst feasible value), after "
                    "the last trial; the report draws it against trials",
                )
            self._choice = dpg.add_combo(labels, width=110, default_value=labels[0] if labels else "")
            button = dpg.add_button(label="Open trial", callback=self._on_open, enabled=bool(front))
            with dpg.tooltip(button):
                dpg.add_text(
                    "open the study's scenario with the chosen trial's param values on the sliders "
                    "(any trial: its set-up button in the table, or a click on its point)",
                    wrap=360,
                )
        if not self.trials.size:
            return
        with dpg.plot(label="##front", height=self.height, width=-1, **PLOT_INPUT) as plot:
            dpg.add_plot_legend(location=dpg.mvPlot_Location_North, outside=True, horizontal=True)
            if len(self.names) == 2:
                self._two()
            else:
                self._parallel()
        if len(self.names) == 2:
            with dpg.item_handler_registry() as handlers:
                dpg.add_item_clicked_handler(callback=self._on_point)
            dpg.bind_item_handler_registry(plot, handlers)

    def _hypervolume(self) -> str:
        """ "hypervolume V UNIT" after the last trial ("" for a file without the column)."""
        trials, volume = self.results.hypervolume()
        if not trials.size or not np.isfinite(volume[-1]):
            return ""
        unit = self.results.units.get("hypervolume", "")
        return f"hypervolume {volume[-1]:.4g}{f' {unit}' if unit else ''}"

    @staticmethod
    def _tip(item: int | str, text: str) -> None:
        with dpg.tooltip(item):
            dpg.add_text(text, wrap=360)

    def _label(self, i: int) -> str:
        unit = self.results.units.get(self.results.objectives[i], "")
        way = "max" if self.maximize[i] else "min"
        return f"{self.names[i]}{f' [{unit}]' if unit else ''} ({way})"

    def _two(self) -> None:
        v, on = self.values, self.on_front
        xa = dpg.add_plot_axis(dpg.mvXAxis, label=self._label(0))
        ya = dpg.add_plot_axis(dpg.mvYAxis, label=self._label(1))
        self._axes = (xa, ya)
        dots = dpg.add_scatter_series(v[~on, 0].tolist(), v[~on, 1].tolist(), label="dominated", parent=ya)
        dpg.bind_item_theme(dots, _theme(DOMINATED, 3, line=False))
        order = np.argsort(v[on, 0], kind="stable")
        line = dpg.add_line_series(
            v[on, 0][order].tolist(), v[on, 1][order].tolist(), label=f"front ({int(on.sum())})", parent=ya
        )
        dpg.bind_item_theme(line, _theme(FRONT, 4, line=True))
        self._ring = dpg.add_scatter_series([], [], label="opened", parent=ya)
        dpg.bind_item_theme(self._ring, _theme(RING, 8, line=False))
        for axis, values in zip(self._axes, (v[:, 0], v[:, 1])):
            lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
            pad = 0.08 * (hi - lo) if hi > lo else max(abs(hi) * 0.1, 1e-3)
            dpg.set_axis_limits(axis, lo - pad, hi + pad)

    def _parallel(self) -> None:
        k = len(self.names)
        lo, hi = np.nanmin(self.values, axis=0), np.nanmax(self.values, axis=0)
        scaled = (self.values - lo) / np.where(hi > lo, hi - lo, 1.0)
        scaled = np.where(np.asarray(self.maximize, dtype=bool), 1.0 - scaled, scaled)
        xa = dpg.add_plot_axis(dpg.mvXAxis, label="objective (each axis from its best, bottom, to its worst)")
        dpg.set_axis_ticks(xa, tuple((self._label(i), float(i)) for i in range(k)))
        dpg.set_axis_limits(xa, -0.15, k - 0.85)
        ya = dpg.add_plot_axis(dpg.mvYAxis, label="best -> worst")
        dpg.set_axis_limits(ya, -0.05, 1.05)
        xs = [float(i) for i in range(k)]
        dominated = np.flatnonzero(~self.on_front)
        drawn = dominated[np.linspace(0, dominated.size - 1, min(dominated.size, LINES)).astype(int)]
        many = f" ({drawn.size} of {dominated.size})" if drawn.size < dominated.size else ""
        for rows, colour, width in ((drawn, DOMINATED, 1), (np.flatnonzero(self.on_front), FRONT, 2)):
            for j, row in enumerate(scaled[rows]):
                first = f"dominated{many}" if colour is DOMINATED else f"front ({int(self.on_front.sum())})"
                label = first if j == 0 else f"##{first}{j}"  # one legend entry a group
                series = dpg.add_line_series(xs, row.tolist(), label=label, parent=ya)
                dpg.bind_item_theme(series, _theme(colour, width, line=True))

    def select(self, trial: int | None) -> None:
        """Ring trial ``trial``'s point (the trial opened last; None: none)."""
        if not self._ring:
            return
        at = self.trials == trial
        dpg.set_value(self._ring, [self.values[at, 0].tolist(), self.values[at, 1].tolist()])

    def _on_open(self) -> None:
        chosen = str(dpg.get_value(self._choice) or "")
        if chosen.startswith("trial "):
            self.open_trial(int(chosen.removeprefix("trial ")))

    def _on_point(self, *args: object) -> None:
        """A click in the front plot: the trial of the nearest point within 3 % of the plot."""
        mx, my = dpg.get_plot_mouse_pos()
        (x0, x1), (y0, y1) = (dpg.get_axis_limits(a) for a in self._axes)
        d = np.hypot((self.values[:, 0] - mx) / max(x1 - x0, 1e-12), (self.values[:, 1] - my) / max(y1 - y0, 1e-12))
        k = int(np.argmin(d))
        if d[k] <= 0.03:
            self.open_trial(int(self.trials[k]))


def _theme(colour: tuple[int, int, int], size: int, *, line: bool) -> int | str:
    """A series' theme: ``colour`` markers of ``size`` pixels (a line series: its line, markers on it)."""
    kind = dpg.mvLineSeries if line else dpg.mvScatterSeries
    with dpg.theme() as theme, dpg.theme_component(kind):
        for what in (dpg.mvPlotCol_Line, dpg.mvPlotCol_MarkerFill, dpg.mvPlotCol_MarkerOutline):
            dpg.add_theme_color(what, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_style(dpg.mvPlotStyleVar_Marker, dpg.mvPlotMarker_Circle, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_style(dpg.mvPlotStyleVar_MarkerSize, size, category=dpg.mvThemeCat_Plots)
        if line:
            dpg.add_theme_style(dpg.mvPlotStyleVar_LineWeight, 1.5, category=dpg.mvThemeCat_Plots)
    return theme
