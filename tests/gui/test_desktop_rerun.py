"""*Stream to Rerun* from the Recording section, by hand: a person types a viewer's address,
clicks the button, watches the rows counted, and stops it. The receiver (``rerun --save``, which
writes what a viewer would show) got the shaker's joint series every row of the plots' rate, its
geometry and a blueprint; an address that does not answer is one error line and the rig runs on.
1280x800 and 1920x1080."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.gui.desktop import App, Desktop
from tests.rerun_util import free_port, rerun_saver
from tests.waiting import wait_for

pytest.importorskip("rerun")
from rerun.chunk import RrdReader  # noqa: E402

LABEL = "Rerun viewer"


def _rows(app: App) -> int:
    hit = app.text(r"Rerun: \d+ rows sent to .*", offscreen=True)
    return int(re.match(r"Rerun: (\d+)", hit["text"]).group(1)) if hit else -1


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_streaming_the_run_to_a_rerun_viewer_by_hand(tmp_path, size):
    out = tmp_path / "viewer.rrd"
    desktop = Desktop(*size)
    app = App(desktop, home=tmp_path / "home")
    try:
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : shaker", what="the default rig", timeout=30)
        nobody = free_port()
        app.type_into(LABEL, f"127.0.0.1:{nobody}")
        app.click("Stream to Rerun")
        app.see_text(rf"error: no Rerun viewer answers at 127\.0\.0\.1:{nobody}.*")
        assert app.widget("Stream to Rerun")  # not streaming; the rig runs on
        app.run_for(0.3)
        with rerun_saver(out) as port:
            app.type_into(LABEL, f"127.0.0.1:{port}")
            app.click("Stream to Rerun")
            wait_for(lambda: app.widget("Stop stream"), what="the stream to start")
            wait_for(lambda: _rows(app) >= 200, what="a second of rows sent", timeout=30)
            desktop.screenshot(str(tmp_path / f"rerun-{size[0]}"))
            app.click("Stop stream")
            wait_for(lambda: app.widget("Stream to Rerun"), what="the stream to stop")
            closed = app.see_text(r"info: Rerun stream closed: \d+ rows sent to 127\.0\.0\.1:\d+")
        sent = int(re.search(r"closed: (\d+) rows", closed["text"]).group(1))
    finally:
        app.quit_discarding()
        desktop.close()
    reader = RrdReader(out)
    static, qpos = set(), []
    for chunk in reader.stream():
        if chunk.is_static:
            static.add(chunk.entity_path)
        elif chunk.entity_path.startswith("/joints/") and chunk.entity_path.endswith("/qpos"):
            qpos += [v[0] for v in chunk.to_record_batch().column("Scalars:scalars").to_pylist()]
    assert len(reader.blueprints()) >= 1
    assert any(e.startswith("/world/") for e in static), static  # the shaker's geometry
    assert len(qpos) >= sent >= 200 and np.ptp(qpos) > 0  # every row sent, and the shaker moving
