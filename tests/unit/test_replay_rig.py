"""A replay is the rig it recorded: a recording opened in the app rebuilds the rig it ran (loads,
params as recorded), Modes at a replayed instant linearise that rig, and a recording without a rig
replays on the bare model with one line. Through the session, as the app opens a recording. Runs a
0.3 s scenario first (about 3 s in all)."""

from __future__ import annotations

import pytest

from mjrig import commands as C

pytestmark = pytest.mark.unit


def _loads(s) -> dict[str, dict]:
    return {e.name: e.spec for e in s.publish().entries.items if e.section == "loads"}


def test_a_replay_is_the_rig_it_recorded_with_its_params_as_recorded(open_session, tmp_path) -> None:
    import time as _time

    import pyarrow.parquet as pq

    from mjrig.cli import main

    out = tmp_path / "stiff.parquet"
    assert main(["run", "spring_mass", "--set", "k=800", "--duration", "0.3", "--out", str(out)]) == 0
    s = open_session(out)
    try:
        state = s.publish()
        assert "main_spring" in _loads(s), "the replay lost the rig's loads"
        assert next(p.value for p in state.entries.params if p.name == "k") == 800.0
        assert state.timeline.replay
        s.handle(C.ComputeModes())  # at the replayed instant, with the recorded k
        end = _time.monotonic() + 30
        while (
            s.publish().part(C.ModesPart).running or s.publish().part(C.ModesPart).at is None
        ) and _time.monotonic() < end:
            _time.sleep(0.02)
        undamped = s.publish().part(C.ModesPart).modes[0].undamped_hz
        assert abs(undamped / (800.0**0.5 / (2 * 3.141592653589793)) - 1) < 1e-6, undamped
        bare = tmp_path / "bare.parquet"  # the same rows and metadata but the scenario: as recordings were
        table = pq.read_table(out)
        meta = {k: v for k, v in table.schema.metadata.items() if k != b"mjrig.scenario"}
        pq.write_table(table.replace_schema_metadata(meta), bare)
        s.open(bare)
        warnings = [t for lv, t in s.publish().messages if lv == "warning" and "carries no rig" in t]
        assert len(warnings) == 1 and "bare model" in warnings[0], warnings
    finally:
        s.close()
