"""The live-plot and log panels, rendered for real by Dear PyGui under a private Xvfb.

Synthetic telemetry (sin and cos of simulated time, 200 Hz, blocks of 16 rows, one column that
appears mid-run) goes through ``PlotPanel.add_rows``; the tests then read back what the plot
really holds (``dpg.get_value`` of the line series, the axis limits) and what the log shows.
A screenshot goes to ``tests/artifacts/plot_log_panels.png`` for a human look.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

if not os.environ.get("DISPLAY") and shutil.which("Xvfb") is None:
    pytest.skip("no DISPLAY and no Xvfb binary", allow_module_level=True)

dpg = pytest.importorskip("dearpygui.dearpygui")

from mjrig.commands import PanelState  # noqa: E402
from mjrig.widgets.log_panel import LogPanel  # noqa: E402
from mjrig.widgets.plots.plot_panel import PlotPanel, decimate_minmax, split_signal  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
RATE_HZ = 200.0
BLOCK = 16
BASE = ["time", "wall_time", "Joints/slide_x:qpos", "Sites/arm/tip:pos_x"]
LATE = "Loads/main_spring:fx"
T_LATE = 15.0
"""Simulated time (s) at which the LATE column first appears."""


@pytest.fixture(scope="module")
def display(xdisplay: str) -> Iterator[str]:
    """The shared private Xvfb screen (tests/gui/conftest.py)."""
    yield xdisplay


@pytest.fixture(scope="module")
def viewport(display: str, dpg_viewport: None) -> Iterator[None]:
    """The session's one Dear PyGui viewport (tests/gui/conftest.py)."""
    yield


@pytest.fixture
def window(viewport: None) -> Iterator[int | str]:
    """A fresh primary window per test."""
    win = dpg.add_window(label="panels")
    dpg.set_primary_window(win, True)
    yield win
    dpg.delete_item(win)


def render(frames: int = 3) -> None:
    for _ in range(frames):
        dpg.render_dearpygui_frame()


def rows(t0: float, t1: float) -> Iterator[tuple[list[str], np.ndarray]]:
    """Blocks of telemetry from t0 to t1 (s): sin(t) and a tip signal, plus cos(t) from T_LATE on."""
    t = np.arange(round(t0 * RATE_HZ), round(t1 * RATE_HZ)) / RATE_HZ
    for i in range(0, len(t), BLOCK):
        tb = t[i : i + BLOCK]
        cols = [tb, tb * 1.01, np.sin(tb), 0.5 * np.sin(3 * tb)]
        names = list(BASE)
        if tb[0] >= T_LATE:
            cols.append(np.cos(tb))
            names.append(LATE)
        yield names, np.column_stack(cols)


def feed(panel: PlotPanel, t0: float, t1: float, *, frames_every: int = 0) -> float:
    """Push rows t0..t1 with a snapshot per block (the app's rhythm); returns the last row's time."""
    last = t0
    for n, (names, block) in enumerate(rows(t0, t1)):
        panel.add_rows(names, block)
        last = float(block[-1, 0])
        panel.update(PanelState(time=last, signals=tuple(names[2:])))
        if frames_every and n % frames_every == 0:
            render(1)
    return last


def series_xy(panel: PlotPanel, name: str) -> tuple[np.ndarray, np.ndarray]:
    sid = panel.series(name)
    assert sid is not None, f"no series for {name}"
    x, y = dpg.get_value(sid)[:2]
    return np.asarray(x), np.asarray(y)


def tree_labels(panel: PlotPanel, *, open_all: bool = True) -> dict[str, dict[str, list[str]]]:
    """category -> entity -> attribute labels, read back from the Dear PyGui items; ``open_all``
    opens every entity first (the tree makes an entity's checkboxes when it is opened)."""
    out: dict[str, dict[str, list[str]]] = {}
    for cat in dpg.get_item_children(panel.tree, 1):
        entities = out.setdefault(dpg.get_item_label(cat), {})
        for ent in dpg.get_item_children(cat, 1):
            if open_all and not dpg.get_value(ent):
                dpg.set_value(ent, True)
                render(2)
                panel.update(PanelState(signals=panel._signals))
            entities[dpg.get_item_label(ent)] = [dpg.get_item_label(b) for b in dpg.get_item_children(ent, 1)]
    return out


