"""A ceiling on the 3D view's frame rate where nothing else sets one.

MuJoCo's passive viewer draws in a loop of its own that waits for nothing but the display's
vertical sync. Where there is none — a software renderer (Mesa's llvmpipe), a virtual or remote
display (Xvfb, VNC) — it draws as fast as the CPU allows and takes a core or two from the
simulation and the panel (a bare ``launch_passive`` of one box: 1.9 of 2 cores under Xvfb). The
viewer's render loop takes the viewer's lock once per frame, so the simulation thread, which
takes that lock every frame anyway, sets the pace: it keeps the lock between its frames and lets
go of it once every ``1/fps`` s, when the viewer draws one frame of the state ``sync()`` gave it.

A turn is a turn only if the render thread gets there. It runs at the lowest priority (see
``viewer_adapter``), and on a machine whose cores are busy it may not wake within a fixed moment:
with the lock let go of for 3 ms only, a software-rendered view under two busy loops drew nothing
for tens of seconds (the state shown after a Reset, and the keys the viewer reads under its
lock, waited that long). Where the render thread's CPU clock can be read (``watch``), the lock
stays let go of until that clock has moved since the turn began — the thread ran, and it waits
for nothing but the lock — or a whole period has passed.

Threading: used by the simulation thread only (it alone takes and lets go of the lock).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["ViewHold", "TURN_S"]

TURN_S = 0.003
"""How long the lock is let go of on the view's turn before it is kept again, s: the viewer's render
thread, woken when the lock comes free, takes it within this and draws one frame (it draws
outside the lock; the next frame waits for the next turn)."""

POLL_S = 0.001
"""How often the render thread's CPU clock is looked at while its turn waits for it, s."""


class ViewHold:
    """The viewer's lock kept between the simulation thread's frames so that the view draws at
    most ``fps`` frames per (wall-clock) second; ``fps`` None: no ceiling (the lock is never kept)."""

    def __init__(self, fps: float | None) -> None:
        if fps is not None and not fps > 0:
            raise ValueError(f"the view's frame rate must be positive, got {fps!r}")
        self.period_s = 1.0 / fps if fps else 0.0
        self._kept: AbstractContextManager[Any] | None = None
        self._next_turn = 0.0
        self._clock: Callable[[], float] | None = None
        self._turn_began: float | None = None  # the render thread's CPU time when its turn began, s

    def watch(self, clock: Callable[[], float] | None) -> None:
        """Follow the viewer's render thread by ``clock``, its CPU time (s), so that a turn lasts
        until it has run (None: a fixed ``TURN_S``). A clock that raises ``OSError`` (the thread
        has ended) counts as moved."""
        self._clock = clock
        self._turn_began = None

    def _render_time(self) -> float | None:
        try:
            return self._clock() if self._clock is not None else None
        except OSError:
            return None

    @property
    def kept(self) -> bool:
        """Whether the lock is kept now (the viewer waits for it)."""
        return self._kept is not None

    def view_turn(self, *, now: float | None = None) -> bool:
        """Whether the view draws a frame now (at most once per period); when it does, the lock is
        let go of: the caller takes it as usual for this frame and syncs the viewer."""
        if not self.period_s:
            return True
        now = time.perf_counter() if now is None else now
        if now < self._next_turn:
            return False
        self._next_turn += self.period_s
        if self._next_turn <= now:  # late (a long frame): a period from now, no catching up
            self._next_turn = now + self.period_s
        self.release()
        self._turn_began = self._render_time()
        return True

    def wait(self, viewer: Any, seconds: float) -> None:
        """Sleep the rest of a frame, ``seconds`` (<= 0: none): with a ceiling, the viewer's lock
        is let go of first if this frame was the view's turn — for ``TURN_S``, and on until the
        render thread has run (``watch``) or a period has passed — then kept."""
        if self.period_s and viewer is not None:
            if self._kept is None:
                began = time.perf_counter()
                time.sleep(TURN_S)  # the view's turn, even after a frame that overran
                while self._waits_for_render() and time.perf_counter() - began < self.period_s:
                    time.sleep(POLL_S)
                seconds -= time.perf_counter() - began
                self._turn_began = None
                self.keep(viewer)
        if seconds > 0:
            time.sleep(seconds)

    def _waits_for_render(self) -> bool:
        """Whether this turn still waits for the render thread: its CPU clock has not moved since
        the turn began (False when it is not followed)."""
        if self._turn_began is None:
            return False
        now = self._render_time()
        return now is not None and now == self._turn_began

    def keep(self, viewer: Any) -> None:
        """Take the viewer's lock (``viewer.lock()``) if it is not kept already."""
        if self._kept is None:
            lock = viewer.lock()
            lock.__enter__()
            self._kept = lock

    def release(self) -> None:
        """Let go of the lock if it is kept (before anything that takes it: ``sync()``, a model
        going into the viewer, closing it)."""
        lock, self._kept = self._kept, None
        if lock is not None:
            lock.__exit__(None, None, None)
