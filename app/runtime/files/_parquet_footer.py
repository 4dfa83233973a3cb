"""A Parquet footer written for row groups whose own footer was never written (a recording
killed, or stopped by a full disk, before it closed): ``rebuild_row_group`` walks a row group's
pages (each column's page headers, up to its number of rows) and describes it as the footer
does; ``compose`` writes one footer for such row groups with the schema and key-value metadata
of a ``template`` footer (``pyarrow`` writes it for an empty table of the recording's schema).

Only what mjrig's recorder writes is read: float64 columns, LZ4 (zstd before), no dictionary pages (v1 or v2
data pages). A footer is Thrift (compact protocol): a struct is a run of fields, each a header
byte (id delta in the high nibble, type in the low one; delta 0: a zigzag varint id follows) and
a value; 0 ends it.

GUI-free; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Struct",
    "parse_footer",
    "compose",
    "footer_of",
    "rebuild_row_group",
    "find_row_group",
    "RowGroupMeta",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "CODEC_LZ4_RAW",
    "PAGE_ROWS",
    "CutShort",
    "Ambiguous",
]

_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)

# Field ids of the Parquet format's Thrift structs
_FMD_NUM_ROWS, _FMD_ROW_GROUPS = 3, 4  # FileMetaData
_RG_COLUMNS, _RG_FILE_OFFSET, _RG_ORDINAL = 1, 5, 7  # RowGroup


@dataclass
class Struct:
    """A decoded Thrift struct: its fields as [id, type, value] in order. A value is raw bytes,
    a Struct, or a list ``[element type, items]``."""

    fields: list[list[Any]] = field(default_factory=list)

    def get(self, fid: int) -> Any:
        return next((f[2] for f in self.fields if f[0] == fid), None)


@dataclass(frozen=True)
class RowGroupMeta:
    """One row group of the data file: its Thrift metadata (offsets into that file) and rows."""

    struct: Struct
    rows: int
    start: int = 0
    """The byte where its pages start."""


# --- reading -------------------------------------------------------------------------------------
class _Reader:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data, self.pos = memoryview(data), 0

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = out = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 70:
                raise ValueError("bad varint in a Parquet footer")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("a Parquet footer ends early")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def value(self, ftype: int) -> Any:
        if ftype in (_TRUE, _FALSE):
            return b""  # a field's bool is its type
        if ftype == _BYTE:
            return self.take(1)
        if ftype in (_I16, _I32, _I64):
            start = self.pos
            self.varint()
            return bytes(self.data[start : self.pos])
        if ftype == _DOUBLE:
            return self.take(8)
        if ftype == _BINARY:
            start = self.pos
            n = self.varint()
            self.take(n)
            return bytes(self.data[start : self.pos])
        if ftype in (_LIST, _SET):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            items = [self.take(1) if etype in (_TRUE, _FALSE) else self.value(etype) for _ in range(size)]
            return [etype, items]
        if ftype == _MAP:  # kept whole: nothing in it moves
            start = self.pos
            size = self.varint()
            if size:
                kinds = self.byte()
                for _ in range(size):
                    self.value(kinds >> 4)
                    self.value(kinds & 0x0F)
            return bytes(self.data[start : self.pos])
        if ftype == _STRUCT:
            return self.struct()
        raise ValueError(f"unknown Thrift type {ftype} in a Parquet footer")

    def struct(self) -> Struct:
        out, last = Struct(), 0
        while True:
            head = self.byte()
            ftype = head & 0x0F
            if ftype == _STOP:
                return out
            delta = head >> 4
            fid = last + delta if delta else _unzigzag(self.varint())
            out.fields.append([fid, ftype, self.value(ftype)])
            last = fid


def parse_footer(thrift: bytes) -> Struct:
    """The ``FileMetaData`` struct of a footer's Thrift bytes; ValueError when they are not one."""
    try:
        return _Reader(thrift).struct()
    except IndexError:
        raise ValueError("a Parquet footer ends early") from None


def footer_of(parquet: bytes) -> bytes:
    """The footer's Thrift bytes of a whole Parquet file held in memory."""
    if parquet[:4] != b"PAR1" or parquet[-4:] != b"PAR1":
        raise ValueError("not a Parquet file")
    n = int.from_bytes(parquet[-8:-4], "little")
    return bytes(parquet[len(parquet) - 8 - n : len(parquet) - 8])


# --- writing -------------------------------------------------------------------------------------
def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def _unzigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _i64(raw: bytes) -> int:
    return _unzigzag(_Reader(raw).varint())


