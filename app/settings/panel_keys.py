"""mjrig's keys in the control panel: one table for the panel's key handler, the File menu's
shortcut labels, the *Keys* section and the manual (docs/app.md).

They are fixed, unlike the 3D viewer's (``mjrig.settings.keys``): the panel is a Dear PyGui window, where
no key has a meaning of its own to clash with, and these are the keys every desktop app uses for
the same actions. While a dialog is open only Escape acts (it closes the dialog), so a Ctrl+S
typed into the Open dialog never stacks a second dialog on it.

``python -m mjrig.settings.panel_keys`` prints the table as Markdown (docs/app.md's copy is checked
against it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

__all__ = ["PanelKey", "PANEL_KEYS", "panel_key", "panel_keys_markdown"]


@dataclass(frozen=True)
class PanelKey:
    """One panel action: its name, its key as people write it (``Ctrl+O``), what it does, and
    whether it acts while a dialog is up."""

    action: str
    key: str
    help: str
    in_dialogs: bool = False

    @property
    def ctrl(self) -> bool:
        """Whether the key is pressed with Ctrl."""
        return self.key.startswith("Ctrl+")

    @property
    def base(self) -> str:
        """The key without its modifier: ``O``, ``Escape``."""
        return self.key.removeprefix("Ctrl+")


PANEL_KEYS: tuple[PanelKey, ...] = (
    PanelKey("open", "Ctrl+O", "open a model or scenario (File > Open...)"),
    PanelKey("save", "Ctrl+S", "save the rig as a scenario (File > Save scenario...; asks before replacing a file)"),
    PanelKey("undo", "Ctrl+Z", "undo the rig's last edit (Edit > Undo, which names it)"),
    PanelKey("redo", "Ctrl+Y", "redo the edit undone last (Edit > Redo)"),
    PanelKey("quit", "Ctrl+Q", "quit (File > Quit; asks first when the rig has unsaved changes)"),
    PanelKey("close", "Escape", "close the open dialog (as its Cancel) or the open menu", in_dialogs=True),
)
"""Every key the panel acts on, in help order."""

EXTRA_HELP: tuple[tuple[str, str], ...] = (
    ("Tab, Shift+Tab", "move the amber frame to the next (previous) control, round from the last to the first"),
    ("arrows", "move the frame to the control in that direction; in an open list, the next choice"),
    ("Space", "press the framed button, tick the framed box, open the framed list; take hold of a slider"),
    (
        "Enter",
        "take the choice in an open list; let go of a slider; in a file dialog's name field: open or "
        "save the typed path (a folder typed is entered)",
    ),
    ("Ctrl+wheel", "over a plot: zoom it (the plots stop following the run); the wheel alone scrolls the panel"),
    ("drag, double-click", "on a plot: pan it (the plots stop following); follow the run again"),
)
"""Keys of a single widget, shown with the panel's keys."""


def panel_key(action: str) -> PanelKey:
    """The entry of ``action`` (KeyError for an unknown one: a typo in the code, not user input)."""
    for k in PANEL_KEYS:
        if k.action == action:
            return k
    raise KeyError(f"no panel key for '{action}' (one of {', '.join(k.action for k in PANEL_KEYS)})")


def panel_keys_markdown() -> str:
    """The panel's keys as a Markdown table (docs/app.md's copy is checked against this)."""
    rows = [(k.key, k.help) for k in PANEL_KEYS] + list(EXTRA_HELP)
    return "\n".join(["| key | does |", "| --- | --- |"] + [f"| {k} | {h} |" for k, h in rows])


if __name__ == "__main__":
    sys.stdout.write(panel_keys_markdown() + "\n")
