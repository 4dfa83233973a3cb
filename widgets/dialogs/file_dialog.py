"""A file dialog that behaves as desktop users expect (Dear PyGui's own one traps them).

- A typed path works: absolute, ``~/...`` or relative to the folder shown; Enter accepts it; a
  folder typed or double-clicked is entered. The name field has the keyboard when the dialog
  opens and keeps it after Enter, so a person types on (another name, a file in the folder just
  entered) without reaching for the mouse.
- A red message says what is wrong with the typed name; it goes when the folder changes (it
  spoke of the folder left).
- Double-clicking a file picks it (Open) or chooses its name (Save).
- The type filter narrows the list and never touches the typed name -- except in a Save dialog
  made with ``choose_type`` (a "save as type"): there each filter is one file type, picking one
  makes its suffix the one added and swaps the typed name's suffix for it, and a name typed with
  another filter's suffix keeps it (the type follows the name: ``run.mat`` saves a .mat).
- Open and Save differ in title and button; Save adds its suffix (``.toml``) and asks before
  replacing.
- ``cancel()`` closes it as its Cancel button does (the panel's Escape key).
- A choice made with the mouse (a double-click, the Open button) closes the dialog once the
  button is up and two more frames are drawn: the end of the click never reaches a widget
  under the dialog.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import dearpygui.dearpygui as dpg

__all__ = ["FileDialog", "OPEN_FILTERS", "SAVE_FILTERS", "type_filters"]

OPEN_FILTERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("models, scenarios, recordings", (".xml", ".urdf", ".mjb", ".toml", ".parquet")),
    (".xml", (".xml",)),
    (".urdf", (".urdf",)),
    (".mjb", (".mjb",)),
    (".toml", (".toml",)),
    (".parquet", (".parquet",)),
    ("bench data (.csv .mat .mcap .xlsx .tdms)", (".csv", ".mat", ".mcap", ".xlsx", ".tdms")),
    ("all files", ()),
)
SAVE_FILTERS: tuple[tuple[str, tuple[str, ...]], ...] = ((".toml", (".toml",)), ("all files", ()))


def type_filters(*suffixes: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """One filter per file type, for a ``choose_type`` Save dialog: ``(".csv", (".csv",)), ...``."""
    return tuple((s, (s,)) for s in suffixes)


class FileDialog:
    """A modal Open or Save dialog; ``show(folder, name)``; ``on_done(path)`` gets the chosen file.

    ``mode`` is "open" (the file must exist) or "save" (``suffix`` is added when missing; an
    existing file is replaced only after the user says so). ``choose_type`` (save only): the
    filters are file types (``type_filters``) and the one picked sets the suffix (the first at
    first, or the one ``show`` is given a name of).
    """

    def __init__(
        self,
        *,
        mode: str,
        title: str,
        on_done: Callable[[str], None],
        filters: tuple[tuple[str, tuple[str, ...]], ...] = OPEN_FILTERS,
        suffix: str = ".toml",
        choose_type: bool = False,
    ) -> None:
        assert mode in ("open", "save")
        assert not choose_type or (mode == "save" and all(len(exts) == 1 for _, exts in filters))
        self.mode, self.title, self.on_done, self.filters, self.suffix = mode, title, on_done, filters, suffix
        self.choose_type = choose_type
        if choose_type:
            self.suffix = filters[0][1][0]
        self.folder = Path.cwd()
        self._filter = 0
        self._window: int | str = 0
        self._folder_text: int | str = 0
        self._name: int | str = 0
        self._list: int | str = 0
        self._filter_buttons: list[int | str] = []
        self._message: int | str = 0
        self._confirm: int | str = 0
        self._handlers: int | str = 0
        self._pending: Path | None = None
        self._closing: tuple[Path, int] | None = None  # chosen: (file, frames left) once the mouse is up

    def build(self) -> None:
        with dpg.item_handler_registry() as self._handlers:
            dpg.add_item_double_clicked_handler(callback=self._on_double)
        with dpg.item_handler_registry() as every_frame:
            dpg.add_item_visible_handler(callback=self._on_frame)
        with dpg.window(
            label=self.title,
            modal=True,
            show=False,
            width=640,
            height=440,
            no_saved_settings=True,
            on_close=self._on_cancel,
        ) as self._window:
            with dpg.group(horizontal=True):
                dpg.add_button(label="Up", callback=self._on_up)
                self._folder_text = dpg.add_text("")
            with dpg.group(horizontal=True):
                for i, (label, _) in enumerate(self.filters):
                    self._filter_buttons.append(
                        dpg.add_selectable(
                            label=label,
                            width=len(label) * 7 + 8,
                            user_data=i,
                            callback=self._on_filter,
                            disable_popup_close=True,
                        )
                    )
            self._list = dpg.add_child_window(height=-80)
            self._name = dpg.add_input_text(
                label="file name",
                width=-80,
                on_enter=True,
                callback=self._on_accept,
                hint="a file name, or a path (absolute, ~/..., or relative)",
            )
            self._message = dpg.add_text("", color=(240, 80, 80), wrap=600)
            with dpg.group(horizontal=True):
                dpg.add_button(label="Open" if self.mode == "open" else "Save", width=80, callback=self._on_accept)
                dpg.add_button(label="Cancel", width=80, callback=self._on_cancel)
                self._confirm = dpg.add_group(horizontal=True, show=False)
                dpg.add_text("exists: replace it?", parent=self._confirm, color=(230, 200, 90))
                dpg.add_button(label="Replace", parent=self._confirm, callback=self._on_replace)
        dpg.bind_item_handler_registry(self._window, every_frame)

    # --- showing ----------------------------------------------------------------------------
    @property
    def shown(self) -> bool:
        """Whether the dialog is on screen."""
        return bool(self._window) and dpg.is_item_shown(self._window)

    def show(self, folder: str | os.PathLike | None = None, name: str = "") -> None:
        dpg.set_value(self._name, name)
        if self.choose_type and Path(name).suffix.lower() in self._types():
            self._filter = self._types().index(Path(name).suffix.lower())
            self.suffix = self._types()[self._filter]
        self._enter(Path(folder) if folder is not None and Path(folder).is_dir() else self.folder)
        vw, vh = dpg.get_viewport_client_width(), dpg.get_viewport_client_height()
        w, h = min(640, vw - 20), min(440, vh - 40)
        dpg.configure_item(
            self._window, show=True, width=w, height=h, pos=(max(0, (vw - w) // 2), max(0, (vh - h) // 3))
        )
        dpg.focus_item(self._name)

    def cancel(self) -> None:
        """Close without choosing (the Cancel button, the title bar's close, the Escape key)."""
        self._on_cancel()

    def _enter(self, folder: Path) -> None:
        """Show ``folder``; what the message and the replace question said was about the last one."""
        self.folder = folder.resolve()
        self._pending = None
        dpg.set_value(self._message, "")
        dpg.configure_item(self._confirm, show=False)
        self._list_folder()

    def _list_folder(self) -> None:
        dpg.set_value(self._folder_text, str(self.folder))
        for i, b in enumerate(self._filter_buttons):
            dpg.set_value(b, i == self._filter)
        dpg.delete_item(self._list, children_only=True)
        exts = self.filters[self._filter][1]
        try:
            entries = sorted(self.folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
        except OSError as exc:
            dpg.set_value(self._message, f"cannot list {self.folder}: {exc.strerror or exc}")
            return
        for p in entries:
            if p.name.startswith("."):
                continue
            if p.is_dir():
                label = p.name + "/"
            elif not exts or p.suffix.lower() in exts:
                label = p.name
            else:
                continue
            item = dpg.add_selectable(
                label=label, parent=self._list, user_data=p.name, callback=self._on_pick, disable_popup_close=True
            )  # a click in a modal must not close it
            dpg.bind_item_handler_registry(item, self._handlers)

    # --- callbacks --------------------------------------------------------------------------
    def _types(self) -> list[str]:
        """The suffix of each filter (``choose_type`` dialogs)."""
        return [exts[0] for _, exts in self.filters]

    def _on_filter(self, sender: int | str, value: bool, index: int) -> None:
        self._filter = index
        if self.choose_type:  # a "save as type": the name follows the type picked
            self.suffix = self._types()[index]
            typed = str(dpg.get_value(self._name) or "").strip()
            if typed and Path(typed).suffix.lower() in self._types():
                dpg.set_value(self._name, str(Path(typed).with_suffix(self.suffix)))
        self._list_folder()  # otherwise the typed name stays as it is

    def _on_up(self) -> None:
        self._enter(self.folder.parent)

    def _on_pick(self, sender: int | str, value: bool, name: str) -> None:
        if not (self.folder / name).is_dir():
            dpg.set_value(self._name, name)
        for child in dpg.get_item_children(self._list, 1) or []:
            if child != sender:
                dpg.set_value(child, False)

    def _on_double(self, sender: int | str, app_data: object) -> None:
        item = app_data[1] if isinstance(app_data, (list, tuple)) else app_data
        name = dpg.get_item_user_data(item)
        if name is None:
            return
        target = self.folder / name
        if target.is_dir():
            self._enter(target)
        else:
            dpg.set_value(self._name, name)
            self._on_accept()

    def _resolve(self) -> Path | None:
        text = str(dpg.get_value(self._name) or "").strip()
        if not text:
            dpg.set_value(self._message, "type a file name or pick one from the list")
            return None
        p = Path(text).expanduser()
        return p if p.is_absolute() else self.folder / p

    def _on_accept(self, *args: object) -> None:
        target = self._resolve()
        if target is not None and target.is_dir():
            dpg.set_value(self._name, "")
            self._enter(target)
        elif target is not None:
            self._choose(target)
        if self.shown:  # Enter let go of the field (Dear PyGui does): the next keys still go in it
            dpg.focus_item(self._name)

    def _choose(self, target: Path) -> None:
        """A file typed or picked: Open needs it to exist; Save adds the suffix and asks before
        replacing one."""
        if self.mode == "open":
            if not target.is_file():
                dpg.set_value(self._message, f"no such file: {target}")
                return
            self._finish(target)
            return
        keep = self._types() if self.choose_type else [self.suffix]
        if self.suffix and target.suffix.lower() not in keep:
            target = target.with_name(target.name + self.suffix)
        if not target.parent.is_dir():
            dpg.set_value(self._message, f"no such folder: {target.parent}")
            return
        if target.exists():
            self._pending = target
            dpg.set_value(self._message, f"{target.name} already exists.")
            dpg.configure_item(self._confirm, show=True)
            return
        self._finish(target)

    def _on_replace(self) -> None:
        if self._pending is not None:
            self._finish(self._pending)

    def _finish(self, target: Path) -> None:
        self._pending = None
        self.folder = target.parent.resolve()
        self._closing = (target.resolve(), 2)

    def _on_frame(self, *args: object) -> None:
        """Each frame the dialog is up: close it on a choice, once the mouse button is up."""
        if self._closing is None or dpg.is_mouse_button_down(dpg.mvMouseButton_Left):
            return
        target, frames = self._closing
        if frames > 0:
            self._closing = (target, frames - 1)
            return
        self._closing = None
        dpg.configure_item(self._window, show=False)
        self.on_done(str(target))

    def _on_cancel(self, *args: object) -> None:
        self._pending = self._closing = None
        dpg.configure_item(self._window, show=False)
