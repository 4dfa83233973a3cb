"""Bench files from lab software other than text (CONTRACT 14): an Excel workbook (a sheet by
``sheet``, a units row under its header) and a LabVIEW TDMS file (a group by ``group``, units from
each channel's ``unit_string``, the time of a waveform channel), each holding the closed-form
decay of ``test_measured`` and read back as the same SI series; a sheet, group or key that does
not fit is one line at its field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.scenario.measured_lab import parts, read_lab
from mjrig.scenario.parse import load_scenario
from tests.unit.test_measured import decay, scenario

T = np.arange(0.0, 2.0, 0.004)
"""The samples' times (s)."""


def _workbook(path: Path) -> Path:
    """Two sheets: "notes" (words only) and "run2": t (ms, 0.1 s late), x (mm) under a units row."""
    from openpyxl import Workbook

    book = Workbook()
    notes = book.active
    notes.title = "notes"
    notes.append(["operator", "A"])
    sheet = book.create_sheet("run2")
    sheet.append(["t", "x", "comment"])
    sheet.append(["ms", "mm", None])
    for i, (t, x) in enumerate(zip(T, decay(T) * 1000)):
        sheet.append([(t + 0.1) * 1000, x, "ok" if i % 7 else None])
    book.save(path)
    return path


def _tdms(path: Path) -> Path:
    """Groups "Setup" (properties only) and "Bench": channel "x" in mm, a waveform sampled every
    4 ms from t = 0.1 s."""
    from nptdms import ChannelObject, GroupObject, RootObject, TdmsWriter

    props = {"unit_string": "mm", "wf_increment": 0.004, "wf_start_offset": 0.1}
    with TdmsWriter(str(path)) as writer:
        writer.write_segment(
            [
                RootObject({"title": "drop 7"}),
                GroupObject("Setup", properties={"gain": 2.0}),  # settings only, no channel
                GroupObject("Bench"),
                ChannelObject("Bench", "x", decay(T) * 1000, properties=props),
            ]
        )
    return path


ENTRY = """[[measured]]
name = "bench"
file = "{file}"
{part}time = "{time}"
offset = -0.1
[measured.signals]
"Joints/slide:qpos" = {{ column = "x" }}
"""


def test_a_sheet_of_a_workbook_reads_as_si_series_with_its_units_row(tmp_path: Path) -> None:
    book = _workbook(tmp_path / "bench.xlsx")
    assert parts(book) == ["notes", "run2"]
    columns, units = read_lab(book, part="run2")
    assert set(columns) == {"t", "x"} and units == {"t": "ms", "x": "mm"}  # the comment column is words
    sc = load_scenario(scenario(tmp_path, ENTRY.format(file="bench.xlsx", part='sheet = "run2"\n', time="t")))
    t, x = sc.measured[0].series("Joints/slide:qpos")
    assert t[0] == pytest.approx(0.0, abs=1e-12) and t.size == T.size
    np.testing.assert_allclose(x, decay(t), atol=1e-11)


def test_a_group_of_a_tdms_file_reads_as_si_series_with_its_channels_units(tmp_path: Path) -> None:
    path = _tdms(tmp_path / "bench.tdms")
    assert parts(path) == ["Setup", "Bench"]
    columns, units = read_lab(path, part="Bench")
    assert units == {"x": "mm", "time": "s"}
    np.testing.assert_allclose(columns["time"], T + 0.1, atol=1e-12)
    sc = load_scenario(scenario(tmp_path, ENTRY.format(file="bench.tdms", part='group = "Bench"\n', time="time")))
    t, x = sc.measured[0].series("Joints/slide:qpos")
    np.testing.assert_allclose(t, T, atol=1e-12)
    np.testing.assert_allclose(x, decay(t), atol=1e-11)


