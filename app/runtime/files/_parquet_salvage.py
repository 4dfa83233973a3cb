"""What a recording's parts hold, read without changing them (``mjrig recover``).

A part (``OUT.parquet.parts/part-NNNN.*``, see ``_parquet_stream``) is taken as it is found:

- ``.whole``: a part closed with its footer (a run whose last rename failed): the file as it
  is, every row group read back;
- ``.data`` with its ``.index``: the row groups the index vouches for, then (a kill between a
  row group and its index record, or an index that is garbage, empty, missing or claims more
  than the file holds) the row groups found by walking the data file's page headers
  (``_parquet_footer.find_row_group``);
- garbage inside the data: every whole row group before it; what comes after is named
  (``Salvage.lost``) and the caller keeps the part aside.

``salvage_part`` only reads; ``write_salvaged`` writes a new file (the data's row groups and a
footer rebuilt from their pages), read back before it counts. GUI-free; one thread.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.runtime.errors import exception_text
from mjrig.runtime.files._parquet_footer import (
    CODEC_LZ4_RAW,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    CutShort,
    RowGroupMeta,
    compose,
    find_row_group,
    rebuild_row_group,
)
from mjrig.runtime.files._parquet_stream import CODEC, part_groups, promised_rows, template_footer

__all__ = ["Salvage", "part_stems", "salvage_part", "write_salvaged", "read_back", "where_kept", "disagreement"]

_PART_FILE = re.compile(r"^part-(\d{4,})\.(json|data|index|whole)$")
TORN_FLOOR = 64 * 1024
"""Bytes after the last whole row group taken for a kill's torn row group (nothing readable
lost) when no row group of the part is bigger: more than that (and more than the biggest row
group) is damage, kept aside."""


@dataclass
class Salvage:
    """What part ``stem`` holds: its ``columns`` and ``rows``, read from ``source``.

    whole: ``source`` is a finished Parquet file, taken as it is. Otherwise ``groups`` are its
    row groups (footer metadata rebuilt from their pages) and ``end`` the byte after the last.
    lost: what could not be read (None: nothing, or only a kill's torn last row group).
    note: how the rows were found when the index could not say (a line for the user), or None."""

    stem: Path
    columns: tuple[str, ...] = ()
    source: Path | None = None
    whole: bool = False
    groups: list[RowGroupMeta] = field(default_factory=list)
    end: int = 4
    rows: int = 0
    lost: str | None = None
    note: str | None = None


def part_stems(folder: Path) -> list[Path]:
    """Every part of ``folder`` that left any of its files (``part-0001``...), in write order."""
    numbers = {}
    for entry in os.scandir(folder) if folder.is_dir() else ():
        found = _PART_FILE.match(entry.name)
        if found:
            numbers[int(found.group(1))] = folder / f"part-{found.group(1)}"
    return [numbers[n] for n in sorted(numbers)]


def read_back(path: Path) -> list[int]:
    """Rows of each row group of Parquet file ``path`` that decodes, in order, up to the first
    that does not (every page decompressed, its CRC-32 checked when it has one, and decoded).
    OSError/ArrowException when the file's footer cannot be read."""
    rows = []
    with pq.ParquetFile(path, page_checksum_verification=True) as pf:
        for i in range(pf.num_row_groups):
            try:
                rows.append(pf.read_row_group(i).num_rows)
            except (OSError, pa.ArrowException, ValueError):
                break
    return rows


def salvage_part(stem: Path) -> Salvage:
    """What part ``stem`` holds (see the module); reads only, never raises for a damaged part."""
    out = Salvage(stem)
    whole, data = stem.with_suffix(".whole"), stem.with_suffix(".data")
    if whole.exists():
        _whole(out, whole)
        if out.source is not None and (out.lost is None or not data.exists()):
            return out
        out = Salvage(stem)
        if not data.exists():  # its footer unreadable: its pages, as a data file's
            data = whole
            out.lost = f"{whole.name}: its footer is unreadable"
    try:
        out.columns = tuple(json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))["columns"])
    except FileNotFoundError:
        if data.exists() and data.stat().st_size > 4:
            out.lost = f"{data.name}: its columns ({stem.name}.json) are missing"
        return out
    except (OSError, ValueError, KeyError, TypeError) as exc:
        out.lost = f"{stem.name}.json unreadable ({exception_text(exc, with_type=True)})"
        return out
    if not data.exists():  # killed before its data file was made: none of its rows on disk
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a damaged index is said with what the pages gave
        _, indexed, codec = part_groups(stem) if data.suffix == ".data" else (None, [], CODEC)
    out.source = data
    _pages(out, indexed, codec=codec)
    promised = promised_rows(stem) if data.suffix == ".data" else 0
    if out.rows < promised and out.lost is None:  # an index record is written after its rows: these were lost
        out.lost = (
            f"{data.name}: holds {out.rows} of the {promised} rows its index names (the data file was cut or damaged)"
        )
    return out


