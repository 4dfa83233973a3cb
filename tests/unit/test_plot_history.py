"""The plots' row history and the session's plot feed: columns added together, a value budget,
time kept rising across a Reset inside one block, and a signal ticked late filled from the feed."""

from __future__ import annotations

import numpy as np

from mjrig.runtime.telemetry.plot_history import SignalHistory, is_fill, is_new_model
from mjrig.session.plot_rows import PlotFeed


def _rows(t: np.ndarray, ncols: int) -> tuple[list[str], np.ndarray]:
    """``time``, ``wall_time`` and ``ncols`` signals s{k} = k + t."""
    cols = ["time", "wall_time", *(f"s{k}" for k in range(ncols))]
    return cols, np.column_stack([t, t, *(k + t for k in range(ncols))])


def test_thousands_of_columns_arrive_at_once_and_the_budget_bounds_the_rows() -> None:
    h = SignalHistory(20000, budget=1_000_000, min_rows=100)
    cols, block = _rows(np.arange(50) * 0.005, 4000)
    h.append(cols, block)
    assert h.columns == cols and len(h) == 50
    assert 100 <= h.rows <= 1_000_000 // 4002  # the budget, not the 20000 asked for
    h.append(*_rows(0.25 + np.arange(1000) * 0.005, 4000))
    assert len(h) == h.rows and h.last_time() == 0.25 + 999 * 0.005
    t, v = h.window(0.0, 10.0, ["s3999", "s7"])
    assert len(t) == h.rows and np.allclose(v[:, 0], 3999 + t) and np.allclose(v[:, 1], 7 + t)


def test_a_column_added_later_keeps_the_rows_and_is_nan_before() -> None:
    h = SignalHistory(100)
    h.append(["time", "a"], np.column_stack([np.arange(10.0), np.arange(10.0)]))
    h.append(["time", "a", "b"], np.column_stack([10 + np.arange(5.0), 10 + np.arange(5.0), -np.ones(5)]))
    t, v = h.window(0, 20, ["a", "b"])
    assert np.array_equal(t, np.arange(15.0)) and np.array_equal(v[:, 0], np.arange(15.0))
    assert np.isnan(v[:10, 1]).all() and (v[10:, 1] == -1).all()


def test_a_reset_inside_one_block_starts_a_new_stretch() -> None:
    """Rows before and after a Reset in one block: only the rows after it stay, in order."""
    h = SignalHistory(1000)
    t = np.concatenate([np.arange(1, 101) * 0.01, np.arange(0, 20) * 0.01])  # 1.00 s, then back to 0
    h.append(["time", "x"], np.column_stack([t, t]))
    times, v = h.window(-1, 10, ["x"])
    assert np.array_equal(times, np.arange(20) * 0.01) and np.all(np.diff(times) > 0)
    h.append(["time", "x"], np.column_stack([0.2 + np.arange(5) * 0.01, np.zeros(5)]))
    assert len(h) == 25 and h.first_time() == 0.0


def test_a_branch_replaces_the_rows_from_its_time_on() -> None:
    h = SignalHistory(1000)
    h.append(["time", "x"], np.column_stack([np.arange(100.0), np.zeros(100)]))
    h.append(["time", "x"], np.column_stack([40 + np.arange(3.0), np.ones(3)]))
    t, v = h.window(0, 1000, ["x"])
    assert t[-1] == 42 and len(t) == 43 and (v[40:, 0] == 1).all() and (v[:40, 0] == 0).all()


def test_the_feed_queues_plotted_columns_and_fills_a_signal_ticked_late() -> None:
    feed = PlotFeed(5000, budget=10_000_000)
    feed.plot(["s1"])
    feed.push(*_rows(np.arange(100) * 0.005, 300))
    out = feed.drain()
    assert [c for c, _ in out] == [["time", "wall_time", "s1"]] and out[0][1].shape == (100, 3)
    feed.plot(["s1", "s250"])  # ticked later: the kept rows come as a fill block
    fill_cols, fill = feed.drain()[0]
    assert is_fill(fill_cols) and fill_cols[1:] == ["time", "s250"] and np.allclose(fill[:, 2], 250 + fill[:, 1])
    panel = SignalHistory(20000)  # what the panel does with them
    panel.append(out[0][0], out[0][1])
    panel.fill(fill_cols[1:], fill[:, 1:])
    t, v = panel.window(0, 1, ["s1", "s250"])
    assert len(t) == 100 and np.allclose(v[:, 0], 1 + t) and np.allclose(v[:, 1], 250 + t)
    feed.mark_new_model("/m.xml")
    assert len(feed.kept) == 0 and is_new_model(feed.drain()[0][0])
