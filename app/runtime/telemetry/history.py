"""History: a bounded ring of complete physics states, one row per recorded instant.

Each row is MuJoCo's state vector for ``STATE_SPEC`` (``mjSTATE_INTEGRATION``, the same as a
snapshot's: time, qpos, qvel, act, history, plugin and plastic state -- ``mjSTATE_FULLPHYSICS``
-- plus the solver's warm start and the inputs ctrl, qfrc/xfrc_applied, mocap, eq_active and
userdata). ``mjSTATE_FULLPHYSICS`` alone is not enough: without ``qacc_warmstart`` the
constraint solver starts from another guess and a restored run drifts from the original in
the last bits as soon as there are contacts. With it, restoring a row and stepping on repeats
the original run bit for bit (tests/unit/test_history.py).

Besides MuJoCo's state a row keeps the rig's own state (``RuntimeManager.rig_state()``: the
load a pin friction carries from one step to the next), so restoring goes through
``RuntimeManager.restore`` exactly like a snapshot. Arrows, proximity lines and load outputs
are functions of the state and are recomputed from it (``RuntimeManager.visuals``); tracers'
trails restart.

Rows live in one preallocated ``(capacity, state size)`` float64 array (pages are committed as
the ring fills). The bound: at most ``max_seconds`` of simulated time between the oldest and
newest row and at most ``max_bytes`` of rows, whichever is less; the oldest rows go first.

Threading: simulation thread only.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.snapshots import STATE_SPEC, ModelIdentity, PhysicsState, model_identity

__all__ = ["History", "DEFAULT_SECONDS", "DEFAULT_BYTES"]

DEFAULT_SECONDS = 60.0
"""Simulated seconds of history kept by default."""
DEFAULT_BYTES = 256 * 2**20
"""Bytes of history kept at most by default."""

_get_state = mujoco.mj_getState

ROW_OVERHEAD = 120 + 2 * 8
"""Bytes a row costs besides its state: its numpy view (measured with tracemalloc) and two list
slots."""


class History:
    """The last ``max_seconds`` (s, simulated) / ``max_bytes`` of states of one model.

    ``interval`` (s) is the simulated time between rows (the timestep when every step is
    kept); it sizes the ring. ``push`` drops every row at or after the new row's time first, so
    time in the ring always increases (after a reset or a restore, the ring continues from there).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        *,
        interval: float,
        max_seconds: float = DEFAULT_SECONDS,
        max_bytes: int = DEFAULT_BYTES,
    ) -> None:
        if not (math.isfinite(max_seconds) and max_seconds > 0):
            raise ConfigError(f"history length must be a positive number of seconds, got {max_seconds}")
        if not max_bytes > 0:
            raise ConfigError(f"history memory must be a positive number of bytes, got {max_bytes}")
        if not (math.isfinite(interval) and interval > 0):
            raise ConfigError(f"history interval must be a positive number of seconds, got {interval}")
        self.model = model
        self.max_seconds = float(max_seconds)
        self.max_bytes = int(max_bytes)
        self.width = int(mujoco.mj_stateSize(model, STATE_SPEC))
        # a row: the state, whose first value is its time (mjSTATE_TIME), and the view and the two
        # list slots (view, rig state) that go with it, so the bound holds for all the ring takes
        self.row_bytes = 8 * self.width + ROW_OVERHEAD
        by_bytes = self.max_bytes // self.row_bytes
        by_time = int(math.ceil(self.max_seconds / interval)) + 1
        self.capacity = max(1, min(by_bytes, by_time))
        if by_bytes < 1:
            raise ConfigError(f"history memory {max_bytes} B holds not even one state ({self.row_bytes} B)")
        self._rows = np.empty((self.capacity, self.width))
        self._views = list(self._rows)  # one view per row, made once: push is on every step's path
        self._times = self._rows[:, 0]  # each row's time, a view: mj_getState writes it
        self._rig: list[dict[str, float] | None] = [None] * self.capacity
        self._start = 0  # physical index of the oldest row
        self._len = 0  # rows, as of the last _settle
        self._next = 0  # physical index the next row goes to
        self._fresh = 0  # rows pushed since the last _settle
        self._last = -math.inf  # time (s) of the newest row
        self._rigged = False  # some row holds rig state: pushes take the full path
        self._identity: ModelIdentity | None = None

    # --- filling ---------------------------------------------------------------------------
    def push(self, data: mujoco.MjData, rig: dict[str, float] | None = None) -> None:
        """Keep ``data``'s state now (and the rig's own state ``rig``); drops the oldest rows past
        the bound and any row at or after ``data.time``. It runs before every step, so the usual
        case (time went on, no rig state) only writes the row, about 0.7 µs; the bookkeeping
        waits until the ring is read (``_settle``)."""
        t = data.time
        if t <= self._last or rig or self._rigged:
            return self._push(data, rig, t)
        i = self._next
        _get_state(self.model, data, self._views[i], STATE_SPEC)  # time first: self._times[i] == t
        i += 1
        self._next = 0 if i == self.capacity else i
        self._fresh += 1
        self._last = t

    def _push(self, data: mujoco.MjData, rig: dict[str, float] | None, t: float) -> None:
        """``push`` in full: after time went back, or with the rig's own state."""
        self._settle()
        if t <= self._last:  # time went back (a reset, a restore): continue from t
            self.truncate_after(self._count_before(t) - 1)
        i = self._next
        _get_state(self.model, data, self._views[i], STATE_SPEC)
        self._rig[i] = rig or None
        self._rigged = self._rigged or bool(rig)
        self._next = 0 if i + 1 == self.capacity else i + 1
        self._fresh, self._last = 1, t
        self._settle()

    def _settle(self) -> None:
        """Account for the rows pushed since the last call: the ring's start and length, and
        the simulated-time bound (oldest rows first)."""
        fresh = self._fresh
        if not fresh:
            return
        cap = self.capacity
        n = min(self._len + fresh, cap)
        start = (self._next - n) % cap
        times = self._times
        while n > 1 and self._last - times.item(start) > self.max_seconds:
            start = start + 1 if start + 1 < cap else 0
            n -= 1
        self._start, self._len, self._fresh = start, n, 0

    def truncate_after(self, i: int) -> None:
        """Drop every row after row ``i`` (``-1``: all of them)."""
        self._settle()
        self._len = max(0, min(self._len, i + 1))
        self._next = (self._start + self._len) % self.capacity
        self._last = self.time(-1) if self._len else -math.inf
        if not self._len:
            self._rig = [None] * self.capacity
            self._rigged = False

    def _count_before(self, t: float) -> int:
        """How many rows are strictly before ``t``."""
        self._settle()
        if not self._len or t <= self._times[self._start]:
            return 0
        i = self.index_at(t)
        return i if self._times[self._phys(i)] >= t else i + 1

    def resize(self, *, max_seconds: float, max_bytes: int, interval: float) -> None:
        """New bounds; the newest rows that fit them are kept."""
        self._settle()
        other = History(self.model, interval=interval, max_seconds=max_seconds, max_bytes=max_bytes)
        newest = self.time(-1) if self._len else 0.0
        keep = [
            i
            for i in range(max(0, self._len - other.capacity), self._len)
            if newest - self.time(i) <= other.max_seconds
        ]
        for k, i in enumerate(keep):
            p = self._phys(i)
            other._rows[k] = self._rows[p]
            other._rig[k] = self._rig[p]
        self.max_seconds, self.max_bytes, self.capacity = other.max_seconds, other.max_bytes, other.capacity
        self._rows, self._views, self._times, self._rig = other._rows, other._views, other._times, other._rig
        self._start, self._len, self._next, self._fresh = 0, len(keep), len(keep) % other.capacity, 0
        self._rigged = any(r is not None for r in self._rig)
        self._last = self.time(-1) if keep else -math.inf

    def clear(self) -> None:
        """Forget every row."""
        self.truncate_after(-1)

    # --- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        self._settle()
        return self._len

    @property
    def nbytes(self) -> int:
        """Bytes the rows held now take (states and their bookkeeping)."""
        self._settle()
        return self._len * self.row_bytes

    @property
    def reserved_bytes(self) -> int:
        """Bytes the ring may take when full (never above ``max_bytes``)."""
        return self.capacity * self.row_bytes

    def _phys(self, i: int) -> int:
        self._settle()
        if not -self._len <= i < self._len:
            raise IndexError(f"history index {i} out of range (0..{self._len - 1})")
        return (self._start + (i % self._len)) % self.capacity

    def time(self, i: int) -> float:
        """Simulated time (s) of row ``i`` (0: oldest, -1: newest)."""
        return float(self._times[self._phys(i)])

    def times(self) -> np.ndarray:
        """Every row's simulated time (s), oldest first (a copy)."""
        self._settle()
        a = self._start
        b = a + self._len
        if b <= self.capacity:
            return self._times[a:b].copy()
        return np.concatenate([self._times[a:], self._times[: b - self.capacity]])

    def state(self, i: int) -> np.ndarray:
        """Row ``i``'s state vector (a read-only view; ``STATE_SPEC`` layout)."""
        row = self._rows[self._phys(i)].view()
        row.flags.writeable = False
        return row

    def index_at(self, t: float) -> int:
        """The newest row at or before ``t`` (s); 0 when ``t`` is before the oldest."""
        self._settle()
        if not self._len:
            raise IndexError("the history is empty")
        a, cap = self._start, self.capacity
        first = self._times[a : min(a + self._len, cap)]
        k = int(np.searchsorted(first, t, side="right"))
        if k == first.size and a + self._len > cap:
            k += int(np.searchsorted(self._times[: a + self._len - cap], t, side="right"))
        return max(0, k - 1)

    def snapshot(self, i: int) -> PhysicsState:
        """Row ``i`` as a snapshot (``RuntimeManager.restore`` puts it back, rig state too)."""
        if self._identity is None:
            self._identity = model_identity(self.model)
        p = self._phys(i)
        return PhysicsState(self._rows[p].copy(), self._identity, STATE_SPEC, dict(self._rig[p] or {}))
