"""The session's timeline: the live step source, with history, scrubbing, stepping through
it, branching.

It is the session's default step source (``step``: one physics step of the rig; a divergence
pauses the run with its message); while a recording is replayed the kernel swaps in the replay
(``mjrig.session.replay_mode.ReplaySource``) instead, which answers Scrub and StepHistory itself.

Every step the session takes first keeps the state it starts from in a ``History`` ring (the
complete physics state and the rig's own; see ``mjrig.runtime.telemetry.history``), bounded by the last
``max_seconds`` of simulated time or ``max_bytes``, whichever is less (``SetHistoryLimit``).

``Scrub(time)`` pauses and restores the newest kept instant at or before ``time``
(``RuntimeManager.restore``: state, kinematics by ``mj_forward``, the rig's own state; arrows and
proximity lines are recomputed from that state when drawn). ``StepHistory(±1)`` moves one kept
instant; forward from the newest it steps the physics once. The snapshot's ``timeline``
(``C.TimelineInfo``) gives a slider its range and cursor.

Branching: the first step taken from a past instant (Play, Step) drops the history after it and,
when recording, goes on recording into a new file that starts at that instant and says where it
branched from (the context's ``branched`` hooks: ``Outputs.branch_recording``). Param and rig edits made while scrubbed back act
from that instant on: the restored state is what the next step starts from.

Threading: simulation thread only, like the session that owns it.
"""

from __future__ import annotations

import math

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError, DivergenceError
from mjrig.runtime.telemetry.history import DEFAULT_BYTES, DEFAULT_SECONDS, History
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler

__all__ = ["Timeline", "TIME_TOLERANCE"]

TIME_TOLERANCE = 1e-9
"""Seconds by which a kept instant may lie after a scrub time and still count as at it (simulated
time adds up timesteps: "0.1 s" is 0.10000000000000007 after 50 steps of 2 ms)."""


class Timeline(Feature):
    """History, cursor and branches of one session."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.max_seconds = DEFAULT_SECONDS
        self.max_bytes = DEFAULT_BYTES
        self.max_megabytes = DEFAULT_BYTES / 2**20
        self.history: History | None = None
        self.cursor: int | None = None  # the kept instant shown while scrubbed, else None (live)
        self.branches = 0
        self.branch_time: float | None = None
        self.enabled = True  # False: no history is kept (benchmarks compare)

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this part carries out (a swapped-in step source answers Scrub and
        StepHistory itself)."""
        return {C.Scrub: self.scrub, C.StepHistory: self.step_history, C.SetHistoryLimit: self.set_limit}

    def signals(self) -> tuple[str, ...]:
        """The plots' choices when this is the step source: the live signals (the kernel's)."""
        return ()

    def rig_opened(self) -> None:
        """Another rig was opened: its run has no history and no branches yet (the limits stay:
        they are the user's, not the rig's)."""
        self.history, self.cursor = None, None
        self.branches, self.branch_time = 0, None

    def ring(self) -> History:
        """The history of the current model (a new, empty one after another model was opened)."""
        model = self.ctx.model
        h = self.history
        if h is None or h.model is not model:
            h = self.history = History(
                model, interval=model.opt.timestep, max_seconds=self.max_seconds, max_bytes=self.max_bytes
            )
            self.cursor = None
        return h

    # --- stepping ------------------------------------------------------------------------------
    def leap(self, target: float) -> bool:
        """The physics cannot leap: it steps one timestep at a time (False: ``step`` instead)."""
        return False

    def step(self) -> bool:
        """One timestep of the rig (RunControl's step); a divergence pauses with its message."""
        self.before_step()
        rig = self.ctx.rig()
        assert rig is not None
        try:
            rig.runtime.step(rig.model, rig.data)
        except DivergenceError as exc:
            self.ctx.run.fail(str(exc))
            self.ctx.log("error", f"{exc}; paused (reset to go on)")
            if rig.runtime.signal_manager is not None:
                rig.runtime.signal_manager.flush()
            return False
        return True

    def before_step(self) -> None:
        """Keep the state the coming step starts from; from a past instant, branch first."""
        h, rig = self.history, self.ctx.rig()
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
        s = self.ctx
        i, self.cursor = self.cursor, None
        assert i is not None
        if i >= len(h) - 1 or s.data.time != h.time(i):
            return  # the newest instant (nothing to drop), or a reset/restore moved time since
        t = h.time(i)
        h.truncate_after(i)
        self.branches += 1
        self.branch_time = t
        if any([hook(t) is not None for hook in s.branched]):
            # A new recorder is bound now, not at the step: resolving rebuilds the rig's extras,
            # which would recompute the pins' loads instead of keeping the restored ones.
            s.runtime.resolve(s.model, s.data)
            s.runtime.restore(s.data, h.snapshot(i))

    # --- commands ------------------------------------------------------------------------------
    def scrub(self, cmd: C.Scrub) -> None:
        if not math.isfinite(cmd.time):
            raise ConfigError(f"scrub time must be a number of seconds, got {cmd.time}")
        h = self._enter()
        self._show(h, h.index_at(cmd.time + TIME_TOLERANCE))

    def step_history(self, cmd: C.StepHistory) -> None:
        s = self.ctx
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
        self.ctx.log("info", f"history: the last {seconds:g} s or {mb:g} MB, whichever is less")

    def _enter(self) -> History:
        """Pause; coming from the live run, keep the current instant so it can be returned to."""
        s = self.ctx
        h = self.ring()
        s.run.pause()
        if self.cursor is None:
            # The live instant, unless time went back without a step (a reset, or MuJoCo's own
            # reset after a divergence): then the kept run stays scrubbable, back to before it.
            if not len(h) or s.data.time > h.time(-1):
                h.push(s.data, s.runtime.rig_state())
            self.cursor = len(h) - 1
        return h

    def _show(self, h: History, i: int) -> None:
        s = self.ctx
        s.runtime.restore(s.data, h.snapshot(i))
        self.cursor = i
        s.run.reset()  # a diverged run scrubbed back to a sane instant may play again

    # --- for the panel ---------------------------------------------------------------------------
    def info(self) -> C.TimelineInfo:
        """The slider's range and cursor now."""
        rig, h = self.ctx.rig(), self.history
        now = rig.data.time if rig is not None else 0.0
        if h is None or not len(h) or (rig is not None and h.model is not rig.model):
            return C.TimelineInfo(
                start=now,
                end=now,
                cursor=now,
                max_seconds=self.max_seconds,
                max_megabytes=self.max_megabytes,
                branches=self.branches,
                branch_time=self.branch_time,
            )
        if self.cursor is not None and h.time(self.cursor) != now:
            self.cursor = None  # a reset or a restored snapshot moved time since: live again
        cursor = h.time(self.cursor) if self.cursor is not None else now
        return C.TimelineInfo(
            start=h.time(0),
            end=max(h.time(-1), now if self.cursor is None else h.time(-1)),
            cursor=cursor,
            scrubbed=self.cursor is not None and self.cursor < len(h) - 1,
            rows=len(h),
            nbytes=h.nbytes,
            max_seconds=self.max_seconds,
            max_megabytes=self.max_megabytes,
            branches=self.branches,
            branch_time=self.branch_time,
        )
