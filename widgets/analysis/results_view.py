"""The results view: a sweep's or study's trials as a table and a scatter (``mjrig RESULTS.parquet``).

A window over the right part of the panel, built only when a results file is open; its close
button hides it and the Results menu shows it again. The table sorts by any column (click its
header; again for the other way) and filters by status; the scatter plots one param (x) against
one requirement's or metric's value or a study's objective (y), a point per trial, green pass
(feasible), red fail, grey diverged or error. A study also shows its objective by trial with the
best so far, and *Open best* opens the scenario with the best trial's param values.
A trial's ``trial-<n>`` button replays its recording; its ``set-up`` button opens the sweep's
scenario with the trial's param values (the opened results build the commands); a click on a
point of the scatter opens that trial (its recording, else its set-up). *Report...* writes the
results file's HTML report (``on_report``: the app's save dialog); the view's note says where
(the window may cover the Status log), as the log does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import default_report_path, fresh_path
from mjrig.widgets.analysis.pareto_front import ParetoFront
from mjrig.widgets.analysis.sobol_bars import SobolBars
from mjrig.widgets.kit.themes import PLOT_INPUT

__all__ = ["ResultsView"]

COLOURS = {"pass": (90, 200, 110), "fail": (235, 70, 70), "other": (160, 160, 160)}
"""Text and marker colour (RGB 0-255) of a status; "other" is diverged and error."""
SELECTED = (250, 210, 80)


def _short(column: str) -> str:
    """'Params/k:value' -> 'k'."""
    return column.split("/", 1)[-1].rsplit(":", 1)[0]


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


class ResultsView:
    """The results window over ``results``; every trial action is a command for ``submit``.

    ``area`` is the panel's client size (width, height) in pixels: the window takes its right part.
    ``on_report(path, chosen=)`` asks where to write the report of ``path`` and calls
    ``chosen(out)`` with the file chosen (None: the report is written beside ``path``)."""

    def __init__(
        self,
        submit: Callable[[C.Command], None],
        *,
        results: C.OpenedResults,
        area: tuple[int, int],
        on_report: Callable[..., None] | None = None,
    ) -> None:
        self.submit = submit
        self.results = results
        self.on_report = on_report
        self._report_to: str | None = None  # a report being written: the note says so when it is
        self.area = area
        self.sort: tuple[str, bool] = ("trial", False)
        """The table's order: (column, descending)."""
        self.status = "all"
        self.selected: int | None = None
        self._window: int | str = 0
        self._table: int | str = 0
        self._columns: dict[int | str, str] = {}
        self._filters: dict[str, int | str] = {}
        self._shown: int | str = 0
        self._note: int | str = 0
        self._x: int | str = 0
        self._y: int | str = 0
        self._plot_axes: tuple[int | str, int | str] = (0, 0)
        self._series: dict[str, int | str] = {}
        self._points: Any = None  # the scatter drawn: x, y, trials
        self._dirty = False
        self._source = ""
        self._ours: str | None = None  # the scenario this view opened with a trial's values
        self._y_columns: dict[str, str] = {}  # the y choices' short names -> columns
        self._front: ParetoFront | None = None  # a study of several objectives' front

    # --- building --------------------------------------------------------------------------------
    def close(self) -> None:
        """Take the window away for good (another results file is shown)."""
        if self._window and dpg.does_item_exist(self._window):
            dpg.delete_item(self._window)

    def build(self, parent: int | str = 0) -> None:
        """Build the window (``parent`` is unused: the window is top level)."""
        w, h = self.area
        width = min(w - 16, max(520, int(w * 0.64)))
        res = self.results
        with dpg.window(
            label=f"Results — {res.name}",
            pos=(w - width - 8, 28),
            width=width,
            height=max(300, h - 44),
            no_saved_settings=True,
            on_close=self._on_close,
        ) as self._window:
            counts = res.counts()
            with dpg.group(horizontal=True):
                dpg.add_text("show")
                for name in res.filters:
                    if name in ("all", "pass", "fail") or counts[name]:
                        label = f"{name} ({counts[name]})"
                        self._filters[name] = dpg.add_selectable(
                            label=label,
                            width=len(label) * 8,
                            user_data=name,
                            callback=self._on_filter,
                            default_value=name == "all",
                        )
                self._shown = dpg.add_text("", color=(150, 150, 150))
                report = dpg.add_button(label="Report...", callback=self._on_report)
                self._tip(report, f"an HTML report of {res.name}: trials, sensitivity, scatters, histograms")
            table_h = min(max(150, int((h - 44) * 0.42)), 32 + 25 * res.table.height)  # no empty space under few rows
            self._table = dpg.add_table(
                label="trials",
                header_row=True,
                sortable=True,
                callback=self._on_sort,
                policy=dpg.mvTable_SizingFixedFit,
                scrollX=True,
                scrollY=True,
                freeze_rows=1,
                freeze_columns=1,
                height=table_h,
                borders_innerH=True,
                borders_outerH=True,
                row_background=True,
            )
            self._add_column("trial", "trial", default_sort=True)
            self._add_column("status", "status")
            for col in (*res.params, *res.values):
                self._add_column(col, _short(col) + (f" [{res.units[col]}]" if res.units.get(col) else ""))
            if res.is_pareto:
                self._add_column("pareto", "front")
            dpg.add_table_column(label="", parent=self._table, no_sort=True)
            self._build_sensitivity(res)
            self._note = dpg.add_text("", wrap=max(200, width - 30))
            self._tip(
                self._note,
                "trial-<n> replays the trial's recording; set-up opens the sweep's scenario "
                "with the trial's param values; a click on a point opens its trial",
            )
            params = [_short(c) for c in res.params]
            self._y_columns = {_short(c): c for c in res.values}
            reqs = list(self._y_columns)
            first = "objective" if "objective" in res.values else (reqs[0] if reqs else "")
            tabs = contextlib.ExitStack()  # several objectives: the front and the scatter, each a tab
            if res.is_pareto:
                first = _short(res.objectives[0])
                self._front = ParetoFront(res, open_trial=lambda n: self._open(n, scenario=True), height=-1)
                tabs.enter_context(dpg.tab_bar())
                with dpg.tab(label="Pareto front"):
                    self._front.build()
                tabs.enter_context(dpg.tab(label="Params against values"))
            elif res.is_study:
                self._build_history(res)
            with tabs:
                with dpg.group(horizontal=True):
                    self._x = dpg.add_combo(
                        params,
                        label="x: param",
                        width=120,
                        callback=self._on_axes,
                        default_value=params[0] if params else "",
                    )
                    self._y = dpg.add_combo(
                        reqs, label="y: value", width=140, callback=self._on_axes, default_value=first
                    )
                with dpg.plot(label="##scatter", height=-1, width=-1, **PLOT_INPUT) as plot:
                    dpg.add_plot_legend(
                        location=dpg.mvPlot_Location_North, outside=True, horizontal=True
                    )  # never over a point
                    xa = dpg.add_plot_axis(dpg.mvXAxis, label=params[0] if params else "")
                    ya = dpg.add_plot_axis(dpg.mvYAxis, label=reqs[0] if reqs else "")
                    self._plot_axes = (xa, ya)
                    for group, label in (
                        ("pass", "pass"),
                        ("fail", "fail"),
                        ("other", "diverged/error"),
                        ("selected", "opened"),
                    ):
                        self._series[group] = dpg.add_scatter_series([], [], label=label, parent=ya)
                        dpg.bind_item_theme(
                            self._series[group],
                            _marker_theme(
                                SELECTED if group == "selected" else COLOURS[group], 8 if group == "selected" else 4
                            ),
                        )
            with dpg.item_handler_registry() as handlers:
                dpg.add_item_clicked_handler(callback=self._on_point)
            dpg.bind_item_handler_registry(plot, handlers)
        self._fill()

    def _build_sensitivity(self, res: C.OpenedResults) -> None:
        """Which knob matters: each varied param's rank correlation (Spearman) with each value;
        a Saltelli sweep's Sobol indices as bars before it (``SobolBars``)."""
        reading = res.sobol()
        if reading is not None:
            SobolBars(reading).build(default_open=self.area[1] >= SobolBars.OPEN_FROM)
        sens = {col: row for col, row in res.sensitivity().items() if row}
        if not sens or res.table.height < 3:
            return
        params = list(next(iter(sens.values())))
        with dpg.collapsing_header(label="Sensitivity (rank correlation)", default_open=False):
            with dpg.table(header_row=True, policy=dpg.mvTable_SizingFixedFit, borders_innerH=True):
                dpg.add_table_column(label="value")
                for prm in params:
                    dpg.add_table_column(label=_short(prm))
                for col, row in sens.items():
                    with dpg.table_row():
                        dpg.add_text(_short(col))
                        for prm in params:
                            rho = row[prm]
                            shade = 120 + int(120 * min(1.0, abs(rho))) if rho == rho else 120
                            dpg.add_text("-" if rho != rho else f"{rho:+.2f}", color=(shade, shade, shade))

    def _build_history(self, res: C.OpenedResults) -> None:
        """A study's objective by trial (points) and the best so far (a line), and Open best."""
        trials, obj, best = res.history()
        chosen = res.best_trial()

        def open_best() -> None:
            if chosen is not None:
                self._open(chosen, scenario=True)

        with dpg.group(horizontal=True):
            dpg.add_text(
                "no feasible trial" if chosen is None else f"best objective {_fmt(float(best[-1]))} at trial {chosen}"
            )
            button = dpg.add_button(
                label="Open best",
                callback=open_best,
                enabled=chosen is not None,
            )
            self._tip(button, "open the study's scenario with the best trial's param values on the sliders")
        with dpg.plot(label="##history", height=150, width=-1, **PLOT_INPUT):
            dpg.add_plot_legend(location=dpg.mvPlot_Location_North, outside=True, horizontal=True)
            dpg.add_plot_axis(dpg.mvXAxis, label="trial")
            ya = dpg.add_plot_axis(dpg.mvYAxis, label="objective")
            points = dpg.add_scatter_series(trials.tolist(), obj.tolist(), label="feasible trial", parent=ya)
            dpg.bind_item_theme(points, _marker_theme(COLOURS["pass"], 3))
            line = dpg.add_stair_series(trials.tolist(), best.tolist(), label="best so far", parent=ya)
            dpg.bind_item_theme(line, _marker_theme(SELECTED, 2))

    def _add_column(self, column: str, label: str, *, default_sort: bool = False) -> None:
        item = dpg.add_table_column(
            label=label, parent=self._table, default_sort=default_sort, prefer_sort_ascending=True
        )
        self._columns[item] = column

    @staticmethod
    def _tip(item: int | str, text: str) -> None:
        with dpg.tooltip(item):
            dpg.add_text(text, wrap=360)

    # --- filling ---------------------------------------------------------------------------------
    def _fill(self) -> None:
        """The table's rows and the scatter's points for the current order, filter and axes."""
        res = self.results
        column, descending = self.sort
        rows = res.rows(sort_by=column, descending=descending, status=self.status)
        for row in dpg.get_item_children(self._table, 1) or []:
            dpg.delete_item(row)
        passes = {c: c.rsplit(":", 1)[0] + ":pass" for c in res.requirement_values}
        for rec in rows.iter_rows(named=True):
            n = int(rec["trial"])
            with dpg.table_row(parent=self._table):
                button = dpg.add_button(label=f"trial-{n}", user_data=n, callback=self._on_replay)
                self._tip(
                    button,
                    f"replay {res.recording_path(n).name}"
                    if res.has_recording(n)
                    else "no recording of this trial (the scenario had no [recording])",
                )
                status = str(rec["status"])
                text = dpg.add_text(status, color=COLOURS.get(status, COLOURS["other"]))
                if rec.get("message"):
                    self._tip(text, str(rec["message"]))
                for col in res.params:
                    dpg.add_text(_fmt(rec[col]))
                for col in res.values:
                    ok = rec.get(passes[col]) if col in passes else rec.get("feasible") if col == "objective" else True
                    dpg.add_text(_fmt(rec[col]), color=COLOURS["other" if ok is None else "pass" if ok else "fail"])
                if res.is_pareto:
                    dpg.add_text("yes" if rec["pareto"] else "-", color=SELECTED if rec["pareto"] else COLOURS["other"])
                setup = dpg.add_button(label=f"set-up##{n}", user_data=n, callback=self._on_setup)
                self._tip(
                    setup,
                    res.scenario_problem()
                    or f"open {res.scenario_path.name if res.scenario_path else ''} with trial {n}'s param values",
                )
        dpg.set_value(self._shown, f"{rows.height} of {res.table.height} trials")
        self._plot()

    def _plot(self) -> None:
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
        for axis, name, col in ((self._plot_axes[0], x, xcol), (self._plot_axes[1], y, ycol)):
            dpg.configure_item(axis, label=name + (f" [{res.units[col]}]" if res.units.get(col) else ""))
        for axis, values in zip(self._plot_axes, (points.x, points.y)):
            if values.size:  # a margin round the points: a point on the plot's edge is half hidden
                lo, hi = float(values.min()), float(values.max())
                pad = 0.08 * (hi - lo) if hi > lo else max(abs(hi) * 0.1, 1e-3)
                dpg.set_axis_limits(axis, lo - pad, hi + pad)
            else:
                dpg.set_axis_limits_auto(axis)

    # --- callbacks -------------------------------------------------------------------------------
    def show(self) -> None:
        dpg.configure_item(self._window, show=True)
        dpg.focus_item(self._window)

    def _on_report(self) -> None:
        if self.on_report is not None:
            self.on_report(self.results.path, chosen=self._report_chosen)
            return
        out = fresh_path(default_report_path(self.results.path))
        self.submit(C.WriteReport(str(out), source=str(self.results.path)))
        self._report_chosen(str(out))

    def _report_chosen(self, out: str) -> None:
        self._report_to = out
        dpg.set_value(self._note, f"writing the report to {out} ...")
        dpg.configure_item(self._note, color=COLOURS["other"])

    def _follow_report(self, messages: tuple[tuple[str, str], ...]) -> None:
        """The session's line about the report being written, in the note (once it is there)."""
        out = self._report_to
        said = next(((level, text) for level, text in reversed(messages) if out and out in text), None)
        if said is not None:
            self._report_to = None
            dpg.set_value(self._note, said[1])
            dpg.configure_item(self._note, color=COLOURS["fail" if said[0] == "error" else "pass"])

    def _on_close(self, *args: object) -> None:
        dpg.configure_item(self._window, show=False)

    def _on_sort(self, sender: int | str, specs: list | None) -> None:
        if not specs:
            return
        item, direction = specs[0][0], specs[0][1]
        self.sort = (self._columns.get(item, "trial"), direction < 0)
        self._fill()

    def _on_filter(self, sender: int | str, app_data: object, name: str) -> None:
        self.status = name
        for other, item in self._filters.items():
            dpg.set_value(item, other == name)
        self._fill()

    def _on_axes(self) -> None:
        self._plot()

    def _on_point(self, *args: object) -> None:
        """A click on the scatter: the trial of the nearest point within 3 % of the plot."""
        pts = self._points
        if pts is None or not pts.x.size:
            return
        mx, my = dpg.get_plot_mouse_pos()
        (x0, x1), (y0, y1) = (dpg.get_axis_limits(a) for a in self._plot_axes)
        d = np.hypot((pts.x - mx) / max(x1 - x0, 1e-12), (pts.y - my) / max(y1 - y0, 1e-12))
        k = int(np.argmin(d))
        if d[k] <= 0.03:
            trial = int(pts.trials[k])
            self._open(trial, scenario=not self.results.has_recording(trial))

    def _on_replay(self, sender: int | str, app_data: object, trial: int) -> None:
        self._open(trial, scenario=False)

    def _on_setup(self, sender: int | str, app_data: object, trial: int) -> None:
        self._open(trial, scenario=True)

    def _open(self, trial: int, *, scenario: bool) -> None:
        """Submit the trial's commands. Unsaved rig edits of the user's own are asked about first
        (the session's question); this view's own trial values are not worth a question."""
        res = self.results
        scenario_path = str(res.scenario_path) if res.scenario_path else None
        ours = self._ours is not None and self._source == self._ours
        discard = not self._dirty or ours
        try:
            cmds = (
                res.scenario_commands(trial, discard=discard)
                if scenario
                else res.replay_commands(trial, discard=discard)
            )
        except ConfigError as exc:
            dpg.set_value(self._note, str(exc))
            dpg.configure_item(self._note, color=COLOURS["fail"])
            return
        if not discard:
            cmds = cmds[:1]  # the session asks about the user's edits; the values wait for another click
            dpg.set_value(
                self._note, f"the rig has unsaved changes: answer the question, then click trial {trial} again"
            )
        else:
            what = "its scenario with its param values" if scenario else res.recording_path(trial).name
            dpg.set_value(self._note, f"trial {trial}: opened {what}")
        dpg.configure_item(self._note, color=COLOURS["other"])
        for cmd in cmds:
            self.submit(cmd)
        self._ours = scenario_path if scenario and discard else None
        self.selected = trial
        if self._front is not None:
            self._front.select(trial)
        self._plot()

    def update(self, snap: C.PanelState) -> None:
        self._dirty = snap.dirty
        self._source = snap.source
        if self._report_to is not None:
            self._follow_report(snap.messages)


def _marker_theme(colour: tuple[int, int, int], size: int) -> int | str:
    """A scatter series' theme: filled circles of ``colour``, ``size`` pixels."""
    with dpg.theme() as theme, dpg.theme_component(dpg.mvScatterSeries):
        dpg.add_theme_color(dpg.mvPlotCol_MarkerFill, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_color(dpg.mvPlotCol_MarkerOutline, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_color(dpg.mvPlotCol_Line, colour, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_style(dpg.mvPlotStyleVar_Marker, dpg.mvPlotMarker_Circle, category=dpg.mvThemeCat_Plots)
        dpg.add_theme_style(dpg.mvPlotStyleVar_MarkerSize, size, category=dpg.mvThemeCat_Plots)
    return theme
