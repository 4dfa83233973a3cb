"""A model of hundreds of bodies, opened and used as a person does: the panel keeps drawing, the
signal tree lists what is opened (a big category starts closed, the filter reaches the rest),
a signal ticked plots at once, the app's memory stays bounded, and the 3D view, drawn by threads
that yield the CPU to the panel and the physics, still moves.

Slower than most GUI tests (~25 s per screen): the generated model has 600 bodies and 9,600
signals, stepped and drawn in real time by software OpenGL, at both screen sizes."""

from __future__ import annotations

import os
import re

import pytest

from mjrig.desktop.viewer_adapter import VIEW_NICE
from mjrig.models.scale import many_bodies
from tests.gui.desktop import App, Desktop
from tests.waiting import wait_for

BODIES = 600


def _threads(pid: int) -> list[tuple[str, int]]:
    """(name, nice) of each thread of the process."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out.append((name, int(fields[16])))
    return out


def _rss_mb(pid: int) -> float:
    status = open(f"/proc/{pid}/status").read()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_a_600_body_model_opens_and_plots_a_signal_found_by_the_filter(tmp_path, size):
    model = tmp_path / "curtain.xml"
    model.write_text(many_bodies(BODIES))
    desktop = Desktop(*size)
    app = App(desktop, model, home=tmp_path)
    try:
        assert app.redrawn(5, timeout=10), "the panel stopped drawing after opening the model"
        t0 = app.newest_time()
        assert app.run_for(1.0, timeout=20) >= t0 + 1.0  # the run goes on
        bodies = app._hits(app.items(offscreen=True), "Bodies")
        assert bodies and bodies[0]["type"] == "mvTreeNode"
        assert not app._hits(app.items(offscreen=True), "c59_l9"), "a 600-entity category should start closed"
        app.type_into("filter signals", "c59_j9")
        assert app.visible("qpos"), "the one joint the filter leaves should be open"
        app.click("qvel")
        plot = wait_for(
            lambda: next((it for it in app.items() if it["type"] == "mvPlot" and it["label"] == "rad/s"), None),
            what="the rad/s plot",
            timeout=15,
        )
        x, y, w, h = plot["rect"]
        assert h >= 120 and w >= 200, plot["rect"]
        # the swinging link draws a line: many pixels of the plot change between two looks
        first = desktop.grab(app.panel)[y : y + h, x : x + w]
        app.run_for(0.5)
        wait_for(
            lambda: (desktop.grab(app.panel)[y : y + h, x : x + w] != first).any(axis=2).sum() > 200,
            what="the plotted line to move",
            timeout=10,
        )
        assert app.redrawn(5, timeout=5)
        assert _rss_mb(app.proc.pid) < 1500
        # the 3D view draws at a lower priority (its render thread and, with software OpenGL, the
        # rasteriser threads it started), the panel's own drawing at the normal one; it still moves
        threads = _threads(app.proc.pid)
        low = [name for name, nice in threads if nice == VIEW_NICE]
        assert low, threads
        if any(name.startswith("llvmpipe") for name, _ in threads):
            assert any(n.startswith("llvmpipe") for n in low), threads
            assert any(n.startswith("llvmpipe") and nice == 0 for n, nice in threads), threads
        view = desktop.grab(app.viewer)
        wait_for(
            lambda: (desktop.grab(app.viewer) != view).any(axis=2).sum() > 200, what="the 3D view to move", timeout=10
        )
        desktop.screenshot(f"big_model_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
