"""The signal a form acts on: a combo of the plotted signals first, then every signal, offering
a signal as soon as it is ticked in the plots' tree (the Requirements and Metrics forms)."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

__all__ = ["SignalChoice"]


class SignalChoice:
    """A combo over ``ticked()`` (the plotted signals) then the rest of the rig's signals."""

    def __init__(self, ticked: Callable[[], list[str]]) -> None:
        self.ticked = ticked
        self.item: int | str = 0
        self._choices: list[str] = []
        self._ticked: list[str] = []
        self._signals: list[str] | tuple[str, ...] | None = None

    def build(self, parent: int | str, *, label: str, tip: str) -> None:
        self.item = dpg.add_combo([], parent=parent, width=-1, label=label)
        with dpg.tooltip(self.item):
            dpg.add_text(tip)

    @property
    def value(self) -> str:
        return dpg.get_value(self.item)

    def update(self, signals: list[str] | tuple[str, ...]) -> None:
        """Follow the rig's ``signals`` and the plots' ticks (a signal just ticked is offered)."""
        ticked = self.ticked()
        if ticked == self._ticked and signals is self._signals:
            return  # nothing changed: thousands of signals are not scanned every frame
        self._signals = signals
        picked = set(ticked)
        choices = ticked + [s for s in signals if s not in picked]
        if choices != self._choices:
            self._choices = choices
            dpg.configure_item(self.item, items=choices)
            new = [t for t in ticked if t not in self._ticked]
            if new:  # one just ticked is offered; a rig opened with several: the first of them
                dpg.set_value(self.item, new[-1] if self._ticked else ticked[0])
            elif dpg.get_value(self.item) not in choices:
                dpg.set_value(self.item, choices[0] if choices else "")
        self._ticked = ticked
