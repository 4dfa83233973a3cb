"""The one figure look of `mjrig plot`, the reports and the app: one panel per unit with the unit
on its y axis, a legend entry per signal (with its file's name when several are overlaid), a
colour per signal and a line style per file."""

from __future__ import annotations

import numpy as np

from mjrig.exports.plotting import Trace, signals_figure

T = np.linspace(0.0, 1.0, 101)


def trace(name: str, unit: str, source: str = "", scale: float = 1.0) -> Trace:
    return Trace(name, unit, T, scale * np.sin(2 * np.pi * T), source)


def test_one_panel_per_unit_in_first_seen_order_with_the_unit_on_its_axis():
    fig = signals_figure(
        [trace("Joints/a:qpos", "m"), trace("Loads/s:fx", "N"), trace("Bodies/b:x", "m"), trace("Params/k:value", "")]
    )
    axes = fig.axes
    assert [ax.get_ylabel() for ax in axes] == ["m", "N", "(no unit)"]
    assert [[ln.get_label() for ln in ax.get_lines()] for ax in axes] == [
        ["Joints/a:qpos", "Bodies/b:x"],
        ["Loads/s:fx"],
        ["Params/k:value"],
    ]
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["Joints/a:qpos", "Bodies/b:x"]
    assert axes[-1].get_xlabel() == "time (s)"
    np.testing.assert_array_equal(axes[1].get_lines()[0].get_ydata(), np.sin(2 * np.pi * T))


def test_overlaid_files_keep_a_colour_per_signal_and_a_style_per_file():
    fig = signals_figure(
        [
            trace("Joints/a:qpos", "m", "one.parquet"),
            trace("Bodies/b:x", "m", "one.parquet", 2),
            trace("Joints/a:qpos", "m", "two.parquet", 3),
        ]
    )
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == [
        "one.parquet: Joints/a:qpos",
        "one.parquet: Bodies/b:x",
        "two.parquet: Joints/a:qpos",
    ]
    assert lines[0].get_color() == lines[2].get_color() != lines[1].get_color()
    assert lines[0].get_linestyle() == lines[1].get_linestyle() == "-" and lines[2].get_linestyle() == "--"
