"""The run state of a session and the pacing of its stepping: one state machine, one pacer.

Threading: simulation thread only (the Session calls it from there).
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable
from typing import Any, Protocol

from mjrig import commands as C
from mjrig.runtime.errors import MjrigError
from mjrig.runtime.pacing import Pacer

__all__ = ["RunControl", "StepSource", "LEAP_S"]


LEAP_S = 0.5
"""Wall seconds of the run a replay makes up in one frame at most: after a stalled frame (a model
loading in the 3D view, a busy machine) it goes on from where it was instead of jumping ahead."""


class StepSource(Protocol):
    """Where steps come from (``Session.source``): the live physics or a replay."""

    def step(self) -> bool:
        """One timestep; False when the run cannot go on (it diverged)."""

    def leap(self, target: float) -> bool:
        """Go straight to the simulated time ``target`` (s) if the source can (a replay: True);
        False: it cannot (the physics steps one timestep at a time)."""


class RunControl:
    """running / paused / stopped / error, the speed, and stepping paced to it.

    ``source()`` is the step source now (``StepSource``): its ``step`` advances one timestep and
    returns False when the run cannot go on (it diverged: the step moved the run to ERROR through
    :meth:`fail`); a paced run asks it to ``leap`` to the time due first (a replay: one state a
    frame). Commands only request transitions; an ERROR run plays or steps again only after
    :meth:`reset`.
    """

    def __init__(self, source: Callable[[], StepSource], *, sim_time: Callable[[], float]) -> None:
        self.state = C.RunState.STOPPED
        self.error: str | None = None
        self.steps = 0
        self.pacer = Pacer(speed=1.0)
        self._source = source
        self._sim_time = sim_time
        self._rtf = 0.0
        self._rtf_window: collections.deque[tuple[float, float]] = collections.deque(maxlen=120)

    @property
    def speed(self) -> float:
        """Real-time factor the run is paced to; 0 means as fast as possible."""
        return self.pacer.speed

    @speed.setter
    def speed(self, value: float) -> None:
        self.pacer.speed = max(0.0, float(value))
        self.pacer.restart()

    # --- transitions ---------------------------------------------------------------------------
    def handlers(self) -> dict[type[C.Command], Callable[[Any], None]]:
        """The run's commands: Play, Pause, TogglePause, StepOnce, SetSpeed, ChangeSpeed (each
        handler takes the command of its type)."""
        return {
            C.Play: lambda cmd: self.play(),
            C.Pause: lambda cmd: self.pause(),
            C.TogglePause: lambda cmd: self.toggle(),
            C.StepOnce: lambda cmd: self.step_once(cmd.steps),
            C.SetSpeed: lambda cmd: setattr(self, "speed", cmd.speed),
            C.ChangeSpeed: lambda cmd: self.change_speed(cmd.direction),
        }

    def opened(self, *, fresh: bool) -> None:
        """A model was loaded. ``fresh`` (another rig): it runs, whatever the previous one was
        doing (paused by the user, or at the end of a replay), and the count starts again; a
        reload of the same rig runs on as it was (a paused run stays paused)."""
        self.error = None
        if fresh or self.state != C.RunState.PAUSED:
            self.state = C.RunState.RUNNING
        if fresh:
            self.steps = 0
        self.pacer.restart()

    def play(self) -> None:
        if self.state == C.RunState.ERROR:
            raise MjrigError("the run diverged: reset before playing")
        self.state = C.RunState.RUNNING
        self.pacer.restart()

    def pause(self) -> None:
        if self.state == C.RunState.RUNNING:
            self.state = C.RunState.PAUSED

    def toggle(self) -> None:
        if self.state == C.RunState.RUNNING:
            self.pause()
        else:
            self.play()

    def step_once(self, steps: int) -> None:
        """Pause and advance ``steps`` timesteps (at least one)."""
        if self.state == C.RunState.ERROR:
            raise MjrigError("the run diverged: reset before stepping")
        self.state = C.RunState.PAUSED
        for _ in range(max(1, steps)):
            if not self.step():
                break

    def reset(self, *, recount: bool = False) -> None:
        """The state was reset: an ERROR run becomes paused, pacing starts again; ``recount``
        (a Reset to the start state) counts steps from 0 again."""
        self.error = None
        if recount:
            self.steps = 0
        if self.state == C.RunState.ERROR:
            self.state = C.RunState.PAUSED
        self.pacer.restart()

    def fail(self, message: str) -> None:
        """The run cannot go on (diverged): ERROR with ``message`` until reset."""
        self.state, self.error = C.RunState.ERROR, message

    def change_speed(self, direction: int) -> None:
        """One notch along ``C.SPEEDS`` (past the fastest: as fast as possible)."""
        ladder = [s for s in C.SPEEDS if s > 0]
        if self.speed <= 0:
            self.speed = ladder[-1] if direction < 0 else 0.0
            return
        i = min(range(len(ladder)), key=lambda k: abs(ladder[k] - self.speed))
        j = i + (1 if direction > 0 else -1)
        self.speed = 0.0 if j >= len(ladder) else ladder[max(0, j)]

    # --- stepping ------------------------------------------------------------------------------
    def step(self) -> bool:
        """One timestep; False when the run stopped (diverged)."""
        if not self._source().step():
            return False
        self.steps += 1
        return True

    def advance(self, *, budget_s: float) -> int:
        """While running, step until simulated time reaches the pacer's target or ``budget_s``
        of wall time is used (at "max" speed: the whole budget). Returns the steps taken."""
        if self.state != C.RunState.RUNNING:
            self.pacer.restart()
            return 0
        deadline = time.perf_counter() + budget_s
        target = self.pacer.target(self._sim_time())
        now = self._sim_time()
        if math.isfinite(target) and self._source().leap(min(target, now + LEAP_S * self.speed)):
            self.pacer.keep_up(self._sim_time())  # a replay: straight to the time due (a stall: on from here)
            return 1
        n = 0
        while self._sim_time() < target and time.perf_counter() < deadline:
            if not self.step():
                break
            n += 1
        self.pacer.keep_up(self._sim_time())
        return n

    def realtime_factor(self) -> float:
        """Simulated seconds per wall second over the last ~2 s of calls (for the panel)."""
        now, sim_t = time.perf_counter(), self._sim_time()
        if self._rtf_window and sim_t < self._rtf_window[-1][1]:
            self._rtf_window.clear()  # a Reset or a jump back: the factor starts again, not 0 for 2 s
        self._rtf_window.append((now, sim_t))
        (w0, s0), (w1, s1) = self._rtf_window[0], self._rtf_window[-1]
        if len(self._rtf_window) >= 2:
            self._rtf = (s1 - s0) / (w1 - w0) if w1 > w0 and s1 >= s0 else 0.0
        return self._rtf
