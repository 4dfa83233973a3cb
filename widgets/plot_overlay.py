"""A compared recording on the live plots: its signals dashed, in the colour of the same signal's
own line (``mjrig RECORDING.parquet --compare OTHER.parquet``, or "Compare with..." in the panel).

``SeriesColors`` gives every plotted signal one colour of a fixed palette for as long as it is
plotted, as a Dear PyGui theme bound to both its lines. ``Overlay`` reads the compared recording
(on the GUI thread, once per file) and samples a signal over the visible span with gaps cut in,
which ImPlot draws as a dashed line (a NaN breaks a line series), so the dashes keep their
length on screen whatever the span.
"""
from __future__ import annotations

from pathlib import Path

import dearpygui.dearpygui as dpg
import numpy as np

from mjrig.replay import Comparison, read_recording
from mjrig.runtime.errors import ConfigError

__all__ = ["SeriesColors", "Overlay", "PALETTE", "dashed"]

PALETTE: tuple[tuple[int, int, int], ...] = (
    (76, 114, 176), (221, 132, 82), (85, 168, 104), (196, 78, 82), (129, 114, 179),
    (147, 120, 96), (218, 139, 195), (140, 140, 140), (204, 185, 116), (100, 181, 205),
)
"""Line colours (RGB 0..255), given out in this order (seaborn's "deep")."""

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
        self._themes: dict[int, int | str] = {}

    def theme(self, name: str) -> int | str:
        """The theme of signal ``name``'s lines (given a colour on first use)."""
        if name not in self._of:
            used = set(self._of.values())
            self._of[name] = next(i for i in range(len(PALETTE) + len(used) + 1) if i not in used)
        i = self._of[name]
        if i not in self._themes:
            with dpg.theme() as theme, dpg.theme_component(dpg.mvLineSeries):
                dpg.add_theme_color(dpg.mvPlotCol_Line, PALETTE[i % len(PALETTE)], category=dpg.mvThemeCat_Plots)
            self._themes[i] = theme
        return self._themes[i]

    def release(self, name: str) -> None:
        """``name`` is no longer plotted: its colour is free again."""
        self._of.pop(name, None)


class Overlay:
    """The compared recording, read once per path; ``sample`` gives a dashed signal."""

    def __init__(self) -> None:
        self.path = ""
        self.comparison: Comparison | None = None
        self.error = ""

    def follow(self, path: str) -> bool:
        """Compare with the recording at ``path`` ("" none); True when it changed."""
        if path == self.path:
            return False
        self.path, self.comparison, self.error = path, None, ""
        if path:
            try:
                self.comparison = Comparison(read_recording(path), ghost=None)
            except ConfigError as exc:  # the session read it a moment ago; it may have gone since
                self.error = str(exc)
        return True

    @property
    def label(self) -> str:
        """What the legend appends to a compared signal's name."""
        return Path(self.path).stem if self.path else ""

    def has(self, name: str) -> bool:
        """Whether the compared recording has signal ``name``."""
        return self.comparison is not None and name in self.comparison.recording.columns

    def sample(self, name: str, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """Signal ``name`` of the compared recording over ``t0``..``t1`` (s), dashed; NaN where
        it has no rows."""
        assert self.comparison is not None
        times = np.linspace(t0, t1, SAMPLES)
        return dashed(times, self.comparison.signal_at(name, times))

    def value_at(self, name: str, t: float) -> float | None:
        """Signal ``name`` of the compared recording at ``t`` (s), or None (no comparison, no
        such signal, or outside its rows)."""
        if not self.has(name):
            return None
        assert self.comparison is not None
        v = float(self.comparison.signal_at(name, np.array([t]))[0])
        return v if np.isfinite(v) else None
