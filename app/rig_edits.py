"""Edits of the rig, as commands: what Undo takes back and Redo does again.

The commands that change the rig's document (its entries, params and their bounds, units, arrow
scale, start state, a slider bound to an actuator) and the two that walk its edit history,
``Undo`` and ``Redo``. Like every command (``mjrig.commands`` re-exports these), each is a small
frozen, picklable dataclass. ``edit_label`` names an edit as the Edit menu shows it ("remove
load 'extra'").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Command",
    "PutEntry",
    "RemoveEntry",
    "SetEntryActive",
    "SetParam",
    "AddParam",
    "BindActuator",
    "SetUnits",
    "SetArrowScale",
    "UseCurrentAsInitial",
    "Undo",
    "Redo",
    "edit_label",
]


class Command:
    """Base of every command."""


@dataclass(frozen=True)
class PutEntry(Command):
    """Add ``spec`` (a scenario table) to the rig's ``section`` (``"loads"``, ``"proximities"``,
    ``"requirements"``, ``"controls"``, ``"tracers"``: any section of ``mjrig.scenario.kinds``);
    ``replace``: it replaces the entry of the same name (a control's: of the same actuator)."""

    section: str
    spec: dict
    replace: bool = False


@dataclass(frozen=True)
class RemoveEntry(Command):
    """Remove the entry ``name`` (a control: its actuator) from the rig's ``section``."""

    section: str
    name: str


@dataclass(frozen=True)
class SetEntryActive(Command):
    """Switch an entry off or back on without removing it (loads: the rest apply nothing)."""

    section: str
    name: str
    active: bool


@dataclass(frozen=True)
class SetParam(Command):
    """Set a param's value (clamped to its range); the physics sees it at the next step."""

    name: str
    value: float


@dataclass(frozen=True)
class AddParam(Command):
    name: str
    value: float
    min: float | None = None
    max: float | None = None
    unit: str = ""


@dataclass(frozen=True)
class BindActuator(Command):
    """Drive an actuator from a new slider: a param over its ctrlrange and a ``[[controls]]`` entry."""

    actuator: str


@dataclass(frozen=True)
class SetUnits(Command):
    """Show ``quantity`` ("length", "angle", "force", "torque") in ``unit`` ("mm", "deg"...) in the
    plots, sliders and tables: the rig's ``[units]`` (saved with the scenario; files stay SI)."""

    quantity: str
    unit: str


@dataclass(frozen=True)
class SetArrowScale(Command):
    """The arrows' length: ``force`` m per N (``[view] force_scale``; the torque arrows get five
    times as much per N·m), or None: automatic (the largest arrow a quarter of the model)."""

    force: float | None = None


@dataclass(frozen=True)
class UseCurrentAsInitial(Command):
    """Make the current joint positions and velocities the rig's ``[initial]`` (saved with the
    scenario): Reset, and every run of the scenario, starts there from now on."""


@dataclass(frozen=True)
class Undo(Command):
    """Take back the rig's last edit (the document as it was before it; Ctrl+Z)."""


@dataclass(frozen=True)
class Redo(Command):
    """Do again the edit Undo last took back (Ctrl+Shift+Z, Ctrl+Y)."""


def edit_label(cmd: Command, *, noun: str = "") -> str:
    """How the Edit menu names the edit ``cmd`` made ("remove load 'extra'"); ``noun``: what its
    section calls an entry ("load", "proximity"), where the command names a section."""
    if isinstance(cmd, PutEntry):
        name = cmd.spec.get("name") or cmd.spec.get("actuator") or ""
        return f"{'change' if cmd.replace else 'add'} {noun or cmd.section} '{name}'"
    if isinstance(cmd, RemoveEntry):
        return f"remove {noun or cmd.section} '{cmd.name}'"
    if isinstance(cmd, SetEntryActive):
        return f"switch {noun or cmd.section} '{cmd.name}' {'on' if cmd.active else 'off'}"
    if isinstance(cmd, SetParam):
        return f"set {cmd.name}"
    if isinstance(cmd, AddParam):
        return f"param {cmd.name}"
    if isinstance(cmd, BindActuator):
        return f"slider for {cmd.actuator}"
    if isinstance(cmd, SetUnits):
        return f"{cmd.quantity} in {cmd.unit}"
    if isinstance(cmd, SetArrowScale):
        return "arrow scale"
    if isinstance(cmd, UseCurrentAsInitial):
        return "start state"
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in type(cmd).__name__).strip()
    return words
