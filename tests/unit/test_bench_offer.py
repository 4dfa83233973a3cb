"""Bench data brought into the app, through the session's commands (what a drop or File > Open of
a CSV and the dialog's *Add to rig* submit; tests/gui/test_desktop_measured.py does it with real
input): the offer's guesses, the entry added to the rig, what Save scenario writes, a decline."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from test_measured import csv_bench, decay, scenario

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.session.bench_guess import guess_unit
from mjrig.session.kernel import Session


@pytest.fixture()
def session(tmp_path: Path, open_session) -> Session:
    return open_session(scenario(tmp_path, ""))


DROP = {"name": "drop", "time": "t [ms]", "time_unit": "ms"}
"""The entry's name for drop.csv (see ``_bench``) and its time column, in milliseconds."""


def _bench(folder: Path) -> Path:
    csv_bench(folder)
    rows = (folder / "bench.csv").read_text().splitlines()[1:]
    path = folder / "drop.csv"
    path.write_text(
        "t [ms],slide_qpos [mm],temperature\n" + "".join(f"{r},{20 + i * 1e-3:.3f}\n" for i, r in enumerate(rows))
    )
    return path


@pytest.mark.parametrize(
    ("column", "stem", "unit"),
    [
        ("x_mm", "x", "mm"),
        ("angle [deg]", "angle", "deg"),
        ("t (ms)", "t", "ms"),
        ("force_lbf", "force", "lbf"),
        ("speed_mm/s", "speed", "mm/s"),
        ("temperature", "temperature", ""),
        ("step_2", "step_2", ""),
    ],
)
def test_a_columns_unit_is_read_from_its_name(column, stem, unit):
    assert guess_unit(column) == (stem, unit)


def test_a_dropped_csv_is_offered_mapped_added_and_saved(session, tmp_path):
    path = _bench(tmp_path)
    session.handle(C.OpenModel(str(path)))  # a drop or File > Open: the rig stays, nothing is asked
    offer = session.publish().bench.measured_offer
    assert offer is not None and offer.time == "t [ms]" and offer.time_unit == "ms" and offer.name == "drop"
    assert offer.guesses == (("slide_qpos [mm]", "Joints/slide:qpos", "mm"), ("temperature", "", ""))
    assert session.publish().pending_open is None and session.rig is not None
    session.handle(
        C.AddMeasured(
            str(path),
            **DROP,
            offset=-0.1,
            signals=(("Joints/slide:qpos", "slide_qpos [mm]", "mm"),),
        )
    )
    state = session.publish()
    assert state.bench.measured_offer is None and state.dirty
    ((entry, sig, t, x),) = state.comparison.measured.series
    assert (entry, sig) == ("drop", "Joints/slide:qpos")
    np.testing.assert_allclose(x, decay(t), atol=1e-9)  # mm and ms and the offset, in SI
    out = tmp_path / "saved" / "rig.toml"
    out.parent.mkdir()
    session.handle(C.SaveScenario(str(out)))
    saved = tomllib.loads(out.read_text())["measured"][0]
    assert saved["file"] == "../drop.csv" and saved["offset"] == -0.1


def test_a_declined_offer_changes_nothing(session, tmp_path):
    session.handle(C.OpenModel(str(_bench(tmp_path))))
    session.handle(C.AddMeasured(""))
    state = session.publish()
    assert state.bench.measured_offer is None and not state.dirty and state.comparison.measured.series == ()


def test_a_mapping_the_rig_cannot_use_is_one_line_and_keeps_the_offer(session, tmp_path):
    path = _bench(tmp_path)
    session.handle(C.OpenModel(str(path)))
    with pytest.raises(ConfigError, match=r"measured\[0\]\.signals\.Joints/slide:qpos\.unit: unit 'deg' does not fit"):
        session.handle(
            C.AddMeasured(
                str(path),
                **DROP,
                signals=(("Joints/slide:qpos", "slide_qpos [mm]", "deg"),),
            )
        )
    offer = session.publish().bench.measured_offer
    assert offer is not None and not session.publish().dirty
    assert "unit 'deg' does not fit" in offer.error and "\n" not in offer.error  # the dialog says why


def test_bench_data_added_in_the_app_is_in_its_recordings(session, tmp_path):
    """A recording started before the bench was added, and one after: both keep it in
    ``mjrig.measured``, as ``mjrig run`` writes it, so their reports and replays draw it."""
    from mjrig.runtime.files.parquet_merge import read_schema
    from mjrig.scenario.measured import MEASURED_KEY, read_measured_metadata

    path = _bench(tmp_path)
    before, after = tmp_path / "before.parquet", tmp_path / "after.parquet"
    session.handle(C.StartRecording(str(before)))
    session.handle(C.Play())
    session.advance(budget_s=0.05)
    session.handle(C.OpenModel(str(path)))
    mapping = (("Joints/slide:qpos", "slide_qpos [mm]", "mm"),)
    session.handle(C.AddMeasured(str(path), **DROP, offset=-0.1, signals=mapping))
    session.advance(budget_s=0.05)
    session.handle(C.StopRecording())
    session.handle(C.StartRecording(str(after)))
    session.advance(budget_s=0.05)
    session.close()  # finishes both files
    for out in (before, after):
        ((entry, sig, t, x),) = read_measured_metadata(read_schema(out)[1][MEASURED_KEY])
        assert (entry, sig) == ("drop", "Joints/slide:qpos")
        np.testing.assert_allclose(x, decay(t), atol=1e-9)


def test_a_european_csv_with_a_units_row_is_offered_with_its_units_and_signals(session, tmp_path):
    """``;``, decimal commas and a units row (ms, mm): the offer takes the time column's unit and
    each column's from the row, and guesses the signal from a name such as ``Position_slide``."""
    csv_bench(tmp_path)
    rows = (tmp_path / "bench.csv").read_text().splitlines()[1:]
    path = tmp_path / "bench_eu.csv"
    path.write_text(
        "t;Position_slide;Temp\nms;mm;°C\n" + "".join(f"{r.replace(',', ';').replace('.', ',')};21,5\n" for r in rows),
        encoding="utf-8",
    )
    session.handle(C.OpenModel(str(path)))
    offer = session.publish().bench.measured_offer
    assert offer is not None and offer.time == "t" and offer.time_unit == "ms"
    assert offer.guesses == (("Position_slide", "Joints/slide:qpos", "mm"), ("Temp", "", "°C"))
    session.handle(
        C.AddMeasured(
            str(path),
            name="eu",
            time="t",
            time_unit="ms",
            offset=-0.1,
            signals=(("Joints/slide:qpos", "Position_slide", "mm"),),
        )
    )
    ((entry, sig, t, x),) = session.publish().comparison.measured.series
    assert (entry, sig) == ("eu", "Joints/slide:qpos")
    np.testing.assert_allclose(x, decay(t), atol=1e-9)
