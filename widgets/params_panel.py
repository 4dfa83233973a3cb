"""Params: one slider (within min/max) or input per NamedValue, live; and a form to add one.

A param with a unit of a quantity ``[units]`` names (length, angle, force, torque and their
rates) is shown in the chosen unit; the value it submits is SI again. A param the scenario's
study or sweep keeps on a catalogue or a step's grid (``ParamInfo.snap``) snaps there: the
slider submits, and then shows, the nearest allowed value."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.widgets.kit.forms import OtherRig
from mjrig.widgets.kit.rows import Rows

__all__ = ["ParamsPanel"]


class ParamsPanel:
    """Moving a slider submits SetParam; the physics sees it at the next step."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._group: int | str = 0
        self._inputs: dict[str, int | str] = {}
        self._rows = Rows()
        self._new: dict[str, int | str] = {}
        self._factor: dict[str, float] = {}  # param -> shown value per SI value
        self._params: dict[str, C.ParamInfo] = {}
        self._rig = OtherRig()

    def build(self, parent: int | str) -> None:
        self._group = self._rows.container = dpg.add_group(parent=parent)
        row = dpg.add_group(parent=parent, horizontal=True)
        for key, hint, width in (
            ("name", "name", 90),
            ("value", "value", 60),
            ("min", "min", 50),
            ("max", "max", 50),
            ("unit", "unit", 50),
        ):
            self._new[key] = dpg.add_input_text(parent=row, hint=hint, width=width)
        dpg.add_button(label="Add param", parent=parent, callback=self._on_add)  # its own line: never cut off

    def _on_change(self, sender: int, value: float, name: str) -> None:
        factor, p = self._factor.get(name, 1.0), self._params.get(name)
        si = float(value) / factor
        if p is not None and (p.choices or p.grid):
            si = p.snap(si)
            dpg.set_value(sender, si * factor)  # the handle jumps to the value the physics gets
        self.submit(C.SetParam(name, si))

    def _on_add(self) -> None:
        def num(key: str) -> float | None:
            text = dpg.get_value(self._new[key]).strip()
            return float(text) if text else None

        try:
            value = num("value")
            cmd = C.AddParam(
                dpg.get_value(self._new["name"]).strip(),
                value if value is not None else 0.0,
                num("min"),
                num("max"),
                dpg.get_value(self._new["unit"]).strip(),
            )
        except ValueError:
            return
        self.submit(cmd)

    def update(self, snap: C.PanelState) -> None:
        if self._rig.opened(snap):  # a param typed for the old rig is not the new one's
            self._rig.clear(self._new.values())
        shown = snap.tools.shown_units
        key = (shown, *((p.name, p.min, p.max, p.unit, p.choices, p.grid) for p in snap.entries.params))
        self._params = {p.name: p for p in snap.entries.params}
        if self._rows.stale(key):
            self._inputs.clear()
            for p in snap.entries.params:
                factor, unit = shown.convert(p.unit)
                self._factor[p.name] = factor
                label = f"{p.name} [{unit.replace('*', '·')}]" if p.unit else p.name
                if p.min is not None and p.max is not None:
                    self._inputs[p.name] = dpg.add_slider_double(
                        label=label,
                        parent=self._group,
                        min_value=p.min * factor,
                        max_value=p.max * factor,
                        default_value=p.value * factor,
                        width=220,
                        callback=self._on_change,
                        user_data=p.name,
                        format="%.0f" if p.whole and factor == 1.0 else "%.4g",
                    )
                else:
                    self._inputs[p.name] = dpg.add_input_double(
                        label=label,
                        parent=self._group,
                        default_value=p.value * factor,
                        width=220,
                        callback=self._on_change,
                        user_data=p.name,
                        format="%.4g",
                        on_enter=True,
                    )
            if not snap.entries.params:
                dpg.add_text(
                    "no params: add one, then use its name in a load's number field",
                    parent=self._group,
                    color=(150, 150, 150),
                )
        for p in snap.entries.params:
            item = self._inputs.get(p.name)
            if item is not None and not dpg.is_item_active(item):
                dpg.set_value(item, p.value * self._factor.get(p.name, 1.0))
