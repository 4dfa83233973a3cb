"""The live plots' Dear PyGui items, stacked in the plot panel's box; they run on the panel's main
thread. One plot per unit of the checked signals (its y axis labelled with the unit; the plots
share the box's height and the time axis, whose labels only the last one shows), a line series
per checked signal in its own colour and its twins (a compared recording's dashed line, each bench
entry's dotted one: ``plot_overlay``), and each plot's marks: the run's events as vertical lines,
failed requirements' first violations as markers, the instant the timeline shows.

``PlotPanel`` says which signals are plotted and over which span; this module makes and deletes
the items (``sync``), fills them with the span's rows decimated to a min and a max per pixel
column (``fill``, ``mark``), sets the axes (``fit_axes``) and keeps each plot's legend fitted and
the line under the pointer named (``follow_legends``, ``plot_legend``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig.runtime.telemetry.plot_history import SignalHistory, decimate_minmax
from mjrig.widgets.plots.plot_legend import PlotLegends
from mjrig.widgets.plots.plot_overlay import (
    BenchOverlay,
    MarkThemes,
    Overlay,
    SeriesColors,
    add_twins,
    readable_range,
    unit_plot,
)

__all__ = ["PlotStack", "TIME_AXIS", "ValuesAt"]

TIME_AXIS = 36
"""Height (px) of the time axis's labels under the last plot."""

ValuesAt = Callable[[float], list[tuple[str, float, list[tuple[str, float]], str]]]
"""``PlotPanel.values_at``: each checked signal's (name, value, others, unit shown) at a time (s)."""
Span = tuple[float, float]
Bounds = dict[str, tuple[float, float]]


