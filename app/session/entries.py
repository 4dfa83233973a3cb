"""Rig editing over the registry: one way to add, replace, remove or switch off an entry of any
section (loads, proximities, requirements, controls, tracers), and the params' values.

A feature of the session (``mjrig.session.kernel``): every edit is made on the rig's scenario
document and rebuilt through the one rig builder, so an entry the panel adds is validated by
exactly the code that validates scenario files, and a refused edit changes nothing. What the
panel lists of each entry comes from the same document plus what the runtime measures now.

Threading: simulation thread only.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.kinds import REGISTRY, Registry
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler

__all__ = ["RigEntries", "HISTORY_STEPS", "NOT_EDITS"]

NOT_EDITS = (C.Undo, C.Redo, C.SaveScenario, C.SaveKeyframe, C.OpenModel, C.Reload, C.AnswerSwitch, C.KeepRig, C.Quit)
"""Commands never taken back by Undo: the history's own, saving (the plots go into the document
then) and what opens or reads a rig again. Any other command that changes the rig's document is
a step (``Session.handle`` hands it to ``edited``)."""

HISTORY_STEPS = 200
"""Edits kept for Undo (the oldest goes first)."""


@dataclass
class _History:
    """One rig's edit history (in its ``RigScope``: another rig starts a fresh one): each step is
    (what the edit was, the document before it, the command that made it); Undo puts that document
    back, Redo the one Undo left."""

    undo: list[tuple[str, dict[str, Any], C.Command]] = field(default_factory=list)
    redo: list[tuple[str, dict[str, Any], C.Command]] = field(default_factory=list)


class RigEntries(Feature):
    """Handlers for PutEntry, RemoveEntry, SetEntryActive, SetParam and AddParam; ``publish``
    gives the panel's ``entries`` and ``params``."""

    def __init__(self, ctx: RigContext, *, registry: Registry = REGISTRY) -> None:
        self.ctx = ctx
        self.registry = registry

    def handlers(self) -> dict[type[C.Command], Handler]:
        return {
            C.PutEntry: self.put,
            C.RemoveEntry: self.remove,
            C.SetEntryActive: self.set_active,
            C.SetParam: self.set_param,
            C.AddParam: self.add_param,
            C.Undo: self.undo,
            C.Redo: self.redo,
        }

    # --- the edit history ------------------------------------------------------------------------
    @property
    def _history(self) -> _History:
        return self.ctx.scope().state(self, _History)

    def edited(self, cmd: C.Command, before: dict[str, Any]) -> None:
        """``cmd`` changed the rig's document from ``before``: a step Undo takes back (a slider's
        drag, SetParam after SetParam of the same param, is one step)."""
        h = self._history
        if before == self.ctx.document.doc:
            return
        top = h.undo[-1] if h.undo else None
        if (
            isinstance(cmd, C.SetParam)
            and top is not None
            and isinstance(top[2], C.SetParam)
            and top[2].name == cmd.name
        ):
            h.undo[-1] = (top[0], top[1], cmd)  # the drag goes on: one step from where it began
        else:
            h.undo.append((C.edit_label(cmd, noun=self._noun(cmd)), before, cmd))
            del h.undo[:-HISTORY_STEPS]
        h.redo.clear()

    def _noun(self, cmd: C.Command) -> str:
        section = getattr(cmd, "section", None)
        sec = next((x for x in self.registry.sections if x.key == section), None)
        return sec.noun if sec is not None else ""

    def undo(self, cmd: C.Undo) -> None:
        h = self._history
        if not h.undo:
            raise ConfigError("nothing to undo")
        label, before, made = h.undo.pop()
        now = copy.deepcopy(self.ctx.document.doc)
        if not self._restore(before, f"undo {label}"):
            return
        h.redo.append((label, now, made))
        self.ctx.log("info", f"undid: {label}")

    def redo(self, cmd: C.Redo) -> None:
        h = self._history
        if not h.redo:
            raise ConfigError("nothing to redo")
        label, after, made = h.redo.pop()
        now = copy.deepcopy(self.ctx.document.doc)
        if not self._restore(after, f"redo {label}"):
            return
        h.undo.append((label, now, made))
        self.ctx.log("info", f"redid: {label}")

    def _restore(self, doc: dict[str, Any], what: str) -> bool:
        """Make ``doc`` the rig, params at its values; False (one line, that step dropped) when it
        no longer builds (the model was read again without what it names)."""
        try:
            self.ctx.rebuild(copy.deepcopy(doc))
        except ConfigError as exc:
            self.ctx.log("error", f"cannot {what}: {exc}")
            return False
        params = doc.get("params", {})
        for nv in self.ctx.runtime.params:
            spec = params.get(nv.name) if isinstance(params, dict) else None
            value = spec.get("value") if isinstance(spec, dict) else spec
            if isinstance(value, (int, float)):
                nv.value = float(value)
        return True

    def labels(self) -> tuple[str, str]:
        """(what Undo would take back, what Redo would do again), "" for nothing."""
        h = self._history
        return (h.undo[-1][0] if h.undo else "", h.redo[-1][0] if h.redo else "")

    def rig_opened(self) -> None:
        """Nothing of its own to forget."""

    # --- commands --------------------------------------------------------------------------------
    def put(self, cmd: C.PutEntry) -> None:
        sec = self.registry.section(cmd.section)
        spec = {k: v for k, v in cmd.spec.items() if k != "active"}  # not a scenario field
        self.ctx.rebuild(self.ctx.document.with_item(sec.key, spec, replace=cmd.replace))
        verb = "updated" if cmd.replace else ("attached" if sec.role == "load" else "added")
        self.ctx.log("info", f"{verb} {sec.noun} '{spec.get(sec.name_key)}'")

    def remove(self, cmd: C.RemoveEntry) -> None:
        sec = self.registry.section(cmd.section)
        self.ctx.rebuild(self.ctx.document.without_item(sec.key, cmd.name))
        self.ctx.log("info", f"removed {sec.noun} '{cmd.name}'")

    def set_active(self, cmd: C.SetEntryActive) -> None:
        # "active" is not a scenario field: switching off is the run's, and survives rig edits
        # (mjrig.scenario.builder.keep_switched_off).
        if cmd.section != "loads":
            raise ConfigError(f"a {self.registry.section(cmd.section).noun} cannot be switched off; remove it instead")
        rm = self.ctx.runtime
        load = next((ld for ld in rm.loads if ld.name == cmd.name), None)
        if load is None:
            raise ConfigError(f"no load named '{cmd.name}'")
        load.active = cmd.active

    def set_param(self, cmd: C.SetParam) -> None:
        nv = next((p for p in self.ctx.runtime.params if p.name == cmd.name), None)
        if nv is None:
            raise ConfigError(f"no param named '{cmd.name}'")
        nv.value = cmd.value  # clamped to its range
        self.ctx.document.set_param_value(cmd.name, nv.value)

    def add_param(self, cmd: C.AddParam) -> None:
        self.ctx.rebuild(
            self.ctx.document.with_param(cmd.name, value=cmd.value, min=cmd.min, max=cmd.max, unit=cmd.unit)
        )

    # --- what the panel shows ----------------------------------------------------------------------
    def publish(self) -> C.EntriesPart:
        """Its part of the panel state: every entry of the rig and the params."""
        rm = self.ctx.runtime_or_none
        if rm is None:
            return C.EntriesPart()
        live: dict[tuple[str, str], dict[str, Any]] = {}
        readouts = rm.drawing.load_readouts()
        for ld in rm.loads:
            live["loads", ld.name] = {"active": ld.active, "readout": readouts[ld.name]}
        for p in rm.proximities:
            live["proximities", p.name] = {"readout": ((p.distance, "m"),), "alarm": p.below}
        entries = []
        for sec in self.registry.sections:
            for name, spec in self.ctx.document.specs(sec.key).items():
                kind = sec.kind_of(spec)
                entries.append(
                    C.EntryInfo(
                        sec.key,
                        str(name),
                        kind.name if kind is not None else "",
                        dict(spec),
                        **live.get((sec.key, name), {}),
                    )
                )
        snaps = _snaps(self.ctx.document.doc)
        params = tuple(
            C.ParamInfo(nv.name, nv.value, nv.min, nv.max, nv.unit, **snaps.get(nv.name, {})) for nv in rm.params
        )
        undo, redo = self.labels()
        return C.EntriesPart(tuple(entries), params, undo=undo, redo=redo)


def _snaps(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The params the scenario's ``[optimize.params]`` (first) or ``[sweep.params]`` keep on a
    catalogue or a step's grid: ``ParamInfo``'s ``choices`` or ``grid`` by param name (the
    document was validated when it was made)."""
    out: dict[str, dict[str, Any]] = {}
    for section in ("sweep", "optimize"):  # the study's searched values win
        entries = doc.get(section, {}).get("params", {})
        for name, entry in entries.items() if isinstance(entries, dict) else ():
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("choices"), list) and entry["choices"]:
                out[name] = {"choices": tuple(sorted(float(v) for v in entry["choices"]))}
            elif all(isinstance(entry.get(k), (int, float)) for k in ("low", "high", "step")):
                out[name] = {"grid": (float(entry["low"]), float(entry["step"]), float(entry["high"]))}
    return out
