"""Actuators: each of the model's actuators with its input, and a one-click slider to drive it."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.kit.rows import Rows

__all__ = ["ActuatorsPanel"]


class ActuatorsPanel:
    """A row per actuator: name, input (ctrl), range, and "Slider" (BindActuator: a param over its
    ctrlrange drives it, shown in Params) or "Release" (RemoveEntry of its control) when the rig drives it."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._table: int | str = 0
        self._empty: int | str = 0
        self._rows = Rows()
        self._ctrl: dict[str, int | str] = {}

    def build(self, parent: int | str) -> None:
        self._empty = dpg.add_text("this model has no actuators", parent=parent, color=(150, 150, 150))
        self._table = self._rows.container = dpg.add_table(
            parent=parent,
            header_row=True,
            policy=dpg.mvTable_SizingStretchProp,
            borders_innerH=True,
            row_background=True,
        )
        for label in ("actuator", "input", "range", "driven by", ""):
            dpg.add_table_column(label=label, parent=self._table)

    def _on_bind(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.BindActuator(name))

    def _on_release(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.RemoveEntry("controls", name))

    def update(self, snap: C.PanelState) -> None:
        key = tuple((a.name, a.range, a.control) for a in snap.tools.actuators)
        if self._rows.stale(key):
            self._ctrl.clear()
            for a in snap.tools.actuators:
                with dpg.table_row(parent=self._table):
                    dpg.add_text(a.name)
                    self._ctrl[a.name] = dpg.add_text(f"{a.ctrl:.4g}")
                    dpg.add_text("free" if a.range is None else f"{a.range[0]:g} ... {a.range[1]:g}")
                    dpg.add_text(a.control or "-")
                    if a.control is None:
                        button = dpg.add_button(label="Slider", callback=self._on_bind, user_data=a.name)
                        tip = "drive it from a new slider in Params (saved with the scenario)"
                    else:
                        button = dpg.add_button(label="Release", callback=self._on_release, user_data=a.name)
                        tip = "stop driving it (its input stays where it is)"
                    with dpg.tooltip(button):
                        dpg.add_text(tip)
            dpg.configure_item(self._empty, show=not snap.tools.actuators)
            dpg.configure_item(self._table, show=bool(snap.tools.actuators))
        for a in snap.tools.actuators:
            item = self._ctrl.get(a.name)
            if item is not None:
                dpg.set_value(item, f"{a.ctrl:.4g}")
