"""Telemetry: named signal columns sampled array-wise from MjData, streamed to Parquet.

Column names follow ``Category/Entity:attribute`` (see docs/outputs.md). A *plan* of (source array,
indices, column range) gathers is built once per model (``row_plan``); recording a row is then one
``np.take`` into a preallocated block. Full blocks go to the ``ParquetSink``'s writer thread.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.native_rows import BlockRows
from mjrig.runtime.telemetry.row_gather import RowGather
from mjrig.runtime.telemetry.row_plan import RowPlan, fill_derived, plan_rows
from mjrig.runtime.telemetry.signal_sources import Derived, contact_values, entity_name

if TYPE_CHECKING:  # imported where the sink opens: pyarrow and the writer only for a recording to disk
    from mjrig.runtime.files.parquet_sink import ParquetSink

__all__ = ["SignalCategory", "SignalManager", "SIGNAL_GROUPS", "Derived", "entity_name"]

BLOCK_BYTES = 8 * 2**20
"""A block of rows handed to the writer holds ``batch_size`` rows, or fewer when they are wider
than this (a 600-body model's 9,606 columns: 109 rows), never fewer than ``BLOCK_MIN_ROWS``."""
BLOCK_MIN_ROWS = 16

SIGNAL_GROUPS = (
    "joints",
    "bodies",
    "sensors",
    "actuators",
    "loads",
    "proximities",
    "params",
    "contacts",
    "energy",
    "sites",
)


class SignalCategory(str, Enum):
    """The top-level categories (the text before the first ``/`` of a column name).

    A ``str`` enum: ``SignalCategory("Bodies") is SignalCategory.BODIES``, ``str()`` and
    f-strings give the value, and a member compares equal to its text.
    """

    JOINTS = "Joints"
    BODIES = "Bodies"
    SENSORS = "Sensors"
    ACTUATORS = "Actuators"
    LOADS = "Loads"
    PROXIMITIES = "Proximities"
    PARAMS = "Params"
    CONTACTS = "Contacts"
    ENERGY = "Energy"
    SITES = "Sites"

    def __str__(self) -> str:
        return self.value

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)


