"""Model: open (file dialog, bundled rigs, recent files), reload, save scenario, model info."""
from __future__ import annotations

from typing import Callable

import dearpygui.dearpygui as dpg

from app import commands as C
from app.bundled import bundled_models
from app.recent import RecentFiles

__all__ = ["ModelPanel"]


class ModelPanel:
    """Every action is a command; the info text comes from the snapshot's ModelInfo."""

    def __init__(self, submit: Callable[[C.Command], None], *, recent: RecentFiles) -> None:
        self.submit = submit
        self.recent = recent
        self._bundled = {m.name: str(m.scenario) for m in bundled_models()}
        self._open_dialog: int | str = 0
        self._save_dialog: int | str = 0
        self._recent_combo: int | str = 0
        self._info: int | str = 0
        self._model_path = ""

    def build(self, parent: int | str) -> None:
        self._open_dialog = dpg.add_file_dialog(show=False, callback=self._on_open_file, width=700, height=420,
                                                directory_selector=False, modal=True)
        for ext in (".xml", ".toml", ".mjb", ".*"):
            dpg.add_file_extension(ext, parent=self._open_dialog)
        self._save_dialog = dpg.add_file_dialog(show=False, callback=self._on_save_file, width=700, height=420,
                                                directory_selector=False, modal=True, default_filename="scenario")
        dpg.add_file_extension(".toml", parent=self._save_dialog)
        row = dpg.add_group(parent=parent, horizontal=True)
        dpg.add_button(label="Open...", parent=row, callback=self._on_open)
        dpg.add_button(label="Reload", parent=row, callback=self._on_reload)
        dpg.add_button(label="Save scenario...", parent=row, callback=self._on_save)
        dpg.add_combo(list(self._bundled), label="bundled rigs", parent=parent, width=200, callback=self._on_bundled)
        self._recent_combo = dpg.add_combo(self.recent.load(), label="recent", parent=parent, width=260,
                                           callback=self._on_recent)
        self._info = dpg.add_text("", parent=parent, wrap=420)

    def _on_open(self) -> None:
        dpg.show_item(self._open_dialog)

    def _on_open_file(self, sender: int, app_data: dict) -> None:
        path = app_data.get("file_path_name")
        if path:
            self.submit(C.OpenModel(path))

    def _on_save(self) -> None:
        dpg.show_item(self._save_dialog)

    def _on_save_file(self, sender: int, app_data: dict) -> None:
        path = app_data.get("file_path_name")
        if path:
            self.submit(C.SaveScenario(path))

    def _on_reload(self) -> None:
        self.submit(C.Reload())

    def _on_bundled(self, sender: int, name: str) -> None:
        self.submit(C.OpenModel(self._bundled[name]))

    def _on_recent(self, sender: int, path: str) -> None:
        self.submit(C.OpenModel(path))

    def update(self, snap: C.Snapshot) -> None:
        m = snap.model
        if m.path == self._model_path:
            return
        self._model_path = m.path
        if m.path:
            dpg.configure_item(self._recent_combo, items=self.recent.add(m.path))
        dpg.set_value(self._info, f"{m.path}\n{len(m.bodies)} bodies, {len(m.joints)} joints, {len(m.sites)} sites, "
                                  f"{len(m.sensors)} sensors, {m.nu} actuators; nq={m.nq} nv={m.nv}; "
                                  f"timestep {m.timestep:g} s")
