"""The session's timeline: history while running, scrubbing, stepping through it, branching.

Every step the session takes first keeps the state it starts from in a ``History`` ring (the
complete physics state and the rig's own; see ``mjrig.runtime.history``), bounded by the last
``max_seconds`` of simulated time or ``max_bytes``, whichever is less (``SetHistoryLimit``).

``Scrub(time)`` pauses and restores the newest kept instant at or before ``time``
(``RuntimeManager.restore``: state, kinematics by ``mj_forward``, the rig's own state; arrows and
proximity lines are recomputed from that state when drawn). ``StepHistory(±1)`` moves one kept
instant; forward from the newest it steps the physics once. The snapshot's ``timeline``
(``C.TimelineInfo``) gives a slider its range and cursor.

Branching: the first step taken from a past instant (Play, Step) drops the history after it and,
when recording, goes on recording into a new file that starts at that instant and says where it
branched from (``Outputs.branch_recording``). Param and rig edits made while scrubbed back act
from that instant on: the restored state is what the next step starts from.

Threading: simulation thread only, like the session that owns it.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.history import DEFAULT_BYTES, DEFAULT_SECONDS, History

if TYPE_CHECKING:
    from mjrig.session.kernel import Session

__all__ = ["Timeline", "TIME_TOLERANCE"]

TIME_TOLERANCE = 1e-9
"""Seconds by which a kept instant may lie after a scrub time and still count as at it (simulated
time adds up timesteps: "0.1 s" is 0.10000000000000007 after 50 steps of 2 ms)."""


class Timeline:
    """History, cursor and branches of one session."""

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.max_seconds = DEFAULT_SECONDS
        self.max_bytes = DEFAULT_BYTES
        self.max_megabytes = DEFAULT_BYTES / 2**20
        self.history: History | None = None
        self.cursor: int | None = None      # the kept instant shown while scrubbed, else None (live)
        self.branches = 0
        self.branch_time: float | None = None
        self.enabled = True                 # False: no history is kept (benchmarks compare)

    def handlers(self) -> dict[type[C.Command], Callable[[Any], None]]:
        """The commands this part carries out."""
        return {C.Scrub: self.scrub, C.StepHistory: self.step_history, C.SetHistoryLimit: self.set_limit}

    def rig_opened(self) -> None:
        """Another rig was opened: its run has no history and no branches yet (the limits stay:
        they are the user's, not the rig's)."""
        self.history, self.cursor = None, None
        self.branches, self.branch_time = 0, None

    def ring(self) -> History:
        """The history of the current model (a new, empty one after another model was opened)."""
        s = self.session
        h = self.history
        if h is None or h.model is not s.model:
            assert s.model is not None
            h = self.history = History(s.model, interval=s.model.opt.timestep, max_seconds=self.max_seconds,
                                       max_bytes=self.max_bytes)
            self.cursor = None
        return h

    # --- stepping ------------------------------------------------------------------------------
    def before_step(self) -> None:
        """Keep the state the coming step starts from; from a past instant, branch first."""
        h, rig = self.history, self.session.rig
        assert rig is not None
        if h is not None and self.cursor is None and h.model is rig.model and self.enabled:
            h.push(rig.data, rig.runtime.rig_state())  # the usual case: every step, so first
            return
        if not self.enabled:
            return
        h = self.ring()
        if self.cursor is not None:
            self._resume(h)
        h.push(rig.data, rig.runtime.rig_state())

    def _resume(self, h: History) -> None:
        s = self.session
        i, self.cursor = self.cursor, None
        assert i is not None and s.rm is not None and s.data is not None
        if i >= len(h) - 1 or s.data.time != h.time(i):
            return  # the newest instant (nothing to drop), or a reset/restore moved time since
        t = h.time(i)
        h.truncate_after(i)
        self.branches += 1
        self.branch_time = t
        if s.outputs.branch_recording(time=t) is not None:
            # The new recorder is bound now, not at the step: resolving rebuilds the rig's extras,
            # which would recompute the pins' loads instead of keeping the restored ones.
            s.rm.resolve(s.rig.model, s.data)  # type: ignore[union-attr]
            s.rm.restore(s.data, h.snapshot(i))

    # --- commands ------------------------------------------------------------------------------
    def scrub(self, cmd: C.Scrub) -> None:
        if not math.isfinite(cmd.time):
            raise ConfigError(f"scrub time must be a number of seconds, got {cmd.time}")
        if self.session.replayer.active:
            return self.session.replayer.scrub(cmd.time)
        h = self._enter()
        self._show(h, h.index_at(cmd.time + TIME_TOLERANCE))

    def step_history(self, cmd: C.StepHistory) -> None:
        s = self.session
        if s.replayer.active:
            return s.replayer.step_row(cmd.direction)
        if self.cursor is None and cmd.direction > 0:
            s.run.step_once(1)  # live: forward is a physics step
            return
        h = self._enter()
        i = self.cursor if self.cursor is not None else len(h) - 1
        j = i + (1 if cmd.direction > 0 else -1)
        if j >= len(h):
            s.run.step_once(1)  # at the newest instant: go on stepping (no branch)
            return
        self._show(h, max(0, j))

    def set_limit(self, cmd: C.SetHistoryLimit) -> None:
        seconds, mb = float(cmd.seconds), float(cmd.megabytes)
        if not (math.isfinite(seconds) and seconds > 0):
            raise ConfigError(f"history length must be a positive number of seconds, got {cmd.seconds}")
        if not (math.isfinite(mb) and mb > 0):
            raise ConfigError(f"history memory must be a positive number of megabytes, got {cmd.megabytes}")
        self.max_seconds, self.max_bytes, self.max_megabytes = seconds, int(mb * 2**20), mb
        h = self.history
        if h is not None:
            shown = h.time(self.cursor) if self.cursor is not None else None
            h.resize(max_seconds=seconds, max_bytes=self.max_bytes, interval=h.model.opt.timestep)
            if shown is not None:
                self.cursor = h.index_at(shown) if len(h) and h.time(0) <= shown else None
        self.session.log("info", f"history: the last {seconds:g} s or {mb:g} MB, whichever is less")

    def _enter(self) -> History:
        """Pause; coming from the live run, keep the current instant so it can be returned to."""
        s = self.session
        assert s.rm is not None and s.data is not None
        h = self.ring()
        s.run.pause()
        if self.cursor is None:
            # The live instant, unless time went back without a step (a reset, or MuJoCo's own
            # reset after a divergence): then the kept run stays scrubbable, back to before it.
            if not len(h) or s.data.time > h.time(-1):
                h.push(s.data, s.rm.rig_state())
            self.cursor = len(h) - 1
        return h

    def _show(self, h: History, i: int) -> None:
        s = self.session
        assert s.rm is not None and s.data is not None
        s.rm.restore(s.data, h.snapshot(i))
        self.cursor = i
        s.run.reset()  # a diverged run scrubbed back to a sane instant may play again

    # --- for the panel ---------------------------------------------------------------------------
    def info(self) -> C.TimelineInfo:
        """The slider's range and cursor now."""
        s, h = self.session, self.history
        if s.replayer.active:
            return s.replayer.info()
        now = s.data.time if s.data is not None else 0.0
        if h is None or not len(h) or (s.model is not None and h.model is not s.model):
            return C.TimelineInfo(start=now, end=now, cursor=now, max_seconds=self.max_seconds,
                                  max_megabytes=self.max_megabytes, branches=self.branches,
                                  branch_time=self.branch_time, **s.replayer.overlay())
        if self.cursor is not None and h.time(self.cursor) != now:
            self.cursor = None  # a reset or a restored snapshot moved time since: live again
        cursor = h.time(self.cursor) if self.cursor is not None else now
        return C.TimelineInfo(start=h.time(0), end=max(h.time(-1), now if self.cursor is None else h.time(-1)),
                              cursor=cursor, scrubbed=self.cursor is not None and self.cursor < len(h) - 1,
                              rows=len(h), nbytes=h.nbytes, max_seconds=self.max_seconds,
                              max_megabytes=self.max_megabytes, branches=self.branches,
                              branch_time=self.branch_time, **s.replayer.overlay())
