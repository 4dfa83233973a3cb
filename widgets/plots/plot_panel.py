"""Live plot panel: a tree of telemetry signals to check, and one plot per unit of the checked ones
(each y axis labelled with its unit, the legend in its corner, time under the last one). The
mouse (``plot_mouse``): a click goes to that time, a drag or wheel zooms and pans a frozen view,
a double-click follows the run again.

The panel keeps its own bounded history of telemetry rows (``SignalHistory``), fed by
``add_rows`` whenever the session hands over row blocks, and draws the last ``window_s``
simulated seconds of the checked signals once per ``update``. Series are created when a signal
is checked, then refreshed with ``set_value``, decimated (min/max per bucket) to ``max_points``.
A compared recording (``PanelState.comparison.compared``) adds each checked signal's dashed twin in the same colour,
bench data (``PanelState.comparison.measured``) a dotted one per entry (``plot_overlay``). *Save plot...* calls
``on_save``, which draws ``traces()``.

This module holds the panel's state (what is checked, the filter, the span, paused, the marks) and
decides when to redraw and over which span; the plots' items are ``plot_stack``'s, the controls
above the plots and over the tree ``plot_controls``'s, the tree ``signal_tree``'s.
"""

from __future__ import annotations

from collections.abc import Callable

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig.commands import Command, MeasuredSignals, PanelState, PlotSignals
from mjrig.exports.plotting import Trace
from mjrig.runtime.telemetry.plot_history import SignalHistory, decimate_minmax, is_fill, is_new_model, split_signal
from mjrig.runtime.telemetry.units import DisplayUnits
from mjrig.widgets.plots.plot_controls import TICK_SHOWN_MAX, TREE_WIDTH, PlotControls
from mjrig.widgets.plots.plot_mouse import PlotMouse
from mjrig.widgets.plots.plot_overlay import BenchOverlay, Overlay, bench_overlays, bench_traces
from mjrig.widgets.plots.plot_stack import PlotStack
from mjrig.widgets.plots.signal_tree import SignalTree, matching

__all__ = ["PlotPanel", "SignalHistory", "decimate_minmax", "split_signal"]


