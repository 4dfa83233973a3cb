"""A splitter: a grip between two panes that a person drags to share the room between them.

Dear PyGui has no splitter, so the grip is a thin button: while it is held down (an item-active
handler, every frame) the pane before it grows or shrinks by the pointer's travel, within
limits; the pane after it fills the rest (a negative or no size). Letting go calls
``on_release(size)`` (px), where the panel remembers it (``PanelLayout``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import dearpygui.dearpygui as dpg

from mjrig.runtime.files.atomic_output import replace_text
from mjrig.settings.keys import config_dir

__all__ = ["Splitter", "PanelLayout"]

GRIP = 10
"""Thickness of the grip (px)."""


@dataclass
class PanelLayout:
    """The panel's pane sizes a person chose, kept in ``~/.config/mjrig/panel.json``.

    ``controls_height`` (fraction of the panel's height, narrow layout: controls above plots)
    and ``controls_width`` (px, wide layout: controls beside plots); None: the defaults.
    """

    controls_height: float | None = None
    controls_width: int | None = None

    @staticmethod
    def path() -> Path:
        return config_dir() / "panel.json"

    @classmethod
    def load(cls) -> PanelLayout:
        """The saved sizes, or the defaults when there are none or they cannot be read."""
        try:
            raw = json.loads(cls.path().read_text(encoding="utf-8"))
            height, width = raw.get("controls_height"), raw.get("controls_width")
            return cls(
                float(height) if isinstance(height, (int, float)) and 0.05 < height < 0.95 else None,
                int(width) if isinstance(width, (int, float)) and 100 <= width <= 10000 else None,
            )
        except (OSError, ValueError, AttributeError):
            return cls()

    def save(self) -> None:
        """Write the sizes (quietly keeps the old file when the folder is not writable)."""
        try:
            self.path().parent.mkdir(parents=True, exist_ok=True)
            replace_text(self.path(), json.dumps(asdict(self)) + "\n")
        except OSError:
            pass


class Splitter:
    """The grip after ``pane``: ``vertical`` (a column between two panes side by side, dragged
    left and right) or horizontal (a bar between stacked panes, dragged up and down). The pane's
    size stays within ``least`` .. ``most`` px."""

    def __init__(
        self, pane: int | str, *, vertical: bool, least: int, most: int, on_release: Callable[[int], None]
    ) -> None:
        self.pane, self.vertical = pane, vertical
        self.least, self.most = least, most
        self.on_release = on_release
        self.grip: int | str = 0
        self._size: int | None = None
        self._start: tuple[int, float] | None = None  # (pane size px, pointer px) when the press began

    def build(self, parent: int | str) -> None:
        if self.vertical:
            self.grip = dpg.add_button(label="⋮", parent=parent, width=GRIP, height=-1)
        else:
            self.grip = dpg.add_button(label="⋯", parent=parent, width=-1, height=GRIP)
        with dpg.tooltip(self.grip):
            dpg.add_text("drag to give the plots more or less room (remembered)")
        with dpg.item_handler_registry() as handlers:
            dpg.add_item_active_handler(callback=self._on_drag)
            dpg.add_item_deactivated_handler(callback=self._on_release)
        dpg.bind_item_handler_registry(self.grip, handlers)

    def _on_drag(self) -> None:
        """Every frame while held: the pane's size when the press began plus the pointer's travel
        since (a child window reports no rectangle of its own, only its configured size)."""
        axis = 0 if self.vertical else 1
        pointer = dpg.get_mouse_pos(local=False)[axis]
        key = "width" if self.vertical else "height"
        if self._start is None:
            self._start = (int(dpg.get_item_configuration(self.pane)[key]), pointer)
        size = max(self.least, min(self.most, int(self._start[0] + pointer - self._start[1])))
        if size != self._size:
            self._size = size
            dpg.configure_item(self.pane, **{key: size})

    def _on_release(self) -> None:
        self._start = None
        if self._size is not None:
            self.on_release(self._size)
