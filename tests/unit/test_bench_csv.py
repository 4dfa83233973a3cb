"""Bench CSVs as lab software writes them (CONTRACT 14, "Bench files as they come"): the separator
and the decimal comma found, comment lines and a byte-order mark passed over, quoted headers,
a units row under the header giving the entry its units, and a file that still cannot be read
named with its line. Each file is the closed-form decay of ``test_measured`` written one way, and
must read back as the same SI series."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.scenario.measured_csv import MeasuredFileError, read_csv
from mjrig.scenario.parse import load_scenario
from tests.unit.test_measured import CSV_ENTRY, decay, scenario

T = np.arange(0.0, 2.0, 0.004)
"""The samples' times (s)."""


def _rows(separator: str, *, comma: bool) -> list[str]:
    """t (ms, 0.1 s late) and x (mm) per line, joined by ``separator``, decimal commas or points."""
    out = []
    for t, x in zip(T, decay(T) * 1000):
        cells = [f"{(t + 0.1) * 1000:.6f}", f"{x:.9f}"]
        out.append(separator.join(c.replace(".", ",") if comma else c for c in cells))
    return out


def _write(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


EU = "t_ms;x_mm\nms;mm\n" + "\n".join(_rows(";", comma=True)) + "\n"
"""What European lab software writes: ``;``, decimal commas, a units row."""


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(EU, id="semicolon-decimal-comma-units"),
        pytest.param("t_ms;x_mm\n" + "\n".join(_rows(";", comma=False)) + "\n", id="semicolon"),
        pytest.param("t_ms,x_mm\nms,mm\n" + "\n".join(_rows(",", comma=False)) + "\n", id="units-row"),
        pytest.param("t_ms\tx_mm\n" + "\n".join(_rows("\t", comma=False)) + "\n", id="tab"),
        pytest.param("  t_ms   x_mm\n" + "\n".join("  " + r for r in _rows("    ", comma=False)) + "\n", id="blanks"),
        pytest.param(
            "# rig 3, run 7\n# operator: A\n\nt_ms,x_mm\n"
            + "\n".join(_rows(",", comma=False)[:100])
            + "\n# paused\n"
            + "\n".join(_rows(",", comma=False)[100:])
            + "\n",
            id="comments",
        ),
        pytest.param(
            '\ufeff"t_ms";"x_mm"\r\n"[ms]";"[mm]"\r\n' + "\r\n".join(_rows(";", comma=True)) + "\r\n",
            id="bom-quoted-crlf",
        ),
        pytest.param(
            "t_ms;x_mm;\n" + "\n".join(r + ";" for r in _rows(";", comma=True)) + "\n", id="trailing-separator"
        ),
    ],
)
def test_each_dialect_reads_as_the_same_columns(tmp_path: Path, text: str) -> None:
    columns, units = read_csv(_write(tmp_path / "bench.csv", text))
    assert set(columns) >= {"t_ms", "x_mm"}
    np.testing.assert_allclose(columns["t_ms"], (T + 0.1) * 1000, atol=1e-9)
    np.testing.assert_allclose(columns["x_mm"], decay(T) * 1000, atol=1e-12)
    assert units == ({"t_ms": "ms", "x_mm": "mm"} if "\nms" in text or "[ms]" in text else {})


def test_a_units_row_gives_the_entry_its_units_and_the_time_its_unit(tmp_path: Path) -> None:
    """The entry names columns only: the units row says ms and mm, and the series are in s and m
    as with ``time_unit = "ms"`` and ``unit = "mm"`` written out."""
    _write(tmp_path / "bench.csv", EU)
    entry = """[[measured]]
name = "bench"
file = "bench.csv"
time = "t_ms"
offset = -0.1
[measured.signals]
"Joints/slide:qpos" = { column = "x_mm" }
"""
    sc = load_scenario(scenario(tmp_path, entry))
    t, x = sc.measured[0].series("Joints/slide:qpos")
    assert t[0] == pytest.approx(0.0, abs=1e-12) and t.size == T.size
    np.testing.assert_allclose(x, decay(t), atol=1e-11)
    assert sc.measured[0].signals["Joints/slide:qpos"].unit == "mm" and sc.measured[0].time_unit == "ms"


