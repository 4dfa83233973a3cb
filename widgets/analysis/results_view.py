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

This module builds the window and holds what it shows (order, filter, the trial opened) and the
trials' table; the scatter is ``results_scatter``'s, the colours ``trial_colours``', the Pareto
front ``pareto_front``'s and the Sobol indices ``sobol_bars``'.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import default_report_path, fresh_path
from mjrig.widgets.analysis.pareto_front import ParetoFront
from mjrig.widgets.analysis.results_scatter import TrialScatter
from mjrig.widgets.analysis.sobol_bars import SobolBars
from mjrig.widgets.analysis.trial_colours import COLOURS, SELECTED, marker_theme
from mjrig.widgets.kit.themes import PLOT_INPUT

__all__ = ["ResultsView"]


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
        self._scatter = TrialScatter(results, open_trial=self._open)
        self._dirty = False
        self._source = ""
        self._ours: str | None = None  # the scenario this view opened with a trial's values
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
            tabs = contextlib.ExitStack()  # several objectives: the front and the scatter, each a tab
            if res.is_pareto:
                self._front = ParetoFront(res, open_trial=lambda n: self._open(n, scenario=True), height=-1)
                tabs.enter_context(dpg.tab_bar())
                with dpg.tab(label="Pareto front"):
                    self._front.build()
                tabs.enter_context(dpg.tab(label="Params against values"))
            elif res.is_study:
                self._build_history(res)
            with tabs:
                self._scatter.build()
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
            dpg.bind_item_theme(points, marker_theme(COLOURS["pass"], 3))
            line = dpg.add_stair_series(trials.tolist(), best.tolist(), label="best so far", parent=ya)
            dpg.bind_item_theme(line, marker_theme(SELECTED, 2))

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
        self._scatter.show(status=self.status, selected=self.selected)

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
        self._scatter.show(status=self.status, selected=trial)

    def update(self, snap: C.PanelState) -> None:
        self._dirty = snap.dirty
        self._source = snap.source
        if self._report_to is not None:
            self._follow_report(snap.messages)
