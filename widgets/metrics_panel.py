"""Metrics: each one's value over the run so far, and a form to add one on a plotted signal."""
from __future__ import annotations

from typing import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.runtime.metrics import METRIC_KINDS
from mjrig.widgets.rows import NameField, Rows
from mjrig.widgets.signal_choice import SignalChoice

__all__ = ["MetricsPanel"]

_SETTING = {"first_crossing": "level", "settling_time": "band"}
"""The kinds that need a number, and the field it goes to."""


class MetricsPanel:
    """A row per metric: name, signal, kind, window, value and unit (updated as the run goes);
    ``x`` removes it. The form adds one (PutEntry, saved with the scenario) on a signal picked
    from ``ticked()`` (the plotted signals) or any signal, with a kind, an optional window and
    the kind's number (first_crossing's level, settling_time's band as a fraction)."""

    def __init__(self, submit: Callable[[C.Command], None], *, ticked: Callable[[], list[str]]) -> None:
        self.submit = submit
        self._signal = SignalChoice(ticked)
        self._table: int | str = 0
        self._values: dict[str, int | str] = {}
        self._shown = Rows()
        self._kind: int | str = 0
        self._inputs: dict[str, int | str] = {}
        self._factor = 1.0  # the chosen signal's shown value per SI value ([units])
        self._name = NameField()

    def build(self, parent: int | str) -> None:
        self._table = self._shown.container = dpg.add_table(
            parent=parent, header_row=True, policy=dpg.mvTable_SizingStretchProp, borders_innerH=True,
            row_background=True)
        for label in ("name", "signal", "kind", "window", "value", ""):
            dpg.add_table_column(label=label, parent=self._table)
        dpg.add_separator(parent=parent)
        self._signal.build(parent, label="##metric signal",
                           tip="the signal to reduce: the plotted ones first (tick them in the plots' "
                               "tree), then all")
        row = dpg.add_group(parent=parent, horizontal=True)
        self._kind = dpg.add_combo(list(METRIC_KINDS), default_value="max", parent=row, width=130,
                                   label="##metric kind")
        with dpg.tooltip(self._kind):
            dpg.add_text("what to read off the signal (first_crossing needs a level, settling_time a band)")
        for key, hint, width in (("start", "from s", 60), ("end", "to s", 60), ("setting", "level/band", 80)):
            self._inputs[key] = dpg.add_input_text(parent=row, hint=hint, width=width)
        row = dpg.add_group(parent=parent, horizontal=True)
        self._inputs["name"] = self._name.item = dpg.add_input_text(parent=row, hint="metric name", width=160)
        add = dpg.add_button(label="Add metric", parent=row, callback=self._on_add)
        with dpg.tooltip(add):
            dpg.add_text("reduce the signal over every step of the window to one number, live")

    def _on_add(self) -> None:
        kind = dpg.get_value(self._kind)
        spec: dict = {"name": dpg.get_value(self._inputs["name"]).strip(), "signal": self._signal.value,
                      "kind": kind}
        try:
            for key in ("start", "end", "setting"):
                text = dpg.get_value(self._inputs[key]).strip()
                if text:  # a level is typed in the unit the signal is shown in (a band is a fraction)
                    scale = self._factor if kind == "first_crossing" and key == "setting" else 1.0
                    spec[_SETTING.get(kind, key) if key == "setting" else key] = float(text) / scale
        except ValueError:
            return
        self.submit(C.PutEntry("metrics", spec))

    def _on_remove(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.RemoveEntry("metrics", name))

    def update(self, snap: C.PanelState) -> None:
        self._signal.update(snap.signals)
        self._name.follow({m.name for m in snap.metrics})
        self._factor = snap.shown_units.convert(snap.units.get(self._signal.value, ""))[0]
        key = tuple((m.name, m.signal, m.kind, m.window) for m in snap.metrics)
        if self._shown.stale(key):
            self._values.clear()
            for m in snap.metrics:
                with dpg.table_row(parent=self._table):
                    dpg.add_text(m.name)
                    dpg.add_text(m.signal.split("/", 1)[-1])
                    dpg.add_text(m.kind)
                    dpg.add_text(m.window)
                    self._values[m.name] = dpg.add_text("")
                    dpg.add_button(label="x", callback=self._on_remove, user_data=m.name)
        for m in snap.metrics:
            dpg.set_value(self._values[m.name], snap.shown_units.text(m.value, m.unit, fmt=".6g"))
