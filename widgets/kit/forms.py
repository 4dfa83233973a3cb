"""One form mechanism for every kind of every section: the inputs come from ``mjrig.scenario.kinds``.

A ``SpecForm`` shows the inputs a scenario table needs (``[[loads]]`` or ``[[proximities]]``)
and turns them back into that table. Numbers accept a value or the name of a param; points are
picked from the model's names or typed (``body:NAME@x,y,z``). Each input's tooltip is the
field's help from the registry. A number in its entry's signal's unit (``Field.of_signal``: a
metric's level) is typed in the unit that signal is shown in (``show_signal_unit``, ``read``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import dearpygui.dearpygui as dpg

from mjrig.scenario.kinds import POINT_TYPES, REGISTRY, Field, Registry

__all__ = ["SpecForm", "OtherRig", "form_fields", "parse_number_or_name"]

_INPUT = {
    "text": "text",
    "number": "number",
    "number_or_param": "number",
    "profile": "number",
    "vector": "vector",
    **{t: "point" for t in POINT_TYPES},
}
"""The input each field type gets: a combo of the model's points, or a text box."""


def form_fields(section: str, kind: str, *, registry: Registry = REGISTRY) -> list[Field]:
    """The fields a form shows for one kind of ``section`` (its name is typed beside the kind)."""
    found = registry.section(section).kind(kind)
    if found is None:
        raise KeyError(f"no {section} kind '{kind}'")
    return [f for f in found.fields if f.name != "name"]


def _hint(f: Field, *, signal_unit: str = "") -> str:
    """Grey text in an empty input: the unit and what else it takes (``signal_unit``: the unit
    the entry's signal is shown in, for a number in that unit)."""
    if f.of_signal:
        return signal_unit or "in the signal's unit"
    if f.type == "vector":
        return f"x, y, z ({f.unit})"
    if f.type in ("number_or_param", "profile"):
        return f"{f.unit} or a param" if f.unit else "a number or a param"
    return f.unit or f.help


def _toml(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def parse_number_or_name(text: str) -> float | str:
    """'12.5' -> 12.5; anything else is taken as a param name."""
    try:
        return float(text)
    except ValueError:
        return text.strip()


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_show(v) for v in value)
    if isinstance(value, dict):  # a profile: shown read-only as its kind
        return f"<{value.get('profile', 'table')} profile>"
    return "" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))


class SpecForm:
    """Inputs for a kind's fields (``form_fields``); ``read()`` returns the scenario table they describe."""

    def __init__(self, fields: list[Field], *, points: Callable[[], list[str]]) -> None:
        self.fields = fields
        self.points = points
        self._ids: dict[str, int | str] = {}
        self._kept: dict[str, Any] = {}  # values the form cannot edit (profiles) survive an edit
        self.group: int | str = 0
        self._filter: int | str = 0

    def build(self, parent: int | str) -> None:
        self.group = dpg.add_group(parent=parent)
        if self._point_fields():
            self._filter = dpg.add_input_text(
                parent=self.group, hint="search sites / bodies / geoms", width=220, callback=self._on_filter
            )
        for f in self.fields:
            label = f"{f.name}{'' if not f.optional else ' (opt)'}"
            if _INPUT[f.type] == "point":
                self._ids[f.name] = dpg.add_combo(
                    self.points(), label=label, parent=self.group, width=220, height_mode=dpg.mvComboHeight_Large
                )
            else:
                self._ids[f.name] = dpg.add_input_text(
                    label=label, parent=self.group, width=220, hint=_hint(f), default_value=_show(f.suggested)
                )
            if f.help:
                with dpg.tooltip(self._ids[f.name]):
                    dpg.add_text(f"{f.help} ({f.unit})" if f.unit else f.help)

    def show_signal_unit(self, label: str) -> None:
        """The entry's signal is shown in ``label`` ("" unknown): the hint of every number in its unit."""
        for f in self.fields:
            if f.of_signal and f.name in self._ids:
                dpg.configure_item(self._ids[f.name], hint=_hint(f, signal_unit=label))

    def _point_fields(self) -> list[Field]:
        return [f for f in self.fields if _INPUT[f.type] == "point"]

    def _on_filter(self, sender: int, text: str) -> None:
        self.refresh_points()

    def refresh_points(self) -> None:
        """Re-read the model's names (narrowed by the search text) into every point picker."""
        needle = str(dpg.get_value(self._filter) or "").strip().lower() if self._filter else ""
        names = [n for n in self.points() if needle in n.lower()]
        valid = set(self.points())
        for f in self._point_fields():
            dpg.configure_item(self._ids[f.name], items=names)
            value = str(dpg.get_value(self._ids[f.name]) or "")
            if value and value not in valid and not value.startswith("body:"):
                dpg.set_value(self._ids[f.name], "")  # a point of the model before

    def clear_points(self) -> None:
        """Empty every point picker and the search (another rig is open: its old names mean
        nothing, and an old search would narrow the new names to none, with no hint why)."""
        for f in self._point_fields():
            dpg.set_value(self._ids[f.name], "")
        if self._filter:
            dpg.set_value(self._filter, "")

    def set_point(self, key: str, value: str) -> None:
        if key in self._ids:
            dpg.set_value(self._ids[key], value)

    def fill(self, spec: dict) -> None:
        """Show an existing table's values (e.g. to edit a load)."""
        self._kept = {k: v for k, v in spec.items() if isinstance(v, dict)}
        for f in self.fields:
            dpg.set_value(self._ids[f.name], _show(spec.get(f.name, f.default)))

    def read(self, *, signal_factor: float = 1.0) -> dict:
        """The table the inputs describe; optional empty fields are left out, other empty
        numbers take the suggested value (an empty required point stays empty: the parser says so).
        ``signal_factor``: the shown value per SI value of the entry's signal; a number typed in
        its unit (``Field.of_signal``) is divided by it (the scenario holds SI)."""
        out: dict[str, Any] = {}
        for f in self.fields:
            text = str(dpg.get_value(self._ids[f.name]) or "").strip()
            kind = _INPUT[f.type]
            if f.name in self._kept and text.startswith("<"):
                out[f.name] = self._kept[f.name]
            elif not text:
                if not f.optional:
                    out[f.name] = "" if kind == "point" else _toml(f.suggested)
            elif kind == "number":
                value = parse_number_or_name(text)
                out[f.name] = value / signal_factor if f.of_signal and isinstance(value, float) else value
            elif kind == "vector":
                out[f.name] = [parse_number_or_name(p) for p in text.replace(";", ",").split(",")]
            else:
                out[f.name] = text
        return out

    def delete(self) -> None:
        if self.group:
            dpg.delete_item(self.group)
            self.group = 0
        self._ids.clear()


class OtherRig:
    """Tells a panel that another rig was opened (``PanelState.opened`` changed; a reload is the
    same rig): what was typed into its forms for the old one goes (``clear``)."""

    def __init__(self) -> None:
        self._opened: int | None = None

    def opened(self, snap: Any) -> bool:
        """True once per rig opened after the first one this panel saw."""
        before, self._opened = self._opened, snap.opened
        return before is not None and before != snap.opened

    @staticmethod
    def clear(items: Iterable[int | str]) -> None:
        """Empty the text inputs ``items``."""
        for item in items:
            dpg.set_value(item, "")
