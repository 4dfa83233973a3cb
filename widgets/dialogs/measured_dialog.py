"""The question asked when a file of bench data is opened or dropped (``PanelState.bench.measured_offer``):
which column is the time (and in which unit, with what offset), and which signal each other
column measures, in which unit -- filled in with the session's guesses. A workbook or TDMS file
of several sheets or groups offers a choice of them (``OfferPart``: the columns of that one).
*Add to rig* makes it a ``[[measured]]`` entry (``AddMeasured``); *Cancel* declines."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import dearpygui.dearpygui as dpg

from mjrig.commands import AddMeasured, Command, MeasuredOffer, OfferPart, PanelState

__all__ = ["MeasuredDialog", "NOT_USED", "LOG_TIME"]

WIDTH = 620
TABLE_H = 220
"""Height of the columns' list, px."""
ERROR_H = 60
"""What a refusal's reason takes of it (up to three lines), px."""
NOT_USED = "(not used)"
LOG_TIME = "(each message's log time)"
TIME_UNITS = ("s", "ms", "us", "ns")


class MeasuredDialog:
    """A modal window mapping an offered file's columns onto signals."""

    def __init__(self, submit: Callable[[Command], None]) -> None:
        self.submit = submit
        self._offer: MeasuredOffer | None = None
        self._window: int | str = 0
        self._rows: list[tuple[str, int | str, int | str]] = []  # (column, its signal combo, its unit input)

    def build(self) -> None:
        with dpg.window(
            label="Measured data", modal=True, show=False, no_saved_settings=True, width=WIDTH, on_close=self._cancel
        ) as self._window:
            self._title = dpg.add_text("", wrap=WIDTH - 20)
            self._part = dpg.add_combo([], label="sheet", width=220, show=False, callback=self._on_part)
            self._name = dpg.add_input_text(label="name", width=220)
            with dpg.group(horizontal=True):
                self._time = dpg.add_combo([], label="time", width=150)
                self._time_unit = dpg.add_combo(TIME_UNITS, label="unit", width=55, default_value="s")
                self._offset = dpg.add_input_float(
                    label="offset s", width=90, default_value=0.0, step=0.0, format="%.4f"
                )
            self._hint = dpg.add_text(
                "Each column of the file: its unit (empty: the signal's own SI unit) and the signal it measures.",
                wrap=WIDTH - 20,
                color=(170, 170, 170),
            )
            self._table = dpg.add_child_window(height=TABLE_H, width=-1)
            self._error = dpg.add_text("", wrap=WIDTH - 20, color=(240, 110, 100), show=False)
            with dpg.group(horizontal=True):
                dpg.add_button(label="Add to rig", callback=self._add)
                dpg.add_button(label="Cancel", callback=self._cancel)

    @property
    def shown(self) -> bool:
        return bool(self._window) and dpg.is_item_shown(self._window)

    def update(self, snapshot: PanelState) -> None:
        offer = snapshot.bench.measured_offer
        if offer == self._offer:
            return
        before, self._offer = self._offer, offer
        if offer is None:
            dpg.configure_item(self._window, show=False)
            return
        several = len(offer.parts) > 1
        dpg.configure_item(self._part, show=several, items=list(offer.parts))
        if several:  # the part offered (after a refused choice: still the one whose columns are listed)
            kind = "sheet" if Path(offer.path).suffix.lower() == ".xlsx" else "group"
            dpg.configure_item(self._part, label=kind)
            dpg.set_value(self._part, offer.part)
        dpg.set_value(self._error, offer.error)
        dpg.configure_item(self._error, show=bool(offer.error))
        # the reason takes its lines from the columns' list: the buttons stay in the dialog's view
        dpg.configure_item(self._table, height=TABLE_H - ERROR_H if offer.error else TABLE_H)
        if before is not None and dataclasses.replace(before, error="") == dataclasses.replace(offer, error=""):
            return  # the same file, a mapping refused: what the user entered stays, with the reason
        dpg.set_value(
            self._title,
            f"{Path(offer.path).name}: {len(offer.columns)} numeric columns. Map them onto "
            "the rig's signals; the plots draw each one dotted beside its signal.",
        )
        dpg.set_value(self._name, offer.name)
        times = [LOG_TIME] if not offer.time else list(offer.columns)
        dpg.configure_item(self._time, items=times)
        dpg.set_value(self._time, offer.time or LOG_TIME)
        dpg.set_value(self._time_unit, offer.time_unit)
        dpg.set_value(self._offset, 0.0)
        dpg.delete_item(self._table, children_only=True)
        names = [NOT_USED, *(s for s, _ in offer.signals)]
        self._rows = []
        for column, signal, unit in offer.guesses:
            with dpg.group(horizontal=True, parent=self._table):  # [unit] [signal v] column
                entry = dpg.add_input_text(default_value=unit, width=60, hint="unit", label=f"##unit {column}")
                combo = dpg.add_combo(names, default_value=signal or NOT_USED, width=-170, label=column[:24])
            self._rows.append((column, combo, entry))
        vw = dpg.get_viewport_client_width()
        width = min(WIDTH, vw - 12)  # a laptop's panel is narrower than the dialog would like
        for text in (self._title, self._hint):
            dpg.configure_item(text, wrap=width - 24)
        dpg.configure_item(self._window, show=True, width=width, pos=(max(0, (vw - width) // 2), 80))

    def _add(self) -> None:
        offer = self._offer
        if offer is None:
            return
        signals = tuple(
            (dpg.get_value(combo), column, dpg.get_value(unit).strip())
            for column, combo, unit in self._rows
            if dpg.get_value(combo) not in (NOT_USED, "")
        )
        time = dpg.get_value(self._time)
        self.submit(  # the dialog closes once the rig has taken it (the offer gone), else says why
            AddMeasured(
                offer.path,
                name=dpg.get_value(self._name).strip() or offer.name,
                time="" if time == LOG_TIME else time,
                time_unit=dpg.get_value(self._time_unit),
                offset=float(dpg.get_value(self._offset)),
                signals=signals,
                part=offer.part,
            )
        )

    def _on_part(self, sender: int | str, part: str) -> None:
        if self._offer is not None and part != self._offer.part:
            self.submit(OfferPart(part))

    def _cancel(self, *args: object) -> None:
        dpg.configure_item(self._window, show=False)
        if self._offer is not None:
            self.submit(AddMeasured(""))
