"""Reading a few telemetry columns at the current state, without recording them.

Requirements need their signals at every step whether or not a recorder records them (or at
what rate). ``SignalProbe`` reads only the named columns: the model's arrays and the rig's
output arrays in place, with one ``np.take`` per step (``RowGather``); a ``Derived`` column
(a spring's force, worked out per block when recorded) is computed from its raw row each step.
``rig_columns`` lists every column the rig would record with every signal group, for the
closest names of an unknown one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.telemetry.row_gather import RowGather
from mjrig.runtime.telemetry.signal_sources import (
    CONTACT_COLUMNS,
    ENERGY_COLUMNS,
    MODEL_GROUPS,
    Derived,
    contact_values,
    model_sources,
)

__all__ = ["SignalProbe", "column_catalog", "column_units", "rig_columns"]

_PREPARED_GROUPS = ("loads", "proximities")
"""Rig groups whose arrays are only current after the rig's ``prepare()``."""


def column_catalog(model: mujoco.MjModel, data: mujoco.MjData, extra: Sequence[Any]) -> dict[str, tuple]:
    """Every column -> (group, array or Derived or None, index); the first source of a name wins.
    Contacts and energy (None) are filled in only when asked for (energy costs MuJoCo work)."""
    cat: dict[str, tuple] = {}
    for group in MODEL_GROUPS:
        for item in model_sources(model, data, group):
            if isinstance(item, Derived):
                for i, (name, _) in enumerate(item.columns):
                    cat.setdefault(name, (group, item, i))
            else:
                for name, i, _ in item[1]:
                    cat.setdefault(name, (group, item[0], i))
    for item in extra:
        if isinstance(item, Derived):
            for i, (name, _) in enumerate(item.columns):
                cat.setdefault(name, (item.group, item, i))
        else:
            for name, i, _ in item[2]:
                cat.setdefault(name, (item[0], item[1], i))
    for name, i, _ in CONTACT_COLUMNS:
        cat.setdefault(name, ("contacts", None, i))
    for name, i, _ in ENERGY_COLUMNS:
        cat.setdefault(name, ("energy", None, i))
    return cat


def column_units(model: mujoco.MjModel, data: mujoco.MjData, extra: Sequence[Any]) -> dict[str, str]:
    """Every column's unit ("" when it has none), from the same sources as ``column_catalog``."""
    units: dict[str, str] = {}
    for group in MODEL_GROUPS:
        for item in model_sources(model, data, group):
            columns = item.columns if isinstance(item, Derived) else [(name, unit) for name, _, unit in item[1]]
            for name, unit in columns:
                units.setdefault(name, unit)
    for item in extra:
        for name, *rest in item.columns if isinstance(item, Derived) else item[2]:
            units.setdefault(name, rest[-1])
    for name, _, unit in (*CONTACT_COLUMNS, *ENERGY_COLUMNS):
        units.setdefault(name, unit)
    return units


def rig_columns(model: mujoco.MjModel, data: mujoco.MjData, *, extra: Sequence[Any] = ()) -> list[str]:
    """Every signal column (no ``time``/``wall_time``) the rig would record with every group;
    ``extra`` are its sources as ``SignalManager.bind`` takes them."""
    return [n for n, (group, _, _) in column_catalog(model, data, extra).items() if group != "requirements"]


class SignalProbe:
    """Reads columns ``names`` of a rig at the current state: ``read()`` returns their values
    (a float64 array in the order of ``names``, reused at every call).

    ``extra`` are the rig's sources (as ``SignalManager.bind`` takes them); ``prepare`` maps a
    rig group to the function that brings its outputs up to date before a read ("loads": the
    springs' path points; "proximities": every rig output, as before a recorded row), called by
    ``read`` only when a column of that group is read. KeyError(name) for a column the rig does
    not have.

    Threading: stepping thread only.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        names: Sequence[str],
        *,
        extra: Sequence[Any] = (),
        prepare: Mapping[str, Callable[[], None] | None] | None = None,
    ) -> None:
        cat = column_catalog(model, data, extra)
        for name in names:
            if name not in cat or cat[name][0] == "requirements":
                raise KeyError(name)
        self.data = data
        picked = [cat[n] for n in names]
        groups = {g for g, _, _ in picked}
        self._contacts = np.zeros(2) if "contacts" in groups else None
        if "energy" in groups:
            model_sources(model, data, "energy")  # switches MuJoCo's energy computation on
        derived = list(dict.fromkeys(src for _, src, _ in picked if isinstance(src, Derived)))
        live = [(d, d.current) for d in derived if d.current is not None]  # each worked out at the current state
        derived = [d for d in derived if d.current is None]  # each from a raw row
        raw = [a for d in derived for a in d.raw]
        arrays: list[np.ndarray] = [np.full(1, np.nan)]  # where a derived column's slot reads from
        index: dict[int, int] = {}

        def source(a: np.ndarray) -> int:
            if id(a) not in index:
                index[id(a)] = len(arrays)
                arrays.append(a)
            return index[id(a)]

        slots: list[tuple[int, int]] = []
        for group, src, i in picked:
            if isinstance(src, Derived):
                slots.append((0, 0))
            elif group == "contacts":
                slots.append((source(self._contacts), i))  # type: ignore[arg-type]
            elif group == "energy":
                slots.append((source(data.energy), i))
            else:
                slots.append((source(src), i))
        first_raw = len(arrays)
        arrays += raw
        self._gather = RowGather(arrays)
        offsets = [int(self._gather.pick(a, [i])[0]) for a, i in slots]
        for k, a in enumerate(raw):
            offsets += self._gather.pick(first_raw + k, np.arange(a.size)).tolist()
        self._offsets = np.array(offsets, dtype=np.intp)
        self._buf = np.zeros(len(offsets))
        self._values = self._buf[: len(names)]
        # each Derived: (its raw values' range in the buffer, [(slot, its column)])
        self._derived: list[tuple[int, int, Callable[[np.ndarray], np.ndarray], list[tuple[int, int]]]] = []
        r0 = len(names)
        for d in derived:
            size = sum(a.size for a in d.raw)
            cols = [(k, i) for k, (_, src, i) in enumerate(picked) if src is d]
            self._derived.append((r0, r0 + size, d.compute, cols))
            r0 += size
        self._live = [(current, [(k, i) for k, (_, src, i) in enumerate(picked) if src is d]) for d, current in live]
        prepare = prepare or {}
        self._prepare = next((prepare.get(g) for g in _PREPARED_GROUPS[::-1] if g in groups and prepare.get(g)), None)
        self.prepares = "proximities" in groups and self._prepare is not None
        """``read`` brings every rig output up to date (as a recorder's row needs)."""

    def read(self) -> np.ndarray:
        """The columns' values now (NaN where a column has no value, e.g. a detached load's)."""
        if self._prepare is not None:
            self._prepare()
        if self._contacts is not None:
            contact_values(self.data, self._contacts)
        gather = self._gather
        if gather.mirrored:
            gather.refresh()
        gather.take(self._offsets, self._buf)
        for r0, r1, compute, cols in self._derived:
            out = compute(self._buf[None, r0:r1])
            for slot, i in cols:
                self._values[slot] = out[0, i]
        for current, cols in self._live:
            row = current()
            for slot, i in cols:
                self._values[slot] = row[i]
        return self._values