def _encode_value(ftype: int, value: Any, out: bytearray) -> None:
    if isinstance(value, Struct):
        _encode_struct(value, out)
    elif isinstance(value, list):
        etype, items = value
        out += bytes([(len(items) << 4) | etype]) if len(items) < 15 else bytes([0xF0 | etype]) + _varint(len(items))
        for item in items:
            _encode_value(etype, item, out)
    else:
        out += value


def _encode_struct(s: Struct, out: bytearray) -> None:
    last = 0
    for fid, ftype, value in s.fields:
        delta = fid - last
        out += bytes([(delta << 4) | ftype]) if 0 < delta <= 15 else bytes([ftype]) + _varint(_zigzag(fid))
        _encode_value(ftype, value, out)
        last = fid
    out.append(_STOP)


def _i(value: int) -> bytes:
    return _varint(_zigzag(value))


def _bin(text: str) -> bytes:
    raw = text.encode("utf-8")
    return _varint(len(raw)) + raw


_DOUBLE_TYPE, _DATA_PAGE, _DICT_PAGE, _DATA_PAGE_V2 = 5, 0, 2, 3
CODEC_SNAPPY, CODEC_ZSTD, CODEC_LZ4_RAW = 1, 6, 7
"""Parquet's compression codecs of recordings (pyarrow's "snappy", "zstd" and "lz4")."""


PAGE_ROWS = 20_011
"""Values in each page of a column chunk but its last (``max_rows_per_page`` in
``parquet_merge.ENCODING``; a float64 page reaches it long before pyarrow's 1 MiB). A prime
near pyarrow's 20,000: a part read without its index (``find_row_group``) tells a row group of
k x ``PAGE_ROWS`` rows from k row groups of ``PAGE_ROWS`` only by values, and row groups made of
round blocks (1,000 or 4,096 rows) are never such a multiple below 20 million rows."""


class CutShort(ValueError):
    """The data ends inside a row group (a kill while it was being written)."""


def _page(data: memoryview, pos: int) -> tuple[int, int, set[int], int, int]:
    """The page whose header starts at ``pos``: (values, header bytes, encodings, uncompressed
    size, compressed size). CutShort when ``data`` ends inside it, ValueError when its header
    is not a data page's."""
    window = data[pos : pos + 65536]
    reader = _Reader(window)
    try:
        header = reader.struct()
        kind, usize, csize = (_i64(header.get(f)) for f in (1, 2, 3))
    except (IndexError, ValueError, TypeError, AttributeError):
        if pos + 65536 >= len(data):  # the header ran into the end of the data
            raise CutShort("a row group ends early") from None
        raise ValueError(f"no page header at byte {pos}") from None
    try:
        if kind == _DICT_PAGE:
            values, encodings = 0, set()
        elif kind == _DATA_PAGE:
            page = header.get(5)
            values, encodings = _i64(page.get(1)), {_i64(page.get(f)) for f in (2, 3)}
        elif kind == _DATA_PAGE_V2:
            page = header.get(8)
            values, encodings = _i64(page.get(1)), {_i64(page.get(4))}
        else:
            raise ValueError(f"unexpected page type {kind} at byte {pos}")
    except (AttributeError, TypeError):
        raise ValueError(f"a page header without its values at byte {pos}") from None
    if values < 0 or values == 0 and kind != _DICT_PAGE or usize < 0 or csize < 0:
        raise ValueError(f"a page of {values} values and {csize} bytes at byte {pos}")
    if pos + reader.pos + csize > len(data):
        raise CutShort("a row group ends early")
    return values, reader.pos, encodings, usize, csize


def rebuild_row_group(
    data: memoryview,
    start: int,
    columns: tuple[str, ...],
    rows: int,
    *,
    codec: int = CODEC_LZ4_RAW,
    page_rows: int | None = None,
) -> tuple[RowGroupMeta, int]:
    """The metadata of the row group of ``rows`` rows whose pages start at byte ``start`` of
    ``data`` (columns in order, each a run of pages), and the byte where it ends. ValueError when
    the pages do not add up (CutShort: the data ends inside the row group). ``page_rows``: every
    page of a column chunk but its last holds exactly that many values (the writer's rule)."""
    chunks, pos, total_u, total_c = [], start, 0, 0
    for name in columns:
        first, values, size_u, size_c, encodings = pos, 0, 0, 0, set()
        while values < rows:
            n, head, kinds, usize, csize = _page(data, pos)
            if page_rows is not None and n != min(page_rows, rows - values):
                raise ValueError(
                    f"column {name}: a page of {n} values where the writer puts {min(page_rows, rows - values)}"
                )
            values += n
            encodings.update(kinds)
            size_u += head + usize
            size_c += head + csize
            pos += head + csize
        if values != rows:
            raise ValueError(f"column {name} has {values} values, not {rows}")
        meta = Struct(
            [
                [1, _I32, _i(_DOUBLE_TYPE)],
                [2, _LIST, [_I32, [_i(e) for e in sorted(encodings)]]],
                [3, _LIST, [_BINARY, [_bin(name)]]],
                [4, _I32, _i(codec)],
                [5, _I64, _i(values)],
                [6, _I64, _i(size_u)],
                [7, _I64, _i(size_c)],
                [9, _I64, _i(first)],
            ]
        )
        chunks.append(Struct([[2, _I64, _i(0)], [3, _STRUCT, meta]]))
        total_u, total_c = total_u + size_u, total_c + size_c
    rg = Struct(
        [
            [_RG_COLUMNS, _LIST, [_STRUCT, chunks]],
            [2, _I64, _i(total_u)],
            [3, _I64, _i(rows)],
            [_RG_FILE_OFFSET, _I64, _i(start)],
            [6, _I64, _i(total_c)],
        ]
    )
    return RowGroupMeta(rg, rows, start), pos


