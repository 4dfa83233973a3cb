"""Requirements: each one's live pass/fail badge, and a form to add one on a plotted signal."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.kit.forms import OtherRig
from mjrig.widgets.kit.rows import NameField, Rows
from mjrig.widgets.kit.signal_choice import SignalChoice

__all__ = ["RequirementsPanel"]

PASS, FAIL, OPEN = (90, 200, 110), (235, 70, 70), (200, 200, 120)


class RequirementsPanel:
    """A row per requirement: name, signal, bound, observed value, badge (PASS / FAIL, or "holds"
    while its window is open) and the first violation's time; ``x`` removes it. The form adds one
    (PutEntry) on a signal picked from ``ticked()`` (the plotted signals) or any signal."""

    def __init__(self, submit: Callable[[C.Command], None], *, ticked: Callable[[], list[str]]) -> None:
        self.submit = submit
        self._signal = SignalChoice(ticked)
        self._table: int | str = 0
        self._rows: dict[str, tuple[int | str, int | str, int | str]] = {}
        self._shown = Rows()
        self._inputs: dict[str, int | str] = {}
        self._rig = OtherRig()
        self._unit: tuple[float, str] = (1.0, "")  # the chosen signal's shown unit: (per SI unit, label)
        self._unit_text: int | str = 0
        self._name = NameField()

    def build(self, parent: int | str) -> None:
        self._table = self._shown.container = dpg.add_table(
            parent=parent,
            header_row=True,
            policy=dpg.mvTable_SizingStretchProp,
            borders_innerH=True,
            row_background=True,
        )
        for label in ("name", "signal", "wanted", "value", "state", "first failure", ""):
            dpg.add_table_column(label=label, parent=self._table)
        dpg.add_separator(parent=parent)
        self._signal.build(
            parent,
            label="##signal",
            tip="the signal to check: the plotted ones first (tick them in the plots' tree), then all",
        )
        bounds = dpg.add_group(parent=parent, horizontal=True)
        for key, hint, width in (
            ("min", ">= min", 70),
            ("max", "<= max", 70),
            ("final", "final", 70),
            ("tolerance", "± tol", 60),
        ):
            self._inputs[key] = dpg.add_input_text(parent=bounds, hint=hint, width=width)
        self._unit_text = dpg.add_text("", parent=bounds, color=(150, 150, 150))
        row = dpg.add_group(parent=parent, horizontal=True)
        self._inputs["name"] = self._name.item = dpg.add_input_text(parent=row, hint="requirement name", width=160)
        add = dpg.add_button(label="Add requirement", parent=row, callback=self._on_add)
        with dpg.tooltip(add):
            dpg.add_text("check the signal at every step from now on: >= min, <= max, final ± tol")

    def _on_add(self) -> None:
        spec: dict = {"name": dpg.get_value(self._inputs["name"]).strip(), "signal": self._signal.value}
        try:
            for key in ("min", "max", "final", "tolerance"):
                text = dpg.get_value(self._inputs[key]).strip()
                if text:  # typed in the unit the signal is shown in; the scenario holds SI
                    spec[key] = float(text) / self._unit[0]
        except ValueError:
            return
        self.submit(C.PutEntry("requirements", spec))

    def _on_remove(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.RemoveEntry("requirements", name))

    def update(self, snap: C.PanelState) -> None:
        if self._rig.opened(snap):  # a requirement typed for the old rig is not the new one's
            self._rig.clear(self._inputs.values())
        self._signal.update(snap.signals)
        self._name.follow({r.name for r in snap.tools.requirements})
        shown = snap.tools.shown_units
        unit = shown.convert(snap.units.get(self._signal.value, ""))
        if unit != self._unit:  # the bounds are typed in the signal's shown unit, named beside them
            self._unit = unit
            dpg.set_value(self._unit_text, unit[1].replace("*", "·"))
        key = (shown, *((r.name, r.signal, r.bound) for r in snap.tools.requirements))
        if self._shown.stale(key):
            self._rows.clear()
            for r in snap.tools.requirements:
                with dpg.table_row(parent=self._table):
                    dpg.add_text(r.name)
                    dpg.add_text(r.signal.split("/", 1)[-1])
                    dpg.add_text(r.wanted(snap.units.get(r.signal, ""), shown))
                    value, badge, failed = dpg.add_text(""), dpg.add_text(""), dpg.add_text("")
                    dpg.add_button(label="x", callback=self._on_remove, user_data=r.name)
                self._rows[r.name] = (value, badge, failed)
        for r in snap.tools.requirements:
            value, badge, failed = self._rows[r.name]
            dpg.set_value(value, shown.text(r.value, snap.units.get(r.signal, ""), fmt=".5g"))
            text, colour = (("PASS", PASS) if r.decided else ("holds", OPEN)) if r.passed else ("FAIL", FAIL)
            dpg.set_value(badge, text)
            dpg.configure_item(badge, color=colour)
            dpg.set_value(failed, "-" if r.first_violation is None else f"t = {r.first_violation:.4g} s")