def test_split_and_decimate_units() -> None:
    assert split_signal("Sites/arm/tip:pos_x") == ("Sites", "arm/tip", "pos_x")
    assert split_signal("Loads/main_spring:fx") == ("Loads", "main_spring", "fx")
    x = np.linspace(0, 10, 10_001)
    y = np.sin(7 * x)
    xd, yd = decimate_minmax(x, y, 300)
    assert len(xd) <= 300 and np.all(np.diff(xd) >= 0)
    np.testing.assert_allclose(yd, np.sin(7 * xd))  # kept points are real samples
    assert yd.max() == y.max() and yd.min() == y.min()  # peaks survive


def test_tree_groups_filters_and_is_not_rebuilt_needlessly(window: int | str) -> None:
    panel = PlotPanel()
    panel.build(window)
    signals = ("Joints/slide_x:qpos", "Joints/slide_x:qvel", "Sites/arm/tip:pos_x", LATE)
    panel.update(PanelState(signals=signals))
    render()
    assert tree_labels(panel) == {
        "Joints": {"slide_x": ["qpos", "qvel"]},
        "Sites": {"arm/tip": ["pos_x"]},
        "Loads": {"main_spring": ["fx"]},
    }
    box = panel.checkbox("Joints/slide_x:qvel")
    panel.update(PanelState(signals=tuple(signals)))  # equal list: same items
    assert panel.checkbox("Joints/slide_x:qvel") == box

    panel.set_checked("Joints/slide_x:qvel", True)
    panel.set_filter("SPRING")
    panel.update(PanelState(signals=signals))
    assert tree_labels(panel) == {"Loads": {"main_spring": ["fx"]}}
    panel.set_filter("")
    panel.update(PanelState(signals=signals + ("Joints/slide_y:qpos",)))
    render()
    assert tree_labels(panel)["Joints"] == {"slide_x": ["qpos", "qvel"], "slide_y": ["qpos"]}
    assert dpg.get_value(panel.checkbox("Joints/slide_x:qvel")) is True  # checked state survives
    assert panel.checked() == ["Joints/slide_x:qvel"]


def test_plot_window_decimation_late_column_and_uncheck(window: int | str) -> None:
    window_s, max_points = 10.0, 500
    panel = PlotPanel(window_s=window_s, max_points=max_points)
    panel.build(window)
    sine = "Joints/slide_x:qpos"
    panel.set_checked(sine, True)
    t_end = feed(panel, 0.0, 30.0, frames_every=25)
    render()
    sid = panel.series(sine)

    x, y = series_xy(panel, sine)
    assert 100 < len(x) <= max_points
    assert x.min() >= t_end - window_s - 1e-9 and x.max() <= t_end + 1e-9
    assert x.min() < t_end - window_s + 0.1 and x.max() > t_end - 0.1  # spans the window
    assert np.all(np.diff(x) >= 0)
    np.testing.assert_allclose(y, np.sin(x), atol=1e-9)
    np.testing.assert_allclose(dpg.get_axis_limits(panel.axes[0]), (t_end - window_s, t_end), atol=1e-6)
    y_lo, y_hi = dpg.get_axis_limits(panel.axes[1])  # auto-fit y around [-1, 1]
    assert -1.3 < y_lo < -0.9 and 0.9 < y_hi < 1.3

    # The column that appeared at T_LATE is in the tree, and plots without NaN where it exists.
    assert tree_labels(panel, open_all=False)["Loads"] == {"main_spring": []}  # boxes made when opened
    assert panel.checkbox(LATE) is None
    panel.set_window(20.0)
    panel.set_checked(LATE, True)
    panel.update(PanelState(time=t_end, signals=tuple(BASE[2:]) + (LATE,)))
    render()
    assert dpg.get_value(panel.checkbox(LATE)) is True
    assert dpg.get_value(dpg.get_item_parent(panel.checkbox(LATE))) is True  # its node opened
    xl, yl = series_xy(panel, LATE)
    assert len(xl) > 100 and np.all(np.isfinite(xl)) and np.all(np.isfinite(yl))
    assert xl.min() >= T_LATE - 1e-9 and xl.max() > t_end - 0.1
    np.testing.assert_allclose(yl, np.cos(xl), atol=1e-9)
    x, y = series_xy(panel, sine)
    assert x.min() < t_end - 20.0 + 0.1 < T_LATE  # the old signal spans 20 s
    assert panel.series(sine) == sid  # refreshed, not rebuilt

    panel.set_checked(sine, False)
    panel.update(PanelState(time=t_end, signals=tuple(BASE[2:]) + (LATE,)))
    render()
    assert panel.series(sine) is None and not dpg.does_item_exist(sid)
    assert dpg.get_value(panel.checkbox(sine)) is False
    assert panel.checked() == [LATE]


