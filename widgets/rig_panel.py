"""A section of the rig (loads, proximities, or any other section of the registry): list, add,
edit, switch off, remove — one panel class for every section, driven by ``mjrig.scenario.kinds``."""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.scenario.kinds import POINT_TYPES, REGISTRY, Registry
from mjrig.widgets.kit.forms import SpecForm, form_fields
from mjrig.widgets.kit.rows import NameField, Rows

__all__ = ["RigPanel"]


class RigPanel:
    """``what`` is a section of ``registry`` ('loads', 'proximities'...), whose kinds the panel
    offers; forms come from ``widgets.forms``. Every change is a command (PutEntry, with
    ``replace`` for edits; SetEntryActive; RemoveEntry). The table's columns follow the section:
    its kind when it has several, an on/off box for loads (they act on the model), and what each
    entry applies or measures now (``readout``, headed by the section's ``readout`` label)."""

    def __init__(self, submit: Callable[[C.Command], None], *, what: str, registry: Registry = REGISTRY) -> None:
        self.submit = submit
        self.what = what
        self.section = registry.section(what)
        self.registry = registry
        self._snapshot = C.PanelState()
        self._rows = Rows()
        self._table: int | str = 0
        self._name: int | str = 0
        self._kind: int | str = 0
        self._form: SpecForm | None = None
        self._form_parent: int | str = 0
        self._editing: str | None = None
        self._add_button: int | str = 0
        self._selection_text: int | str = 0
        self._name_field = NameField()

    # --- building ----------------------------------------------------------------------------
    def _points(self) -> list[str]:
        m = self._snapshot.model
        pts = list(m.sites) + [f"body:{b}" for b in m.bodies]
        if self._form is not None and any(f.type == "point_or_geom" for f in self._form.fields):
            pts += [f"geom:{g}" for g in m.geoms]
        return pts

    def build(self, parent: int | str) -> None:
        self._table = self._rows.container = dpg.add_table(
            parent=parent,
            header_row=True,
            resizable=True,
            policy=dpg.mvTable_SizingStretchProp,
            borders_innerH=True,
            row_background=True,
        )
        sec = self.section
        cols = ("name", *(("kind",) if sec.kind_key else ()), *(("on",) if sec.role == "load" else ()), sec.readout, "")
        for c in cols:
            dpg.add_table_column(label=c, parent=self._table)
        dpg.add_separator(parent=parent)
        row = dpg.add_group(parent=parent, horizontal=True)
        self._name = self._name_field.item = dpg.add_input_text(parent=row, hint="name", width=120)
        if self.section.kind_key is not None:
            self._kind = dpg.add_combo(
                self.section.kind_names,
                parent=row,
                default_value=self.section.default_kind,
                width=190,
                callback=self._on_kind,
            )
        self._form_parent = dpg.add_group(parent=parent)
        self._make_form()
        row2 = dpg.add_group(parent=parent, horizontal=True)
        self._add_button = dpg.add_button(label="Add", parent=row2, callback=self._on_apply)
        for label, cb, text in (
            ("Attach here", self._on_attach_here, "use the point double-clicked in the 3D view"),
            ("New", self._on_new, "clear the form to add another one"),
        ):
            with dpg.tooltip(dpg.add_button(label=label, parent=row2, callback=cb)):
                dpg.add_text(text)
        self._selection_text = dpg.add_text("", parent=parent, color=(150, 150, 150))

    def _make_form(self) -> None:
        if self._form is not None:
            self._form.delete()
        self._form = SpecForm(form_fields(self.what, self._kind_name(), registry=self.registry), points=self._points)
        self._form.build(self._form_parent)

    def _kind_name(self) -> str:
        return dpg.get_value(self._kind) if self._kind else self.section.default_kind

    # --- callbacks (read, build a command, submit) ----------------------------------------------
    def _on_kind(self, sender: int, value: str) -> None:
        self._make_form()

    def _spec(self) -> dict:
        assert self._form is not None
        spec = {"name": dpg.get_value(self._name).strip()}
        if self.section.kind_key is not None:
            spec[self.section.kind_key] = self._kind_name()
        spec.update(self._form.read())
        return spec

    def _on_apply(self) -> None:
        spec = self._spec()
        replace = self._editing is not None and self._editing == spec["name"]
        self.submit(C.PutEntry(self.what, spec, replace=replace))

    def _on_attach_here(self) -> None:
        if self._snapshot.selection and self._form is not None:
            first = next((f for f in self._form.fields if f.type in POINT_TYPES), None)
            if first is not None:  # the point it acts at (or a monitor's first end)
                self._form.set_point(first.name, self._snapshot.selection)

    def _on_new(self) -> None:
        self._editing = None
        dpg.set_value(self._name, "")
        dpg.configure_item(self._add_button, label="Add")

    def _on_edit(self, sender: int, app_data: object, name: str) -> None:
        items = self._snapshot.section(self.what)
        item = next((i for i in items if i.name == name), None)
        if item is None:
            return
        self._editing = name
        dpg.set_value(self._name, name)
        if self.section.kind_key is not None:
            dpg.set_value(self._kind, item.spec.get(self.section.kind_key, self.section.default_kind))
            self._make_form()
        assert self._form is not None
        self._form.fill(item.spec)
        dpg.configure_item(self._add_button, label="Apply")

    def _on_active(self, sender: int, value: bool, name: str) -> None:
        self.submit(C.SetEntryActive(self.what, name, bool(value)))

    def _on_remove(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.RemoveEntry(self.what, name))

    # --- updating ------------------------------------------------------------------------------
    def update(self, snapshot: C.PanelState) -> None:
        model_changed = snapshot.model is not self._snapshot.model
        other_rig = snapshot.opened != self._snapshot.opened  # not a reload
        self._snapshot = snapshot
        if (model_changed or other_rig) and self._form is not None:
            if other_rig:  # nothing typed for the old rig carries over
                self._form.clear_points()
                self._on_new()
            self._form.refresh_points()
        sel = snapshot.selection
        dpg.set_value(
            self._selection_text, f"selected: {sel}" if sel else "double-click a body in the viewer to pick a point"
        )
        items = snapshot.section(self.what)
        self._name_field.follow({i.name for i in items}, editing=self._editing is not None)
        key = tuple((i.name, i.active, str(i.spec)) for i in items)
        if self._rows.stale(key):
            self._rebuild_rows(items)
        self._refresh_values(items)

    def _rebuild_rows(self, items: tuple[C.EntryInfo, ...]) -> None:
        self._value_cells: list[int | str] = []
        for it in items:
            with dpg.table_row(parent=self._table):
                dpg.add_button(label=it.name, callback=self._on_edit, user_data=it.name, small=True)
                if self.section.kind_key:
                    dpg.add_text(it.kind)
                if self.section.role == "load":
                    dpg.add_checkbox(default_value=bool(it.active), callback=self._on_active, user_data=it.name)
                self._value_cells.append(dpg.add_text(""))
                dpg.add_button(label="x", callback=self._on_remove, user_data=it.name, small=True)

    def _refresh_values(self, items: tuple[C.EntryInfo, ...]) -> None:
        for cell, it in zip(getattr(self, "_value_cells", []), items):
            dpg.set_value(cell, it.readout_text(self._snapshot.tools.shown_units))
            dpg.configure_item(cell, color=(240, 60, 60) if it.alarm else (220, 220, 220))
