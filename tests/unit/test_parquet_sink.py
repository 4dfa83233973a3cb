"""ParquetSink: round trip, mid-recording columns, metadata, crash safety and writer faults."""

from __future__ import annotations

import errno
import json
import shutil
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from mjrig.runtime.errors import MjrigError
from mjrig.runtime.files import _parquet_pace, _parquet_queue, _parquet_stream, parquet_merge, parquet_segments
from mjrig.runtime.files.parquet_sink import ParquetSink, recover, segment_dir
from tests.waiting import wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]


def make_block(start: int, rows: int, n_signals: int) -> np.ndarray:
    """Rows start..start+rows-1: time = index, wall_time = index / 10, signal k = index * (k + 2)."""
    t = np.arange(start, start + rows, dtype=np.float64)
    return np.column_stack([t, t / 10] + [t * (k + 2) for k in range(n_signals)])


def test_round_trip_values_order_and_nulls(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    rng = np.random.default_rng(0)
    cols = ["time", "wall_time", "Joints/hinge:qpos", "Bodies/a/b:x", "Loads/pull:fx"]
    blocks = [rng.normal(size=(int(rng.integers(1, 300)), len(cols))) for _ in range(20)]
    blocks[3][5, 2] = np.nan
    blocks[7][:, 4] = np.nan
    expected = np.concatenate(blocks)
    with ParquetSink(out, flush_seconds=0.05) as sink:
        for i, block in enumerate(blocks):
            sink.write_block(cols, block)
            block[:] = 1e9  # the caller may reuse its buffer at once
            if i % 5 == 0:
                time.sleep(0.08)  # let several segments form

    table = pq.read_table(out)
    assert table.column_names == cols
    assert sink.rows_written == table.num_rows == len(expected)
    assert sink.bytes_written == out.stat().st_size > 0
    assert sink.error is None
    got = np.column_stack([table.column(c).to_numpy(zero_copy_only=False) for c in cols])
    np.testing.assert_array_equal(got, expected)  # NaN positions included
    assert table.column(2).null_count == 1
    assert table.column(4).null_count == len(blocks[7])
    meta = pq.ParquetFile(out).metadata
    assert meta.row_group(0).column(0).compression == "LZ4"
    assert "BYTE_STREAM_SPLIT" in meta.row_group(0).column(2).encodings
    assert not segment_dir(out).exists()


def _record(
    out: Path,
    blocks: list[tuple[list[str], np.ndarray]],
    *,
    units: dict[str, str] | None = None,
    flush_seconds: float = 0.02,
) -> ParquetSink:
    with ParquetSink(out, flush_seconds=flush_seconds, units=units, metadata={"who": "test"}) as sink:
        for i, (cols, block) in enumerate(blocks):
            sink.write_block(cols, block)
            if i % 3 == 0:
                time.sleep(0.03)
    return sink


def test_the_file_equals_the_one_pyarrow_writes_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups encoded one by one, their footers put together (``_parquet_footer``): the
    same file content as pyarrow writing every row at once, and many row groups or one alike."""
    rng = np.random.default_rng(3)
    cols = ["time", "wall_time", "a", "b"]
    blocks = [(cols, rng.normal(size=(int(rng.integers(1, 2000)), 4))) for _ in range(12)]
    blocks[4][1][3:9, 2] = np.nan
    units = {"time": "s", "wall_time": "s", "a": "m"}
    many = _record(tmp_path / "many.parquet", blocks, units=units)
    monkeypatch.setattr(_parquet_pace, "ROW_GROUP_BYTES", 2**40)
    one = _record(tmp_path / "one.parquet", blocks, units=units, flush_seconds=3600.0)
    assert pq.ParquetFile(many.path).metadata.num_row_groups >= 4
    assert pq.ParquetFile(one.path).metadata.num_row_groups == 1
    reference = parquet_merge.recording_schema(tuple(cols), {"who": "test"}, units)
    data = np.concatenate([b for _, b in blocks])
    pq.write_table(parquet_merge.table_of(tuple(cols), [data], reference), tmp_path / "ref.parquet")
    ref = pq.read_table(tmp_path / "ref.parquet")
    for sink in (many, one):
        got = pq.read_table(sink.path)
        assert got.schema.equals(ref.schema, check_metadata=True)
        assert got.equals(ref)  # values, nulls, order
        assert sink.rows_written == got.num_rows == len(data) and sink.bytes_written == sink.path.stat().st_size
        assert pl.read_parquet(sink.path).shape == (len(data), 4)  # another reader takes it too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.parquet", "one.parquet", "ref.parquet"]


def test_a_block_handed_over_whole_is_written_as_it_was(tmp_path: Path) -> None:
    """A recorder offering its whole block (``whole=``) gets a written block's array of the same
    shape back once one is spare and goes on in it: nothing it writes afterwards reaches rows
    already queued, the hidden columns right of the block are not written, and a written
    block's array of the same shape comes back for the next rows."""
    cols = ["time", "wall_time", "a", "b"]
    sink = ParquetSink(tmp_path / "rec.parquet", flush_seconds=0.01)
    whole, start, swaps = np.full((50, 7), -1.0), 0, 0
    for k in range(40):
        rows = 50 if k < 39 else 17
        whole[:rows, :4] = make_block(start, rows, 2)
        whole[:rows, 4:] = 1e9  # what a recorder keeps beside its columns (derived columns' inputs)
        back = sink.write_block(cols, whole[:rows, :4], whole=whole)
        assert back.shape == whole.shape
        if back is not whole:
            swaps += 1
            whole = back
            whole[:] = -7.0  # all of it is the caller's now: were its rows still queued, they would show
        else:
            time.sleep(0.02)  # the writer gets ahead: a written block's array becomes spare
        start += rows
    sink.close()
    df = pl.read_parquet(tmp_path / "rec.parquet")
    assert swaps >= 10
    expected = make_block(0, start, 2)
    assert df.shape == (start, 4) and np.array_equal(df.to_numpy(), expected)


def test_the_file_is_written_while_recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups reach the disk as the run goes, each recoverable at once: a copy of the folder
    taken mid-run (what a SIGKILL leaves) recovers into every row group written; closing only
    adds the last one and the footer, and leaves no second copy of the rows."""
    monkeypatch.setattr(_parquet_pace, "ROW_GROUP_BYTES", 64 * 1024)
    monkeypatch.setattr(_parquet_pace, "ROW_GROUP_ROWS", 1)
    out = tmp_path / "out.parquet"
    part = segment_dir(out) / "part-0001.data"
    sink = ParquetSink(out, flush_seconds=0.02)
    sizes = []
    for i in range(6):
        sink.write_block(["time", "wall_time", "a"], make_block(i * 4000, 4000, 1))  # 96 kB
        wait_for(
            lambda: part.exists() and part.stat().st_size > (sizes[-1] if sizes else 0),
            what="the next row group in the part's data file",
        )
        sizes.append(part.stat().st_size)
    wait_for(lambda: sink.rows_written == 24000, what="the rows handed over written")
    shutil.copytree(segment_dir(out), tmp_path / "killed.parquet.parts")
    sink.write_block(["time", "wall_time", "a"], make_block(24000, 10, 1))
    sink.close()
    meta = pq.ParquetFile(out).metadata
    assert meta.num_row_groups == 7  # six while recording, the last at close
    np.testing.assert_array_equal(pq.read_table(out).column("a").to_numpy(), np.arange(24010) * 2.0)
    assert not segment_dir(out).exists()
    assert out.stat().st_size < sizes[-1] * 1.2  # the rows once, and a footer
    path, rows = recover(tmp_path / "killed.parquet")
    assert rows == 24000
    np.testing.assert_array_equal(pq.read_table(path).column("a").to_numpy(), np.arange(24000) * 2.0)


def test_units_changed_mid_recording_are_the_files(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    with ParquetSink(out, units={"a": "m"}, flush_seconds=0.02) as sink:
        sink.write_block(["time", "wall_time", "a"], make_block(0, 10, 1))
        wait_for(lambda: sink.rows_written == 10, what="the rows handed over written")
        sink.set_units({"a": "mm"})
        sink.write_block(["time", "wall_time", "a"], make_block(10, 10, 1))
    assert pq.read_schema(out).field("a").metadata == {b"unit": b"mm"}
    assert pq.read_table(out).num_rows == 20


def test_column_added_mid_recording_is_null_before(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    with ParquetSink(out, units={"time": "s"}, flush_seconds=0.05) as sink:
        sink.write_block(["time", "wall_time", "a"], make_block(0, 100, 1))
        time.sleep(0.15)  # first segment written before the new column appears
        sink.set_units({"Loads/new:fx": "N"})
        sink.write_block(["time", "wall_time", "a", "Loads/new:fx"], make_block(100, 50, 2))
        # and a change within one flush (same queue drain): new segment too
        sink.write_block(["time", "wall_time", "a", "Loads/new:fx", "c"], make_block(150, 25, 3))
        sink.write_block(["time", "wall_time", "a", "Loads/new:fx", "c"], make_block(175, 25, 3))
    cols = ["time", "wall_time", "a", "Loads/new:fx", "c"]
    t = np.arange(200.0)
    new_expected = np.where(t >= 100, t * 3, np.nan)
    c_expected = np.where(t >= 150, t * 4, np.nan)

    table = pq.read_table(out)
    assert table.column_names == cols
    assert table.column("Loads/new:fx").null_count == 100
    assert table.column("c").null_count == 150
    assert table.column("Loads/new:fx").to_pylist()[:100] == [None] * 100
    np.testing.assert_array_equal(table.column("time").to_numpy(), t)

    df = pl.read_parquet(out)
    assert df.columns == cols
    assert df["Loads/new:fx"].null_count() == 100
    assert df["c"].null_count() == 150
    np.testing.assert_array_equal(df["a"].to_numpy(), t * 2)
    np.testing.assert_array_equal(df["Loads/new:fx"].to_numpy(), new_expected)

    pdf = pd.read_parquet(out)
    assert list(pdf.columns) == cols
    assert int(pdf["Loads/new:fx"].isna().sum()) == 100
    np.testing.assert_array_equal(pdf["Loads/new:fx"].to_numpy(dtype=float), new_expected)
    np.testing.assert_array_equal(pdf["c"].to_numpy(dtype=float), c_expected)
    assert all(str(pdf[c].dtype).lower() in ("float64", "double[pyarrow]") for c in cols)


def test_column_dropped_mid_recording_is_null_after(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    with ParquetSink(out) as sink:
        sink.write_block(["time", "wall_time", "a", "b"], make_block(0, 10, 2))
        sink.write_block(["time", "wall_time", "b"], make_block(10, 10, 1) * [1, 1, 1.5])
    df = pl.read_parquet(out)
    assert df.columns == ["time", "wall_time", "a", "b"]
    assert df["a"].null_count() == 10 and df["a"][:10].null_count() == 0
    assert df["b"].null_count() == 0


def test_metadata_and_units_read_back(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    metadata = {
        "model_path": "/m/arm.xml",
        "model_sha256": "ab" * 32,
        "scenario": 'name = "x"\n[[loads]]\nkind = "force"\n',
        "mujoco_version": "3.3.0",
        "mjrig_version": "0.1.0",
        "start_time": "2025-01-01T00:00:00+00:00",
    }
    units = {"time": "s", "wall_time": "s", "Joints/j:qpos": "rad", "Unused:x": "m"}
    with ParquetSink(out, metadata=metadata, units=units) as sink:
        sink.write_block(["time", "wall_time", "Joints/j:qpos"], make_block(0, 5, 1))
        sink.set_units({"Loads/l:fx": "N"})
        sink.write_block(["time", "wall_time", "Joints/j:qpos", "Loads/l:fx"], make_block(5, 5, 2))
    schema = pq.read_schema(out)
    kv = schema.metadata
    for key, value in metadata.items():
        assert kv[key.encode()] == value.encode()
    stored_units = json.loads(kv[b"mjrig.units"])
    assert stored_units == {"time": "s", "wall_time": "s", "Joints/j:qpos": "rad", "Loads/l:fx": "N"}
    assert schema.field("time").metadata == {b"unit": b"s"}
    assert schema.field("Joints/j:qpos").metadata == {b"unit": b"rad"}
    assert schema.field("Loads/l:fx").metadata == {b"unit": b"N"}
    assert all(str(f.type) == "double" for f in schema)
    assert pq.read_table(out).schema.field("Loads/l:fx").metadata == {b"unit": b"N"}


def test_close_twice_and_use_after_close(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    sink = ParquetSink(out)
    sink.write_block(("time", "wall_time"), make_block(0, 3, 0))
    assert sink.close() == out
    assert sink.close() == out
    with sink:  # __exit__ closes a third time
        pass
    assert pq.read_table(out).num_rows == 3 == sink.rows_written
    with pytest.raises(MjrigError):
        sink.write_block(("time", "wall_time"), make_block(3, 3, 0))


def test_empty_recording_gives_valid_file(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    with ParquetSink(out, metadata={"k": "v"}) as sink:
        pass
    table = pq.read_table(out)
    assert table.num_rows == 0 and sink.rows_written == 0
    assert table.column_names == ["time", "wall_time"]
    assert pq.read_schema(out).metadata[b"k"] == b"v"


def test_bad_input_is_rejected(tmp_path: Path) -> None:
    with ParquetSink(tmp_path / "out.parquet") as sink:
        with pytest.raises(ValueError, match="time"):
            sink.write_block(["wall_time", "time"], np.zeros((1, 2)))
        with pytest.raises(ValueError, match="shape"):
            sink.write_block(["time", "wall_time", "a"], np.zeros((4, 2)))
        with pytest.raises(ValueError, match="duplicate"):
            sink.write_block(["time", "wall_time", "a", "a"], np.zeros((1, 4)))
        with pytest.raises(TypeError):
            sink.set_units({"a": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        ParquetSink(tmp_path / "x.parquet", flush_seconds=0)
    (tmp_path / "a_file").write_text("not a folder")
    with pytest.raises(MjrigError):
        ParquetSink(tmp_path / "a_file" / "dir.parquet")
    with ParquetSink(tmp_path / "new" / "folders" / "x.parquet") as sink:  # missing folders are made
        sink.write_block(["time", "wall_time"], np.zeros((3, 2)))
    assert (tmp_path / "new" / "folders" / "x.parquet").exists()


def test_row_groups_are_whole_on_disk_while_recording(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    sink = ParquetSink(out, flush_seconds=0.05)
    try:
        for i in range(5):
            sink.write_block(["time", "wall_time", "a"], make_block(i * 10, 10, 1))
            wait_for(lambda: sink.rows_written == (i + 1) * 10, what="the rows handed over written")
        (stem,) = _parquet_stream.parts(segment_dir(out))
        columns, groups, _codec = _parquet_stream.part_groups(stem)
        assert columns == ("time", "wall_time", "a") and [rows for _, rows in groups] == [10] * 5
        assert groups[-1][0] == stem.with_suffix(".data").stat().st_size
        assert json.loads((segment_dir(out) / "meta.json").read_text())["units"] == {}
        # an unfinished recording blocks a new sink on the same path
        with pytest.raises(MjrigError, match="recover"):
            ParquetSink(out)
    finally:
        sink.close()
    assert pq.read_table(out).num_rows == 50


def test_write_block_does_not_wait_for_a_stalled_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _parquet_stream.RowGroupFile.append
    release = threading.Event()

    def stalled(self, blocks):  # type: ignore[no-untyped-def]
        release.wait(30)  # a disk that hangs (NFS, USB stick)
        return real(self, blocks)

    monkeypatch.setattr(_parquet_stream.RowGroupFile, "append", stalled)
    sink = ParquetSink(tmp_path / "out.parquet", flush_seconds=0.01)
    producer = threading.Thread(
        target=lambda: [sink.write_block(["time", "wall_time", "a"], make_block(i * 10, 10, 1)) for i in range(100)]
    )
    producer.start()
    producer.join(10)  # liveness, not speed: it would hang if write_block waited on the disk
    stuck = producer.is_alive()
    release.set()
    assert not stuck
    assert sink.pending_rows > 0 and sink.rows_written < 1000
    sink.close()
    assert sink.rows_written == 1000 == pq.read_table(sink.path).num_rows
    assert sink.pending_rows == 0


def test_recover_without_segments_raises(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    with pytest.raises(MjrigError, match="nothing to recover"):
        recover(out)
    segment_dir(out).mkdir()
    (segment_dir(out) / "meta.json").write_text('{"metadata": {}, "units": {}}')
    (segment_dir(out) / "seg-000001.rows.tmp").write_bytes(b"half a segment")
    with pytest.raises(MjrigError, match="nothing to recover") as info:
        recover(out)
    assert "\n" not in str(info.value)
    assert not out.exists()


def _fault_after_first_segments(
    tmp_path: Path,
    inject: Callable[[Path], None],
) -> tuple[ParquetSink, int]:
    """Record 300 rows to disk, call ``inject``, keep writing; returns (sink, rows before)."""
    out = tmp_path / "out.parquet"
    sink = ParquetSink(out, flush_seconds=0.05)
    for i in range(3):
        sink.write_block(["time", "wall_time", "a"], make_block(i * 100, 100, 1))
    wait_for(lambda: sink.rows_written == 300, what="the rows handed over written")
    inject(segment_dir(out))
    n = 300
    for _ in range(10):  # never raises, even once the writer has failed
        sink.write_block(["time", "wall_time", "a"], make_block(n, 100, 1))
        n += 100
        time.sleep(0.02)
    wait_for(lambda: sink.error is not None, what="the writer's error")
    sink.write_block(["time", "wall_time", "a"], make_block(n, 100, 1))
    assert sink.rows_written == 300
    return sink, 300


def test_disk_full_sets_error_and_keeps_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _parquet_stream.RowGroupFile.append
    full = threading.Event()

    def append(self, blocks):  # type: ignore[no-untyped-def]
        if full.is_set():
            raise OSError(errno.ENOSPC, "No space left on device", str(self.stem))
        return real(self, blocks)

    monkeypatch.setattr(_parquet_stream.RowGroupFile, "append", append)
    sink, before = _fault_after_first_segments(tmp_path, lambda _: full.set())
    assert "No space left on device" in (sink.error or "")
    assert "rows not recorded" in (sink.error or "")
    assert "\n" not in (sink.error or "")
    out = sink.close()
    table = pq.read_table(out)
    assert table.num_rows == before == sink.rows_written
    np.testing.assert_array_equal(table.column("time").to_numpy(), np.arange(before, dtype=float))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]  # no strays


def test_segment_dir_replaced_by_file_sets_error(tmp_path: Path) -> None:
    moved = tmp_path / "moved-away"

    def replace_with_file(folder: Path) -> None:
        folder.rename(moved)  # keep the segments written before the fault
        folder.write_text("not a folder")

    sink, before = _fault_after_first_segments(tmp_path, replace_with_file)
    assert "Error" in (sink.error or "")
    # the fault clears (the folder comes back) before the recording is closed
    segment_dir(sink.path).unlink()
    moved.rename(segment_dir(sink.path))
    out = sink.close()
    table = pq.read_table(out)
    assert table.num_rows == before == sink.rows_written
    np.testing.assert_array_equal(table.column("a").to_numpy(), np.arange(before) * 2.0)
    assert not segment_dir(out).exists()


def test_segment_dir_destroyed_close_raises_once(tmp_path: Path) -> None:
    import shutil

    def destroy(folder: Path) -> None:
        shutil.rmtree(folder)
        folder.write_text("not a folder")

    sink, before = _fault_after_first_segments(tmp_path, destroy)
    with pytest.raises(MjrigError, match=f"{before} recorded rows are lost"):
        sink.close()
    sink.close()  # safe twice, even after a failed close
    assert not sink.path.exists()


def test_rate_sampling_starts_again_after_time_goes_back() -> None:
    from mjrig.runtime.telemetry.signals import SignalManager

    sm = SignalManager(None, rate=100.0)
    due = [t for t in (i * 0.001 for i in range(1000)) if sm.due(t)]
    assert len(due) == 100  # one per 10 ms over 1 s
    after_reset = [t for t in (i * 0.001 for i in range(50)) if sm.due(t)]
    assert len(after_reset) == 5 and after_reset[0] == 0.0  # a reset restarts the schedule


def test_segments_are_cleared_away_after_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The segments of a finished recording go at once from where a new recording would look,
    and from the disk soon after; what a killed process left of them goes with the next one."""
    monkeypatch.setattr(parquet_segments, "DISCARD_NOW_BYTES", 0)  # as for a long recording's
    out = tmp_path / "out.parquet"
    left = tmp_path / ".out.parquet.parts.done-999999-1"  # a process killed while removing them
    left.mkdir()
    (left / "seg-000001.rows").write_bytes(b"x" * 1000)
    with ParquetSink(out, flush_seconds=0.01) as sink:
        sink.write_block(["time", "wall_time"], make_block(0, 10, 0))
        wait_for(lambda: sink.rows_written == 10, what="the rows handed over written")
        assert not left.exists()
    assert not segment_dir(out).exists()
    wait_for(lambda: sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"], what="only the finished file left")
    with ParquetSink(out) as again:  # the path is free for the next recording at once
        again.write_block(["time", "wall_time"], make_block(0, 5, 0))
    assert pq.read_table(out).num_rows == 5


def test_a_row_group_cut_short_by_a_kill_is_left_out(tmp_path: Path) -> None:
    """A kill while a row group's bytes or its index record were being written: recover keeps
    every whole row group before it and leaves the torn rest out, whichever of the two was cut."""
    out = tmp_path / "out.parquet"
    sink = ParquetSink(out, flush_seconds=0.01)
    for i in range(3):
        sink.write_block(["time", "wall_time", "a"], make_block(i * 100, 100, 1))
        wait_for(lambda: sink.rows_written == (i + 1) * 100, what="the rows handed over written")
    for case in ("data", "index"):
        killed = tmp_path / f"{case}.parquet"
        shutil.copytree(segment_dir(out), segment_dir(killed))
        stem = segment_dir(killed) / "part-0001"
        with open(stem.with_suffix(".data"), "ab") as fh:
            fh.write(b"\x15\x00\x15 half a row group")
        if case == "index":  # its record torn too
            index = stem.with_suffix(".index").read_bytes()
            stem.with_suffix(".index").write_bytes(index + index[:10])
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            path, rows = recover(killed)
        assert rows == 300, case
        assert [str(w.message) for w in said] == []  # a torn last row group holds no row that reads
        np.testing.assert_array_equal(pq.read_table(path).column("a").to_numpy(), np.arange(300) * 2.0)
    sink.close()


@pytest.mark.parametrize(
    ("codec", "magic", "named"), [("zstd", b"RGE1", "ZSTD"), ("lz4", b"RGE2", "LZ4"), ("snappy", b"RGE3", "SNAPPY")]
)
def test_a_part_an_earlier_recorder_left_is_recovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec, magic, named
) -> None:
    """Recordings are LZ4 of byte-stream-split values now; a part a killed run of the zstd (index
    magic RGE1), LZ4 (RGE2) or Snappy (RGE3) recorder of plain values left still gets a footer
    that names its pages' codec and encoding, and reads back whole."""
    monkeypatch.setitem(_parquet_stream.ENCODING, "compression", codec)
    monkeypatch.setitem(_parquet_stream.ENCODING, "use_byte_stream_split", False)
    monkeypatch.setattr(_parquet_stream, "_MAGIC", magic)
    out = tmp_path / "old.parquet"
    sink = ParquetSink(out, flush_seconds=0.01)
    for i in range(2):
        sink.write_block(["time", "wall_time", "a"], make_block(i * 100, 100, 1))
        wait_for(lambda: sink.rows_written == (i + 1) * 100, what="the rows handed over written")
    killed = tmp_path / "killed.parquet"
    shutil.copytree(segment_dir(out), segment_dir(killed))
    sink.close()
    monkeypatch.undo()  # what a newer mjrig finds
    path, rows = recover(killed)
    assert rows == 200
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == named
    np.testing.assert_array_equal(pq.read_table(path).column("a").to_numpy(), np.arange(200) * 2.0)


@pytest.mark.parametrize("missing", [(".data",), (".index", ".data")])
def test_a_part_killed_before_its_files_were_all_made_recovers_empty(tmp_path: Path, missing) -> None:
    """A kill between a part's first files (its columns) and its data file leaves no row of it:
    the folder is read (``part_groups``, what `mjrig recover` and a watcher read) as no row
    group, and recovering it says so in one line, never a traceback."""
    out = tmp_path / "out.parquet"
    sink = ParquetSink(out, flush_seconds=0.02)
    sink.write_block(["time", "wall_time", "a"], make_block(0, 10, 1))
    wait_for(lambda: sink.rows_written == 10, what="the rows handed over written")
    killed = tmp_path / "killed.parquet"
    shutil.copytree(segment_dir(out), segment_dir(killed))
    sink.close()
    for suffix in missing:
        (segment_dir(killed) / f"part-0001{suffix}").unlink()
    stem = _parquet_stream.parts(segment_dir(killed))[0]
    assert _parquet_stream.part_groups(stem)[:2] == (("time", "wall_time", "a"), [])
    with pytest.raises(MjrigError, match="nothing to recover .* no whole row group"):
        recover(killed)


def test_a_block_with_no_spare_array_has_the_writer_make_them_ready() -> None:
    """The first blocks of a recording find no written block's array to go on in, and copying
    them into fresh memory faults its pages in on the stepping thread: the queue then wants
    arrays of that shape (as many as the limit holds, eight at most), which the writer's thread
    makes (``make_spares``, pages touched) while no row group is due; the next blocks take them."""
    q, lock = _parquet_queue.BlockQueue(), threading.Condition()
    shape, nbytes = (50, 3), 50 * 3 * 8
    with lock:
        assert q.spare_of(shape, limit=3 * nbytes) is None
        wanted = q.take_wanted()
    assert wanted == (shape, 3) and q.take_wanted() is None
    _parquet_queue.make_spares(q, lock, *wanted, limit=3 * nbytes, due=lambda: True)
    assert q.spare == []  # a row group due comes first
    _parquet_queue.make_spares(q, lock, *wanted, limit=3 * nbytes, due=lambda: False)
    assert [a.shape for a in q.spare] == [shape] * 3 and all(not a.any() for a in q.spare)
    _parquet_queue.make_spares(q, lock, *wanted, limit=3 * nbytes, due=lambda: False)
    assert len(q.spare) == 3  # never past the limit
    with lock:
        taken = [q.spare_of(shape, limit=3 * nbytes) for _ in range(3)]
    assert all(a is not None for a in taken) and q.take_wanted() is None
    with lock:
        assert q.spare_of(shape, limit=100 * nbytes) is None
    assert q.take_wanted() == (shape, 8)