class PlotPanel:
    """Signal tree + live plot of the checked signals over the last ``window_s`` simulated seconds.

    Options: ``window_s`` visible span (simulated s); ``history_rows`` rows kept for all columns
    (older ones are dropped); ``max_points`` points drawn per series at most.

    Threading: ``build``, ``update`` and ``add_rows`` run on the GUI thread. The setters
    (``set_checked``, ``set_filter``, ``set_window``, ``set_paused``, ``set_autofit``) may also be
    called from Dear PyGui's callback thread or the command API: they only record the request,
    and the next ``update`` applies it (at most one redraw per ``update``).
    """

    def __init__(
        self,
        *,
        window_s: float = 10.0,
        history_rows: int = 20000,
        max_points: int = 2000,
        below: int = 0,
        submit: Callable[[Command], None] | None = None,
    ) -> None:
        for what, value, least, e_g in (
            ("window_s", window_s, 0.0, "10.0"),
            ("history_rows", history_rows, 1, "20000"),
            ("max_points", max_points, 1, "2000"),
        ):
            if not value > least:
                raise ValueError(f"{what} must be > {least}, got {value!r} (e.g. {e_g})")
        self.history = SignalHistory(history_rows)  # the plotted signals' rows (the session sends those)
        self._submit = submit
        self._told: tuple[tuple[str, ...], float] | None = None  # the ticks and window the session knows
        self._window_s = float(window_s)
        self._max_points = int(max_points)
        self._signals: tuple[str, ...] = ()
        self._opened = 0  # the rig shown (PanelState.opened)
        self._checked: list[str] = []  # in check order: the legend follows it
        self._filter = ""
        self._paused = False
        self._frozen_end: float | None = None  # view end (s) while paused
        self._autofit = True
        self._tree_stale = True
        self._view_stale = True  # checks, window, pause, auto-fit changed
        self._data_stale = False  # rows arrived
        self._signal_tree = SignalTree(
            lambda _s, value, name: self.set_checked(name, bool(value)), is_checked=lambda n: n in self._checked
        )
        self._stack = PlotStack()  # the plots, their lines and marks
        self._overlay = Overlay()
        self._measured: MeasuredSignals | None = None  # the PanelState.comparison.measured drawn
        self._overlays: list[Overlay | BenchOverlay] = [self._overlay]  # the compared recording, then each bench entry
        self._tree: int | str | None = None
        self._plot_box: int | str | None = None
        self._box_height = 0  # px: the plots fill it again when it changes
        self._hint: int | str | None = None
        self._units: dict[str, str] = {}  # signal -> its SI unit
        self._shown = DisplayUnits()  # the units the plots show ([units])
        self._events: tuple[tuple[float, str], ...] = ()
        self._failures: tuple[tuple[str, float, float], ...] = ()  # (signal, t s, value) of failed requirements
        self._below = below  # pixels left under the plots (the timeline bar)
        self._cursor: float | None = None  # a past instant shown (s), marked on every plot
        self.on_time_click: Callable[[float], None] | None = None  # a plot clicked at a time (s)
        self._mouse = PlotMouse(
            on_time=lambda t: self.on_time_click and self.on_time_click(t),
            on_freeze=lambda: self.set_paused(True),  # a drag or wheel: ImPlot's
            on_follow=self._follow,  # double-click
        )
        self.on_save: Callable[[], None] | None = None  # Save plot... was clicked
        self._controls = PlotControls(
            on_window=self.set_window,
            on_autofit=self.set_autofit,
            on_pause=self.set_paused,
            on_save=lambda: self.on_save and self.on_save(),
            on_filter=self.set_filter,
            on_tick_shown=self.tick_shown,
            on_untick=self.untick_all,
        )

    # ---- public API -------------------------------------------------------------------------

    def build(self, parent: int | str) -> None:
        """Create the controls, the signal tree and the plot inside ``parent``."""
        self._mouse.build()
        with dpg.group(parent=parent):
            self._controls.build_row(window_s=self._window_s, autofit=self._autofit, paused=self._paused)
            with dpg.group(horizontal=True):
                with dpg.group():  # each child sized itself (a group's width would be every child's)
                    self._controls.build_filter(filter_text=self._filter)
                    self._tree = dpg.add_child_window(width=TREE_WIDTH, height=-1 - self._below)
                self._plot_box = dpg.add_child_window(width=-1, height=-1 - self._below, border=False)
                self._hint = dpg.add_text(
                    "tick signals in the tree to plot them; one plot per unit",
                    parent=self._plot_box,
                    color=(150, 150, 150),
                    wrap=0,
                )
        self._tree_stale = self._view_stale = True

    def update(self, snapshot: PanelState) -> None:
        """Follow the snapshot's signal list and redraw the plot if anything changed (once)."""
        if snapshot.opened != self._opened:
            # Another rig: its signals and rows replace the old ones (see ``add_rows``); a filter
            # typed for the old one would hide them with no hint why, a frozen view show old times.
            self._opened = snapshot.opened
            known = set(snapshot.signals)  # the rig's [plots] (CONTRACT 13), else what it shares with the last
            self._checked = [n for n in snapshot.plots or self._checked if n in known]
            if snapshot.plot_window is not None:
                self.set_window(snapshot.plot_window)
            self.set_filter("")
            self.set_paused(False)
            self._controls.clear_filter()
        if snapshot.events != self._events:
            self._events = snapshot.events
            self._view_stale = True
        failures = tuple(
            (r.signal, r.first_violation, r.violation_value)
            for r in snapshot.tools.requirements
            if r.first_violation is not None and r.violation_value is not None
        )
        if failures != self._failures:
            self._failures = failures
            self._view_stale = True
        if self._overlay.follow(snapshot.comparison.compared):
            self._view_stale = True
        if snapshot.comparison.measured is not self._measured:
            self._measured, self._view_stale = snapshot.comparison.measured, True
            self._overlays = [self._overlay, *bench_overlays(snapshot.comparison.measured)]
            self._stack.drop_twins()  # the entries' lines are made again
        if snapshot.tools.shown_units != self._shown:
            self._shown, self._view_stale = snapshot.tools.shown_units, True
        if snapshot.signals != self._signals:
            self._signals = tuple(snapshot.signals)
            self._units = dict(snapshot.units)
            self._tree_stale = True
        if self._tree is None or self._plot_box is None:  # not built yet (``build`` makes both)
            return
        if self._tree_stale:
            self._tree_stale = False
            self._rebuild_tree(self._tree)
        self._signal_tree.sync()
        self._mouse.poll(self._stack.plots)
        self._stack.follow_legends(self.values_at)
        if (box := dpg.get_item_rect_size(self._plot_box)[1]) != self._box_height:  # a splitter moved
            self._box_height, self._view_stale = box, True
        if self._submit is not None and (tuple(self._checked), self._window_s) != self._told:
            self._told = (tuple(self._checked), self._window_s)
            self._submit(PlotSignals(*self._told))
        if self._view_stale or (self._data_stale and not self._paused):
            self._view_stale = self._data_stale = False
            self._sync_series(self._plot_box)
            self._redraw()

    def add_rows(self, columns: list[str], block: np.ndarray) -> None:
        """Append telemetry rows: ``block`` is float64 rows x ``len(columns)``; columns 0 and 1 are
        ``time`` (simulated s) and ``wall_time``, then signals; NaN means no value. Cheap: the
        drawing happens in ``update``. A new-model mark (first column ``#new-model``,
        ``mjrig.session.plot_rows``) clears the plots; a fill block (``#fill``, then ``time``) adds
        the past values of signals just ticked to the rows kept."""
        if is_new_model(columns):
            self.history.clear()
        elif is_fill(columns):
            self.history.fill(columns[1:], block[:, 1:])
        else:
            self.history.append(columns, block)
        self._data_stale = True

    def checked(self) -> list[str]:
        """Names of the plotted signals, in the order they were checked."""
        return list(self._checked)

    def set_checked(self, name: str, on: bool) -> None:
        """Plot (``on``) or stop plotting signal ``name``; unknown names wait for their column."""
        if on and name not in self._checked:
            self._checked.append(name)
        elif not on and name in self._checked:
            self._checked.remove(name)
        self._view_stale = True

    def tick_shown(self) -> int:
        """Plot every signal the filter lets through (at most ``TICK_SHOWN_MAX`` of them, in the
        tree's order); returns how many are plotted now."""
        for name in matching(self._signals, self._filter)[:TICK_SHOWN_MAX]:
            if name not in self._checked:
                self._checked.append(name)
        self._view_stale = True
        return len(self._checked)

    def untick_all(self) -> None:
        """Plot no signal."""
        self._checked.clear()
        self._view_stale = True

    def set_filter(self, text: str) -> None:
        """Show only signals whose name contains every space-separated word of ``text`` (any case)."""
        self._filter = text
        self._tree_stale = True

    def set_window(self, seconds: float) -> None:
        """Visible span in simulated seconds (> 0)."""
        if not seconds > 0:
            raise ValueError(f"window must be > 0 s, got {seconds!r} (e.g. {self._window_s})")
        self._window_s = float(seconds)
        self._view_stale = True

    def set_paused(self, on: bool) -> None:
        """Freeze the view (rows still accumulate) so it can be zoomed and panned; unfreeze to follow."""
        if on and not self._paused:
            self._frozen_end = self.history.last_time()
        self._paused = on
        self._view_stale = True

    def _follow(self) -> None:
        """Follow the run again (a double-click on a plot): unfrozen, y fitted to the data."""
        self.set_paused(False)
        self.set_autofit(True)

    def set_autofit(self, on: bool) -> None:
        """Fit y to the visible data on every redraw; off leaves the y axis to the user."""
        self._autofit = on
        self._view_stale = True

    def series(self, name: str) -> int | str | None:
        """Dear PyGui id of the line series of checked signal ``name`` (None if not drawn)."""
        return self._stack.series.get(name)

    def checkbox(self, name: str) -> int | str | None:
        """Dear PyGui id of the tree checkbox of ``name`` (None if filtered out or unknown)."""
        return self._signal_tree.boxes.get(name)

    @property
    def tree(self) -> int | str | None:
        """Id of the child window holding the signal tree."""
        return self._tree

    @property
    def axes(self) -> tuple[int | str | None, int | str | None]:
        """Ids of the (x, y) axes of the plot of the first checked signal's unit."""
        if not self._checked or self._unit(self._checked[0]) not in self._stack.plots:
            return None, None
        _, x, y = self._stack.plots[self._unit(self._checked[0])]
        return x, y

    def plots(self) -> dict[str, int | str]:
        """Unit -> Dear PyGui id of its plot (one plot per unit of the checked signals)."""
        return {u: p for u, (p, _, _) in self._stack.plots.items()}

    def _unit(self, name: str) -> str:
        """The unit ``name`` is shown in (``[units]``; its SI unit without)."""
        return self._shown.convert(self._units.get(name, ""))[1]

    def _factor(self, name: str) -> float:
        """Shown value per SI value of ``name``."""
        return self._shown.convert(self._units.get(name, ""))[0]

    def traces(self) -> list[Trace]:
        """The plotted signals over the time span the plots show (s), every row kept (GUI thread)."""
        if not self._checked or not self._stack.plots:
            return []
        lo, hi = dpg.get_axis_limits(next(iter(self._stack.plots.values()))[1])
        t, values = self.history.window(lo, hi, list(self._checked))
        bench = bench_traces(self._overlays, self._checked, unit=self._unit, factor=self._factor)
        return [
            Trace(n, self._unit(n), t.copy(), values[:, j] * self._factor(n)) for j, n in enumerate(self._checked)
        ] + bench

    # ---- drawing ------------------------------------------------------------------------------

    def _rebuild_tree(self, tree: int | str) -> None:
        """Recreate in child window ``tree`` the tree of the signals the filter lets through."""
        self._signal_tree.show(tree, self._signals, filter_text=self._filter)

    def _sync_series(self, box: int | str) -> None:
        """The plots, lines and twins of the checked signals in child window ``box`` (``PlotStack``);
        the hint, the checkboxes and the controls mirror programmatic changes."""
        wanted = list(self._checked)
        self._stack.sync(box, wanted, unit=self._unit, overlays=self._overlays, handlers=self._mouse.handlers)
        if self._hint is not None:
            dpg.configure_item(self._hint, show=not wanted)
        self._signal_tree.mark(wanted)
        self._controls.show(window_s=self._window_s, autofit=self._autofit, paused=self._paused)

    def set_cursor(self, t: float | None) -> None:
        """Mark simulated time ``t`` (s) on every plot (None: no mark, the run is live)."""
        if t != self._cursor:
            self._cursor = t
            self._view_stale = True

    def values_at(self, t: float) -> list[tuple[str, float, list[tuple[str, float]], str]]:
        """Each checked signal's (name, value, [(tag, value)] of the compared recording (tag "")
        and of each bench entry (its name) that has it at ``t``, unit) at ``t`` (s), in the unit its
        plot shows, interpolated linearly between the samples around it (the plots keep 200 per s)."""
        names = list(self._checked)
        times, values = self.history.window(t - self._window_s, t + self._window_s, names)
        if not len(times):
            return []
        out = []
        for j, n in enumerate(names):
            k = self._factor(n)
            others = [(o.tag, v * k) for o in self._overlays if (v := o.value_at(n, t)) is not None]
            out.append((n, float(np.interp(t, times, values[:, j])) * k, others, self._unit(n).replace("*", "·")))
        return out

    def _redraw(self) -> None:
        """The visible span: it ends at the last row (at the instant frozen while paused; a past
        instant shown out of view is centred); every line refilled with it, decimated, each plot's
        marks and axes set (``PlotStack``)."""
        end = self._frozen_end if self._paused else self.history.last_time()
        if end is None:
            end = self.history.last_time()
        if end is None:
            self._stack.clear()
            return
        if not self._paused and self._cursor is not None and self._cursor < end - self._window_s:
            end = self._cursor + 0.5 * self._window_s  # a past instant out of view: centred
        t0 = max(end - self._window_s, self.history.first_time() or 0.0)  # nothing left of the first row
        t0 = t0 if t0 < end else end - self._window_s
        width = int(dpg.get_item_rect_size(self._plot_box)[0]) if self._plot_box is not None else 0
        points = min(self._max_points, max(200, 2 * width))  # a min and a max per pixel column
        span = (t0, end)
        bounds = self._stack.fill(self.history, span=span, points=points, overlays=self._overlays, factor=self._factor)
        self._stack.mark(
            span=span, events=self._events, failures=self._failures, cursor=self._cursor, factor=self._factor
        )
        self._stack.fit_axes(span=span, bounds=bounds, frozen=self._paused, autofit=self._autofit)
