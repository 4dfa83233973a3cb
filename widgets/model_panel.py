"""Model: open (file dialog, bundled rigs, recent scenarios), reload, save scenario, model info.

The same actions sit in the panel's File menu, with their keys (``mjrig.settings.panel_keys``),
Export recording... and Report... (``mjrig.widgets.dialogs.export_dialogs``) and Quit.
Opening another file while the rig has unsaved edits asks first (save, open without saving, or
cancel). Recent shows each file by its name, with as many parent folders as it takes to tell
two of the same name apart; the full path is in its tooltip.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dearpygui.dearpygui as dpg

from mjrig import commands as C
from mjrig.model_info import summary
from mjrig.scenario.bundled import MODELS_DIR, bundled_models
from mjrig.settings.panel_keys import panel_key
from mjrig.settings.recent import RecentFiles, short_names
from mjrig.widgets.dialogs.export_dialogs import ExportDialogs
from mjrig.widgets.dialogs.file_dialog import SAVE_FILTERS, FileDialog
from mjrig.widgets.kit.themes import tip

__all__ = ["ModelPanel"]


class ModelPanel:
    """Every action is a command; the info text comes from the snapshot's ModelInfo. ``exports``:
    the export and report dialogs the File menu opens (shared with the plots and results view)."""

    def __init__(
        self, submit: Callable[[C.Command], None], *, recent: RecentFiles, exports: ExportDialogs | None = None
    ) -> None:
        self.submit = submit
        self.recent = recent
        self.exports = exports or ExportDialogs(submit)
        self._bundled = {m.name: str(m.scenario) for m in bundled_models()}
        self._descriptions = {m.name: m.description for m in bundled_models()}
        self._open = FileDialog(
            mode="open", title="Open a model, scenario, recording or results", on_done=self._on_open_file
        )
        self._save = FileDialog(
            mode="save", title="Save the rig as a scenario", on_done=self._on_save_file, filters=SAVE_FILTERS
        )
        self._recent_menu: int | str = 0
        self._recent_node: int | str = 0
        self._bundled_items: dict[str, int | str] = {}
        self._recent_items: list[str] = []
        self._info: int | str = 0
        self._hot: int | str = 0
        self._rig: int | str = 0
        self._ask: int | str = 0
        self._ask_text: int | str = 0
        self._source = ""
        self._model_path = ""
        self._pending: str | None = None
        self._ask_due = False  # the unsaved-edits question waits for the other dialogs to be gone
        self._quiet = 0  # frames since the last of them was up
        self._folder: Path | None = None
        self._save_in = 0  # frames until the save dialog opens (after the question closes)
        self._then_quit = False  # the save dialog shown is the quit question's "Save scenario first..."

    # --- building ---------------------------------------------------------------------------
    def build_menu(self, *, on_quit: Callable[[], Any]) -> None:
        """The File menu (call inside the window's menu bar); Quit calls ``on_quit``."""
        with dpg.menu(label="File"):
            dpg.add_menu_item(label="Open...", callback=self._on_open, shortcut=panel_key("open").key)
            with dpg.menu(label="Bundled rigs"):
                for name in self._bundled:
                    item = dpg.add_menu_item(label=name, user_data=name, callback=self._on_bundled)
                    tip(item, self._descriptions[name])
            self._recent_menu = dpg.add_menu(label="Recent")
            dpg.add_menu_item(label="Reload", callback=self._on_reload)
            dpg.add_menu_item(label="Save scenario...", callback=self._on_save, shortcut=panel_key("save").key)
            dpg.add_separator()
            tip(
                dpg.add_menu_item(label="Export recording...", callback=lambda: self.exports.export_dialog()),
                "the recording replayed, else the last one recorded, as CSV, MATLAB (.mat) or MCAP",
            )
            tip(
                dpg.add_menu_item(label="Report...", callback=lambda: self.exports.report_dialog()),
                "an HTML report of the recording replayed, else of the last one recorded",
            )
            dpg.add_separator()
            dpg.add_menu_item(label="Quit", callback=on_quit, shortcut=panel_key("quit").key)
        self._fill_recent(self.recent.load())

    def build(self, parent: int | str) -> None:
        self._open.build()
        self._save.build()
        self.exports.build()
        row = dpg.add_group(parent=parent, horizontal=True)
        tip(
            dpg.add_button(label="Open...", parent=row, callback=self._on_open),
            "open an MJCF .xml, a binary .mjb, a scenario .toml, a recording or a sweep's results .parquet (or drop it "
            "on the 3D view)",
        )
        tip(
            dpg.add_button(label="Reload", parent=row, callback=self._on_reload),
            "read the model file again, keeping the rig and the state",
        )
        tip(
            dpg.add_button(label="Save scenario...", parent=row, callback=self._on_save),
            "save the model with its loads, params and recording settings; `mjrig run` re-runs it",
        )
        self._hot = dpg.add_checkbox(
            label="reload on change",
            parent=row,
            default_value=True,
            callback=lambda _s, on: self.submit(C.SetHotReload(bool(on))),
        )
        tip(
            self._hot,
            "read the model (and the files it includes) or the scenario again when it changes on "
            "disk, keeping the rig and the run; a model MuJoCo refuses leaves the old one running",
        )
        self._rig = dpg.add_text("", parent=parent, wrap=0)
        with dpg.tree_node(label="Bundled rigs", parent=parent):
            for name in self._bundled:
                item = dpg.add_selectable(label=name, user_data=name, callback=self._on_bundled_pick)
                tip(item, self._descriptions[name])
                self._bundled_items[name] = item
        self._recent_node = dpg.add_tree_node(label="Recent", parent=parent)
        self._info = dpg.add_text("", parent=parent, wrap=0, color=(170, 170, 170))
        with dpg.window(
            label="Unsaved rig changes",
            modal=True,
            show=False,
            no_saved_settings=True,
            width=460,
            on_close=self._on_keep,
        ) as self._ask:
            self._ask_text = dpg.add_text("", wrap=440)
            with dpg.group(horizontal=True):
                dpg.add_button(label="Save scenario first...", callback=self._on_save)
                dpg.add_button(label="Open without saving", callback=self._on_discard)
                dpg.add_button(label="Cancel", callback=self._on_keep)

    def _fill_recent(self, items: list[str]) -> None:
        if items == self._recent_items:
            return
        self._recent_items = list(items)
        labels = short_names(items)
        if self._recent_menu:
            dpg.delete_item(self._recent_menu, children_only=True)
            for path, label in zip(items, labels):
                tip(
                    dpg.add_menu_item(label=label, parent=self._recent_menu, user_data=path, callback=self._on_recent),
                    path,
                )
            if not items:
                dpg.add_menu_item(label="(nothing yet)", parent=self._recent_menu, enabled=False)
        if self._recent_node:
            dpg.delete_item(self._recent_node, children_only=True)
            for path, label in zip(items, labels):
                tip(
                    dpg.add_selectable(
                        label=label, parent=self._recent_node, user_data=path, callback=self._on_recent_pick
                    ),
                    path,
                )

    # --- callbacks --------------------------------------------------------------------------
    def _start_folder(self) -> Path:
        if self._folder is not None:
            return self._folder
        src = Path(self._source) if self._source else None
        if src is None or src.parent == MODELS_DIR:
            return Path.cwd()
        return src.parent

    def _on_open(self) -> None:
        self.open_dialog()

    # --- what the panel's keys and other windows ask for ------------------------------------
    def open_dialog(self) -> None:
        """Show File > Open... (Ctrl+O)."""
        self._open.show(self._start_folder())

    def save_dialog(self, *, then_quit: bool = False) -> None:
        """Show File > Save scenario... (Ctrl+S). ``then_quit``: the app quits once the file is
        written (the quit question's *Save scenario first...*, which has just closed)."""
        self._then_quit = then_quit
        if then_quit or dpg.is_item_shown(self._ask):
            # One modal closes, the next opens a frame later (Dear PyGui drops a modal opened in
            # the frame another one closes).
            dpg.configure_item(self._ask, show=False)
            self._save_in = 3
            return
        self._show_save()

    @property
    def dialog_shown(self) -> bool:
        """Whether one of this panel's dialogs (Open, Save, an export's, the unsaved-edits question)
        is up or about to be."""
        return (
            self._open.shown
            or self._save.shown
            or self.exports.shown
            or dpg.is_item_shown(self._ask)
            or self._save_in > 0
        )

    def close_dialog(self) -> bool:
        """Close the dialog that is up as its Cancel does (the Escape key); False if none was."""
        for dialog in (self._open, self._save):
            if dialog.shown:
                dialog.cancel()
                return True
        if self.exports.close_dialog():
            return True
        if dpg.is_item_shown(self._ask):
            self._on_keep()
            return True
        return False

    def _on_open_file(self, path: str) -> None:
        self._folder = Path(path).parent
        self.submit(C.OpenModel(path))

    def _on_save(self) -> None:
        self.save_dialog()

    def _show_save(self) -> None:
        stem = Path(self._source or self._model_path or "rig").stem
        folder = self._start_folder()
        self._save.show(
            folder,
            name=f"{stem}.toml"
            if Path(self._source).suffix == ".toml" and Path(self._source).parent != MODELS_DIR
            else f"{stem}_rig.toml",
        )

    def _on_save_file(self, path: str) -> None:
        self._folder = Path(path).parent
        self.submit(C.SaveScenario(path, then_quit=self._then_quit))
        self._fill_recent(self.recent.add(path))  # Recent brings the saved rig back

    def _on_reload(self) -> None:
        self.submit(C.Reload())

    def _on_bundled(self, sender: int, app_data: object, name: str) -> None:
        self.submit(C.OpenModel(self._bundled[name]))

    def _on_recent(self, sender: int, app_data: object, path: str) -> None:
        self.submit(C.OpenModel(path))

    def _on_bundled_pick(self, sender: int, app_data: object, name: str) -> None:
        dpg.set_value(sender, False)  # the highlight follows what is open, not the click
        self.submit(C.OpenModel(self._bundled[name]))

    def _on_recent_pick(self, sender: int, app_data: object, path: str) -> None:
        dpg.set_value(sender, False)
        self.submit(C.OpenModel(path))

    def _on_discard(self) -> None:
        dpg.configure_item(self._ask, show=False)
        if self._pending:
            self.submit(C.OpenModel(self._pending, discard=True))

    def _on_keep(self, *args: object) -> None:
        """Cancel (also Escape): the rig stays. The question goes once the session no longer waits
        for an answer (``update``), so that its going shows the Cancel taken."""
        self.submit(C.KeepRig())

    # --- updating ---------------------------------------------------------------------------
    def update(self, snap: C.PanelState) -> None:
        self.exports.update(snap)
        if dpg.get_value(self._hot) != snap.hot_reload and not dpg.is_item_active(self._hot):
            dpg.set_value(self._hot, snap.hot_reload)
        if self._save_in > 0:
            self._save_in -= 1
            if self._save_in == 0:
                self._show_save()
        others = self._open.shown or self._save.shown or self.exports.shown or self._save_in > 0
        self._quiet = 0 if others else self._quiet + 1
        if snap.pending_open != self._pending:
            self._pending, self._ask_due = snap.pending_open, bool(snap.pending_open)
            if not self._pending:
                dpg.configure_item(self._ask, show=False)
        if self._ask_due and self._quiet >= 3:  # a modal opened as another closes is lost: wait
            self._ask_due = False
            dpg.set_value(
                self._ask_text,
                f"The rig has changes that are not saved in a scenario. "
                f"Open {Path(self._pending or '').name} anyway, and lose them?",
            )
            vw = dpg.get_viewport_client_width()
            dpg.configure_item(self._ask, show=True, pos=(max(0, (vw - 460) // 2), 120))
        src = snap.source or snap.model.path
        rig = _rig_name(src)
        current = Path(src).stem if src and Path(src).parent == MODELS_DIR else None
        for name, item in self._bundled_items.items():
            if dpg.get_value(item) != (name == current):
                dpg.set_value(item, name == current)
        dpg.set_value(self._rig, f"{rig}{'  (unsaved changes)' if snap.dirty else ''}")
        if src == self._source and snap.model.path == self._model_path:
            return
        self._source, self._model_path = src, snap.model.path
        if src:
            self._fill_recent(self.recent.add(src))
        m = snap.model
        size = summary(m, sep="\n")  # the timestep on a line of its own: no wrap inside a number
        dpg.set_value(self._info, f"{os.path.abspath(m.path) if m.path else ''}\n{size}, nq={m.nq}, nv={m.nv}")


def _rig_name(source: str) -> str:
    """'bundled rig: spring_mass', 'scenario: /path/file.toml', 'model: /path/m.xml' or
    'recording: /path/r.parquet' (paths without '..')."""
    if not source:
        return "no model"
    p = Path(os.path.abspath(source))
    suffix = p.suffix.lower()
    if p.parent == MODELS_DIR and suffix == ".toml":
        return f"bundled rig: {p.stem}"
    what = {".toml": "scenario", ".parquet": "recording"}.get(suffix, "model")
    return f"{what}: {p}"