def test_the_entrys_own_units_win_over_the_units_row(tmp_path: Path) -> None:
    """A units row that is wrong (cm) is overruled by the entry's unit (mm) and time unit (ms)."""
    _write(tmp_path / "bench.csv", EU.replace("ms;mm", "s;cm", 1))
    t, x = load_scenario(scenario(tmp_path, CSV_ENTRY)).measured[0].series("Joints/slide:qpos")
    np.testing.assert_allclose(x, decay(t), atol=1e-11)


def test_a_single_column_reads(tmp_path: Path) -> None:
    columns, units = read_csv(_write(tmp_path / "one.csv", "x\n1.5\n2.5\n"))
    assert columns["x"].tolist() == [1.5, 2.5] and units == {}


def test_a_units_row_in_windows_1252_with_degrees_reads(tmp_path: Path) -> None:
    path = _write(tmp_path / "arm.csv", "t;angle\ns;°\n0;1,5\n0,5;2,5\n", encoding="cp1252")
    columns, units = read_csv(path)
    assert units == {"t": "s", "angle": "deg"}
    assert columns["angle"].tolist() == [1.5, 2.5] and columns["t"].tolist() == [0.0, 0.5]


@pytest.mark.parametrize(
    "text, words",
    [
        ("t,x,y\n0,1,2\n1,2\n2,3,4\n", "line 3 has 2 fields, the header 3"),
        ("# made by rig 3\nt;x\n0;1\n1;2;3;4\n", "line 4 has 4 fields, the header 2"),
        ("t,x\n0,1\nend of run\n", "line 3 has 1 field, the header 2"),
        ("# nothing but comments\n\n", "has no header row"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_line_with_its_line(tmp_path: Path, text: str, words: str) -> None:
    path = _write(tmp_path / "bad.csv", text)
    with pytest.raises(MeasuredFileError) as info:
        read_csv(path)
    message = str(info.value)
    assert message == f"bad.csv: {words}" or (message.startswith("bad.csv: ") and words in message), message
    assert "\n" not in message


def test_a_ragged_bench_file_in_a_scenario_is_one_line_at_its_file_field(tmp_path: Path) -> None:
    _write(tmp_path / "bench.csv", "t_ms;x_mm\nms;mm\n0;1\n4;2;9\n")
    entry = '[[measured]]\nname = "bench"\nfile = "bench.csv"\ntime = "t_ms"\n[measured.signals]\n"Joints/slide:qpos" = { column = "x_mm" }\n'
    with pytest.raises(ConfigError) as info:
        load_scenario(scenario(tmp_path, entry))
    assert "bench.csv: line 4 has 3 fields, the header 2" in str(info.value)
    assert "sm.toml:" in str(info.value)


@pytest.mark.parametrize("unit, fits", [("furlong", False), ("mm", True), ("m", True)])
def test_a_units_row_with_a_unit_mjrig_does_not_know_is_one_line_naming_those_it_does(
    tmp_path: Path, unit: str, fits: bool
) -> None:
    """A units row's unknown unit is refused at the entry's column, listing the units mjrig knows
    (nothing read); a known one, or the signal's own SI unit, is taken."""
    _write(tmp_path / "bench.csv", f"t;x\nms;{unit}\n0;1\n4;2\n8;3\n")
    entry = '[[measured]]\nname = "bench"\nfile = "bench.csv"\ntime = "t"\n[measured.signals]\n"Joints/slide:qpos" = { column = "x" }\n'
    if fits:
        t, x = load_scenario(scenario(tmp_path, entry)).measured[0].series("Joints/slide:qpos")
        np.testing.assert_allclose(x, np.array([1.0, 2.0, 3.0]) * (1e-3 if unit == "mm" else 1.0))
        return
    from mjrig.headless import prepare

    with pytest.raises(ConfigError) as info:
        prepare(load_scenario(scenario(tmp_path, entry)), record=False)
    message = str(info.value)
    assert "\n" not in message and "signals.Joints/slide:qpos.column" in message, message
    assert "bench.csv gives column 'x' the unit 'furlong'" in message and "length m, mm, cm, in" in message, message
