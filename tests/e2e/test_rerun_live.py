"""*Stream to Rerun* through the session's commands: the live rows go to a Rerun receiver
(``rerun --save``, a subprocess: hence this lane) and read back with rerun-sdk. The joint series
the receiver got equals what the live plots kept, row for row; the model's geometry and the body's
pose are there; a reset starts a recording of its own; an address nobody answers is one error line
and the rig runs on."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from mjrig import commands as C
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.kernel import Session
from tests.rerun_util import free_port, rerun_saver

rr = pytest.importorskip("rerun")
from rerun.chunk import RrdReader  # noqa: E402


def _read(path: Path) -> tuple[list[dict[str, dict[str, list]]], set[str]]:
    """Each recording of the file (in the order they came): entity -> column -> values, ordered by
    sim_time; and the static entities of them all."""
    reader = RrdReader(path)
    recordings, static = [], set()
    for store in reader.recordings():
        temporal: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        for chunk in reader.stream(store=store):
            if chunk.is_static:
                static.add(chunk.entity_path)
                continue
            for column, values in chunk.to_record_batch().to_pydict().items():
                temporal[chunk.entity_path][column] += values
        out = {}
        for entity, cols in temporal.items():
            order = np.argsort(_ns(cols["sim_time"]), kind="stable")
            out[entity] = {c: [v[i] for i in order] for c, v in cols.items()}
        recordings.append(out)
    return recordings, static


def _ns(times: list) -> np.ndarray:
    return np.array([t.value if hasattr(t, "value") else int(t.total_seconds() * 1e9) for t in times], dtype=np.int64)


def test_the_live_rows_reach_rerun_as_the_plots_keep_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "live.rrd"
    s = Session()
    try:
        s.open(MODELS_DIR / "spring_mass.toml")
        with rerun_saver(out) as port:
            s.handle(C.StreamToRerun(address=f"127.0.0.1:{port}"))
            assert s.publish().part(C.RerunPart).address == f"127.0.0.1:{port}"
            s.handle(C.StepOnce(200))
            before = s.plot_feed.values("Joints/slide_x:qpos")  # what the plots got (s, m)
            s.handle(C.Reset())
            s.handle(C.StepOnce(300))
            after = s.plot_feed.values("Joints/slide_x:qpos")  # of the run after the reset
            s.handle(C.StreamToRerun(on=False))
            assert s.publish().part(C.RerunPart) == C.RerunPart()
        assert any("Rerun stream closed" in text and "rows sent" in text for _, text in s.status.messages)
    finally:
        s.close()
    recordings, static = _read(out)
    qpos = [r["/joints/slide_x/qpos"] for r in recordings if "/joints/slide_x/qpos" in r]
    assert len(qpos) == 2, len(qpos)  # the run before the reset and the one after, apart
    assert len(before[0]) >= 30 and len(after[0]) >= 40, (len(before[0]), len(after[0]))  # 200 rows/s, 1 ms steps
    qpos.sort(key=lambda c: len(c["sim_time"]))  # the shorter run first (200 steps, then 300)
    for got, (t, q) in zip(qpos, (before, after)):  # what the plots got, the same rows in the same order
        n = len(t)
        assert len(got["sim_time"]) >= n
        np.testing.assert_array_equal(np.array([v[0] for v in got["Scalars:scalars"]])[:n], q)
        np.testing.assert_array_equal(_ns(got["sim_time"])[:n], np.round(t * 1e9).astype(np.int64))
    assert {"/world/block/block_box", "/world/world/rail", "/world/world/floor"} <= static
    assert all("/world/block" in r for r in recordings if "/joints/slide_x/qpos" in r)  # the block's pose


def test_an_address_nobody_answers_is_one_error_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = Session()
    try:
        s.open(MODELS_DIR / "spring_mass.toml")
        port = free_port()
        s.handle(C.StreamToRerun(address=f"127.0.0.1:{port}"))
        errors = [text for level, text in s.status.messages if level == "error"]
        assert len(errors) == 1 and errors[0].startswith(f"no Rerun viewer answers at 127.0.0.1:{port}"), errors
        s.handle(C.StreamToRerun(address="not an address"))
        errors = [text for level, text in s.status.messages if level == "error"]
        assert errors[-1].startswith("Rerun address 'not an address': give host:port"), errors
        assert s.publish().part(C.RerunPart) == C.RerunPart()
        s.handle(C.StepOnce(10))  # the rig runs on
        assert s.data.time > 0
    finally:
        s.close()
