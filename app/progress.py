"""Progress bars of the headless CLI (tqdm on stderr), drawn only when stderr is a terminal.

Why ``ncols`` and ``nrows`` are always passed: tqdm (4.70) takes the terminal's reported size
minus one, and a terminal whose window size was never set (a fresh ``pty.openpty()``, some
``docker run -t`` and CI consoles) reports 0 x 0. tqdm then gets -1 columns and -1 rows; with
fewer rows than its position it draws no line at all and prints only the final newline -- the
"tqdm prints nothing on a pty" once seen here. A terminal that reports 0 gets 80 x 24 instead.
"""
from __future__ import annotations

import os
import sys
from tqdm import tqdm

__all__ = ["SimulationBar", "EncodingBar", "SweepBar", "say", "stderr_is_terminal"]

_FALLBACK_SIZE = (80, 24)  # columns, lines


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


def _bar(desc: str, *, total: float, bar_format: str) -> tqdm:
    cols, lines = _size()
    return tqdm(total=total, desc=desc, file=sys.stderr, ncols=cols, nrows=lines, bar_format=bar_format,
                mininterval=0.1, leave=True, dynamic_ncols=False)


class SimulationBar:
    """A bar of simulated seconds done / ``total_s`` with elapsed wall time and an ETA.

    ``update(seconds)`` takes the simulated time reached (s); reaching the total ends the line
    (so the video's encoding bar, drawn while the run closes its recorders, starts on a line of
    its own). With stderr not a terminal nothing is drawn and every method does nothing. Leaving
    the ``with`` block ends the line, whatever stopped the run.
    """

    def __init__(self, total_s: float, *, desc: str = "simulating") -> None:
        self._bar = _bar(desc, total=total_s, bar_format=(
            "{desc} {percentage:3.0f}%|{bar}| {n:.2f}/{total:.2f} s simulated [{elapsed}, ETA {remaining}]"
        )) if stderr_is_terminal() else None

    def update(self, seconds: float) -> None:
        """Show ``seconds`` of simulated time done (clamped to the total)."""
        if self._bar is not None:
            self._bar.update(min(seconds, self._bar.total) - self._bar.n)
            if seconds >= self._bar.total:
                self.close()

    def close(self) -> None:
        """End the bar's line; safe twice."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> SimulationBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EncodingBar:
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
            self._bar = _bar(self.desc, total=total, bar_format=(
                "{desc} {percentage:3.0f}%|{bar}| {n}/{total} frames [{elapsed}, ETA {remaining}]"))
        self._bar.total = max(total, done)
        self._bar.update(done - self._bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        """End the bar's line; safe twice."""
        self._done = True
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class SweepBar:
    """A bar of trials done / ``total`` with an ETA and the pass/fail/diverged/error counts.

    ``start(total, done)`` opens it (trials already done from an earlier run count as done);
    ``update(row)`` takes each finished trial's results row. Drawn only when stderr is a terminal.
    """

    def __init__(self) -> None:
        self._bar: tqdm | None = None
        self.counts = {"pass": 0, "fail": 0, "diverged": 0, "error": 0}

    def start(self, total: int, done: int) -> None:
        if stderr_is_terminal() and self._bar is None:
            self._bar = _bar("sweep", total=total, bar_format=(
                "{desc} {percentage:3.0f}%|{bar}| {n}/{total} trials [{elapsed}, ETA {remaining}] {postfix}"))
            self._bar.update(done)

    def update(self, row: dict) -> None:
        status = row.get("status")
        if status in self.counts:
            self.counts[status] += 1
        if self._bar is not None:
            self._bar.set_postfix_str(" ".join(f"{k} {v}" for k, v in self.counts.items() if v), refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        """End the bar's line; safe twice."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> SweepBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
