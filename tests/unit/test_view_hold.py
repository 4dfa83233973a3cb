"""The 3D view's frame-rate ceiling (``--view-fps``): the simulation thread keeps the viewer's lock
between its frames and lets go of it once per period, so a render loop that takes the lock once a
frame draws at most that often."""

from __future__ import annotations

import threading
import time

import pytest

from mjrig.desktop.view_hold import ViewHold

pytestmark = pytest.mark.unit

FRAME_S = 1.0 / 60.0


class FakeViewer:
    """A viewer whose render thread takes the lock once a frame, as MuJoCo's does, and then draws
    outside it for ``draw_s``."""

    def __init__(self, draw_s: float) -> None:
        self._lock = threading.Lock()
        self.frames = 0
        self.draw_s = draw_s
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._render_loop, daemon=True)

    def lock(self) -> threading.Lock:
        return self._lock

    def _render_loop(self) -> None:
        while not self.stop.is_set():
            with self._lock:
                self.frames += 1
            time.sleep(self.draw_s)


def _simulate(hold: ViewHold, viewer: FakeViewer, seconds: float) -> int:
    """The simulation thread's loop (``SimThread._run``/``_frame``) for ``seconds``: each 60 Hz frame
    works under the lock (kept, or taken for the view's turn), then waits; the view's frames."""
    viewer.thread.start()
    end = time.perf_counter() + seconds
    try:
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            if hold.view_turn():
                hold.release()
                with viewer.lock():
                    pass  # the frame's work, then sync() (which takes the lock too)
                with viewer.lock():
                    pass
            else:
                hold.keep(viewer)
            hold.wait(viewer, FRAME_S - (time.perf_counter() - t0))
    finally:
        hold.release()
        viewer.stop.set()
        viewer.thread.join(2)
    return viewer.frames


def test_without_a_ceiling_the_lock_is_never_kept():
    hold = ViewHold(None)
    viewer = FakeViewer(0.0)
    assert hold.view_turn() and hold.view_turn()  # every frame is the view's turn
    hold.wait(viewer, 0.0)
    assert not hold.kept and not viewer.lock().locked()


def test_turns_come_once_a_period_without_catching_up():
    hold = ViewHold(10.0)  # a turn every 0.1 s
    frames = [i * FRAME_S for i in range(60)]  # one second of 60 Hz frames
    turns = [t for t in frames if hold.view_turn(now=t)]
    assert len(turns) == 10
    assert all(0.1 - FRAME_S < b - a < 0.1 + FRAME_S for a, b in zip(turns, turns[1:]))
    # a frame that overran by a second gives one turn, then the next a period later
    assert hold.view_turn(now=3.0) and not hold.view_turn(now=3.05) and hold.view_turn(now=3.1 + 1e-9)


def test_a_render_loop_draws_about_as_often_as_the_ceiling_says():
    """Threads and sleeps for 1.6 s (the render loop against the simulation's 60 Hz loop)."""
    capped = _simulate(ViewHold(10.0), FakeViewer(0.005), 0.8)
    free = _simulate(ViewHold(None), FakeViewer(0.005), 0.8)
    # 8 or 9 turns in 0.8 s: a frame each (a late wake-up of the render loop skips one, of the
    # simulation's loop lets a second one in); without the ceiling it draws every 5 ms or so
    assert 2 <= capped <= 18
    assert free > 3 * capped


class LateViewer(FakeViewer):
    """A render thread slow to wake, as a lowest-priority thread on busy cores is: it looks for the
    lock only every ``wake_s`` and takes it when it is free then. Its clock (its CPU time) moves
    only when it runs: here, when it has taken the lock."""

    def __init__(self, wake_s: float) -> None:
        super().__init__(0.0)
        self.wake_s = wake_s

    def clock(self) -> float:
        return float(self.frames)

    def _render_loop(self) -> None:
        while not self.stop.is_set():
            if self._lock.acquire(blocking=False):
                self.frames += 1
                self._lock.release()
            time.sleep(self.wake_s)


def test_a_turn_waits_for_a_render_thread_slow_to_wake():
    """Threads and sleeps for 1.6 s. A render thread that comes by every 20 ms misses a 3 ms turn
    most of the time (it drew nothing for tens of seconds on a busy machine); followed by its
    clock, every turn is taken."""
    fixed = _simulate(ViewHold(10.0), LateViewer(0.02), 0.8)
    hold, viewer = ViewHold(10.0), LateViewer(0.02)
    hold.watch(viewer.clock)
    followed = _simulate(hold, viewer, 0.8)
    # 8 or 9 turns in 0.8 s, each a frame when followed (a loaded machine may drop one or two);
    # the fixed turn gets one or two of them on an idle machine
    assert followed >= 5 and followed >= fixed, (fixed, followed)


def test_a_clock_that_stops_or_fails_never_holds_a_turn_past_its_period():
    hold = ViewHold(10.0)
    viewer = FakeViewer(0.0)
    for clock in (lambda: 1.0, _gone):
        hold.watch(clock)
        assert hold.view_turn()
        t0 = time.perf_counter()
        hold.wait(viewer, 0.0)
        assert time.perf_counter() - t0 < 0.1 + 0.05 and hold.kept
        hold.release()
        time.sleep(0.1)


def _gone() -> float:
    raise OSError("the thread has ended")


def test_a_bad_ceiling_is_refused():
    for bad in (0.0, -5.0, float("nan")):
        with pytest.raises(ValueError, match="frame rate"):
            ViewHold(bad)
