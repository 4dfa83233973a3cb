"""What a telemetry row is gathered from: the recorder's sampling plan (``RowPlan``).

Built once per model and rig (``SignalManager.bind``) from the model's own sources
(``signal_sources.model_sources``) and the rig's (loads, params, ``Derived`` columns): each run of
columns read from one flat array at fixed indices (``Gather``), the ``Derived`` columns worked
out per block from hidden raw values copied at every row (``DerivedColumns``), and the contacts'
count and depth. ``RowPlan.compile`` turns it into the offsets of one ``np.take`` per row
(``row_gather.RowGather``): each column's value, then the raw values after the columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from mjrig.runtime.telemetry.row_gather import RowGather, place_raw
from mjrig.runtime.telemetry.signal_sources import CONTACT_COLUMNS, MODEL_GROUPS, Derived, model_sources

__all__ = ["Gather", "DerivedColumns", "RowPlan", "plan_rows", "fill_derived"]

Column = Callable[[str, str], int]
"""A column's index by its name and unit (added to the recording when it is new)."""


@dataclass
class Gather:
    """Columns ``start``..``stop`` (indices in the row) read from ``source[index]``: a flat
    float64 array, read in place at every row."""

    source: np.ndarray
    index: np.ndarray
    start: int
    stop: int


@dataclass
class DerivedColumns:
    """A ``Derived``'s place in a block: its columns ``cols`` (a slice: a run of them), worked out
    by ``compute`` from the hidden raw values at ``raw`` (positions after the columns) and, when it
    reads any, the block's columns ``inputs``."""

    cols: slice | np.ndarray
    raw: slice | np.ndarray
    inputs: np.ndarray | None
    compute: Callable[[np.ndarray], np.ndarray]

    def fill(self, block: np.ndarray, raw: np.ndarray) -> None:
        """Write the columns of ``block`` (rows x columns) from its rows' raw values ``raw``."""
        x = (
            raw[:, self.raw]
            if self.inputs is None
            else np.concatenate([raw[:, self.raw], block[:, self.inputs]], axis=1)
        )
        block[:, self.cols] = self.compute(x)


def fill_derived(derived: Sequence[DerivedColumns], rows: np.ndarray, *, width: int, raw: int) -> None:
    """Work out the ``derived`` columns of ``rows`` (rows x at least ``width + raw``: the columns,
    then each row's ``raw`` hidden values), in place. Pure: any thread may run it (the recorder's
    writer does, when only the file reads the rows)."""
    block, values = rows[:, :width], rows[:, width : width + raw]
    for d in derived:
        d.fill(block, values)


@dataclass
class RowPlan:
    """Where each column of a row comes from: ``gathers`` read at every row, ``derived`` columns
    worked out per block from the ``raw`` arrays (copied after the columns at every row), and
    ``contacts`` (the contacts' count and depth, filled before each row; None: not recorded)."""

    gathers: list[Gather] = field(default_factory=list)
    derived: list[DerivedColumns] = field(default_factory=list)
    raw: list[np.ndarray] = field(default_factory=list)
    contacts: np.ndarray | None = None

    @property
    def raw_size(self) -> int:
        """The raw values a row holds after its columns."""
        return sum(a.size for a in self.raw)

    def compile(self, clock: np.ndarray, *, columns: int) -> tuple[RowGather, np.ndarray]:
        """The gather and the offsets of one take per row of ``columns`` columns: ``clock``'s two
        values (time, wall time, s), each column's value (NaN for a column nothing feeds any more,
        e.g. a detached load's), then the raw values of the derived columns."""
        nan = np.full(1, np.nan)
        gather = RowGather([clock, nan, *(g.source for g in self.gathers), *self.raw])
        offsets = np.full(columns, gather.pick(1, [0])[0], dtype=np.intp)
        offsets[0:2] = gather.pick(0, [0, 1])
        for i, g in enumerate(self.gathers):
            offsets[g.start : g.stop] = gather.pick(2 + i, g.index)
        first = 2 + len(self.gathers)
        raw = [gather.pick(first + i, np.arange(a.size)) for i, a in enumerate(self.raw)]
        return gather, np.concatenate([offsets, *raw])  # the raw values sit right after the columns


def plan_rows(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    *,
    groups: set[str],
    extra: Sequence[tuple[str, np.ndarray, list[tuple[str, int, str]]] | Derived],
    column: Column,
    known: Mapping[str, int],
) -> RowPlan:
    """The plan of ``model``/``data``'s signal ``groups`` and the rig's ``extra`` signals ((group,
    flat array, [(column, index, unit)]) or ``Derived``), registering each column with ``column``;
    ``known`` are the columns registered so far (name -> index), read as the plan grows: a
    ``Derived`` whose ``inputs`` are all fed before it reads them, else its ``fallback`` stands in."""
    plan = RowPlan()
    fed: set[int] = set()  # columns with a value in each block (gathered, or derived before)
    placed: list[tuple[int, int, int]] = []  # memory read by several derived columns is copied once

    def add(source: np.ndarray, pairs: list[tuple[str, int, str]]) -> None:
        if not pairs:
            return
        cols = [column(n, u) for n, _, u in pairs]
        fed.update(cols)
        idx = np.array([i for _, i, _ in pairs], dtype=np.intp)
        # Columns registered together are contiguous unless some already existed.
        if cols == list(range(cols[0], cols[0] + len(cols))):
            plan.gathers.append(Gather(source, idx, cols[0], cols[0] + len(cols)))
        else:
            for c, i in zip(cols, idx):
                plan.gathers.append(Gather(source, np.array([i]), c, c + 1))

    own = [item for group in MODEL_GROUPS if group in groups for item in model_sources(model, data, group)]
    for item in [*own, *extra]:
        if isinstance(item, Derived):
            inputs = [known.get(n) for n in item.inputs]
            use = item if all(i in fed for i in inputs) else item.fallback
            if item.group in groups and use is not None:
                cols = np.array([column(n, u) for n, u in use.columns], dtype=np.intp)
                plan.derived.append(
                    DerivedColumns(
                        slice(int(cols[0]), int(cols[-1]) + 1) if cols.size and np.all(np.diff(cols) == 1) else cols,
                        place_raw(use.raw, plan.raw, placed),  # a slice: a run of columns
                        np.array(inputs, dtype=np.intp) if use.inputs else None,
                        use.compute,
                    )
                )
                fed.update(cols.tolist())
        elif len(item) == 2:  # the model's own (array, pairs)
            add(item[0], item[1])
        elif item[0] in groups:
            add(item[1], item[2])
    if "contacts" in groups:
        plan.contacts = np.zeros(2)
        add(plan.contacts, list(CONTACT_COLUMNS))
    if "energy" in groups:
        for source, pairs in model_sources(model, data, "energy"):  # type: ignore[misc]
            add(source, pairs)
    return plan