@pytest.mark.parametrize(
    "file, part, words",
    [
        ("bench.xlsx", 'sheet = "run3"\n', "bench.xlsx has no sheet 'run3' (it has notes, run2)"),
        ("bench.tdms", 'group = "Rig"\n', "bench.tdms has no group 'Rig' (it has Setup, Bench)"),
        ("bench.xlsx", 'group = "run2"\n', "'group' is for .tdms files, not bench.xlsx"),
        ("bench.xlsx", "", "has no column 'x'"),  # the first sheet, "notes", is words only
    ],
)
def test_a_part_that_does_not_fit_is_one_line_at_its_field(tmp_path: Path, file: str, part: str, words: str) -> None:
    _workbook(tmp_path / "bench.xlsx")
    _tdms(tmp_path / "bench.tdms")
    with pytest.raises(ConfigError) as info:
        load_scenario(scenario(tmp_path, ENTRY.format(file=file, part=part, time="t")))
    message = str(info.value)
    assert words in message and message.startswith(str(tmp_path / "sm.toml")) and "\n" not in message, message


@pytest.mark.parametrize("suffix, key, part", [(".xlsx", "sheet", "run2"), (".tdms", "group", "Bench")])
def test_a_dropped_workbook_or_tdms_file_is_offered_from_its_first_part_with_numbers(
    tmp_path: Path, open_session, suffix: str, key: str, part: str
) -> None:
    """Opened (or dropped) in the app: offered from the first sheet or group that holds numbers,
    and the entry added names it, so that the scenario reads the same part again."""
    from mjrig import commands as C

    path = (_workbook if suffix == ".xlsx" else _tdms)(tmp_path / f"bench{suffix}")
    s = open_session(scenario(tmp_path, ""))
    try:
        s.handle(C.OpenModel(str(path)))
        offer = s.publish().bench.measured_offer
        assert offer is not None and offer.part == part, offer
        time = "t" if suffix == ".xlsx" else "time"
        assert offer.time == time and dict((c, u) for c, _, u in offer.guesses)["x"] == "mm"
        s.handle(
            C.AddMeasured(
                str(path),
                name="b",
                time=time,
                time_unit=offer.time_unit,
                offset=-0.1,
                signals=(("Joints/slide:qpos", "x", "mm"),),
                part=offer.part,
            )
        )
        assert s.document.doc["measured"][0][key] == part
        ((_, _, t, x),) = s.publish().comparison.measured.series
        np.testing.assert_allclose(x, decay(t), atol=1e-9)
    finally:
        s.close()


def test_another_sheet_chosen_in_the_dialog_is_offered_with_its_columns(tmp_path: Path, open_session) -> None:
    """The dialog's sheet choice (``OfferPart``): the columns of the sheet chosen, every sheet
    still offered; a sheet of words only leaves the offer as it was, with the reason."""
    from openpyxl import load_workbook

    from mjrig import commands as C

    path = _workbook(tmp_path / "bench.xlsx")
    book = load_workbook(path)
    third = book.create_sheet("run3")
    third.append(["time_s", "y_mm"])
    for t, x in zip(T, decay(T) * 1000):
        third.append([t, x])
    book.save(path)
    s = open_session(scenario(tmp_path, ""))
    try:
        s.handle(C.OpenModel(str(path)))
        offer = s.publish().bench.measured_offer
        assert offer is not None and offer.part == "run2" and offer.parts == ("notes", "run2", "run3")
        s.handle(C.OfferPart("run3"))
        offer = s.publish().bench.measured_offer
        assert offer is not None and offer.part == "run3" and offer.columns == ("time_s", "y_mm"), offer
        assert offer.time == "time_s" and not offer.error
        with pytest.raises(ConfigError, match="bench.xlsx: sheet 'notes' has no column of numbers"):
            s.handle(C.OfferPart("notes"))
        kept = s.publish().bench.measured_offer
        assert kept is not None and kept.part == "run3" and "sheet 'notes' has no column of numbers" in kept.error
    finally:
        s.close()