class SignalManager(BlockRows):
    """Records telemetry rows and streams them to ``export_path`` (Parquet), crash-safe.

    ``record_decimation`` records every n-th step; ``rate`` (samples per simulated second)
    records when simulated time reaches the next sample instead. ``groups`` picks signal groups
    (see SIGNAL_GROUPS). ``post`` adds a custom signal to the current row.

    Threading: one stepping thread calls ``record``/``post``; ``on_rows`` (if set) receives each
    full block (rows x columns, a copy) on that thread, e.g. to feed live plots.
    """

    def __init__(
        self,
        export_path: str | os.PathLike | None = None,
        *,
        batch_size: int = 1000,
        record_decimation: int = 1,
        rate: float | None = None,
        groups: Iterable[str] = SIGNAL_GROUPS,
        metadata: dict[str, str] | None = None,
        flush_seconds: float = 5.0,
        wait_when_behind: bool = True,
    ) -> None:
        groups = tuple(groups)
        for g in groups:
            if g not in SIGNAL_GROUPS:
                raise ConfigError(f"unknown signal group '{g}' (valid: {', '.join(SIGNAL_GROUPS)})")
        if record_decimation < 1:
            raise ConfigError(f"record_decimation must be >= 1, got {record_decimation}")
        if rate is not None and not (math.isfinite(rate) and rate > 0):
            raise ConfigError(f"recording rate must be a positive number of samples per second, got {rate}")
        self.export_path = Path(export_path) if export_path is not None else None
        self.batch_size = int(batch_size)
        self._batch_asked = self.batch_size  # ``batch_size`` while a row fits ``BLOCK_BYTES`` that often
        self.record_decimation = int(record_decimation)
        self.rate = rate
        self.groups = groups
        self.metadata = dict(metadata or {})
        self.flush_seconds = flush_seconds
        self.wait_when_behind = wait_when_behind
        """The recording's writer, behind, makes ``flush`` wait (a headless run), or only says so
        in ``behind`` (the app, which keeps real time): ``ParquetSink``."""
        self.columns: list[str] = ["time", "wall_time"]
        self.units: dict[str, str] = {"time": "s", "wall_time": "s"}
        self._units_view: Mapping[str, str] | None = None
        self._col_index: dict[str, int] = {"time": 0, "wall_time": 1}
        self._plan = RowPlan()
        self._clock = np.zeros(2)  # time, wall_time of the row being sampled (s)
        self._gather: RowGather | None = None  # compiled from the plan for the current width
        self._offsets = np.zeros(0, dtype=np.intp)
        self._rows: list[np.ndarray] = []  # views of the block's rows, as wide as a row's values
        self._raw_width = 0
        self._block = np.full((self.batch_size, 8), np.nan)
        self._row = 0
        self._step_count = -1
        self._next_time = -math.inf
        self._posted: dict[int, float] = {}
        self._key_cache: dict[tuple, str] = {}
        self._wall0: float | None = None
        self._sink: ParquetSink | None = None
        self._closed = False
        self.rows_recorded = 0
        self.on_rows: Callable[[list[str], np.ndarray], None] | None = None
        self._before_sample: Callable[[], None] | None = None
        self._contacts: np.ndarray | None = None  # the plan's, filled before each row
        self._bound: tuple[mujoco.MjModel, mujoco.MjData] | None = None

    # --- columns -----------------------------------------------------------------------------
    def _column(self, name: str, unit: str = "") -> int:
        idx = self._col_index.get(name)
        if idx is None:
            idx = len(self.columns)
            self.columns.append(name)
            self._col_index[name] = idx
            if unit:
                self.units[name] = unit
        return idx

    def units_view(self) -> Mapping[str, str]:
        """A copy of ``units`` for another thread (the panel reads it while this one adds columns),
        made again only after a unit was added (none is ever removed). A plain dict, not a
        read-only proxy: the snapshot carrying it crosses to the panel's process by pickle."""
        if self._units_view is None or len(self._units_view) != len(self.units):
            self._units_view = dict(self.units)
        return self._units_view

    def _ensure_width(self) -> None:
        """Room in the block for every column and, after them, the derived columns' raw values."""
        width = len(self.columns) + self._plan.raw_size
        rows = min(self._batch_asked, max(BLOCK_MIN_ROWS, BLOCK_BYTES // (8 * width)))
        if width > self._block.shape[1] or rows != self.batch_size:  # no row in the block (flushed before)
            grown = np.full(
                (rows, max(width, 2 * self._block.shape[1]) if width > self._block.shape[1] else self._block.shape[1]),
                np.nan,
            )
            n = min(rows, self.batch_size)
            grown[:n, : self._block.shape[1]] = self._block[:n]
            self._block, self.batch_size = grown, rows
        self._gather = None

    def _compile_plan(self) -> RowGather:
        """Offsets for one take per row (``RowPlan.compile``): each column's value, then the hidden
        raw values of derived columns."""
        gather, self._offsets = self._plan.compile(self._clock, columns=len(self.columns))
        self._raw_width = len(self._offsets) - len(self.columns)
        self._gather = gather
        width = len(self._offsets)  # each row of the block as a view, made once, not per sample
        self._rows = [self._block[i, :width] for i in range(self.batch_size)]
        return gather

    def bind(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        *,
        extra: Sequence[tuple[str, np.ndarray, list[tuple[str, int, str]]] | Derived] = (),
        before_sample: Callable[[], None] | None = None,
    ) -> None:
        """Build the sampling plan for ``model``/``data``. Columns only ever get added.

        ``extra`` adds rig signals as (group, flat array, [(column, index, unit)]) or as
        ``Derived`` columns worked out per block; the arrays must stay the same objects (they
        are read in place at every sample).

        Call again after the rig changed (a load attached): the current block is flushed first so
        every segment has one set of columns.
        """
        if self._row:
            self.flush()
        self._before_sample = before_sample
        self._plan = plan_rows(
            model,
            data,
            groups={*self.groups, "requirements", "signals"},  # a rig's requirements and [[signals]]: always recorded
            extra=extra,
            column=self._column,
            known=self._col_index,
        )
        self._contacts = self._plan.contacts
        self._bound = (model, data)
        self._ensure_width()
        if self._sink is not None:
            self._sink.set_units(self.units)

    # --- reference API -----------------------------------------------------------------------
    def post(
        self, value: float, category: SignalCategory | str, subgroups: tuple[str, ...] = (), *, attr: str | None = None
    ) -> None:
        """Put a custom value into the next recorded row as ``Category/Sub/...:attr``.

        ``category`` is a ``SignalCategory`` or any text; empty subgroups are skipped; a new
        name becomes a new column (null in the rows before). E.g. ``post(9.81, "Sensors",
        ("IMU", "Accel"), attr="z")`` fills ``Sensors/IMU/Accel:z``.
        """
        key = (str(category), subgroups, attr or "")
        name = self._key_cache.get(key)
        if name is None:
            name = "/".join([str(category), *[str(s) for s in subgroups if s]])
            if attr:
                name += f":{attr}"
            self._key_cache[key] = name
        idx = self._col_index.get(name)
        if idx is None:
            if self._row:
                self.flush()
            idx = self._column(name)
            self._ensure_width()
        self._posted[idx] = float(value)

    def due(self, sim_time: float) -> bool:
        """Whether a row is due at simulated time ``sim_time`` (s); advances the decimation."""
        if self.rate is not None:
            if sim_time + 1.0 / self.rate < self._next_time - 1.0 / self.rate:
                self._next_time = -math.inf  # time went back (a reset): sample from here again
            if sim_time + 1e-12 >= self._next_time:
                if self._next_time == -math.inf:
                    self._next_time = sim_time
                self._next_time += 1.0 / self.rate
                return True
            return False
        self._step_count += 1
        return self._step_count % self.record_decimation == 0

    def record(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Sample one row if due (see ``due``); flush when the block is full.

        Works on its own, without a RuntimeManager: the first call (or one with another model
        or data) binds the signal groups of ``mj_model``/``mj_data``. Call it when the
        kinematics are current (after ``mj_forward``, or before ``mj_step``'s integration).
        """
        if self._closed or not self.due(mj_data.time):
            return
        bound = self._bound
        if bound is None or bound[0] is not mj_model or bound[1] is not mj_data:
            self.bind(mj_model, mj_data)
        self.sample(mj_data)

    def sample(self, mj_data: mujoco.MjData, *, prepared: bool = False) -> None:
        """Sample one row now, unconditionally (``prepared``: rig outputs are already fresh)."""
        if self._before_sample is not None and not prepared:
            self._before_sample()
        if self._contacts is not None:
            contact_values(mj_data, self._contacts)
        now = time.perf_counter()
        if self._wall0 is None:
            self._wall0 = now
        clock = self._clock
        clock[0] = mj_data.time
        clock[1] = now - self._wall0
        gather = self._gather
        if gather is None:
            gather = self._compile_plan()
        if gather.mirrored:
            gather.refresh()
        row = self._rows[self._row]
        gather.take(self._offsets, row)
        if self._posted:
            for idx, val in self._posted.items():
                row[idx] = val
            self._posted.clear()
        self._row += 1
        self.rows_recorded += 1
        if self._row >= self.batch_size:
            self.flush()

    # --- output ------------------------------------------------------------------------------
    def _open_sink(self) -> ParquetSink | None:
        if self._sink is None and self.export_path is not None:
            from mjrig.runtime.files.parquet_sink import ParquetSink

            self._sink = ParquetSink(
                self.export_path,
                metadata=self.metadata,
                units=self.units,
                flush_seconds=self.flush_seconds,
                wait_when_behind=self.wait_when_behind,
            )
        return self._sink

    def flush(self) -> None:
        """Hand the rows recorded so far to the writer (never blocks on disk)."""
        if self._row == 0:
            return
        width = len(self.columns)
        block = self._block[: self._row, :width]
        sink = self._open_sink()
        derived = tuple(self._plan.derived)
        fill = partial(fill_derived, derived, width=width, raw=self._raw_width) if derived else None
        later = sink is not None and self.on_rows is None  # only the file reads them: worked out by its writer
        if fill is not None and not later:
            fill(self._block[: self._row])
        if self.on_rows is not None:
            self.on_rows(list(self.columns), block.copy())
        if sink is not None:
            self._go_on_in(sink.write_block(self.columns, block, whole=self._block, finish=fill if later else None))
        self._row = 0

    @property
    def error(self) -> str | None:
        """The writer's last error (disk full, folder removed), or None."""
        return None if self._sink is None else self._sink.error

    @property
    def behind(self) -> str | None:
        """One line while the writer is behind, or after it had to leave rows out (a recorder
        that does not wait: ``wait_when_behind``); else None."""
        return None if self._sink is None else self._sink.behind

    @property
    def waited_seconds(self) -> float:
        """Wall seconds the stepping waited for the writer (``wait_when_behind``)."""
        return 0.0 if self._sink is None else self._sink.backlog.waited_seconds

    @property
    def rows_written(self) -> int:
        """Rows on disk so far."""
        return 0 if self._sink is None else self._sink.rows_written

    @property
    def bytes_written(self) -> int:
        """Bytes on disk so far."""
        return 0 if self._sink is None else self._sink.bytes_written

    @property
    def saved_fraction(self) -> float:
        """How much of what was handed over is on disk (0..1; 1 with nothing to write): rows
        written over rows recorded and not dropped. Read from any thread while ``close`` runs."""
        sink = self._sink
        if sink is None:
            return 1.0
        wanted = self.rows_recorded - sink.rows_dropped
        return 1.0 if wanted <= 0 else min(1.0, sink.rows_written / wanted)

    def add_metadata(self, metadata: dict[str, str]) -> None:
        """Add key-value file metadata before ``close`` (e.g. ``mjrig.metrics``, known at the end)."""
        self.metadata.update(metadata)
        if self._sink is not None:
            self._sink.add_metadata(metadata)

    def close(self) -> Path | None:
        """Flush and finalize the Parquet file; safe twice. Returns its path (None if nothing)."""
        if self._closed:
            return self.export_path if self._sink is not None else None
        self.flush()
        self._closed = True
        sink = self._sink
        if sink is None and self.export_path is not None and self.rows_recorded == 0:
            sink = self._open_sink()  # nothing recorded: a file of the columns and no rows
        if sink is None:
            return None
        return sink.close()

    def __enter__(self) -> SignalManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
