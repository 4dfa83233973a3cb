"""Rows a panel rebuilds only when what they show has changed (a table's rows, a group's items)."""

from __future__ import annotations

from collections.abc import Hashable

import dearpygui.dearpygui as dpg

__all__ = ["Rows", "NameField"]


class Rows:
    """The children of one container (``container``: a table or a group, set at build), keyed by
    what they show: ``stale(key)`` says whether they must be built anew for ``key`` and, if so,
    has already deleted the old ones. Values that change every frame (a readout) are updated in
    place by the panel instead; the rows themselves only follow a change of names or settings."""

    def __init__(self) -> None:
        self.container: int | str = 0
        self._key: Hashable = None

    def stale(self, key: Hashable) -> bool:
        if key == self._key:
            return False
        self._key = key
        for child in dpg.get_item_children(self.container, 1) or []:
            dpg.delete_item(child)
        return True


class NameField:
    """The name typed in an Add form: emptied once an entry of that name appears in the rig (the
    Add went through), so the next Add starts from an empty name rather than a clash."""

    def __init__(self) -> None:
        self.item: int | str = 0
        self._names: set[str] | None = None

    def follow(self, names: set[str], *, editing: bool = False) -> None:
        """The rig's entries of the form's section now (``editing``: the form edits one: keep it)."""
        if self._names is not None and self.item and not editing:
            typed = str(dpg.get_value(self.item) or "").strip()
            if typed and typed in names - self._names:
                dpg.set_value(self.item, "")
        self._names = set(names)