class Ambiguous(ValueError):
    """The pages at a byte make whole row groups of more than one number of rows."""


_MAX_PAGES = 4096
"""Pages of the first column walked for a row group's rows (82 M rows: beyond any row group)."""


def find_row_group(
    data: memoryview, start: int, columns: tuple[str, ...], *, codec: int = CODEC_SNAPPY
) -> tuple[RowGroupMeta, int]:
    """The row group whose pages start at byte ``start`` of ``data`` when its number of rows is
    not known (no index). Every page of a column chunk but its last holds ``PAGE_ROWS`` values,
    so the first column's first shorter page ends its chunk: those rows, tried on every column,
    are the row group's. Without a shorter page (every chunk of whole pages), each multiple of
    ``PAGE_ROWS`` the pages allow is tried. Returns (its metadata, the byte where it ends);
    CutShort when the data ends inside it, Ambiguous when several numbers of rows fit (a row
    group of k x ``PAGE_ROWS`` rows, k > 1, can read as k of ``PAGE_ROWS`` rows), ValueError
    when the bytes are no row group."""
    full, short, pos, cut = 0, None, start, None
    while full < _MAX_PAGES:
        try:
            n, head, _, _, csize = _page(data, pos)
        except CutShort as exc:
            cut = exc
            break
        except ValueError:
            if not full:
                raise
            break  # the pages of a later row group may be damaged: this one can still be whole
        if n > PAGE_ROWS:
            raise ValueError(f"a page of {n} values at byte {pos}, more than the writer puts in one")
        pos += head + csize
        if n < PAGE_ROWS:
            short = full * PAGE_ROWS + n
            break
        full += 1
    if short is not None:
        try:
            return rebuild_row_group(data, start, columns, short, codec=codec, page_rows=PAGE_ROWS)
        except CutShort as exc:
            cut = exc
        except ValueError:
            pass  # the short page is a later row group's: this one holds whole pages only
    found = []
    for k in range(1, full // max(1, len(columns)) + 1):  # a row group of k whole pages a column
        try:
            found.append(rebuild_row_group(data, start, columns, k * PAGE_ROWS, codec=codec, page_rows=PAGE_ROWS))
        except CutShort as exc:
            cut = exc
            break
        except ValueError:
            continue
        if len(found) > 1:
            raise Ambiguous(
                f"the pages at byte {start} make row groups of {found[0][0].rows} or {found[1][0].rows} rows"
            )
    if found:
        return found[0]
    raise cut if cut is not None else ValueError(f"no whole row group at byte {start}")


def compose(template: bytes, groups: list[RowGroupMeta]) -> bytes:
    """The footer (Thrift bytes, its 4-byte length and ``PAR1``) of a file holding ``groups``,
    with ``template``'s schema, key-value metadata and writer (a footer of the same columns)."""
    fmd = parse_footer(template)
    for i, g in enumerate(groups):  # a row group's ordinal is its place (an i16: none past it)
        g.struct.fields = [f for f in g.struct.fields if f[0] != _RG_ORDINAL]  # composed before
        if i < 2**15:
            g.struct.fields.append([_RG_ORDINAL, _I16, _i(i)])  # the last field (``rebuild_row_group``)
    rows = sum(g.rows for g in groups)
    fields = [f for f in fmd.fields if f[0] not in (_FMD_NUM_ROWS, _FMD_ROW_GROUPS)]
    fields += [[_FMD_NUM_ROWS, _I64, _i(rows)], [_FMD_ROW_GROUPS, _LIST, [_STRUCT, [g.struct for g in groups]]]]
    fmd.fields = sorted(fields, key=lambda f: f[0])
    out = bytearray()
    _encode_struct(fmd, out)
    return bytes(out) + len(out).to_bytes(4, "little") + b"PAR1"
