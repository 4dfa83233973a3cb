"""`recover` deletes a recording's parts only when their rows are in a verified file: whatever is
damaged in a killed run's `.json`, index, data or metadata, it either recovers rows that are the
recorded ones (bit for bit, a prefix of them at least) or keeps every part as it was (aside, as
``NAME.parts.damaged``) and says so; it never writes other columns' pages as `time` (a `.json`
listing 5 of the part's 90 columns once gave 1.96 M rows of garbage and deleted the parts).
About 4 s: 24 damaged copies of one 90-column recording, each recovered."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.errors import MjrigError
from mjrig.runtime.files.parquet_segments import DamagedParts
from mjrig.runtime.files.parquet_sink import ParquetSink, recover, segment_dir
from tests.waiting import wait_for

pytestmark = pytest.mark.unit

COLUMNS = ["time", "wall_time", *(f"c{k}" for k in range(88))]
GROUPS = [400, 700, 300, 500]
RECORD = struct.Struct("<4sQQ")  # an index record: magic, the data's length after it, its rows (then CRC-32)


def rows(start: int, n: int) -> np.ndarray:
    """Rows ``start``.. of the recording: time in ms steps, wall_time rising, the rest swinging."""
    i = np.arange(start, start + n, dtype=np.float64)
    t = i * 1e-3
    return np.column_stack([t, t * 0.7, *(np.sin(t * (k + 1) + k) for k in range(len(COLUMNS) - 2))])


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """What a SIGKILL leaves of a 90-column recording of four row groups, and its rows."""
    work = tmp_path_factory.mktemp("killed")
    live = work / "live.parquet"
    sink = ParquetSink(live, flush_seconds=0.01)
    done = 0
    for n in GROUPS:
        sink.write_block(COLUMNS, rows(done, n))
        done += n
        wait_for(lambda: sink.rows_written == done, what="the rows handed over written")
    kept = work / "kept.parquet"
    shutil.copytree(segment_dir(live), segment_dir(kept))
    sink.close()
    (segment_dir(kept) / "holder").unlink(missing_ok=True)
    return kept, rows(0, done)


def _json(folder: Path, columns: object) -> None:
    (folder / "part-0001.json").write_text(json.dumps({"columns": columns}), encoding="utf-8")


def _records(folder: Path) -> list[tuple[bytes, int, int]]:
    raw = (folder / "part-0001.index").read_bytes()
    step = RECORD.size + 4
    return [RECORD.unpack_from(raw, p) for p in range(0, len(raw) - step + 1, step)]


def _write_records(folder: Path, records: list[tuple[bytes, int, int]]) -> None:
    out = b""
    for magic, end, n in records:
        body = RECORD.pack(magic, end, n)
        out += body + zlib.crc32(body).to_bytes(4, "little")
    (folder / "part-0001.index").write_bytes(out)


def _data(folder: Path, edit: Callable[[bytearray], bytearray]) -> None:
    path = folder / "part-0001.data"
    path.write_bytes(bytes(edit(bytearray(path.read_bytes()))))


def _scribble(at: float) -> Callable[[bytearray], bytearray]:
    def edit(b: bytearray) -> bytearray:
        k = int(len(b) * at)
        b[k : k + 64] = bytes(range(7, 71))
        return b

    return edit


DAMAGE: dict[str, Callable[[Path], None]] = {
    # the part's columns (.json)
    "json lists 5 of 90 columns": lambda f: _json(f, COLUMNS[:5]),
    "json lists 5 of 90, index gone": lambda f: (_json(f, COLUMNS[:5]), (f / "part-0001.index").unlink()),
    "json lists 89 of 90": lambda f: _json(f, COLUMNS[:-1]),
    "json lists one too many": lambda f: _json(f, [*COLUMNS, "extra"]),
    "json lists one too many, index gone": lambda f: (
        _json(f, [*COLUMNS, "extra"]),
        (f / "part-0001.index").unlink(),
    ),
    "json with time and a column swapped": lambda f: _json(f, [COLUMNS[2], *COLUMNS[1:2], COLUMNS[0], *COLUMNS[3:]]),
    "json empty list": lambda f: _json(f, []),
    "json not a list": lambda f: _json(f, 42),
    "json garbage": lambda f: (f / "part-0001.json").write_bytes(b"\xff{not json"),
    "json missing": lambda f: (f / "part-0001.json").unlink(),
    # its index
    "index garbage": lambda f: (f / "part-0001.index").write_bytes(bytes(range(256)) * 2),
    "index empty": lambda f: (f / "part-0001.index").write_bytes(b""),
    "index cut mid-record": lambda f: (f / "part-0001.index").write_bytes((f / "part-0001.index").read_bytes()[:-9]),
    "index rows wrong, CRC right": lambda f: _write_records(
        f, [(m, e, n + (7 if i == 1 else 0)) for i, (m, e, n) in enumerate(_records(f))]
    ),
    "index ends swapped, CRC right": lambda f: _write_records(
        f, [(m, _records(f)[(i + 1) % 4][1] if i < 2 else e, n) for i, (m, e, n) in enumerate(_records(f))]
    ),
    "index record twice": lambda f: _write_records(f, [_records(f)[0], *_records(f)]),
    # its data
    "data cut mid row group": lambda f: _data(f, lambda b: b[: int(len(b) * 0.6)]),
    "data garbage at a third": lambda f: _data(f, _scribble(0.33)),
    "data garbage near the end": lambda f: _data(f, _scribble(0.93)),
    "data zeroed at a half": lambda f: _data(f, lambda b: b[: len(b) // 2] + bytearray(len(b) - len(b) // 2)),
    "data garbage appended": lambda f: _data(f, lambda b: b + bytearray(range(200)) * 3),
    "data gone": lambda f: (f / "part-0001.data").unlink(),
    # the recording's metadata
    "meta garbage": lambda f: (f / "meta.json").write_bytes(b"\x00\x01garbage"),
    "nothing damaged": lambda f: None,
}


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_the_parts_are_gone_only_when_their_rows_are_in_a_verified_file(
    tmp_path: Path, killed: tuple[Path, np.ndarray], damage: str
) -> None:
    source, expected = killed
    path = tmp_path / "run.parquet"
    folder = segment_dir(path)
    shutil.copytree(segment_dir(source), folder)
    DAMAGE[damage](folder)
    before = _snapshot(folder)
    aside = folder.with_name(folder.name + ".damaged")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            got, n = recover(path)
        except MjrigError as exc:
            got, n, refused = None, 0, str(exc)
        else:
            refused = ""
    damaged = [w for w in said if issubclass(w.category, DamagedParts)]
    if got is not None:  # what was recovered is the recording's own rows: all, or a prefix
        table = pq.read_table(got)
        assert table.num_rows == n
        recovered = np.column_stack([table.column(c).to_numpy() for c in table.column_names if c in COLUMNS])
        assert [c for c in table.column_names if c in COLUMNS] == COLUMNS[: recovered.shape[1]], table.column_names
        np.testing.assert_array_equal(recovered, expected[:n, : recovered.shape[1]])
    if not folder.exists() and not aside.exists():  # the parts were deleted: every row is in the file
        assert got is not None and n == len(expected), (damage, n, [str(w.message) for w in said], refused)
    else:  # kept: as they were, byte for byte, and said
        kept = aside if aside.exists() else folder
        assert _snapshot(kept) == before, damage
        assert damaged or refused, (damage, [str(w.message) for w in said])
    if damage == "nothing damaged":
        assert n == len(expected) and not damaged and not folder.exists()
