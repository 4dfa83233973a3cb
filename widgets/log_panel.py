"""Status/log panel: the snapshot's messages, newest at the bottom, errors in red, warnings amber."""

from __future__ import annotations

import dearpygui.dearpygui as dpg

from mjrig.commands import PanelState

__all__ = ["LogPanel", "LEVEL_COLORS"]

LEVEL_COLORS: dict[str, tuple[int, int, int, int]] = {
    "error": (255, 95, 95, 255),
    "warning": (255, 191, 0, 255),
}
"""Text colour (RGBA 0-255) per level; other levels use the theme's text colour."""

_BOTTOM_SLACK = 4.0
"""Scroll distance from the end (px) that still counts as "at the bottom" (keeps auto-scroll)."""


class LogPanel:
    """Shows ``snapshot.messages`` (level, text), newest last, as wrapped text.

    Re-renders only when the messages change. The panel holds no messages of its own beyond
    the snapshot's tuple (which the session bounds), so memory stays bounded. New messages scroll
    the view to the bottom unless the user has scrolled up to read older ones. "clear" hides the
    messages shown so far; "copy last error" puts the newest error's full text on the clipboard.

    Options: ``height`` of the message area (px; -1 fills the parent).

    Threading: ``build`` and ``update`` run on the GUI thread; ``clear`` may run on Dear PyGui's
    callback thread: it only records the request, the next ``update`` applies it.
    """

    def __init__(self, *, height: int = -1) -> None:
        self._height = height
        self._shown: tuple[tuple[str, str], ...] | None = None  # snapshot messages last rendered
        self._hidden: tuple[tuple[str, str], ...] = ()  # messages present at the last clear
        self._clear_requested = False
        self._last_error = ""
        self._area: int | str | None = None
        self.title_row: int | str = 0
        self._lines: list[int | str] = []
        self._pin = 0  # frames left to hold the view at the end (wrapped lines take a frame to lay out)

    def build(self, parent: int | str, *, title: str = "") -> None:
        """Create ``title``, the buttons beside it and the scrolling message area inside ``parent``."""
        with dpg.group(parent=parent):
            with dpg.group(horizontal=True) as self.title_row:  # others may add to it (the jobs)
                if title:
                    dpg.add_text(title)
                dpg.add_button(label="copy last error", callback=self._on_copy)
                dpg.add_button(label="clear", callback=self._on_clear)
            self._area = dpg.add_child_window(height=self._height, border=True)
        self._shown = None

    def update(self, snapshot: PanelState) -> None:
        """Render ``snapshot.messages`` if they changed since the last call (or after a clear)."""
        messages = snapshot.messages
        if self._clear_requested:
            self._clear_requested = False
            self._hidden = messages
            self._shown = None
        if self._area is not None and self._pin > 0:
            self._pin -= 1
            dpg.set_y_scroll(self._area, -1.0)
        if self._area is None or messages == self._shown:
            return
        self._shown = messages
        errors = [text for level, text in messages if level == "error"]
        self._last_error = errors[-1] if errors else ""
        at_bottom = self._pin > 0 or dpg.get_y_scroll(self._area) >= dpg.get_y_scroll_max(self._area) - _BOTTOM_SLACK
        dpg.delete_item(self._area, children_only=True)
        self._lines = []
        for level, text in _after(self._hidden, messages):
            line = dpg.add_text(f"{level}: {text}", parent=self._area, wrap=0)
            color = LEVEL_COLORS.get(level)
            if color is not None:
                dpg.configure_item(line, color=color)
            self._lines.append(line)
        if at_bottom:  # negative: the end, once the new lines are laid out; a wrapped line grows a
            dpg.set_y_scroll(self._area, -1.0)  # frame later, so the end is held for a few frames
            self._pin = 3

    def clear(self) -> None:
        """Hide the messages shown so far (newer ones still appear)."""
        self._clear_requested = True

    def last_error(self) -> str:
        """Full text of the newest error message in the last rendered snapshot ("" if none)."""
        return self._last_error

    def lines(self) -> list[str]:
        """The rendered lines, oldest first (``"level: text"``)."""
        return [dpg.get_value(line) for line in self._lines]

    def line_ids(self) -> list[int | str]:
        """Dear PyGui ids of the rendered text items, oldest first."""
        return list(self._lines)

    def _on_copy(self, sender: int | str, app_data: object, user_data: object) -> None:
        dpg.set_clipboard_text(self._last_error)

    def _on_clear(self, sender: int | str, app_data: object, user_data: object) -> None:
        self.clear()


def _after(hidden: tuple[tuple[str, str], ...], messages: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The part of ``messages`` that came after ``hidden``.

    The session keeps a bounded deque, so old messages fall off the front: find the longest tail
    of ``hidden`` that ``messages`` starts with, and return what follows it.
    """
    for k in range(len(hidden)):
        tail = hidden[k:]
        if messages[: len(tail)] == tail:
            return messages[len(tail) :]
    return messages