def _whole(out: Salvage, whole: Path) -> None:
    """A finished part: taken as it is when every row group reads back; else its row groups up
    to the first that does not, from its pages (``out.source`` None: its footer is unreadable)."""
    try:
        good = read_back(whole)
        with pq.ParquetFile(whole) as pf:
            meta = pf.metadata
            out.columns = tuple(pf.schema_arrow.names)
            damage = meta.row_group(len(good)).column(0).data_page_offset if len(good) < meta.num_row_groups else None
            codec = _CODEC_NAMES.get(meta.row_group(0).column(0).compression) if meta.num_row_groups else None
    except (OSError, pa.ArrowException, ValueError):
        return
    out.source, out.rows = whole, sum(good)
    if damage is None:
        out.whole = True
        return
    out.lost = f"{whole.name}: row group {len(good) + 1} (from byte {damage}) and after do not decode"
    _pages(out, [], codec=codec if codec is not None else CODEC, stop_at=damage)


_CODEC_NAMES = {"SNAPPY": CODEC_SNAPPY, "ZSTD": CODEC_ZSTD, "LZ4": CODEC_LZ4_RAW, "LZ4_RAW": CODEC_LZ4_RAW}
"""Parquet's codec of pyarrow's name for it (pyarrow names LZ4_RAW "LZ4")."""


