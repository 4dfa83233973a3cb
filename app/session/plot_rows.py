"""The rows a session hands to the live plots, across threads.

``PlotFeed`` keeps a short history of every signal (``SignalHistory`` with a budget of values:
a model of thousands of signals keeps seconds of them, a small one its whole ``PLOT_ROWS``) and
hands the panel only the plotted signals' columns (``time``, ``wall_time`` and those). When a
signal is ticked, the feed sends what it kept of it as a *fill* block (first column ``FILL``),
which the panel adds to the rows it already has. So a panel's history and the queue between the
threads cost what is plotted, not what the model has. A replay keeps nothing of its signals here:
``history_from`` names where a signal's whole history comes from (its recording, read when the
signal is ticked), so a 16,000-column recording is not read whole to be plotted.

``RowQueue`` is a bounded queue of telemetry blocks (columns, rows x columns float64): the newest ``limit`` rows
are kept, older blocks drop out. When a model is opened the session puts a *new-model mark* in
the queue (a block of no rows whose first column is ``NEW_MODEL`` and second the model's path),
so a panel clears its plots exactly between the old model's rows and the new one's, whatever
its snapshot says at that moment. A mark is never dropped.

Threading: any thread (one lock).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from mjrig import commands as C
from mjrig.runtime.telemetry.plot_history import FILL, NEW_MODEL, HistoryFetch, SignalHistory, is_fill, is_new_model
from mjrig.scenario.plots import PlotSettings, plots_table
from mjrig.session.feature import Feature, Handler

__all__ = ["RowQueue", "PlotFeed", "HistoryFetch", "NEW_MODEL", "FILL", "is_new_model", "is_fill"]

BUDGET = 24_000_000
"""Values (float64, 192 MB) the feed keeps of every signal: ``PLOT_ROWS`` rows up to 1,200 signals."""


class RowQueue:
    """Blocks of plot rows, oldest first; at most ``limit`` rows (marks are kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._blocks: collections.deque[tuple[list[str], np.ndarray]] = collections.deque()
        self._count = 0
        self._lock = threading.Lock()

    def push(self, columns: list[str], block: np.ndarray) -> None:
        """Add a block; drop the oldest ones beyond ``limit`` rows."""
        with self._lock:
            self._blocks.append((columns, block))
            self._count += len(block)
            kept: list[tuple[list[str], np.ndarray]] = []
            while self._count > self.limit and len(self._blocks) > 1:
                cols, old = self._blocks.popleft()
                self._count -= len(old)
                if is_new_model(cols):
                    kept.append((cols, old))
            self._blocks.extendleft(reversed(kept[-1:]))  # the latest mark dropped still says it

    def mark_new_model(self, path: str) -> None:
        """Say that the rows from now on are of a newly opened model (at ``path``)."""
        self.push([NEW_MODEL, path], np.empty((0, 2)))

    def drain(self) -> list[tuple[list[str], np.ndarray]]:
        """Every block since the last call, oldest first."""
        with self._lock:
            out = list(self._blocks)
            self._blocks.clear()
            self._count = 0
        return out


class PlotFeed(Feature):
    """Every signal's recent rows kept here; the plotted ones queued for the panel (see the
    module). Also what the plots show for the document: the rig's ``[plots]`` at opening
    (``at_opening``), and the signals and window plotted now, which a saved scenario keeps. A
    feature of the session: it carries out ``PlotSignals``.

    Threading: ``drain`` on any thread; the rest on the session's.
    """

    def __init__(self, limit: int, *, budget: int = BUDGET) -> None:
        self.queue = RowQueue(limit)
        self.kept = SignalHistory(limit, budget=budget)
        self._plotted: dict[str, None] = {}
        self._names: tuple[list[str] | None, int, tuple[str, ...]] = (None, 0, ())
        self._window: float | None = None
        self._pick: tuple[tuple[int, str] | None, list[int], list[str]] = (None, [], [])  # the columns handed on
        self.at_opening = PlotSettings()
        """The rig's ``[plots]``: what the panel ticks when the rig opens."""
        self._fetch: HistoryFetch | None = None  # where the history of a signal not kept comes from

    def rig_plots(self, plots: PlotSettings, *, columns: list[str], log: Callable[[str, str], None] | None) -> None:
        """A rig was built with ``plots`` (its ``[plots]``); ``log``: a newly opened one, whose
        names missing from ``columns`` are said (a reload says nothing again)."""
        self.at_opening = plots
        if log is None:
            return
        for name in [n for n in plots.signals if n not in columns]:
            log("warning", f"[plots] signals: this rig has no signal '{name}'")

    def handlers(self) -> dict[type[C.Command], Handler]:
        return {C.PlotSignals: self.show}

    def show(self, cmd: Any) -> None:
        """``PlotSignals``: the panel plots ``cmd.names`` over ``cmd.window`` s now."""
        self.plot(cmd.names)
        self._window = cmd.window

    def into(self, doc: dict[str, Any]) -> None:
        """Write what is plotted into ``doc`` as its ``[plots]`` (a rig being saved)."""
        if self._plotted or "plots" in doc:
            doc["plots"] = plots_table(tuple(self._plotted), self._window)

    @property
    def plotted(self) -> tuple[str, ...]:
        """The signals the panel plots (``plot``)."""
        return tuple(self._plotted)

    def names(self, columns: list[str]) -> tuple[str, ...]:
        """The signals of ``columns`` (after ``time`` and ``wall_time``; a list that only grows) as a
        tuple that stays the same object until a column is added: the panel looks at thousands of
        names only when they changed."""
        if self._names[0] is not columns or self._names[1] != len(columns):
            self._names = (columns, len(columns), tuple(columns[2:]))
        return self._names[2]

    def values(self, signal: str) -> tuple[np.ndarray, np.ndarray]:
        """What is kept of ``signal``: times (s) and values, oldest first (empty if none)."""
        if signal not in self.kept.columns and self._fetch is not None:
            found, t, v = self._fetch([signal])
            return (t, v[:, 0]) if found else (np.empty(0), np.empty(0))
        t, v = self.kept.window(-np.inf, np.inf, [signal])
        return t, v[:, 0]

    def push(self, columns: list[str], block: np.ndarray) -> None:
        """Keep a block of every signal; queue its ``time``, ``wall_time`` and plotted columns."""
        self.kept.append(columns, block)
        key, pick, names = self._pick
        if key != (len(columns), columns[-1]) or any(columns[j] != n for j, n in zip(pick, names)):
            # other columns (or other ticks: ``plot``): look through every name once, not at every block
            pick = [j for j, name in enumerate(columns) if name in ("time", "wall_time") or name in self._plotted]
            names = [columns[j] for j in pick]
            self._pick = ((len(columns), columns[-1]), pick, names)
        self.queue.push(list(names), block[:, pick])

    def mark_new_model(self, path: str) -> None:
        """A newly opened model: forget every kept row and where histories came from, and tell the
        panel (``RowQueue``)."""
        self.kept.clear()
        self._fetch = None
        self.queue.mark_new_model(path)

    def history_from(self, fetch: HistoryFetch) -> None:
        """The history of a signal not kept here comes from ``fetch`` until another model opens
        (a replay: its recording); the signals plotted now are filled from it at once."""
        self._fetch = fetch
        self._fill(list(self._plotted))

    def plot(self, names: tuple[str, ...] | list[str]) -> None:
        """The panel plots ``names`` now: queue what is kept (or fetched) of those just ticked (a
        fill block)."""
        new = [n for n in names if n not in self._plotted]
        self._plotted = dict.fromkeys(names)
        self._pick = (None, [], [])
        self._fill(new)

    def _fill(self, names: list[str]) -> None:
        kept = [n for n in names if n in self.kept.columns]
        if kept and len(self.kept):
            t, values = self.kept.window(-np.inf, np.inf, kept)
            self.queue.push([FILL, "time", *kept], np.column_stack((np.full(len(t), np.nan), t, values)))
        other = [n for n in names if n not in self.kept.columns]
        if other and self._fetch is not None:
            found, t, values = self._fetch(other)
            if found:
                self.queue.push([FILL, "time", *found], np.column_stack((np.full(len(t), np.nan), t, values)))

    def drain(self) -> list[tuple[list[str], np.ndarray]]:
        """Every queued block since the last call, oldest first."""
        return self.queue.drain()
