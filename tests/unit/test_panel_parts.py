"""The panel state is made of typed parts: each feature of the session publishes one frozen
dataclass registered where it is defined (``panel_part``), and ``PanelState`` holds it under the
part's name (``state.part(kind)``, ``state.outputs.recording_path``); the kernel declares only its
own fields. The session's features are one tuple that the kernel loops over: their commands in
one table (a command claimed twice refused at start), ``rig_opened`` and ``close`` for every one;
an analysis window's feature registers itself (``@feature``) and nothing else names it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.panel_parts import panel_part, registered_parts
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.analyses.modes import RigModes
from mjrig.session.feature import Feature, handler_table
from mjrig.session.kernel import Session

PARTS = tuple(registered_parts().values())
REPO = Path(__file__).resolve().parents[2]


def test_each_registered_part_defaults_in_the_panel_state() -> None:
    assert {"entries", "outputs", "tools", "reports", "results", "comparison", "bench", "modes"} <= set(
        registered_parts()
    )
    for part in PARTS:
        assert dataclasses.is_dataclass(part) and part.__dataclass_params__.frozen, part
        assert C.PanelState().part(part) == part(), f"{part.name} defaults to an empty {part.__name__}"
    assert len({p.name for p in PARTS}) == len(PARTS)


def test_a_part_is_registered_once_by_name_and_must_be_frozen() -> None:
    @dataclasses.dataclass
    class Loose:
        name = "loose"

    with pytest.raises(TypeError, match="frozen dataclass"):
        panel_part(Loose)

    @dataclasses.dataclass(frozen=True)
    class Other:
        name = "modes"

    with pytest.raises(TypeError, match="both ModesPart's and Other's"):
        panel_part(Other)

    @dataclasses.dataclass(frozen=True)
    class Unregistered:
        name = "unregistered"

    with pytest.raises(TypeError, match="not a registered panel part"):
        C.PanelState.of((Unregistered(),))  # type: ignore[arg-type]


def test_an_analysis_window_is_named_only_where_it_is_defined() -> None:
    """Modes comes in through the registries alone: its feature (``@feature``), its part
    (``@panel_part``), its panel section (``@section``) and what it draws in the 3D view
    (``Feature.draws_in_view``); the kernel, the panel state, the desktop and the sim thread
    do not name it."""
    s = Session()
    try:
        assert any(isinstance(f, RigModes) for f in s.features)
    finally:
        s.close()
    for rel in (
        "app/session/kernel.py",
        "app/panel_state/__init__.py",
        "app/desktop/app.py",
        "app/desktop/sim_thread.py",
    ):
        text = (REPO / rel).read_text(encoding="utf-8")
        assert "RigModes" not in text and "ModesPanel" not in text and "ModesPart" not in text, rel


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
        assert snap_modes(s) == next(f for f in s.features if isinstance(f, RigModes)).publish()
        snap = s.publish()
        assert snap.outputs.recording_path == s.outputs.publish().recording_path == str(tmp_path / "run.parquet")
        assert snap.outputs.recording_rows > 0
        assert snap.entries == s.entries.publish() and snap.entries.params[0].name == "k"
        assert [e.name for e in snap.loads] == [e.name for e in snap.entries.items if e.section == "loads"]
        assert snap.tools.shown_units == s.tools.publish().shown_units
    finally:
        s.close()


def snap_modes(s: Session) -> C.ModesPart:
    """The Modes part as the panel reads it."""
    return s.publish().part(C.ModesPart)


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
