"""The panel state is made of typed parts: each feature of the session publishes one frozen
dataclass, and ``PanelState`` takes its fields over; the kernel declares only its own."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.kernel import Session

PARTS = typing.get_args(C.PanelPart)


def _declared(cls: type) -> set[str]:
    """The fields ``cls`` declares in its own body."""
    return set(cls.__dict__.get("__annotations__", {}))


def test_every_field_is_declared_once_by_a_part_or_the_kernel() -> None:
    owners: dict[str, list[str]] = {}
    for cls in (*PARTS, C.PanelState):
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        for name in _declared(cls):
            owners.setdefault(name, []).append(cls.__name__)
    twice = {name: who for name, who in owners.items() if len(who) > 1}
    assert not twice, f"fields declared more than once: {twice}"
    assert set(owners) == {f.name for f in dataclasses.fields(C.PanelState)}
    assert set(C.PanelState.__mro__) >= set(PARTS)


def test_of_takes_each_parts_fields_and_refuses_two_of_a_kind() -> None:
    state = C.PanelState.of((C.OutputsPart(recording_rows=7, video_path="v.mp4"), C.ReportsPart("r.parquet")), time=1.5)
    assert (state.recording_rows, state.video_path, state.export_source, state.time) == (7, "v.mp4", "r.parquet", 1.5)
    assert state.metrics == () and state.results is None  # parts left out keep their defaults
    with pytest.raises(TypeError, match="one part of each kind"):
        C.PanelState.of((C.ReportsPart("a"), C.ReportsPart("b")))
    with pytest.raises(TypeError):
        C.PanelState.of((C.ReportsPart("a"),), export_source="b")  # a part's field is not the kernel's


def test_each_feature_publishes_its_typed_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = Session()
    try:
        s.open(MODELS_DIR / "spring_mass.toml")
        s.handle(C.StartRecording(str(tmp_path / "run.parquet")))
        s.handle(C.StepOnce(20))
        published = {
            type(f.publish() if f is not s.replayer else f.publish(plotted=())): f
            for f in (s.entries, s.outputs, s.tools, s.reports, s.results, s.replayer, s.bench)
        }
        assert set(published) == set(PARTS)
        snap = s.publish()
        outputs = s.outputs.publish()
        assert snap.recording_path == outputs.recording_path == str(tmp_path / "run.parquet")
        assert snap.entries == s.entries.publish().entries and snap.params and snap.params[0].name == "k"
        assert snap.shown_units == s.tools.publish().shown_units
    finally:
        s.close()
