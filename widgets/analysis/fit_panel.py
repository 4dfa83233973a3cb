"""Fit: the rig's params estimated from its bench data (``[[measured]]``), as ``mjrig fit`` does.

A row per param: *fit* ticks it, with the bounds it is searched in (its min and max when it has
them) and a log scale; the measured entries listed; *Run fit* starts the fit as a background
job (``RunFit``), whose lowest cost is plotted as it goes; then the estimate with its standard
error and 95 % interval, the first measured signal against the simulation from the start
(dashed) and at the estimate, each experiment's rms error before and after (a validation entry's
marked, red when the estimate made it worse), *Use estimate*, which sets the params (the
sliders follow), and *Write model...*, a Save dialog for a copy of the MJCF whose model-bound
params carry the estimate (``WriteFittedModel``). Rows also offer what the rig's bench data allows besides params: a joint's start
position (``initial.<joint>``) and a bench's clock offset (``offset.<entry>``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig import commands as C
from mjrig.bench_state import verdict_text
from mjrig.runtime.files.paths import fresh_path
from mjrig.widgets.dialogs.file_dialog import FileDialog
from mjrig.widgets.kit.themes import PLOT_INPUT, disabled_button_theme

__all__ = ["FitPanel"]

DOTS = 160
"""Measured samples drawn at most on the fit's plot (dots, thinned evenly)."""


def _bounds(p: C.ParamInfo | C.FitVariable) -> tuple[float, float]:
    """A row's search bounds: a fit variable's offered ones; a param's min and max, else a decade
    around its value."""
    if isinstance(p, C.FitVariable):
        return p.low, p.high
    v = float(p.value)
    lo = p.min if p.min is not None else (v / 10 if v > 0 else v - 10 * abs(v) - 1)
    hi = p.max if p.max is not None else (v * 10 if v > 0 else v + 10 * abs(v) + 1)
    return float(lo), float(hi)


GREW = (235, 90, 80)
"""The colour of a validation error that grew with the estimate."""


