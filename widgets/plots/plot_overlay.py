"""A compared recording on the live plots: its signals dashed, in the colour of the same signal's
own line (``mjrig RECORDING.parquet --compare OTHER.parquet``, or "Compare with..." in the panel).

``SeriesColors`` gives every plotted signal one colour of a fixed palette for as long as it is
plotted, as a Dear PyGui theme bound to both its lines. ``Overlay`` follows what the session
published of the compared recording (``PanelState.comparison.compared``: the session reads the file, off the
GUI thread) and samples a signal over the visible span with gaps cut in, which ImPlot draws as a
dashed line (a NaN breaks a line series), so the dashes keep their length on screen whatever the
span.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig.commands import ComparedSignals, MeasuredSignals
from mjrig.exports.plotting import Trace
from mjrig.widgets.kit.themes import PLOT_INPUT

__all__ = [
    "readable_range",
    "SeriesColors",
    "MarkThemes",
    "Overlay",
    "BenchOverlay",
    "bench_overlays",
    "bench_traces",
    "UnitPlot",
    "unit_plot",
    "PALETTE",
    "EVENT_COLOR",
    "CURSOR_COLOR",
    "dashed",
    "tint",
    "entry_style",
    "twin_label",
    "add_twins",
    "GROUP_AT",
    "SHADES",
    "DASHES",
]

PALETTE: tuple[tuple[int, int, int], ...] = (
    (76, 114, 176),
    (221, 132, 82),
    (85, 168, 104),
    (196, 78, 82),
    (129, 114, 179),
    (147, 120, 96),
    (218, 139, 195),
    (140, 140, 140),
    (204, 185, 116),
    (100, 181, 205),
)
"""Line colours (RGB 0..255), given out in this order (seaborn's "deep")."""

EVENT_COLOR = (255, 196, 64, 255)
"""Threshold crossings: thin amber lines across a plot, a colour no signal gets."""
CURSOR_COLOR = (230, 230, 230, 170)
"""The timeline's cursor on the plots."""


def tint(rgb: tuple[int, int, int], *, toward_white: float = 0.55) -> tuple[int, int, int]:
    """``rgb`` mixed with white: a compared recording's lines (and legend swatch) in a paler shade
    of the same signal's colour, so the pair reads as one signal, two runs."""
    return tuple(round(c + (255 - c) * toward_white) for c in rgb)  # type: ignore[return-value]


SHADES = (0.55, 0.35, 0.75, 0.9)
"""How far toward white a twin line's colour goes (``tint``): the compared recording's and the
first bench entry's the first, the next entries' the others in turn."""
DASHES = ((2, 1), (6, 3), (1, 2), (10, 2), (3, 3))
"""(on, off) samples of each bench entry's line, by entry after ``SHADES``: with the shades, 20
entries of one signal are drawn 20 ways."""


def entry_style(index: int) -> tuple[int, tuple[int, int]]:
    """The shade (index into ``SHADES``) and the dash pattern of the ``index``-th bench entry (0..)."""
    return index % len(SHADES), DASHES[(index // len(SHADES)) % len(DASHES)]


SAMPLES = 600
"""Points per compared signal over the visible span."""


def dashed(times: np.ndarray, values: np.ndarray, *, on: int = 9, off: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """``values`` with every ``on`` samples followed by ``off`` NaN ones: a dashed line."""
    cut = (np.arange(values.size) % (on + off)) >= on
    out = values.astype(float, copy=True)
    out[cut] = np.nan
    return times, out


class SeriesColors:
    """One palette colour per plotted signal (the lowest one free), as a line-series theme."""

    def __init__(self) -> None:
        self._of: dict[str, int] = {}
        self._themes: dict[tuple[int, bool, int], int | str] = {}

    def theme(self, name: str, *, twin: bool = False, shade: int = 0) -> int | str:
        """The theme of signal ``name``'s line (given a colour on first use); ``twin``: of a
        compared recording's or a bench entry's line, in a paler shade (``tint``) and thinner;
        ``shade`` (0..) picks one of ``SHADES`` for it, so that bench entries differ."""
        if name not in self._of:
            used = set(self._of.values())
            self._of[name] = next(i for i in range(len(PALETTE) + len(used) + 1) if i not in used)
        key = (self._of[name], twin, shade % len(SHADES) if twin else 0)
        if key not in self._themes:
            rgb = PALETTE[key[0] % len(PALETTE)]
            colour = tint(rgb, toward_white=SHADES[key[2]]) if twin else rgb
            with dpg.theme() as theme, dpg.theme_component(dpg.mvLineSeries):
                dpg.add_theme_color(dpg.mvPlotCol_Line, colour, category=dpg.mvThemeCat_Plots)
                dpg.add_theme_style(dpg.mvPlotStyleVar_LineWeight, 1.0 if twin else 1.6, category=dpg.mvThemeCat_Plots)
            self._themes[key] = theme
        return self._themes[key]

    def release(self, name: str) -> None:
        """``name`` is no longer plotted: its colour is free again."""
        self._of.pop(name, None)


class MarkThemes:
    """Themes of the marks on the plots, made once each: thin vertical lines (threshold
    crossings, the cursor) and a failed requirement's red point."""

    def __init__(self) -> None:
        self._lines: dict[tuple[int, ...], int | str] = {}
        self._failed: int | str | None = None

    def line(self, rgba: tuple[int, ...]) -> int | str:
        """A thin vertical line in ``rgba``."""
        if rgba not in self._lines:
            with dpg.theme() as theme, dpg.theme_component(dpg.mvInfLineSeries):
                dpg.add_theme_color(dpg.mvPlotCol_Line, rgba, category=dpg.mvThemeCat_Plots)
                dpg.add_theme_style(dpg.mvPlotStyleVar_LineWeight, 1.0, category=dpg.mvThemeCat_Plots)
            self._lines[rgba] = theme
        return self._lines[rgba]

    def failed(self) -> int | str:
        """Red filled markers."""
        if self._failed is None:
            with dpg.theme() as theme, dpg.theme_component(dpg.mvScatterSeries):
                dpg.add_theme_color(dpg.mvPlotCol_MarkerFill, (235, 70, 70), category=dpg.mvThemeCat_Plots)
                dpg.add_theme_color(dpg.mvPlotCol_MarkerOutline, (235, 70, 70), category=dpg.mvThemeCat_Plots)
                dpg.add_theme_style(dpg.mvPlotStyleVar_MarkerSize, 5, category=dpg.mvThemeCat_Plots)
            self._failed = theme
        return self._failed


class Overlay:
    """The compared recording's plotted signals as published; ``sample`` gives a dashed signal."""

    def __init__(self) -> None:
        self.compared = ComparedSignals()
        self._key: tuple[str, tuple[str, ...]] = ("", ())

    def follow(self, compared: ComparedSignals) -> bool:
        """Draw ``compared`` from now on; True when it is another file or other signals (a panel
        in its own process gets a copy with every snapshot: the same file and signals are no change)."""
        self.compared = compared
        key = (compared.path, tuple(compared.values))
        if key == self._key:
            return False
        self._key = key
        return True

    @property
    def label(self) -> str:
        """What the legend appends to a compared signal's name."""
        return Path(self.compared.path).stem if self.compared.path else ""

    def has(self, name: str) -> bool:
        """Whether the compared recording's signal ``name`` is here (it has it, and it is plotted)."""
        return self.compared.has(name)

    def sample(self, name: str, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """Signal ``name`` of the compared recording over ``t0``..``t1`` (s), dashed; NaN where
        it has no rows."""
        times = np.linspace(t0, t1, SAMPLES)
        return dashed(times, self.compared.at(name, times))

    tag = ""
    """What the timeline's readout names its values by: nothing (they follow in brackets)."""
    shade = 0
    """Its lines' shade (``SHADES``): the first, as the first bench entry's (drawn dashed, not dotted)."""

    def value_at(self, name: str, t: float) -> float | None:
        """Signal ``name`` of the compared recording at ``t`` (s), or None (no comparison, no
        such signal, or outside its rows)."""
        if not self.has(name):
            return None
        v = float(self.compared.at(name, np.array([t]))[0])
        return v if np.isfinite(v) else None


class BenchOverlay:
    """One ``[[measured]]`` entry on the live plots: each signal it measures dotted beside the
    signal's own line, in its colour (the bench's samples in the span, a short dash each)."""

    def __init__(self, entry: str, series: dict[str, tuple[np.ndarray, np.ndarray]], *, index: int = 0) -> None:
        self.entry, self._series = entry, series
        self.shade, self._dash = entry_style(index)

    tag = property(lambda self: self.entry, doc="What the timeline's readout names its values by: the entry.")

    @property
    def label(self) -> str:
        return f"{self.entry}, measured"

    def has(self, name: str) -> bool:
        return name in self._series

    def series(self, name: str, factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """Every sample of ``name``: (times s, values x ``factor``: the unit shown)."""
        t, x = self._series[name]
        return t.copy(), x * factor

    def value_at(self, name: str, t: float) -> float | None:
        """The entry's ``name`` at ``t`` (s) (SI), interpolated linearly between its samples;
        None where it has no such signal or ``t`` is outside its samples."""
        if name not in self._series:
            return None
        times, x = self._series[name]
        if not times.size or not times[0] <= t <= times[-1]:
            return None
        v = float(np.interp(t, times, x))
        return v if np.isfinite(v) else None

    def sample(self, name: str, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """The entry's samples of ``name`` within ``t0``..``t1`` (s), thinned to ``SAMPLES``, cut
        into the entry's dashes (the first entry's: a short dash from every third sample to the
        next, so the bench reads dotted)."""
        t, x = self._series[name]
        a, b = np.searchsorted(t, [t0, t1])
        t, x = t[a:b], x[a:b]
        step = max(1, -(-t.size // SAMPLES))
        t, x = t[::step], x[::step]
        on, off = self._dash
        return dashed(t, x, on=on, off=off)


GROUP_AT = 4
"""More bench entries than this measuring one signal are listed in its legend as one group."""


def twin_label(name: str, overlays: Sequence[Overlay | BenchOverlay], k: int) -> str:
    """The legend's name of ``overlays[k]``'s line of signal ``name``: the compared recording's
    ("x (B, dashed)") or a bench entry's ("x (b03, measured)"); where more than ``GROUP_AT`` entries
    measure the signal, one name for them all on the first one's line ("x (20 measured)"; the
    timeline's readout names each) and a hidden one ("##...") on the others', so that the legend lists
    them as one and keeps to its plot."""
    short = name.split("/", 1)[-1]
    over = overlays[k]
    if not isinstance(over, BenchOverlay):
        return f"{short} ({over.label}, dashed)"
    group = [o.entry for o in overlays if isinstance(o, BenchOverlay) and o.has(name)]
    if len(group) <= GROUP_AT:
        return f"{short} ({over.label})"
    if over.entry != group[0]:
        return f"##{short} ({over.label})"
    return f"{short} ({len(group)} measured)"  # short: a narrow plot's legend has ~200 px


def add_twins(
    name: str,
    overlays: Sequence[Overlay | BenchOverlay],
    twins: dict[tuple[int, str], int | str],
    *,
    y_axis: int | str,
    colors: SeriesColors,
) -> None:
    """Give signal ``name`` a line on ``y_axis`` for each of ``overlays`` that has it and has none
    yet (kept in ``twins`` by (overlay index, name)): named for the legend (``twin_label``), drawn
    in its own shade of the signal's colour."""
    for k, over in enumerate(overlays):
        if (k, name) not in twins and over.has(name):
            twins[(k, name)] = dpg.add_line_series([], [], label=twin_label(name, overlays, k), parent=y_axis)
            dpg.bind_item_theme(twins[(k, name)], colors.theme(name, twin=True, shade=over.shade))


def bench_overlays(measured: MeasuredSignals) -> list[BenchOverlay]:
    """One ``BenchOverlay`` per measured entry, each drawn its own way (``entry_style``)."""
    return [BenchOverlay(e, measured.of(e), index=i) for i, e in enumerate(measured.entries())]


def bench_traces(
    overlays: Sequence[Overlay | BenchOverlay],
    names: Sequence[str],
    *,
    unit: Callable[[str], str],
    factor: Callable[[str], float],
) -> list[Trace]:
    """Every sample each bench entry of ``overlays`` has of each of ``names``, for a saved plot:
    time (s), values in the unit shown (``unit(name)``; ``factor(name)`` of it per SI unit),
    named by its entry (``source``) and drawn dotted (``measured``)."""
    return [
        Trace(n, unit(n), *over.series(n, factor(n)), source=over.entry, measured=True)
        for over in overlays
        if isinstance(over, BenchOverlay)
        for n in names
        if over.has(n)
    ]


class UnitPlot(NamedTuple):
    """Dear PyGui ids of one unit's plot: the plot, its axes and its marks' series."""

    plot: int | str
    x: int | str
    y: int | str
    events: int | str  # threshold crossings: vertical lines
    failed: int | str  # failed requirements' first violations: red points
    cursor: int | str  # the timeline's cursor: a vertical line
    legend: int | str  # laid out by ``plot_legend.PlotLegends``


def readable_range(lo: float, hi: float) -> tuple[float, float]:
    """The y range to show data from ``lo`` to ``hi``: 5 % padding, and at least a thousandth of
    the values' size (a whole unit around zero), so a steady signal (a spring at rest, float noise
    in the last digits) gets distinct tick labels instead of an empty box labelled
    ``-0.1 -0.1 -0.1``."""
    least = 1e-3 * max(abs(lo), abs(hi)) or 1.0
    if hi - lo < least:
        mid = 0.5 * (lo + hi)
        lo, hi = mid - 0.5 * least, mid + 0.5 * least
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


def unit_plot(parent: int | str, label: str, *, marks: MarkThemes, handlers: int | str) -> UnitPlot:
    """A plot for the signals shown in unit ``label`` in ``parent``: the legend inside its top
    right corner (outside, it took a laptop-sized plot's whole height), time on x, ``label`` on
    y, the marks' series, and the item handler registry ``handlers`` (clicks) bound to it."""
    with dpg.plot(label=label or "(no unit)", no_title=True, width=-1, height=160, parent=parent, **PLOT_INPUT) as plot:
        legend = dpg.add_plot_legend(location=dpg.mvPlot_Location_NorthEast, horizontal=True)
        x = dpg.add_plot_axis(dpg.mvXAxis, label="time (s)")
        y = dpg.add_plot_axis(dpg.mvYAxis, label=label or "(no unit)")
        events = dpg.add_inf_line_series([], label="##events", parent=y)
        dpg.bind_item_theme(events, marks.line(EVENT_COLOR))
        failed = dpg.add_scatter_series([], [], label="##failed", parent=y)
        dpg.bind_item_theme(failed, marks.failed())
        cursor = dpg.add_inf_line_series([], label="##cursor", parent=y)
        dpg.bind_item_theme(cursor, marks.line(CURSOR_COLOR))
    dpg.bind_item_handler_registry(plot, handlers)
    return UnitPlot(plot, x, y, events, failed, cursor, legend)
