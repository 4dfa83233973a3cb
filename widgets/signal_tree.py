"""The plots' tree of signals: category > entity > one checkbox per attribute
(``Loads`` > ``main_spring`` > ``fx``), narrowed by the filter's words."""
from __future__ import annotations

from typing import Callable, Iterable

import dearpygui.dearpygui as dpg

from mjrig.widgets.signal_history import split_signal

__all__ = ["build_signal_tree", "matching"]


def matching(signals: Iterable[str], filter_text: str) -> list[str]:
    """The signals holding every word of ``filter_text`` (case-insensitive)."""
    words = filter_text.lower().split()
    return [s for s in signals if all(w in s.lower() for w in words)]


def build_signal_tree(tree: int | str, signals: Iterable[str], *, filter_text: str, checked: set[str],
                      on_check: Callable[..., None]) -> tuple[dict[str, int | str], dict[str, int | str]]:
    """Fill ``tree`` (emptied first) with the signals ``filter_text`` lets through; an entity
    opens when the filter is in use or one of its signals is ``checked``. Returns the checkbox
    of each signal and its entity's node (signal name -> item)."""
    dpg.delete_item(tree, children_only=True)
    boxes: dict[str, int | str] = {}
    nodes: dict[str, int | str] = {}
    groups: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for name in matching(signals, filter_text):
        category, entity, attribute = split_signal(name)
        groups.setdefault(category, {}).setdefault(entity, []).append((attribute, name))
    for category, entities in groups.items():
        with dpg.tree_node(label=category, parent=tree, default_open=True):
            for entity, attributes in entities.items():
                show = bool(filter_text) or any(name in checked for _, name in attributes)
                with dpg.tree_node(label=entity, default_open=show) as node:
                    for attribute, name in attributes:
                        nodes[name] = node
                        boxes[name] = dpg.add_checkbox(label=attribute or name, default_value=name in checked,
                                                       user_data=name, callback=on_check)
    return boxes, nodes
