"""`recover` only adds: it reads what a recording left (a finished ``.whole`` part, a data file
whose index is damaged or gone, garbage inside the data) and never changes a byte of it unless
the recovered file holds every row that could be read; a run whose final rename failed says
where its rows are, and that advice works."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.errors import KeptAside, MjrigError, OutputError, output_fault
from mjrig.runtime.files import _parquet_stream
from mjrig.runtime.files._parquet_footer import PAGE_ROWS
from mjrig.runtime.files.parquet_sink import ParquetSink, recover, segment_dir
from tests.unit.test_parquet_sink import make_block
from tests.waiting import wait_for

COLS = ["time", "wall_time", "a"]


def unfinished(tmp_path: Path, sizes: list[int], name: str = "killed") -> tuple[Path, np.ndarray]:
    """What a SIGKILL leaves of a recording of row groups of ``sizes`` rows (its work folder,
    copied while the recorder runs), and the rows it holds (rows x COLS)."""
    out = tmp_path / f"live-{name}.parquet"
    sink = ParquetSink(out, flush_seconds=0.01)
    done = 0
    for rows in sizes:
        sink.write_block(COLS, make_block(done, rows, 1))
        done += rows
        wait_for(lambda: sink.rows_written == done, what="the rows handed over written")
    killed = tmp_path / f"{name}.parquet"
    shutil.copytree(segment_dir(out), segment_dir(killed))
    sink.close()
    (segment_dir(killed) / "holder").unlink(missing_ok=True)
    return killed, make_block(0, done, 1)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its SHA-256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def recovered(path: Path) -> tuple[Path, int, list[str]]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got, rows = recover(path)
    return got, rows, [str(w.message) for w in said]


def rows_of(path: Path) -> np.ndarray:
    table = pq.read_table(path)
    return np.column_stack([table.column(c).to_numpy() for c in COLS])


SIZES = [100, 2 * PAGE_ROWS + 7000, 300, 3 * PAGE_ROWS + 5000, PAGE_ROWS - 1, 50]
"""Row groups of one page per column and of several (pages of PAGE_ROWS values, a shorter last)."""


@pytest.mark.parametrize("damage", ["garbage", "empty", "missing", "huge length", "garbage after two"])
def test_a_damaged_index_recovers_every_row_group_from_the_pages(tmp_path: Path, damage: str) -> None:
    killed, expected = unfinished(tmp_path, SIZES)
    index = segment_dir(killed) / "part-0001.index"
    if damage == "garbage":
        index.write_bytes(os.urandom(len(index.read_bytes())))
    elif damage == "empty":
        index.write_bytes(b"")
    elif damage == "missing":
        index.unlink()
    elif damage == "huge length":  # a record that claims 2^62 bytes, CRC and all
        import struct
        import zlib

        head = struct.pack("<4sQQ", _parquet_stream._MAGIC, 2**62, 100)
        index.write_bytes(head + zlib.crc32(head).to_bytes(4, "little"))
    else:
        raw = index.read_bytes()
        index.write_bytes(raw[: 2 * 24] + os.urandom(24) + raw[3 * 24 :])
    data_size = (segment_dir(killed) / "part-0001.data").stat().st_size
    path, rows, said = recovered(killed)
    assert path == killed and rows == len(expected) == sum(SIZES)
    np.testing.assert_array_equal(rows_of(path), expected)
    assert pq.read_metadata(path).num_row_groups == len(SIZES)
    assert path.stat().st_size > data_size  # the data whole, and a footer
    assert not segment_dir(killed).exists()
    assert len(said) == 1 and "found from its pages" in said[0]


def test_a_part_closed_with_its_footer_and_its_index_lost_is_read_whole(tmp_path: Path) -> None:
    """A part closed when the columns changed ends with pyarrow's footer (here bigger than any
    of its row groups): read by its pages (its index gone), the footer is no damage, and both
    parts are recovered into one file."""
    live = tmp_path / "live.parquet"
    wide = ["time", "wall_time"] + [f"s{k}" for k in range(70)]
    sink = ParquetSink(live, flush_seconds=0.005)
    for i in range(40):
        sink.write_block(wide, make_block(i * 5, 5, 70))
        wait_for(lambda: sink.rows_written == (i + 1) * 5, what="the rows handed over written")
    sink.write_block(wide + ["b"], np.column_stack([make_block(200, 50, 70), np.ones(50)]))
    wait_for(lambda: sink.rows_written == 250, what="the rows handed over written")
    killed = tmp_path / "killed.parquet"
    shutil.copytree(segment_dir(live), segment_dir(killed))
    sink.close()
    (segment_dir(killed) / "part-0001.index").unlink()
    leftover = tmp_path / ".killed.parquet.recover-999999"  # what a killed recover left
    leftover.write_bytes(b"half a file")
    path, rows, said = recovered(killed)
    table = pq.read_table(path)
    assert rows == 250 and table.column_names == wide + ["b"]
    np.testing.assert_array_equal(np.column_stack([table.column(c).to_numpy() for c in wide]), make_block(0, 250, 70))
    assert said == ["part-0001.data: 40 row groups (200 rows) found from its pages"]
    assert not segment_dir(killed).exists() and not leftover.exists()


def test_garbage_inside_the_data_keeps_the_row_groups_before_it(tmp_path: Path) -> None:
    killed, expected = unfinished(tmp_path, SIZES)
    data = segment_dir(killed) / "part-0001.data"
    start = pq.ParquetFile(tmp_path / "live-killed.parquet").metadata.row_group(2).column(0).data_page_offset
    raw = bytearray(data.read_bytes())
    raw[start : start + 64] = b"\xff" * 64  # the third row group's first page header
    data.write_bytes(bytes(raw))
    before = snapshot(segment_dir(killed))
    path, rows, said = recovered(killed)
    assert rows == SIZES[0] + SIZES[1]
    np.testing.assert_array_equal(rows_of(path), expected[:rows])
    assert len(said) == 1 and f"from byte {start}" in said[0] and "killed.parquet.parts.damaged" in said[0]
    aside = killed.with_name("killed.parquet.parts.damaged")
    assert not segment_dir(killed).exists() and snapshot(aside) == before  # nothing of it changed


def test_pages_that_make_row_groups_two_ways_are_kept_aside_not_guessed(tmp_path: Path) -> None:
    """Without its index, a row group of exactly 2 x PAGE_ROWS rows cannot be told from two of
    PAGE_ROWS rows: the rows before it are recovered, the rest kept aside, none made up."""
    killed, expected = unfinished(tmp_path, [100, 2 * PAGE_ROWS, 100])
    (segment_dir(killed) / "part-0001.index").unlink()
    path, rows, said = recovered(killed)
    assert rows == 100
    np.testing.assert_array_equal(rows_of(path), expected[:100])
    assert len(said) == 2 and f"make row groups of {PAGE_ROWS} or {2 * PAGE_ROWS} rows" in said[1]
    assert ".damaged" in said[1]


def test_a_failed_final_rename_says_where_the_rows_are_and_recover_takes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "x.parquet"
    real = os.replace

    def replace(src: object, dst: object) -> None:
        if Path(dst) == out:  # the output folder turned unwritable before the last rename
            raise PermissionError(errno.EACCES, "Permission denied", str(src), None, str(dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    sink = ParquetSink(out, flush_seconds=0.01)
    sink.write_block(COLS, make_block(0, 30000, 1))
    with pytest.raises(KeptAside) as info:
        sink.close()
    whole = segment_dir(out) / "part-0001.whole"
    assert str(info.value) == (
        f"cannot write {out}: permission denied; kept 30000 rows in {whole}, a valid Parquet "
        f"file; `mjrig recover {out}` once the folder is writable"
    )
    assert "free space" not in str(info.value)
    assert pq.read_table(whole).num_rows == 30000
    monkeypatch.undo()
    path, rows, said = recovered(out)
    assert (path, rows, said) == (out, 30000, [])
    np.testing.assert_array_equal(rows_of(out), make_block(0, 30000, 1))
    assert not segment_dir(out).exists()


@pytest.mark.parametrize("damage", ["a row group", "the footer"])
def test_a_damaged_whole_part_gives_the_row_groups_before_the_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    out = tmp_path / "x.parquet"
    real = os.replace
    monkeypatch.setattr(
        os,
        "replace",
        lambda src, dst: (
            (_ for _ in ()).throw(PermissionError(errno.EACCES, "Permission denied"))
            if Path(dst) == out
            else real(src, dst)
        ),
    )
    sink = ParquetSink(out, flush_seconds=0.01)
    for i in range(4):
        sink.write_block(COLS, make_block(i * 100, 100, 1))
        wait_for(lambda: sink.rows_written == (i + 1) * 100, what="the rows handed over written")
    with pytest.raises(KeptAside):
        sink.close()
    monkeypatch.undo()
    whole = segment_dir(out) / "part-0001.whole"
    raw = bytearray(whole.read_bytes())
    third = pq.read_metadata(whole).row_group(2).column(0).data_page_offset
    if damage == "a row group":
        raw[third : third + 16] = b"\xff" * 16
    else:
        raw[-40:-8] = b"\xff" * 32
    whole.write_bytes(bytes(raw))
    before = snapshot(segment_dir(out))
    path, rows, said = recovered(out)
    assert rows == 200 if damage == "a row group" else rows == 400
    np.testing.assert_array_equal(rows_of(path), make_block(0, rows, 1))
    if damage == "a row group":
        assert len(said) == 1 and f"from byte {third}" in said[0]
    else:  # its row groups found from its pages; what follows them (the footer) was damaged
        assert len(said) == 2 and said[1].startswith("part-0001.whole: its footer is unreadable")
    assert f"kept in {out.with_name('x.parquet.parts.damaged')}" in said[-1]
    assert snapshot(out.with_name("x.parquet.parts.damaged")) == before


def test_a_file_already_there_is_never_replaced(tmp_path: Path) -> None:
    killed, expected = unfinished(tmp_path, [100, 200])
    killed.write_bytes(b"an earlier recording")
    path, rows, said = recovered(killed)
    assert killed.read_bytes() == b"an earlier recording"
    assert path == tmp_path / "killed-2.parquet" and rows == 300
    np.testing.assert_array_equal(rows_of(path), expected)
    assert said == [f"{killed} exists and was left as it is: the rows are recovered into {path}"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG])
def test_a_recover_that_cannot_write_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    killed, _ = unfinished(tmp_path, [100, 200])
    (segment_dir(killed) / "part-0001.index").write_bytes(b"")  # the pages are read
    before = snapshot(tmp_path)

    def link(src: object, dst: object) -> None:
        raise OSError(code, os.strerror(code), str(dst))

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(OutputError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # how the rows were found
        recover(killed)
    assert output_fault(OSError(code, "")).cause in str(info.value) and "nothing in" in str(info.value)
    assert ("free space" in str(info.value)) == (code == errno.ENOSPC)
    assert snapshot(tmp_path) == before  # no file changed, none left behind


def test_nothing_to_recover_changes_nothing(tmp_path: Path) -> None:
    killed, _ = unfinished(tmp_path, [100])
    data = segment_dir(killed) / "part-0001.data"
    data.write_bytes(b"PAR1" + b"\x00" * 10)  # killed inside its first row group
    (segment_dir(killed) / "part-0001.index").write_bytes(b"")
    before = snapshot(segment_dir(killed))
    with pytest.raises(MjrigError, match="nothing to recover"):
        recover(killed)
    assert snapshot(segment_dir(killed)) == before and not killed.exists()


@pytest.mark.parametrize(
    ("code", "cause", "fix"),
    [
        (errno.ENOSPC, "no space left on the device", "free space"),
        (errno.EFBIG, "file too large", "raise the file-size limit"),
        (errno.EACCES, "permission denied", "make the folder writable"),
        (errno.EROFS, "read-only file system", "write to a writable file system"),
    ],
)
def test_an_output_fault_names_its_cause(code: int, cause: str, fix: str) -> None:
    for error in (OSError(code, os.strerror(code)), f"OSError: [Errno {code}] {os.strerror(code)}: 'x'"):
        fault = output_fault(error)
        assert fault.cause.startswith(cause) and fault.fix == fix
    unknown = output_fault("telemetry writer fell behind")
    assert unknown.cause == "telemetry writer fell behind" and unknown.advice("run again") == (
        "run again once the cause is fixed"
    )


def test_the_writer_splits_pages_where_the_scan_expects() -> None:
    """The scan of a part without its index counts on pages of PAGE_ROWS values (ENCODING's)."""
    import io

    import pyarrow as pa

    from mjrig.runtime.files._parquet_footer import find_row_group, rebuild_row_group
    from mjrig.runtime.files.parquet_merge import ENCODING

    rows = 2 * PAGE_ROWS + 123
    buf = io.BytesIO()
    pq.write_table(pa.table({"time": np.arange(rows, dtype=float), "a": np.ones(rows)}), buf, **ENCODING)
    raw = memoryview(buf.getvalue())
    pages = raw[: len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")]
    meta, end = rebuild_row_group(pages, 4, ("time", "a"), rows, codec=1, page_rows=PAGE_ROWS)
    assert end == len(pages) and meta.rows == rows
    assert find_row_group(pages, 4, ("time", "a"))[0].rows == rows
    with pytest.raises(ValueError, match="where the writer puts"):
        rebuild_row_group(pages, 4, ("time", "a"), rows, codec=1, page_rows=20_000)
