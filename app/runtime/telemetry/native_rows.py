"""Telemetry rows written by MuJoCo's control callback while a block of steps runs.

A run whose only work between steps is its recording (``StepPlan.between_steps() ==
("recording",)``: ``mjrig run`` with nothing to check, pace or draw) steps in blocks of
``mj_step(nstep=...)``. MuJoCo calls ``mjcb_control`` at each step exactly where mjrig's Python
path samples a row (between ``mj_step1`` and ``mj_step2``: positions, velocities, sensors and
energy of the step's start); the compiled callback (``_native_code.record``) then does what
``SignalManager.sample`` does -- the schedule (decimation or rate), the contacts' count and
depth, the clock, one gather of every value into the recorder's block -- so no Python runs per
step. Between blocks the recorder takes the rows (``BlockRows``), flushes full blocks to its
writer and the run checks its outputs. A block MuJoCo found a divergence in is rolled back
with its rows (``step_plain``), and the run steps on one at a time.

Threading: the stepping thread, as the recorder's.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.compiled.native_kernel import kernel
from mjrig.runtime.compiled.native_layout import RECORDER, R, userdata_slot
from mjrig.runtime.telemetry.row_gather import RowGather

__all__ = ["BlockRows", "RowTable"]

_RK4 = int(mujoco.mjtIntegrator.mjINT_RK4)


class BlockRows:
    """What ``SignalManager`` gives a ``RowTable``: its block's layout, and the rows a block of
    steps wrote (mixed into ``SignalManager``, whose state it reads and writes)."""

    _closed: bool
    _bound: Any
    _before_sample: Any
    _posted: dict[int, float]
    _gather: Any
    _wall0: float | None
    _offsets: np.ndarray
    _block: np.ndarray
    _rows: list[np.ndarray]
    _row: int
    _clock: np.ndarray
    _contacts: np.ndarray | None
    _step_count: int
    _next_time: float
    batch_size: int
    rate: float | None
    record_decimation: int
    rows_recorded: int
    _compile_plan: Callable[[], RowGather]
    flush: Callable[[], None]

    def block_layout(self) -> dict[str, Any] | None:
        """Where a row's values come from and go (addresses), or None when a row needs Python
        (a rig output computed before sampling, a mirrored source, a posted value)."""
        if self._closed or self._bound is None or self._before_sample is not None or self._posted:
            return None
        if self._gather is None:
            self._compile_plan()
        if self._gather.mirrored:
            return None
        if self._wall0 is None:
            self._wall0 = time.perf_counter()
        self._block_offsets = np.ascontiguousarray(self._offsets, dtype=np.int64)  # kept alive while in use
        return dict(
            base=self._gather.view.__array_interface__["data"][0],
            offsets=self._block_offsets.ctypes.data,
            width=len(self._block_offsets),
            rows=self._block.ctypes.data,
            stride=self._block.shape[1],
            row=self._row,
            room=self.batch_size - self._row,
            clock=self._clock.ctypes.data,
            contacts=0 if self._contacts is None else self._contacts.ctypes.data,
            rate=self.rate,
            decimation=self.record_decimation,
            count=self._step_count,
            next=self._next_time,
            wall0=self._wall0,
        )

    def _go_on_in(self, block: np.ndarray) -> None:
        """Write the next rows into ``block`` (the writer took the last one's memory and gave a
        written block's of the same shape back): the Python path's row views follow it."""
        if block is not self._block:
            self._block = block
            if self._rows:
                self._rows = list(block[: len(self._rows), : len(self._rows[0])])

    def block_sampled(self, rows: int, count: int, next_time: float) -> None:
        """Take ``rows`` rows the callback wrote after the last, and its schedule's state."""
        self._row += rows
        self.rows_recorded += rows
        self._step_count, self._next_time = count, next_time
        if self._row >= self.batch_size:
            self.flush()


class RowTable:
    """The control callback's recorder table for one recorder (a ``SignalManager``, read through
    its ``BlockRows`` face) on one simulation."""

    @classmethod
    def make(cls, sm: BlockRows, model: mujoco.MjModel, data: mujoco.MjData) -> RowTable | None:
        """A table for ``sm`` recording ``data``, or None where the Python path must record (RK4,
        whose stages call the callback too; a model ``compile_rig`` did not compile; no numba)."""
        if userdata_slot(model) is None or int(model.opt.integrator) == _RK4 or sm.block_layout() is None:
            return None
        k = kernel()
        return None if k is None else cls(k, sm, model, data)

    def __init__(self, k: Any, sm: BlockRows, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        self.k, self.sm, self.model, self.data = k, sm, model, data
        got = k.allocate(RECORDER)
        if got is None:
            raise MemoryError("the compiled laws' table pool is full")
        self.offset, self.generation = got
        self.T = k.pool[self.offset : self.offset + RECORDER]
        self.I = self.T.view(np.int64)
        f = k.fields
        self.I[R["size"]] = RECORDER
        for key, value in (
            ("time", f["time"]),
            ("ncon", f["ncon"]),
            ("contact", f["contact"]),
            ("contact_size", f["contact_size"]),
            ("clock_fn", k.clock_gettime),
            ("clock_id", time.CLOCK_MONOTONIC),
        ):
            self.I[R[key]] = value
        # CLOCK_MONOTONIC less perf_counter, read once: the largest of 5 pairs (perf_counter is read
        # second, so a pair is low by the time between its reads). Read again per block, a thread
        # switched out between the two reads set that block's rows back in time.
        self._offset = max(time.clock_gettime(time.CLOCK_MONOTONIC) - time.perf_counter() for _ in range(5))
        self._finalizer = weakref.finalize(self, k.release, self.offset, RECORDER)
        k.install_recorder()

    def steps(self, step: Callable[[int], bool], n: int) -> int | None:
        """Step up to ``n`` steps (no more than the recorder has free rows) in one call of
        ``step(k)`` (the engine's ``step_plain``: k plain steps, False on a divergence), recording
        the rows due; returns the steps done, 0 when MuJoCo found a
        divergence (state and rows as before: step one at a time to it), None when a row needs
        Python now (step with ``RuntimeManager.step``)."""
        layout = self.sm.block_layout()
        if layout is None:
            return None
        n = min(n, layout["room"])
        I, T = self.I, self.T
        for key in ("base", "offsets", "width", "rows", "stride", "row", "contacts", "clock", "count"):
            I[R[key]] = layout[key]
        rate = layout["rate"]
        I[R["mode"]], I[R["decimation"]] = (1 if rate is not None else 0), layout["decimation"]
        T[R["inv_rate"]] = 1.0 / rate if rate is not None else 0.0
        T[R["next"]] = layout["next"]
        # the wall clock of rows: seconds since the recorder's first row, read with clock_gettime
        T[R["wall0"]] = layout["wall0"] + self._offset
        self.k.name_pool(self.model, self.data)
        self.data.userdata[-2], self.data.userdata[-1] = float(self.offset), float(self.generation)
        row0 = layout["row"]
        I[R["armed"]] = n
        try:
            ok = step(n)
        finally:
            I[R["armed"]] = 0
        if not ok:
            return 0
        self.sm.block_sampled(int(I[R["row"]]) - row0, int(I[R["count"]]), float(T[R["next"]]))
        return n

    def release(self) -> None:
        """Give the table back; the simulation's userdata no longer names it."""
        self.data.userdata[-1] = 0.0
        self._finalizer()