def test_history_is_bounded_and_pause_freezes(window: int | str) -> None:
    panel = PlotPanel(window_s=1000.0, history_rows=20_000, max_points=400)
    panel.build(window)
    name = "Joints/slide_x:qpos"
    panel.set_checked(name, True)
    t_end = feed(panel, 0.0, 125.0)  # 25 000 rows > history_rows
    render()
    assert len(panel.history) == 20_000 and panel.history.capacity == 20_000
    assert all(len(panel.history._ordered(c)) == 20_000 for c in range(len(panel.history.columns)))
    x, y = series_xy(panel, name)
    assert len(x) <= 400
    assert x.min() == pytest.approx(t_end - (20_000 - 1) / RATE_HZ)  # oldest kept row, not older
    np.testing.assert_allclose(y, np.sin(x), atol=1e-9)

    panel.set_paused(True)
    panel.update(PanelState(time=t_end, signals=tuple(BASE[2:]) + (LATE,)))
    render()
    frozen = series_xy(panel, name)
    t_more = feed(panel, 125.0, 130.0)  # data still accumulates
    render()
    assert panel.history.last_time() == t_more
    np.testing.assert_array_equal(series_xy(panel, name)[0], frozen[0])
    panel.set_paused(False)
    panel.update(PanelState(time=t_more, signals=tuple(BASE[2:]) + (LATE,)))
    render()
    assert series_xy(panel, name)[0].max() == pytest.approx(t_more)


def test_log_panel_colours_bounds_scroll_and_clear(window: int | str) -> None:
    log = LogPanel(height=120)
    log.build(window)
    long_error = (
        "a long error: load 'main_spring' diverged at t=3.20 s (qacc NaN in dof 2); the run is paused until reset. " * 3
    ).strip()
    msgs = (("info", "opened x"), ("warning", "timestep is large"), ("error", long_error))
    log.update(PanelState(messages=msgs))
    render()
    assert log.lines() == ["info: opened x", "warning: timestep is large", f"error: {long_error}"]
    assert log.last_error() == long_error
    colors = [dpg.get_item_configuration(i)["color"] for i in log.line_ids()]
    red, amber = colors[2], colors[1]
    assert red[0] > 0.9 and red[1] < 0.5 and red[2] < 0.5
    assert amber[0] > 0.9 and 0.5 < amber[1] < 0.9 and amber[2] < 0.2

    ids = log.line_ids()
    log.update(PanelState(messages=tuple(msgs)))  # equal messages: nothing re-rendered
    assert log.line_ids() == ids

    many = msgs + tuple(("info", f"step {i}") for i in range(60))
    log.update(PanelState(messages=many))
    render(4)
    area = dpg.get_item_parent(log.line_ids()[0])
    assert dpg.get_y_scroll_max(area) > 0
    assert dpg.get_y_scroll(area) == pytest.approx(dpg.get_y_scroll_max(area))  # newest in view
    assert len(log.lines()) == len(many)

    bounded = many[-20:]  # the session's deque dropped old ones
    log.update(PanelState(messages=bounded))
    assert len(log.lines()) == 20

    log.clear()
    log.update(PanelState(messages=bounded))
    assert log.lines() == []
    log.update(PanelState(messages=bounded[1:] + (("error", "boom"),)))
    assert log.lines() == ["error: boom"]


