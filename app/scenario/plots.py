"""``[plots]``: what the app plots when it opens the rig (CONTRACT 13).

``signals`` are ticked in the app's plots from the first frame (and are a report's default
``--signals``); ``window`` is the span of history shown (simulated s). The app writes the
signals ticked when it saves the rig.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["PlotSettings", "read_plots", "plots_table"]


@dataclass(frozen=True)
class PlotSettings:
    """The signals ticked at opening (full names, ``Joints/slide:qpos``) and the window (s; None:
    the app's own, 10 s)."""

    signals: tuple[str, ...] = ()
    window: float | None = None


def read_plots(table: Any, fail: Callable[[str | None, str], Exception]) -> PlotSettings:
    """``[plots]`` read and checked; ``fail(key, message)`` makes the error naming the field."""
    if not isinstance(table, dict):
        raise fail(None, "must be a table ([plots])")
    unknown = sorted(set(table) - {"signals", "window"})
    if unknown:
        raise fail(unknown[0], "unknown key (expected 'signals' or 'window')")
    signals = table.get("signals", [])
    if not isinstance(signals, list) or not all(isinstance(s, str) and s for s in signals):
        raise fail("signals", 'must be a list of signal names, e.g. ["Joints/slide:qpos"]')
    window = table.get("window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, float)) or not window > 0):
        raise fail("window", f"must be a number of seconds > 0, got {window!r}")
    return PlotSettings(tuple(dict.fromkeys(signals)), None if window is None else float(window))


def plots_table(signals: tuple[str, ...] | list[str], window: float | None) -> dict[str, Any]:
    """The ``[plots]`` table for ``signals`` ticked and a ``window`` (s; None: left out)."""
    table: dict[str, Any] = {"signals": list(signals)}
    if window is not None:
        table["window"] = float(window)
    return table
