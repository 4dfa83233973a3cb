"""The panel state is made of typed parts: each feature of the session publishes one frozen
dataclass, and ``PanelState`` holds it under the part's name (``state.outputs.recording_path``);
the kernel declares only its own fields. The session's features are one tuple that the kernel
loops over: their commands in one table (a command claimed twice refused at start), ``rig_opened``
and ``close`` for every one."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.context import Feature, handler_table
from mjrig.session.kernel import Session

PARTS = typing.get_args(C.PanelPart)


def test_each_part_has_its_field_in_the_panel_state() -> None:
    fields = {f.name: f for f in dataclasses.fields(C.PanelState)}
    for part in PARTS:
        assert dataclasses.is_dataclass(part) and part.__dataclass_params__.frozen, part
        assert part.name in fields, f"{part.__name__} has no field '{part.name}' in the panel state"
        assert getattr(C.PanelState(), part.name) == part(), f"{part.name} defaults to an empty {part.__name__}"
    assert len({p.name for p in PARTS}) == len(PARTS)


def test_of_puts_each_part_in_and_refuses_two_of_a_kind() -> None:
    state = C.PanelState.of((C.OutputsPart(recording_rows=7, video_path="v.mp4"), C.ReportsPart("r.parquet")), time=1.5)
    assert (state.outputs.recording_rows, state.outputs.video_path, state.reports.export_source, state.time) == (
        7,
        "v.mp4",
        "r.parquet",
        1.5,
    )
    assert state.tools.metrics == () and state.results.shown is None  # parts left out keep their defaults
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
        published = {type(part) for f in s.features if (part := f.publish()) is not None}
        assert published == set(PARTS)
        snap = s.publish()
        assert snap.outputs.recording_path == s.outputs.publish().recording_path == str(tmp_path / "run.parquet")
        assert snap.outputs.recording_rows > 0
        assert snap.entries == s.entries.publish() and snap.entries.params[0].name == "k"
        assert [e.name for e in snap.loads] == [e.name for e in snap.entries.items if e.section == "loads"]
        assert snap.tools.shown_units == s.tools.publish().shown_units
    finally:
        s.close()


class _Probe(Feature):
    """A feature that counts what the kernel asks of it."""

    def __init__(self) -> None:
        self.opened = self.closed = 0

    def handlers(self) -> dict:
        return {C.SavePlot: lambda cmd: None}

    def rig_opened(self) -> None:
        self.opened += 1

    def close(self) -> None:
        self.closed += 1


def test_a_command_two_features_claim_is_refused_at_start() -> None:
    s = Session()
    try:
        with pytest.raises(RuntimeError, match="SavePlot is handled by both Reports and _Probe"):
            handler_table({}, (*s.features, _Probe()))
        with pytest.raises(RuntimeError, match="Play is handled by both the session kernel and _Plays"):
            handler_table({C.Play: print}, (_Plays(),))
    finally:
        s.close()


class _Plays(_Probe):
    def handlers(self) -> dict:
        return {C.Play: print}


def test_every_feature_forgets_the_old_rig_and_is_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = Session()
    probe = _Probe()
    s.features = (*s.features, probe)  # the tuple the kernel loops over
    try:
        s.open(MODELS_DIR / "spring_mass.toml")
        s.bench.fit = C.FitProgress(False, (1.0, 0.5), (1, 2), path="fit.parquet")  # a fit of this rig ended
        s.handle(C.Reload())  # a reload is the same rig: the fit stays
        assert s.publish().bench.fit is not None and probe.opened == 1
        s.open(MODELS_DIR / "spring_mass.toml")  # opened again: another rig
        assert s.publish().bench.fit is None, "a fit belongs to the rig it was made for"
        assert probe.opened == 2
    finally:
        s.close()
    assert probe.closed == 1