class FitPanel:
    """The params to fit, Run fit, its progress and result, Use estimate."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._params: tuple[tuple[str, ...], tuple[tuple[str, float, float, bool], ...]] = ((), ())
        self._rows: dict[str, tuple[int | str, int | str, int | str, int | str]] = {}  # fit, low, high, log
        self._fit: C.FitProgress | None = None
        self._measured: C.MeasuredSignals | None = None
        self._model_path = ""  # the open model's file: the fitted copy is proposed beside it
        self._save = FileDialog(
            mode="save",
            title="Write the fitted model",
            on_done=lambda path: self.submit(C.WriteFittedModel(path)),
            filters=((".xml", (".xml",)), ("all files", ())),
            suffix=".xml",
        )

    def build(self, parent: int | str) -> None:
        self._data = dpg.add_text("", parent=parent, wrap=0, color=(170, 170, 170))
        self._table = dpg.add_table(parent=parent, header_row=True, policy=dpg.mvTable_SizingStretchProp)
        for label, weight in (("param (tick to fit)", 1.5), ("low", 1.0), ("high", 1.0), ("scale", 0.45)):
            dpg.add_table_column(label=label, parent=self._table, width_stretch=True, init_width_or_weight=weight)
        row = dpg.add_group(parent=parent, horizontal=True)
        dpg.add_button(label="Run fit", parent=row, callback=self._run)
        self._use = dpg.add_button(
            label="Use estimate", parent=row, enabled=False, callback=lambda: self.submit(C.UseEstimate())
        )
        self._write = dpg.add_button(label="Write model...", parent=row, enabled=False, callback=self._on_write)
        for button in (self._use, self._write):  # greyed while there is no estimate, or it is stale
            dpg.bind_item_theme(button, disabled_button_theme())
        self._save.build()
        self._status = dpg.add_text("", parent=parent, wrap=0)
        with dpg.plot(
            parent=parent, height=120, width=-1, no_title=True, label="cost", **PLOT_INPUT
        ) as self._cost_plot:
            dpg.add_plot_axis(dpg.mvXAxis, label="evaluation")
            with dpg.plot_axis(dpg.mvYAxis, label="lowest cost", scale=dpg.mvPlotScale_Log10):
                self._cost = dpg.add_line_series([], [], label="lowest cost")
        self._estimate = dpg.add_table(parent=parent, header_row=True, policy=dpg.mvTable_SizingStretchProp)
        for label in ("param", "estimate", "± 1 s.e.", "95 % interval", "unit"):
            dpg.add_table_column(label=label, parent=self._estimate)
        self._errors = dpg.add_table(parent=parent, header_row=True, policy=dpg.mvTable_SizingStretchProp)
        for label in ("rms error of", "start", "estimate", "unit"):
            dpg.add_table_column(label=label, parent=self._errors)
        with dpg.plot(
            parent=parent, height=170, width=-1, no_title=True, label="measured and simulated", **PLOT_INPUT
        ) as p:
            dpg.add_plot_legend(location=dpg.mvPlot_Location_NorthEast)
            dpg.add_plot_axis(dpg.mvXAxis, label="time (s)")
            with dpg.plot_axis(dpg.mvYAxis, label="") as self._overlay_y:
                self._before = dpg.add_line_series([], [], label="from the start")
                self._after = dpg.add_line_series([], [], label="at the estimate")
                self._measured_line = dpg.add_scatter_series([], [], label="measured")  # drawn on top
                with dpg.theme() as dots, dpg.theme_component(dpg.mvScatterSeries):
                    dpg.add_theme_style(dpg.mvPlotStyleVar_MarkerSize, 2.0, category=dpg.mvThemeCat_Plots)
                dpg.bind_item_theme(self._measured_line, dots)
        self._overlay_plot = p

    @property
    def dialog(self) -> FileDialog:
        """The Write model dialog (the app closes it on Escape)."""
        return self._save

    def _on_write(self) -> None:
        model = Path(self._model_path) if self._model_path else Path.cwd() / "model.xml"
        proposed = fresh_path(model.with_name(f"{model.stem}-fitted.xml"))
        self._save.show(proposed.parent, proposed.name)

    def update(self, snap: C.PanelState) -> None:
        self._model_path = snap.model.path
        rows: tuple[C.ParamInfo | C.FitVariable, ...] = (*snap.entries.params, *snap.bench.variables)
        names = (tuple(p.name for p in rows), snap.bench.planned)
        if names != self._params:
            self._params = names
            self._make_rows(rows, snap.bench.planned)
        if snap.comparison.measured is not self._measured:
            self._measured = snap.comparison.measured
            entries = snap.comparison.measured.entries()
            dpg.set_value(
                self._data,
                "bench data: " + "; ".join(f"{e} ({', '.join(snap.comparison.measured.of(e))})" for e in entries)
                if entries
                else "no bench data: drop a CSV, MAT, MCAP, Excel or TDMS file on the 3D view (or File > Open it) to add some",
            )
        if snap.bench.fit != self._fit:
            self._fit = snap.bench.fit
            self._show(snap.bench.fit)

    def _make_rows(
        self, params: tuple[C.ParamInfo | C.FitVariable, ...], planned: tuple[tuple[str, float, float, bool], ...]
    ) -> None:
        """A row per param and fit variable; those of the scenario's ``[fit]`` (``planned``)
        ticked, with its bounds and scale."""
        dpg.delete_item(self._table, children_only=True, slot=1)
        self._rows = {}
        plan = {name: (lo, hi, log) for name, lo, hi, log in planned}
        for p in params:
            lo, hi = plan[p.name][:2] if p.name in plan else _bounds(p)
            with dpg.table_row(parent=self._table):
                fit = dpg.add_checkbox(
                    label=f"fit {p.name}{f' [{p.unit}]'.replace('*', '·') if p.unit else ''}",
                    default_value=p.name in plan,
                )
                low = dpg.add_input_float(label=f"##low {p.name}", default_value=lo, width=-1, step=0.0, format="%.5g")
                high = dpg.add_input_float(
                    label=f"##high {p.name}", default_value=hi, width=-1, step=0.0, format="%.5g"
                )
                log = dpg.add_checkbox(
                    label=f"log##{p.name}",
                    default_value=plan[p.name][2] if p.name in plan else lo > 0 and hi / lo >= 100,
                )
            self._rows[p.name] = (fit, low, high, log)

    def _run(self) -> None:
        chosen = tuple(
            (n, float(dpg.get_value(lo)), float(dpg.get_value(hi)), bool(dpg.get_value(log)))
            for n, (fit, lo, hi, log) in self._rows.items()
            if dpg.get_value(fit)
        )
        self.submit(C.RunFit(chosen))

    def _show(self, fit: C.FitProgress | None) -> None:
        if fit is None:  # this rig has no fit (another rig opened): nothing of the last one stays
            self._clear()
            return
        n = len(fit.costs)
        dpg.set_value(self._cost, [list(fit.counts), [max(c, 1e-300) for c in fit.costs]])
        if n:
            for axis in dpg.get_item_children(self._cost_plot, 1):
                dpg.fit_axis_data(axis)
        s = fit.summary
        if fit.running:
            text = (
                f"fitting: {fit.counts[-1]} evaluations so far, lowest cost {fit.costs[-1]:.4g}" if n else "fitting ..."
            )
        elif fit.error:
            text = f"the fit failed: {fit.error}"
        elif fit.stale:
            text = "made before the model changed: run the fit again"
        else:
            text = f"{verdict_text(s)} after {s['evaluations']} evaluations ({s['message']})" + "".join(
                f"\n{reason}" for reason in dict.fromkeys((s.get("reasons") or {}).values()) if s["converged"]
            )
        dpg.set_value(self._status, text)
        dpg.configure_item(self._use, enabled=bool(s) and not fit.running and not fit.stale)
        dpg.configure_item(
            self._write, enabled=bool(s) and bool(s.get("converged")) and not fit.running and not fit.stale
        )
        dpg.delete_item(self._estimate, children_only=True, slot=1)
        for name in s.get("params", []):
            lo, hi = s["ci95"][name]
            with dpg.table_row(parent=self._estimate):
                for cell in (
                    name,
                    f"{s['estimate'][name]:.6g}",
                    f"{s['stderr'][name]:.2g}",
                    f"{lo:.5g} … {hi:.5g}",
                    s["units"].get(name, "").replace("*", "·"),
                ):
                    dpg.add_text(cell)
        self._show_errors(s)
        series = next((v for per in s.get("series", {}).values() for v in per.values()), None)
        sig = next((k for per in s.get("series", {}).values() for k in per), "")
        if series is not None:
            t = series["t"]
            values = {
                k: np.array([np.nan if x is None else float(x) for x in series[k]])
                for k in ("measured", "before", "after")
            }
            for item, key in ((self._before, "before"), (self._after, "after")):
                dpg.set_value(item, [list(t), values[key].tolist()])
            every = max(1, len(t) // DOTS)  # dots a plot this size shows apart
            dpg.set_value(self._measured_line, [list(t[::every]), values["measured"][::every].tolist()])
            dpg.configure_item(self._overlay_y, label=f"{sig} ({s.get('signal_units', {}).get(sig, '')})")
            for axis in dpg.get_item_children(self._overlay_plot, 1):
                dpg.fit_axis_data(axis)

    def _clear(self) -> None:
        """No fit shown: status, cost curve, estimate, errors and overlay empty; Use estimate greyed."""
        dpg.set_value(self._status, "")
        for series in (self._cost, self._before, self._after, self._measured_line):
            dpg.set_value(series, [[], []])
        for button in (self._use, self._write):
            dpg.configure_item(button, enabled=False)
        for table in (self._estimate, self._errors):
            dpg.delete_item(table, children_only=True, slot=1)
        dpg.configure_item(self._overlay_y, label="")

    def _show_errors(self, s: dict) -> None:
        """A row per experiment and signal: its rms error from the start and at the estimate; a
        validation entry's (not fitted) marked, in red when the estimate made it worse."""
        dpg.delete_item(self._errors, children_only=True, slot=1)
        checked = s.get("validation") or {}
        parts = ((s, ""), (checked, " (validation)"))
        several = len({sig for part, _ in parts for per in part.get("rms", {}).values() for sig in per}) > 1
        for part, role in parts:
            for exp, per in part.get("rms", {}).items():
                for sig, after in per.items():
                    before = part["rms_before"][exp][sig]
                    with dpg.table_row(parent=self._errors):
                        dpg.add_text(f"{exp}{role}" + (f": {sig}" if several else ""))  # one signal: named in the plot
                        dpg.add_text(f"{before:.4g}")
                        grew = bool(role) and after > before
                        dpg.add_text(f"{after:.4g}" + (" (worse)" if grew else ""), **({"color": GREW} if grew else {}))
                        dpg.add_text(s.get("signal_units", {}).get(sig, "").replace("*", "·"))
