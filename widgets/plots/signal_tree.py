"""The plots' tree of signals: category > entity > one checkbox per attribute
(``Loads`` > ``main_spring`` > ``fx``), narrowed by the filter's words.

Built as it is opened, so a model of thousands of signals costs what is shown: a category's
entities are made when the category opens, an entity's checkboxes when the entity opens, and a
category shows at most ``ENTITY_LIMIT`` entities (a line says how many more the filter reaches).
A category with more than ``OPEN_LIMIT`` entities starts closed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

import dearpygui.dearpygui as dpg

from mjrig.runtime.telemetry.plot_history import split_signal

__all__ = ["SignalTree", "matching", "ENTITY_LIMIT", "OPEN_LIMIT"]

ENTITY_LIMIT = 150
"""Entities a category lists at most (the filter narrows the rest)."""
OPEN_LIMIT = 40
"""A category with more entities than this starts closed."""


def matching(signals: Iterable[str], filter_text: str) -> list[str]:
    """The signals holding every word of ``filter_text`` (case-insensitive)."""
    words = filter_text.lower().split()
    if not words:
        return list(signals)
    return [s for s in signals if all(w in s.lower() for w in words)]


Groups = dict[str, dict[str, list[tuple[str, str]]]]


class SignalTree:
    """The tree inside one child window (GUI thread). ``sync`` looks at the nodes not filled yet
    (a few categories, at most ``ENTITY_LIMIT`` entities each) and fills those opened."""

    def __init__(self, on_check: Callable[..., None], *, is_checked: Callable[[str], bool]) -> None:
        self._on_check = on_check
        self._is_checked = is_checked
        self.boxes: dict[str, int | str] = {}  # signal -> its checkbox (built ones)
        self.nodes: dict[str, int | str] = {}  # signal -> its entity's node
        self._tree: int | str | None = None
        self._groups: Groups = {}
        self._fill: dict[int | str, Callable[[], None]] = {}  # node not filled yet -> how to fill it
        self._categories: dict[str, int | str] = {}  # category -> its node
        self._filtered = False
        self._on: set[str] = set()  # the checkboxes shown ticked
        self._revealed: set[str] = set()  # checked from the command API and shown

    def show(self, tree: int | str, signals: Iterable[str], *, filter_text: str) -> None:
        """Fill ``tree`` (emptied first) with the signals ``filter_text`` lets through; an entity
        opens when the filter is in use (and finds few) or one of its signals is checked."""
        dpg.delete_item(tree, children_only=True)
        self._tree, self.boxes, self.nodes, self._fill, self._categories = tree, {}, {}, {}, {}
        self._on, self._revealed = set(), set()
        self._filtered = bool(filter_text.split())
        groups: Groups = {}
        for name in matching(signals, filter_text):
            category, entity, attribute = split_signal(name)
            groups.setdefault(category, {}).setdefault(entity, []).append((attribute, name))
        self._groups = groups
        for category, entities in groups.items():
            opened = len(entities) <= OPEN_LIMIT or any(self._is_checked(n) for a in entities.values() for _, n in a)
            node = self._categories[category] = dpg.add_tree_node(label=category, parent=tree, default_open=opened)
            self._lazy(node, partial(self._entities, node, category))
            if opened:
                self._build(node)

    def reveal(self, name: str) -> None:
        """Open the category and entity of ``name`` (checked from the command API: show where it is)."""
        self._open(self._categories.get(split_signal(name)[0]))
        self._open(self.nodes.get(name))  # its entity: made when its category was filled

    def _open(self, node: int | str | None) -> None:
        if node is not None:
            dpg.set_value(node, True)
            self._build(node)

    def mark(self, wanted: list[str]) -> None:
        """Tick exactly the boxes of ``wanted`` (looking only at those that changed); a signal
        checked from the command API opens its entity (once)."""
        for name in self._on ^ set(wanted):
            if name in wanted and name not in self.boxes and name not in self._revealed:
                self._revealed.add(name)
                self.reveal(name)
            if name in self.boxes and dpg.get_value(self.boxes[name]) != (name in wanted):
                dpg.set_value(self.boxes[name], name in wanted)
        self._on = {n for n in wanted if n in self.boxes}

    def sync(self) -> None:
        """Fill the nodes opened since the last call."""
        for node in [n for n in self._fill if dpg.get_value(n)]:
            self._build(node)

    # ---- building ---------------------------------------------------------------------------

    def _lazy(self, node: int | str, fill: Callable[[], None]) -> None:
        self._fill[node] = fill

    def _build(self, node: int | str) -> None:
        fill = self._fill.pop(node, None)
        if fill is not None and dpg.does_item_exist(node):
            fill()

    def _entities(self, parent: int | str, category: str) -> None:
        entities = self._groups.get(category, {})
        for k, (entity, attributes) in enumerate(entities.items()):
            if k == ENTITY_LIMIT:
                dpg.add_text(f"{len(entities) - k} more: type in the filter", parent=parent, color=(150, 150, 150))
                break
            show = (self._filtered and len(entities) <= OPEN_LIMIT) or any(self._is_checked(n) for _, n in attributes)
            node = dpg.add_tree_node(label=entity, parent=parent, default_open=show)
            for _, name in attributes:
                self.nodes[name] = node
            self._lazy(node, partial(self._checkboxes, node, attributes))
            if show:
                self._build(node)

    def _checkboxes(self, parent: int | str, attributes: list[tuple[str, str]]) -> None:
        for attribute, name in attributes:
            self.boxes[name] = dpg.add_checkbox(
                label=attribute or name,
                default_value=self._is_checked(name),
                user_data=name,
                callback=self._on_check,
                parent=parent,
            )