def _pages(out: Salvage, indexed: list[tuple[int, int]], *, codec: int, stop_at: int | None = None) -> Salvage:
    """Row groups of ``out.source`` from byte 4: those of ``indexed`` ((end, rows) each) while
    their pages agree, then those its page headers show, up to ``stop_at`` or the first damage."""
    assert out.source is not None
    data = out.source
    size = data.stat().st_size
    if size <= 4:
        return out
    start, biggest, problem, by_index = 4, 0, None, 0
    with open(data, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    whole_view = memoryview(mm)
    view = whole_view[: stop_at if stop_at is not None else size]
    try:
        for end, rows in indexed:
            try:
                meta, stop = rebuild_row_group(view, start, out.columns, rows, codec=codec)
            except ValueError:
                stop = -1
            if stop != end:  # the pages do not make the row group its index vouches for: the part's
                # columns are not its data's (a damaged .json), or the data is damaged; nothing after
                # it is guessed from the pages
                problem = (False, "not the row group its index names")
                break
            out.groups.append(meta)
            biggest, start = max(biggest, end - start), end
        by_index = len(out.groups)
        while start < len(view) and problem is None:
            try:
                meta, stop = find_row_group(view, start, out.columns, codec=codec)
            except ValueError as exc:  # CutShort, Ambiguous or no row group
                problem = (isinstance(exc, CutShort), exception_text(exc))  # not the exception: its frames hold views
                break
            out.groups.append(meta)
            biggest, start = max(biggest, stop - start), stop
    finally:
        view.release()
        whole_view.release()
        try:
            mm.close()
        except BufferError:  # a view still held by a frame: closed when it goes
            pass
    out.end, out.rows = start, sum(g.rows for g in out.groups)
    if len(out.groups) > by_index and stop_at is None:
        out.note = (
            f"{data.name}: {len(out.groups) - by_index} row groups ({sum(g.rows for g in out.groups[by_index:])}"
            f" rows) found from its pages{f' after the {by_index} its index names' if by_index else ''}"
        )
    left = size - start
    if left and _footer_at(data, start, size):  # a part closed with its footer (its columns changed after)
        left = 0
    torn = problem is not None and problem[0] and left <= max(biggest, TORN_FLOOR) and stop_at is None
    if left and not torn and out.lost is None and problem is not None and not problem[0] and by_index < len(indexed):
        out.lost = (
            f"{data.name}: the {left} bytes from byte {start} do not make the row group its index names "
            f"({out.stem.name}.json may not list its data's columns, or the data is damaged)"
        )
    elif left and not torn and out.lost is None:
        why = "cut short" if problem is not None and problem[0] else problem[1] if problem else "damaged"
        out.lost = f"{data.name}: the {left} bytes from byte {start} hold no row group that reads ({why})"
    return out


RESETS = 100
"""A recording's ``time`` goes back where a Reset took it back; more than once in this many rows
is no recording (other columns' values read as ``time``)."""


def disagreement(path: Path, rows: int) -> str | None:
    """Why the Parquet file ``path`` written from parts does not agree with itself, or None: it
    must hold ``rows`` rows (what the index or the scan promised), every column of each row group
    that group's rows, a finite ``time`` in every row that goes back (a Reset while recording) in
    one row of ``RESETS`` at most, and a ``wall_time`` (a monotonic clock) that never goes back:
    other columns' pages read as these two (a part whose ``.json`` is not its data's) do not hold."""
    import numpy as np

    with pq.ParquetFile(path) as pf:
        meta = pf.metadata
        if meta.num_rows != rows:
            return f"it holds {meta.num_rows} rows, not the {rows} its parts promised"
        for i in range(meta.num_row_groups):
            group = meta.row_group(i)
            for j in range(group.num_columns):
                if group.column(j).num_values != group.num_rows:
                    return f"row group {i + 1} has {group.column(j).num_values} values of {group.column(j).path_in_schema} for {group.num_rows} rows"
        names = [n for n in ("time", "wall_time") if n in pf.schema_arrow.names]
        clocks = pf.read(columns=names)
    if "time" in names:
        time = clocks.column("time").to_numpy(zero_copy_only=False).astype(float)
        if not np.all(np.isfinite(time)):
            return f"its time column is not a number at row {int(np.flatnonzero(~np.isfinite(time))[0]) + 1}"
        back = np.flatnonzero(np.diff(time) < 0)
        if back.size > max(1, time.size // RESETS):
            return f"its time goes back {back.size} times in {time.size} rows (first after row {int(back[0]) + 1})"
    if "wall_time" in names:
        wall = clocks.column("wall_time").to_numpy(zero_copy_only=False).astype(float)
        wall = wall[np.isfinite(wall)]
        back = np.flatnonzero(np.diff(wall) < 0)
        if back.size:
            return f"its wall_time goes back {back.size} times (first after row {int(back[0]) + 1})"
    return None


def _footer_at(data: Path, start: int, size: int) -> bool:
    """Whether bytes ``start`` to ``size`` of ``data`` are exactly a Parquet footer (its Thrift,
    length and ``PAR1``)."""
    if size - start < 12:
        return False
    with open(data, "rb") as fh:
        fh.seek(size - 8)
        tail = fh.read(8)
    return tail[4:] == b"PAR1" and int.from_bytes(tail[:4], "little") + 8 == size - start


def write_salvaged(part: Salvage, tmp: Path, metadata: dict[str, str], units: dict[str, str]) -> int:
    """Write ``part``'s row groups (from its source: never changed) and a footer rebuilt from
    their pages to the new file ``tmp``, then read it back: row groups that do not decode
    (garbage inside their pages) and those after are left out and named in ``part.lost``.
    Returns the rows ``tmp`` holds."""
    assert part.source is not None and not part.whole
    size = part.source.stat().st_size
    for attempt in range(2):
        tail = compose(template_footer(part.columns, metadata, units), part.groups)
        with open(part.source, "rb") as src, open(tmp, "xb" if attempt == 0 else "wb") as dst:
            _copy_range(src, dst, part.end)
            dst.write(tail)
            dst.flush()
            os.fsync(dst.fileno())
        good = read_back(tmp)
        if len(good) == len(part.groups):
            return sum(good)
        start = part.groups[len(good)].start
        part.lost = part.lost or (
            f"{part.source.name}: the {size - start} bytes from byte {start} hold row groups whose pages do not decode"
        )
        part.groups = part.groups[: len(good)]
        part.end, part.rows = start, sum(good)
    raise ValueError(f"{tmp.name} does not read back")


def _copy_range(src: BinaryIO, dst: BinaryIO, length: int) -> None:
    """The first ``length`` bytes of open file ``src`` onto open file ``dst`` (in the kernel when it can)."""
    done = 0
    try:
        while done < length:
            n = os.copy_file_range(src.fileno(), dst.fileno(), length - done, done, done)
            if n == 0:
                raise ValueError(f"{src.name} ends at byte {done}, before {length}")
            done += n
    except (AttributeError, OSError) as exc:  # no copy_file_range here, or not between these files
        if done or getattr(exc, "errno", None) not in (None, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
        src.seek(0)
        while done < length:
            chunk = src.read(min(8 * 2**20, length - done))
            if not chunk:
                raise ValueError(f"{src.name} ends at byte {done}, before {length}") from None
            dst.write(chunk)
            done += len(chunk)
    dst.seek(done)


def where_kept(folder: Path) -> str:
    """Where the rows of a recording whose file could not be finished are, for its error line:
    "kept N rows in FOLDER/part-0001.whole, a valid Parquet file" when its parts were finished
    (only the last rename failed), else "the rows written so far are kept in FOLDER"."""
    wholes = sorted(folder.glob("part-*.whole"))
    if not wholes or list(folder.glob("part-*.data")):
        return f"the rows written so far are kept in {folder}"
    try:
        rows = 0
        for whole in wholes:
            with pq.ParquetFile(whole) as pf:
                rows += pf.metadata.num_rows
    except (OSError, pa.ArrowException, ValueError):
        return f"the rows written so far are kept in {folder}"
    if len(wholes) == 1:
        return f"kept {rows} rows in {wholes[0]}, a valid Parquet file"
    return f"kept {rows} rows in {len(wholes)} valid Parquet files {folder}/part-*.whole"