def test_screenshot(window: int | str) -> None:
    dpg.set_item_label(window, "mjrig panels")
    plot_area = dpg.add_child_window(parent=window, height=600, border=False)
    log_area = dpg.add_child_window(parent=window, height=-1, border=False)
    panel = PlotPanel(window_s=10.0, max_points=800)
    panel.build(plot_area)
    log = LogPanel(height=-1)
    log.build(log_area)
    panel.set_checked("Joints/slide_x:qpos", True)
    panel.set_checked("Sites/arm/tip:pos_x", True)
    t_end = feed(panel, 0.0, 30.0, frames_every=50)
    panel.set_checked(LATE, True)
    msgs = (
        ("info", "opened models/spring_mass.xml"),
        ("warning", "timestep 0.01 s is large for this model"),
        ("info", "recording to runs/spring.parquet"),
        (
            "error",
            "load 'main_spring' diverged at t=3.20 s: qacc is NaN in dof 2 (slide_x); the run "
            "is paused until reset. Lower the stiffness (now 1e9 N/m, try <= 1e5) or the timestep "
            "(now 0.01 s, try 0.002 s); recorded data up to t=3.19 s is safe in runs/spring.parquet.",
        ),
    )
    snap = PanelState(time=t_end, signals=tuple(BASE[2:]) + (LATE,), messages=msgs)
    panel.update(snap)
    log.update(snap)
    render(5)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / "plot_log_panels.png"
    out.unlink(missing_ok=True)
    dpg.output_frame_buffer(file=str(out))
    render(3)
    assert out.is_file() and out.stat().st_size > 10_000
    assert len(panel.checked()) == 3 and all(len(series_xy(panel, n)[0]) for n in panel.checked())


def test_the_panel_font_has_arrows_and_units(window: int | str) -> None:
    """ "→" and "·" (in the proximity table and units) drew as "?" with Dear PyGui's own font."""
    from mjrig.widgets.kit.fonts import PanelFonts

    PanelFonts(dpg).start()
    arrow = dpg.add_text("a → b", parent=window)
    question = dpg.add_text("a ? b", parent=window)
    render(5)
    assert dpg.get_item_rect_size(arrow)[0] != dpg.get_item_rect_size(question)[0]
    dpg.bind_font(0)


def test_a_steady_signal_gets_a_readable_axis(window: int | str) -> None:
    """A value at rest (float noise in its last digits) is shown in a range a thousandth of its
    size wide, centred on it: tick labels differ (an auto-fit to the noise labelled -0.1 -0.1 -0.1)."""
    panel = PlotPanel(window_s=5.0)
    panel.build(window)
    name = "Joints/slide_x:qpos"
    panel.set_checked(name, True)
    t = np.arange(1000) / RATE_HZ
    level = -0.1 + 1e-16 * np.sin(t)
    panel.add_rows(["time", "wall_time", name], np.column_stack([t, t, level]))
    panel.update(PanelState(time=float(t[-1]), signals=(name,)))
    render()
    lo, hi = dpg.get_axis_limits(panel.axes[1])
    assert lo < -0.1 < hi and 1e-4 <= hi - lo <= 1e-3, (lo, hi)
    assert abs(0.5 * (lo + hi) + 0.1) < 1e-7  # axis limits are float32
    panel.add_rows(["time", "wall_time", name], np.column_stack([t + 5, t + 5, np.zeros_like(t)]))
    panel.update(PanelState(time=float(t[-1] + 5), signals=(name,)))
    render()
    lo, hi = dpg.get_axis_limits(panel.axes[1])
    assert lo < 0 < hi and 1.0 <= hi - lo <= 1.2, (lo, hi)  # zero: a whole unit around it
