"""The control panel's sections registered where they are defined.

A section of the controls (a collapsing header in the left pane) that belongs to an analysis
window registers itself in its own module, ``@section(title, after=...)`` on a function that
makes its panel from a ``SectionKit`` (what every section may use: the command channel's
``submit`` and the plotted signals). The desktop imports every module of
``mjrig.widgets.analysis`` (``registered_sections``) and puts each registered section after the
one it names, so a new analysis window's panel needs no edit of the desktop's wiring.

Threading: the panel's (main) thread.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mjrig import commands as C

__all__ = ["PanelSection", "SectionKit", "Registered", "section", "registered_sections", "placed"]


class PanelSection(Protocol):
    """A section of the controls: built under its collapsing header, then updated with the panels."""

    def build(self, parent: int | str, /) -> None: ...


@dataclass(frozen=True)
class SectionKit:
    """What a registered section is made with: ``submit`` sends a command to the session;
    ``ticked()`` names the signals the live plots show (a section offers them first)."""

    submit: Callable[[C.Command], None]
    ticked: Callable[[], list[str]]


@dataclass(frozen=True)
class Registered:
    """A registered section: its header's ``title``, the section it comes ``after``, whether it
    starts ``open``, and how its panel is made."""

    title: str
    after: str
    opened: bool
    make: Callable[[SectionKit], PanelSection]


_REGISTERED: dict[str, Registered] = {}


def section(
    title: str, *, after: str, opened: bool = False
) -> Callable[[Callable[[SectionKit], PanelSection]], Callable[[SectionKit], PanelSection]]:
    """Register the function below as the maker of section ``title`` (placed after section
    ``after``; ``opened``: its header starts open)."""

    def register(make: Callable[[SectionKit], PanelSection]) -> Callable[[SectionKit], PanelSection]:
        _REGISTERED[title] = Registered(title, after, opened, make)
        return make

    return register


def registered_sections() -> tuple[Registered, ...]:
    """Every registered section, each module of ``mjrig.widgets.analysis`` imported first."""
    from mjrig.widgets import analysis as room

    for info in sorted(pkgutil.iter_modules(room.__path__), key=lambda i: i.name):
        importlib.import_module(f"{room.__name__}.{info.name}")
    return tuple(_REGISTERED.values())


def placed(
    fixed: list[tuple[str, PanelSection, bool]], kit: SectionKit, registered: tuple[Registered, ...]
) -> list[tuple[str, PanelSection, bool]]:
    """``fixed`` (title, panel, open) with each ``registered`` section made and put after the one
    it names (at the end when that one is not there)."""
    out = list(fixed)
    for reg in registered:
        titles = [t for t, _, _ in out]
        at = titles.index(reg.after) + 1 if reg.after in titles else len(out)
        out.insert(at, (reg.title, reg.make(kit), reg.opened))
    return out
