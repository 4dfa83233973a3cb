"""Metrics: each one's value over the run so far, and a form to add one on a plotted signal, its
inputs made from the registry's metrics section (``mjrig.scenario.kinds``) by ``widgets.forms``."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.scenario.kinds import REGISTRY, Field, Registry
from mjrig.widgets.kit.forms import OtherRig, SpecForm, form_fields
from mjrig.widgets.kit.rows import NameField, Rows
from mjrig.widgets.kit.signal_choice import SignalChoice

__all__ = ["MetricsPanel"]

SECTION = "metrics"
SIGNAL = "signal"
"""The field the signal picker fills (the plotted signals first), not a text input."""


class MetricsPanel:
    """A row per metric: name, signal, kind, window, value and unit (updated as the run goes);
    ``x`` removes it. The form adds one (PutEntry, saved with the scenario) on a signal picked
    from ``ticked()`` (the plotted signals) or any signal, with a kind and that kind's fields as
    the registry declares them (the window's start and end in s, first_crossing's level,
    settling_time's band or band_abs), each with its unit and help; a number in the signal's unit
    is typed in the unit the signal is shown in."""

    def __init__(
        self, submit: Callable[[C.Command], None], *, ticked: Callable[[], list[str]], registry: Registry = REGISTRY
    ) -> None:
        self.submit = submit
        self.registry = registry
        self.section = registry.section(SECTION)
        self._signal = SignalChoice(ticked)
        self._table: int | str = 0
        self._values: dict[str, int | str] = {}
        self._shown = Rows()
        self._kind: int | str = 0
        self._form: SpecForm | None = None
        self._form_parent: int | str = 0
        self._rig = OtherRig()
        self._unit: tuple[float, str] = (1.0, "")  # the chosen signal's shown unit: (per SI unit, label)
        self._name = NameField()

    def build(self, parent: int | str) -> None:
        self._table = self._shown.container = dpg.add_table(
            parent=parent,
            header_row=True,
            policy=dpg.mvTable_SizingStretchProp,
            borders_innerH=True,
            row_background=True,
        )
        for label in ("name", "signal", "kind", "window", "value", ""):
            dpg.add_table_column(label=label, parent=self._table)
        dpg.add_separator(parent=parent)
        self._signal.build(
            parent,
            label="##metric signal",
            tip="the signal to reduce: the plotted ones first (tick them in the plots' tree), then all",
        )
        row = dpg.add_group(parent=parent, horizontal=True)
        self._kind = dpg.add_combo(
            self.section.kind_names,
            default_value=self.section.default_kind,
            parent=row,
            width=130,
            label="##metric kind",
            callback=self._on_kind,
        )
        with dpg.tooltip(self._kind):
            dpg.add_text("what to read off the signal; the inputs below are the kind's")
        self._name.item = dpg.add_input_text(parent=row, hint="metric name", width=160)
        self._form_parent = dpg.add_group(parent=parent)
        self._make_form()
        add = dpg.add_button(label="Add metric", parent=parent, callback=self._on_add)
        with dpg.tooltip(add):
            dpg.add_text("reduce the signal over every step of the window to one number, live")

    def _fields(self) -> list[Field]:
        """The chosen kind's fields but its name and signal (typed and picked above the form)."""
        kind = dpg.get_value(self._kind) if self._kind else self.section.default_kind
        return [f for f in form_fields(SECTION, kind, registry=self.registry) if f.name != SIGNAL]

    def _make_form(self) -> None:
        if self._form is not None:
            self._form.delete()
        self._form = SpecForm(self._fields(), points=list)
        self._form.build(self._form_parent)
        self._form.show_signal_unit(self._unit[1])

    def _on_kind(self, sender: int, value: str) -> None:
        self._make_form()

    def _on_add(self) -> None:
        assert self._form is not None
        spec: dict = {"name": dpg.get_value(self._name.item).strip(), SIGNAL: self._signal.value}
        if self.section.kind_key is not None:
            spec[self.section.kind_key] = dpg.get_value(self._kind)
        spec.update(self._form.read(signal_factor=self._unit[0]))
        self.submit(C.PutEntry(SECTION, spec))

    def _on_remove(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.RemoveEntry(SECTION, name))

    def update(self, snap: C.PanelState) -> None:
        if self._rig.opened(snap):  # a metric typed for the old rig is not the new one's
            self._rig.clear([self._name.item])
            self._make_form()
        self._signal.update(snap.signals)
        self._name.follow({m.name for m in snap.tools.metrics})
        unit = snap.tools.shown_units.convert(snap.units.get(self._signal.value, ""))
        if unit != self._unit and self._form is not None:  # a level is typed in the signal's shown unit
            self._unit = unit
            self._form.show_signal_unit(unit[1])
        key = tuple((m.name, m.signal, m.kind, m.window) for m in snap.tools.metrics)
        if self._shown.stale(key):
            self._values.clear()
            for m in snap.tools.metrics:
                with dpg.table_row(parent=self._table):
                    dpg.add_text(m.name)
                    dpg.add_text(m.signal.split("/", 1)[-1])
                    dpg.add_text(m.kind)
                    dpg.add_text(m.window)
                    self._values[m.name] = dpg.add_text("")
                    dpg.add_button(label="x", callback=self._on_remove, user_data=m.name)
        for m in snap.tools.metrics:
            dpg.set_value(self._values[m.name], snap.tools.shown_units.text(m.value, m.unit, fmt=".6g"))
