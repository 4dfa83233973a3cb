"""The features' parts of the panel state, registered where they are defined.

A part is a frozen dataclass with a class attribute ``name`` (its key in the panel state) whose
fields all have defaults (the part of a feature that has published nothing yet). ``@panel_part``
on its class registers it; the ``PanelState`` holds the parts the features published by name
(``PanelState.part(kind)`` gives one, its defaults when it was not published), so a new feature's
part needs no edit of ``PanelState``. Part of the command channel: the parts cross a thread queue
or a process pipe like the rest of the panel state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypeVar

__all__ = ["PanelPart", "panel_part", "registered_parts", "default_part"]


class PanelPart(Protocol):
    """A feature's part of the panel state (a frozen dataclass registered with ``panel_part``)."""

    name: ClassVar[str]


P = TypeVar("P")

_PARTS: dict[str, type[Any]] = {}
_DEFAULTS: dict[type[Any], Any] = {}


def panel_part(cls: type[P]) -> type[P]:
    """Register a part's class under its ``name`` (TypeError for a name two classes claim, or a
    class that is not a frozen dataclass made with no arguments)."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} has no part name (a class attribute 'name')")
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"{cls.__name__}: a panel part is a frozen dataclass")
    held = _PARTS.get(name)
    if held is not None and held is not cls:
        raise TypeError(f"the panel part name '{name}' is both {held.__name__}'s and {cls.__name__}'s")
    _PARTS[name] = cls
    _DEFAULTS[cls] = cls()
    return cls


def registered_parts() -> Mapping[str, type[Any]]:
    """Every registered part's class by name (a read-only view)."""
    return dict(_PARTS)


def default_part(kind: type[P]) -> P:
    """The part ``kind`` as a feature that published nothing shows it (its defaults)."""
    held = _DEFAULTS.get(kind)
    if held is None:
        raise KeyError(f"{kind.__name__} is not a registered panel part (@panel_part)")
    out: P = held
    return out


def is_part(value: object) -> bool:
    """Whether ``value`` is a registered part (of a class ``panel_part`` registered)."""
    return dataclasses.is_dataclass(value) and type(value) in _DEFAULTS
