"""Progress bars of the headless CLI (tqdm on stderr), drawn only when stderr is a terminal.

Why ``ncols`` and ``nrows`` are always passed: tqdm (4.70) takes the terminal's reported size
minus one, and a terminal whose window size was never set (a fresh ``pty.openpty()``, some
``docker run -t`` and CI consoles) reports 0 x 0. tqdm then gets -1 columns and -1 rows; with
fewer rows than its position it draws no line at all and prints only the final newline -- the
"tqdm prints nothing on a pty" once seen here. A terminal that reports 0 gets 80 x 24 instead.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from tqdm import tqdm

from mjrig.runtime.bounds import human_duration

__all__ = [
    "SimulationBar",
    "EncodingBar",
    "SweepBar",
    "WorkBar",
    "say",
    "stderr_is_terminal",
    "human_duration",
    "CleanText",
    "clean_terminal",
]

_FALLBACK_SIZE = (80, 24)  # columns, lines
_B = TypeVar("_B", bound="_LineBar")


_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\n\r\t"}
"""Control characters (C0, DEL, C1) but line feed, carriage return (progress bars) and tab, each
written as its escape: a name or unit read from a file never moves the cursor or recolours a
terminal (``\x1b[31m`` shows as text)."""
_TABLE = str.maketrans({chr(c): e for c, e in _CONTROLS.items()})


class CleanText:
    """A text stream (stdout, stderr) that writes control characters as escapes (``_CONTROLS``);
    everything else is the stream's own (``fileno``, ``isatty``, ``flush``...)."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(text.translate(_TABLE))  # type: ignore[attr-defined]
        return len(text)

    def writelines(self, lines: object) -> None:
        for line in lines:  # type: ignore[attr-defined]
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def clean_terminal() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` ``CleanText`` (once; the ``mjrig`` command's first step)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, CleanText):
            setattr(sys, name, CleanText(stream))


def stderr_is_terminal() -> bool:
    """True when stderr is a terminal (bars are drawn), False when piped or redirected."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


def say(line: str) -> None:
    """Write ``line`` and a newline on stderr, above any bar being drawn (which is redrawn below)."""
    try:
        tqdm.write(line, file=sys.stderr)
    except (OSError, ValueError):  # stderr closed: nothing to tell
        pass


def _size() -> tuple[int, int]:
    """(columns, lines) of the terminal on stderr, each replaced by a fallback when reported as 0."""
    try:
        cols, lines = os.get_terminal_size(sys.stderr.fileno())
    except (AttributeError, ValueError, OSError):
        cols, lines = 0, 0
    return (cols if cols > 0 else _FALLBACK_SIZE[0]), (lines if lines > 0 else _FALLBACK_SIZE[1])


class _Bar(tqdm):
    """tqdm whose bar, left half-made by a stop (Ctrl+C, SIGTERM) inside its constructor, closes
    quietly: tqdm lists a bar before it sets its fields, and the half-made one's ``close`` (from
    ``__del__``, later) would print a traceback of a missing field (``pos``, ``start_t``)."""

    def __init__(self, desc: str, *, total: float, bar_format: str, delay: float = 0.0) -> None:
        """A bar on stderr as wide and tall as its terminal: ``total`` steps, drawn after ``delay`` (s)
        and at most every 0.1 s, left drawn when done."""
        cols, lines = _size()
        super().__init__(
            total=total,
            desc=desc,
            file=sys.stderr,
            ncols=cols,
            nrows=lines,
            bar_format=bar_format,
            mininterval=0.1,
            leave=True,
            dynamic_ncols=False,
            delay=delay,
        )
        self.made = True

    def close(self) -> None:
        if not vars(self).get("made"):  # stopped while being made: nothing to end
            self.disable = True
            return
        super().close()


def _bar(desc: str, *, total: float, bar_format: str, delay: float = 0.0) -> tqdm:
    return _Bar(desc, total=total, bar_format=bar_format, delay=delay)


class _LineBar:
    """What every bar shares: its tqdm line (``_bar``, None when not drawn) and its ending, also
    as a ``with`` block."""

    _bar: tqdm | None = None

    def close(self) -> None:
        """End the bar's line; safe twice."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self: _B) -> _B:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SimulationBar(_LineBar):
    """Progress of a headless run: simulated seconds done / ``total_s``.

    On a terminal, a bar with elapsed wall time and an ETA; reaching the total ends the line (so
    the video's encoding bar, drawn while the run closes its recorders, starts on a line of its
    own). Either way, once the speed has been measured (over the second ``measure_s`` of wall
    time, past the start-up) and the whole run would take over a minute, one line says how long. When stderr is not a terminal
    (a log file, a pipe, a job scheduler) and the run is still going after ``quiet_s`` of wall
    time, a progress line is written then, at every 10 % and at least once a minute, so a long run never
    looks hung; a short run stays quiet. Leaving the ``with`` block ends the bar's line.

    ``terminal`` (default: whether stderr is one), ``clock`` (seconds, monotonic) and ``write``
    (a line out) are there for tests.
    """

    def __init__(
        self,
        total_s: float,
        *,
        desc: str = "simulating",
        terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[str], None] | None = None,
        measure_s: float = 1.0,
        quiet_s: float = 5.0,
    ) -> None:
        self.total = float(total_s)
        terminal = stderr_is_terminal() if terminal is None else terminal
        self._bar = (
            _bar(
                desc,
                total=total_s,
                bar_format=(
                    "{desc} {percentage:3.0f}%|{bar}| {n:.2f}/{total:.2f} s simulated [{elapsed}, ETA {remaining}]"
                ),
            )
            if terminal
            else None
        )
        self._piped = not terminal
        self._clock, self._write = clock, write or say
        self._measure_s, self._quiet_s = measure_s, quiet_s
        self._t0 = clock()
        self._estimated = False
        self._mark: tuple[float, float] | None = None  # (wall s, simulated s) where the speed is measured from
        self._last_line = self._t0
        self._last_tenth = 0

    def update(self, seconds: float) -> None:
        """Show ``seconds`` of simulated time done (clamped to the total)."""
        seconds = min(seconds, self.total)
        if self._bar is not None:
            self._bar.update(seconds - self._bar.n)
            if seconds >= self.total:
                self.close()
        now = self._clock()
        elapsed = now - self._t0
        if not self._estimated and elapsed >= self._measure_s and seconds < self.total:
            # The speed over a second of steady running: the first second holds the start-up
            # (compiling, the video's first frame) and would make the run look far slower.
            if self._mark is None:
                self._mark = (now, seconds)
            elif now - self._mark[0] >= self._measure_s and seconds > self._mark[1]:
                self._estimated = True
                rate = (seconds - self._mark[1]) / (now - self._mark[0])
                self._report_estimate(elapsed + (self.total - seconds) / rate, rate)
        if self._piped and elapsed >= self._quiet_s and seconds < self.total:
            tenth = int(10 * seconds / self.total) if self.total > 0 else 10
            if tenth > self._last_tenth or now - self._last_line >= 60 or self._last_line == self._t0:
                self._last_tenth = max(tenth, self._last_tenth)
                self._last_line = now
                left = elapsed * (self.total - seconds) / seconds if seconds > 0 else math.inf
                self._write(
                    f"simulating: {100 * seconds / self.total:.0f}% ({seconds:.6g}/{self.total:g} s "
                    f"simulated, {human_duration(elapsed)} elapsed, about {human_duration(left)} left)"
                )

    def _report_estimate(self, whole: float, rate: float) -> None:
        """Say how long the whole run takes (s of wall time) when that is over a minute."""
        if whole > 60:
            self._write(
                f"mjrig: {self.total:g} s simulated will take about {human_duration(whole)} at the "
                f"measured speed ({rate:.3g} simulated s per s); Ctrl+C or SIGTERM stops it, "
                "keeping what was recorded"
            )


class EncodingBar(_LineBar):
    """A bar of frames encoded / captured, for ``VideoRecorder.on_progress`` (called as
    ``bar(frames_encoded, frames_captured)``); it ends its line once every frame is encoded.

    Drawn only when stderr is a terminal; ``close()`` (safe twice) ends it early, e.g. when
    encoding failed.
    """

    def __init__(self, *, desc: str = "encoding video") -> None:
        self.desc = desc
        self._bar: tqdm | None = None
        self._done = not stderr_is_terminal()

    def __call__(self, done: int, total: int) -> None:
        if self._done or total <= 0:
            return
        if self._bar is None:
            self._bar = _bar(
                self.desc,
                total=total,
                bar_format=("{desc} {percentage:3.0f}%|{bar}| {n}/{total} frames [{elapsed}, ETA {remaining}]"),
            )
        self._bar.total = max(total, done)
        self._bar.update(done - self._bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        """End the bar's line (no more drawing after it); safe twice."""
        self._done = True
        super().close()


class SweepBar(_LineBar):
    """A bar of trials done / ``total`` with an ETA and the pass/fail/diverged/error counts.

    ``start(total, done)`` opens it (trials already done from an earlier run count as done);
    ``update(row)`` takes each finished trial's results row. Drawn only when stderr is a terminal.
    """

    def __init__(self) -> None:
        self._bar: tqdm | None = None
        self.counts = {"pass": 0, "fail": 0, "diverged": 0, "error": 0}

    def start(self, total: int, done: int) -> None:
        if stderr_is_terminal() and self._bar is None:
            self._bar = _bar(
                "sweep",
                total=total,
                bar_format=(
                    "{desc} {percentage:3.0f}%|{bar}| {n}/{total} trials [{elapsed}, ETA {remaining}] {postfix}"
                ),
            )
            self._bar.update(done)

    def update(self, row: dict) -> None:
        status = row.get("status")
        if status in self.counts:
            self.counts[status] += 1
        if self._bar is not None:
            self._bar.set_postfix_str(" ".join(f"{k} {v}" for k, v in self.counts.items() if v), refresh=False)
            self._bar.update(1)


class StudyBar(SweepBar):
    """A sweep's bar for a study: trials done / ``total``, and the best objective so far."""

    def __init__(self, objective: str = "objective") -> None:
        super().__init__()
        self.objective = objective

    def start(self, total: int, done: int) -> None:
        if stderr_is_terminal() and self._bar is None:
            self._bar = _bar(
                "optimize",
                total=total,
                bar_format=(
                    "{desc} {percentage:3.0f}%|{bar}| {n}/{total} trials [{elapsed}, ETA {remaining}] {postfix}"
                ),
            )
            self._bar.update(done)

    def update(self, row: dict, best: dict | None = None) -> None:
        if self._bar is not None:
            if best is None:
                shown = "no feasible trial yet"
            elif "front" in best:  # several objectives
                shown = f"front {len(best['front'])} trials"
            else:
                shown = f"best {best['objective']:.6g} (trial {best['trial']})"
            self._bar.set_postfix_str(shown, refresh=False)
            self._bar.update(1)


class WorkBar(_LineBar):
    """A bar of parts done / all parts (rows exported, figures drawn), for work that may take a
    while: drawn on a terminal only once it has taken more than a second; call it as
    ``bar(done, total)``."""

    def __init__(self, desc: str, *, unit: str = "") -> None:
        self.desc, self.unit = desc, unit
        self._bar = None
        self._on = stderr_is_terminal()

    def __call__(self, done: int, total: int) -> None:
        if not self._on or total <= 0:
            return
        if self._bar is None:
            self._bar = _bar(
                self.desc,
                total=total,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {n}/{total}"
                + (f" {self.unit}" if self.unit else "")
                + " [{elapsed}, ETA {remaining}]",
                delay=1.0,
            )  # nothing drawn for work done within a second
        self._bar.total = max(total, done)
        self._bar.update(done - self._bar.n)
