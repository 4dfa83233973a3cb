"""The Units menu: which unit the plots, values at the cursor, sliders and tables show each
quantity in. A choice is the rig's ``[units]`` (``SetUnits``; saved with the scenario, files stay SI)."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.runtime.telemetry.units import CHOICES, DisplayUnits

__all__ = ["UnitsMenu"]


class UnitsMenu:
    """A check item per unit of each quantity ("Length: mm"); the rig's choice is ticked."""

    def __init__(self, submit: Callable[[C.Command], None]) -> None:
        self.submit = submit
        self._items: dict[tuple[str, str], int | str] = {}
        self._shown: DisplayUnits | None = None

    def build_menu(self) -> None:
        """The Units menu (call inside the panel's menu bar)."""
        with dpg.menu(label="Units"):
            for i, (quantity, units) in enumerate(CHOICES.items()):
                if i:
                    dpg.add_separator()
                for unit in units:
                    self._items[quantity, unit] = dpg.add_menu_item(
                        label=f"{quantity.capitalize()}: {unit}",
                        check=True,
                        user_data=(quantity, unit),
                        callback=self._on_choose,
                    )

    def build(self, parent: int | str = 0) -> None:
        """Nothing outside the menu bar."""

    def _on_choose(self, sender: int | str, value: bool, choice: tuple[str, str]) -> None:
        self._shown = None  # a click on the ticked item unticks it: tick the rig's choice again
        self.submit(C.SetUnits(*choice))

    def update(self, snap: C.PanelState) -> None:
        if snap.tools.shown_units == self._shown:
            return
        self._shown = snap.tools.shown_units
        for (quantity, unit), item in self._items.items():
            dpg.set_value(item, getattr(self._shown, quantity) == unit)
