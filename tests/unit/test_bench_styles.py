"""Many bench entries stay readable: each of 20 entries of one signal is drawn its own way (a
shade and a dash pattern), and past ``GROUP_AT`` entries the legend names them as one group on
the first one's line (the others' names hidden), so that it keeps to its plot."""

from __future__ import annotations

import numpy as np
import pytest

from mjrig.widgets.plots.plot_overlay import GROUP_AT, BenchOverlay, Overlay, entry_style, twin_label

pytestmark = pytest.mark.unit

Q = "Joints/slide:qpos"


def _entries(n: int) -> list[BenchOverlay]:
    series = {Q: (np.linspace(0.0, 1.0, 11), np.zeros(11))}
    return [BenchOverlay(f"b{i:02d}", series, index=i) for i in range(n)]


def test_twenty_entries_are_twenty_styles():
    assert len({entry_style(i) for i in range(20)}) == 20


def test_a_few_entries_are_named_each_many_as_one_group():
    few = [Overlay(), *_entries(GROUP_AT)]
    assert [twin_label(Q, few, k) for k in range(1, len(few))] == [
        f"slide:qpos (b{i:02d}, measured)" for i in range(GROUP_AT)
    ]
    many = [Overlay(), *_entries(20)]
    labels = [twin_label(Q, many, k) for k in range(1, 21)]
    assert labels[0] == "slide:qpos (20 measured)"
    assert all(label.startswith("##slide:qpos (b") for label in labels[1:])  # not in the legend


def test_each_entry_is_cut_into_its_own_dashes():
    a, b = _entries(20)[0], _entries(20)[4]  # the same shade, the next dash pattern
    na = np.isnan(a.sample(Q, 0.0, 1.0)[1])
    nb = np.isnan(b.sample(Q, 0.0, 1.0)[1])
    assert a.shade == b.shade and not np.array_equal(na, nb)
