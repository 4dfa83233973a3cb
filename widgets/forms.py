"""One form mechanism for every load kind and proximity: fields described as data.

A ``SpecForm`` shows the inputs a scenario table needs (``[[loads]]`` or ``[[proximities]]``)
and turns them back into that table. Numbers accept a value or the name of a param; points are
picked from the model's names or typed (``body:NAME@x,y,z``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import dearpygui.dearpygui as dpg

__all__ = ["FieldDef", "SpecForm", "LOAD_FIELDS", "PROXIMITY_FIELDS", "parse_number_or_name"]


@dataclass(frozen=True)
class FieldDef:
    """One input: ``kind`` is 'text', 'point', 'number', 'vector' or 'bool'; ``hint`` the help text."""

    key: str
    kind: str
    hint: str = ""
    default: Any = None
    optional: bool = False


_SPRING = [FieldDef("to", "point", "reaction point"), FieldDef("stiffness", "number", "N/m or a param", 100.0),
           FieldDef("damping", "number", "N·s/m or a param", 0.0)]
LOAD_FIELDS: dict[str, list[FieldDef]] = {
    "force": [FieldDef("vector", "vector", "fx, fy, fz (N)", "0, 0, 10"),
              FieldDef("frame", "point", "site whose frame the vector is in", optional=True),
              FieldDef("to", "point", "reaction point", optional=True)],
    "torque": [FieldDef("vector", "vector", "tx, ty, tz (N·m)", "0, 0, 1"),
               FieldDef("frame", "point", "site whose frame the vector is in", optional=True),
               FieldDef("to", "point", "reaction point", optional=True)],
    "general": [FieldDef("force", "vector", "fx, fy, fz (N)", "0, 0, 0"),
                FieldDef("torque", "vector", "tx, ty, tz (N·m)", "0, 0, 0"),
                FieldDef("frame", "point", "site whose frame the vectors are in", optional=True),
                FieldDef("to", "point", "reaction point", optional=True)],
    "scalar_force": [FieldDef("magnitude", "number", "N along the site's x-axis", 10.0),
                     FieldDef("to", "point", "reaction point", optional=True)],
    "scalar_torque": [FieldDef("magnitude", "number", "N·m about the site's x-axis", 1.0),
                      FieldDef("to", "point", "reaction point", optional=True)],
    "ideal_spring": [*_SPRING, FieldDef("rest_length", "number", "m", 0.0)],
    "compression_spring": [*_SPRING, FieldDef("rest_length", "number", "m", 0.0)],
    "tension_spring": [*_SPRING, FieldDef("rest_length", "number", "m", 0.0)],
    "stroke_compression_spring": [*_SPRING, FieldDef("preload", "number", "N", 0.0),
                                  FieldDef("max_stroke", "number", "m", 0.1)],
}
PROXIMITY_FIELDS = [FieldDef("a", "point", "site, body:NAME@x,y,z or geom:NAME"),
                    FieldDef("b", "point", "site, body:NAME@x,y,z or geom:NAME"),
                    FieldDef("threshold", "number", "m (optional)", optional=True)]


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
    """Inputs for a set of FieldDefs; ``read()`` returns the scenario table they describe."""

    def __init__(self, fields: list[FieldDef], *, points: Callable[[], list[str]]) -> None:
        self.fields = fields
        self.points = points
        self._ids: dict[str, int | str] = {}
        self._kept: dict[str, Any] = {}  # values the form cannot edit (profiles) survive an edit
        self.group: int | str = 0
        self._filter: int | str = 0

    def build(self, parent: int | str) -> None:
        self.group = dpg.add_group(parent=parent)
        if any(f.kind == "point" for f in self.fields):
            self._filter = dpg.add_input_text(parent=self.group, hint="search sites / bodies / geoms", width=220,
                                              callback=self._on_filter)
        for f in self.fields:
            label = f"{f.key}{'' if not f.optional else ' (opt)'}"
            if f.kind == "point":
                self._ids[f.key] = dpg.add_combo(self.points(), label=label, parent=self.group, width=220,
                                                 height_mode=dpg.mvComboHeight_Large)
            elif f.kind == "bool":
                self._ids[f.key] = dpg.add_checkbox(label=label, parent=self.group, default_value=bool(f.default))
            else:
                self._ids[f.key] = dpg.add_input_text(label=label, parent=self.group, width=220, hint=f.hint,
                                                      default_value=_show(f.default))

    def _on_filter(self, sender: int, text: str) -> None:
        self.refresh_points()

    def refresh_points(self) -> None:
        """Re-read the model's names (narrowed by the search text) into every point picker."""
        needle = str(dpg.get_value(self._filter) or "").strip().lower() if self._filter else ""
        names = [n for n in self.points() if needle in n.lower()]
        valid = set(self.points())
        for f in self.fields:
            if f.kind == "point":
                dpg.configure_item(self._ids[f.key], items=names)
                value = str(dpg.get_value(self._ids[f.key]) or "")
                if value and value not in valid and not value.startswith("body:"):
                    dpg.set_value(self._ids[f.key], "")  # a point of the model before

    def clear_points(self) -> None:
        """Empty every point picker (another model is open: its old names mean nothing)."""
        for f in self.fields:
            if f.kind == "point":
                dpg.set_value(self._ids[f.key], "")

    def set_point(self, key: str, value: str) -> None:
        if key in self._ids:
            dpg.set_value(self._ids[key], value)

    def fill(self, spec: dict) -> None:
        """Show an existing table's values (e.g. to edit a load)."""
        self._kept = {k: v for k, v in spec.items() if isinstance(v, dict)}
        for f in self.fields:
            dpg.set_value(self._ids[f.key], _show(spec.get(f.key, f.default)))

    def read(self) -> dict:
        """The table the inputs describe; optional empty fields are left out."""
        out: dict[str, Any] = {}
        for f in self.fields:
            raw = dpg.get_value(self._ids[f.key])
            if f.kind == "bool":
                out[f.key] = bool(raw)
                continue
            text = str(raw or "").strip()
            if f.key in self._kept and text.startswith("<"):
                out[f.key] = self._kept[f.key]
                continue
            if not text:
                if not f.optional and f.kind != "point":
                    out[f.key] = f.default
                elif not f.optional:
                    out[f.key] = ""
                continue
            if f.kind == "number":
                out[f.key] = parse_number_or_name(text)
            elif f.kind == "vector":
                out[f.key] = [parse_number_or_name(p) for p in text.replace(";", ",").split(",")]
            else:
                out[f.key] = text
        return out

    def delete(self) -> None:
        if self.group:
            dpg.delete_item(self.group)
            self.group = 0
        self._ids.clear()