class PlotStack:
    """The plots of the checked signals: made in a child window by ``sync``, filled by ``fill``
    and ``mark``. ``plots``: unit -> (plot, x axis, y axis) ids; ``series``: checked signal -> its
    line's id; ``series_unit``: checked signal -> the unit of the plot it is drawn on."""

    def __init__(self) -> None:
        self.plots: dict[str, tuple[int | str, int | str, int | str]] = {}
        self.series: dict[str, int | str] = {}
        self.series_unit: dict[str, str] = {}
        self._twins: dict[tuple[int, str], int | str] = {}  # (overlay, signal) -> its twin's line
        self._colors = SeriesColors()
        self._event_lines: dict[str, int | str] = {}  # unit -> its plot's vertical event lines
        self._fail_marks: dict[str, int | str] = {}  # unit -> its plot's failure markers
        self._cursor_lines: dict[str, int | str] = {}  # unit -> its plot's mark of the instant shown
        self._marks = MarkThemes()
        self._legends = PlotLegends()

    def drop_twins(self) -> None:
        """Delete every twin line (the bench entries changed: ``sync`` makes them again)."""
        for key in list(self._twins):
            dpg.delete_item(self._twins.pop(key))

    def sync(
        self,
        box: int | str,
        wanted: list[str],
        *,
        unit: Callable[[str], str],
        overlays: Sequence[Overlay | BenchOverlay],
        handlers: int | str,
    ) -> None:
        """One plot per unit (``unit(name)``) of ``wanted`` (the checked signals, in check order)
        in child window ``box``, bound to the item handler registry ``handlers`` (the mouse's), one
        line series per signal and a twin for each of ``overlays`` that has it; what is no longer
        wanted is deleted, and the plots share the box's height."""
        for name in [n for n in self.series if n not in wanted or self.series_unit.get(n) != unit(n)]:
            dpg.delete_item(self.series.pop(name))
            self.series_unit.pop(name, None)
            self._colors.release(name)
        for key in [k for k in self._twins if k[1] not in self.series or not overlays[k[0]].has(k[1])]:
            dpg.delete_item(self._twins.pop(key))
        units = list(dict.fromkeys(unit(n) for n in wanted))
        for gone in [u for u in self.plots if u not in units]:
            dpg.delete_item(self.plots.pop(gone)[0])
            self._event_lines.pop(gone, None)
            self._fail_marks.pop(gone, None)
            self._cursor_lines.pop(gone, None)
            self._legends.drop(gone)
        for shown in units:
            if shown not in self.plots:
                made = unit_plot(box, shown, marks=self._marks, handlers=handlers)
                self.plots[shown] = made[:3]
                self._event_lines[shown], self._fail_marks[shown], self._cursor_lines[shown] = made[3:6]
                self._legends.add(shown, plot=made.plot, legend=made.legend)
        if self.plots:
            avail = dpg.get_item_rect_size(box)[1] or 300
            each = max(90, int((avail - TIME_AXIS) / len(self.plots)) - 6)
            for i, (plot, x_axis, _) in enumerate(self.plots.values()):
                last = i == len(self.plots) - 1  # the plots share the time axis: said once, under the last
                dpg.configure_item(plot, height=each + TIME_AXIS * last)
                dpg.configure_item(x_axis, no_tick_labels=not last, no_label=not last)
        for name in wanted:
            short = name.split("/", 1)[-1]  # the plot says the category by its unit
            if name not in self.series:
                self.series[name] = dpg.add_line_series([], [], label=short, parent=self.plots[unit(name)][2])
                self.series_unit[name] = unit(name)
                dpg.bind_item_theme(self.series[name], self._colors.theme(name))
            add_twins(name, overlays, self._twins, y_axis=self.plots[unit(name)][2], colors=self._colors)

    def clear(self) -> None:
        """Empty every line (no row to show)."""
        for sid in self.series.values():
            dpg.set_value(sid, [[], []])

    def fill(
        self,
        history: SignalHistory,
        *,
        span: Span,
        points: int,
        overlays: Sequence[Overlay | BenchOverlay],
        factor: Callable[[str], float],
    ) -> Bounds:
        """Every line and twin over ``span`` (t0, end: simulated s) from ``history``, in the unit
        shown (``factor(name)``: shown value per SI value), at most ``points`` points a line;
        returns each unit's (lowest, highest) value drawn."""
        t0, end = span
        names = list(self.series)
        t, values = history.window(t0, end, names)
        bounds: Bounds = {}
        for j, name in enumerate(names):
            y = values[:, j] * factor(name)
            ok = np.isfinite(y)
            xs, ys = decimate_minmax(t[ok], y[ok], points)
            if len(ys):
                lo, hi = bounds.get(self.series_unit[name], (np.inf, -np.inf))
                bounds[self.series_unit[name]] = (min(lo, float(ys.min())), max(hi, float(ys.max())))
            # Lists, not arrays: Dear PyGui reads numpy buffers as float32, too coarse for long runs.
            dpg.set_value(self.series[name], [xs.tolist(), ys.tolist()])
        for (k, name), twin in self._twins.items():
            xs, ys = overlays[k].sample(name, t0, end)
            ys = ys * factor(name)
            ok = np.isfinite(ys)
            if ok.any():
                lo, hi = bounds.get(self.series_unit[name], (np.inf, -np.inf))
                bounds[self.series_unit[name]] = (min(lo, float(ys[ok].min())), max(hi, float(ys[ok].max())))
            dpg.set_value(twin, [xs.tolist(), ys.tolist()])
        return bounds

    def mark(
        self,
        *,
        span: Span,
        events: Sequence[tuple[float, str]],
        failures: Sequence[tuple[str, float, float]],
        cursor: float | None,
        factor: Callable[[str], float],
    ) -> None:
        """Each plot's marks within ``span``: ``events`` (time s, what) as vertical lines,
        ``failures`` (signal, time s, SI value) as markers on the plot of their signal, ``cursor``
        (the instant shown, s; None: none)."""
        t0, end = span
        lines = [t_e for t_e, _ in events if t0 <= t_e <= end]
        for unit in self.plots:
            if unit in self._event_lines:
                dpg.set_value(self._event_lines[unit], [lines])
            if unit in self._cursor_lines:
                dpg.set_value(self._cursor_lines[unit], [[cursor] if cursor is not None else []])
            if unit in self._fail_marks:
                pts = [
                    (t_f, v * factor(name))
                    for name, t_f, v in failures
                    if self.series_unit.get(name) == unit and t0 <= t_f <= end
                ]
                dpg.set_value(self._fail_marks[unit], [[p[0] for p in pts], [p[1] for p in pts]])

    def fit_axes(self, *, span: Span, bounds: Bounds, frozen: bool, autofit: bool) -> None:
        """Time over ``span`` and y over each unit's ``bounds`` (``autofit``; else the user's);
        ``frozen``: both axes stay where they are and belong to the user (zoom, pan)."""
        for unit, (_, x_axis, y_axis) in self.plots.items():
            if frozen:
                dpg.set_axis_limits_auto(x_axis)
                dpg.set_axis_limits_auto(y_axis)
                continue
            dpg.set_axis_limits(x_axis, *span)
            lo, hi = bounds.get(unit, (np.inf, -np.inf))
            if not autofit:
                dpg.set_axis_limits_auto(y_axis)
            elif lo <= hi:
                dpg.set_axis_limits(y_axis, *readable_range(lo, hi))

    def follow_legends(self, values_at: ValuesAt) -> None:
        """Each plot's legend laid out for its size and lines; the line under the pointer named,
        with its value from ``values_at``."""
        for unit, (plot, _, y_axis) in self.plots.items():
            self._legends.fit(unit, plot=plot, y_axis=y_axis)
            self._legends.point(
                unit, plot=plot, y_axis=y_axis, values_at=partial(self._line_values, unit, values_at=values_at)
            )

    def _line_values(self, unit: str, t: float, *, values_at: ValuesAt) -> dict[str, tuple[float, str]]:
        """Each line of ``unit``'s plot at ``t`` (s): its name -> (value, unit shown)."""
        return {
            name.split("/", 1)[-1]: (value, shown)
            for name, value, _others, shown in values_at(t)
            if self.series_unit.get(name) == unit
        }
