"""The footer of a recording whose row groups were copied into its data file one at a time.

pyarrow's ``ParquetWriter`` keeps every row group's metadata as C++ objects until it writes the
footer, about 860 bytes per column chunk: a recording of 80 columns grew 70 kB a row group
(12 bytes a row), one of 9,606 columns 8 MB. ``RowGroupFile`` therefore encodes each row group
alone (``pq.write_table`` into memory), copies its pages into the data file, and keeps only what
the footer needs of it, encoded as the footer will hold it (``row_group``: Thrift, about 40 bytes
a column chunk). ``footer`` puts them under a template footer's schema and key-value metadata
(pyarrow writes that for an empty table of the recording's schema).

The Thrift compact protocol, as ``_parquet_footer`` reads it: a field is a header byte (id delta
in the high nibble, type in the low one) and its value; integers are zigzag varints; 0 ends a
struct. A column chunk holds what ``_parquet_footer.rebuild_row_group`` writes: type DOUBLE,
encodings, path, codec, values, sizes, data page offset (no statistics: ``ENCODING``).

GUI-free; any thread.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["column_heads", "row_group", "footer"]

_I16, _I32, _I64, _BINARY, _LIST, _STRUCT = 4, 5, 6, 8, 9, 12
_DOUBLE = 5
ENCODING_IDS = {
    "PLAIN": 0,
    "PLAIN_DICTIONARY": 2,
    "RLE": 3,
    "BIT_PACKED": 4,
    "RLE_DICTIONARY": 8,
    "BYTE_STREAM_SPLIT": 9,
}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _list_head(n: int, etype: int) -> bytes:
    return bytes([(n << 4) | etype]) if n < 15 else bytes([0xF0 | etype]) + _varint(n)


def column_heads(columns: Sequence[str], codec: int, encodings: Sequence[str]) -> list[bytes]:
    """Each column chunk's bytes up to its numbers: file_offset 0, then its ColumnMetaData's type,
    ``encodings`` (pyarrow's names), path (the column's name) and ``codec``."""
    enc = sorted(ENCODING_IDS[e] for e in encodings)
    common = (
        bytes([0x26, 0x00, 0x1C, 0x15, 2 * _DOUBLE, 0x19])
        + _list_head(len(enc), _I32)
        + b"".join(_varint(2 * e) for e in enc)
    )
    heads = []
    for name in columns:
        raw = name.encode("utf-8")
        heads.append(
            common
            + bytes([0x19])
            + _list_head(1, _BINARY)
            + _varint(len(raw))
            + raw
            + bytes([0x15])
            + _varint(2 * codec)
        )
    return heads


def row_group(
    heads: Sequence[bytes], *, start: int, rows: int, compressed: np.ndarray, uncompressed: np.ndarray, ordinal: int
) -> bytes:
    """A RowGroup struct (Thrift bytes) of ``rows`` rows whose column chunks lie one after the
    other from byte ``start`` of the file, ``compressed``/``uncompressed`` bytes each."""
    offsets = start + np.concatenate([[0], np.cumsum(compressed[:-1])]) if len(compressed) else compressed
    n = _varint(2 * rows)
    parts = [b"\x19" + _list_head(len(heads), _STRUCT)]
    for head, c, u, off in zip(heads, compressed.tolist(), uncompressed.tolist(), offsets.tolist()):
        parts.append(
            b"".join(
                (
                    head,
                    b"\x16",
                    n,
                    b"\x16",
                    _varint(2 * u),
                    b"\x16",
                    _varint(2 * c),
                    b"\x26",
                    _varint(2 * off),
                    b"\x00\x00",
                )
            )
        )
    total_u, total_c = int(uncompressed.sum()), int(compressed.sum())
    parts.append(
        b"\x16" + _varint(2 * total_u) + b"\x16" + n + b"\x26" + _varint(2 * start) + b"\x16" + _varint(2 * total_c)
    )
    if ordinal < 2**15:  # an i16: none past it
        parts.append(b"\x14" + _varint(2 * ordinal))
    parts.append(b"\x00")
    return b"".join(parts)


def _skip(data: bytes, pos: int, ftype: int) -> int:
    """The position after a value of Thrift compact type ``ftype`` starting at ``pos``: walked,
    never built (a 605-column template footer parsed into objects took 0.15 s at every close)."""
    if ftype in (1, 2):  # a field's bool is in its header
        return pos
    if ftype == 3:
        return pos + 1
    if ftype in (_I16, _I32, _I64):
        while data[pos] & 0x80:
            pos += 1
        return pos + 1
    if ftype == 7:
        return pos + 8
    if ftype == _BINARY:
        n, pos = _read_varint(data, pos)
        return pos + n
    if ftype in (_LIST, 10):
        head = data[pos]
        pos += 1
        size, etype = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _read_varint(data, pos)
        if etype in (1, 2, 3):
            return pos + size
        for _ in range(size):
            pos = _skip(data, pos, etype)
        return pos
    if ftype == 11:  # a map
        size, pos = _read_varint(data, pos)
        if size:
            kinds = data[pos]
            pos += 1
            for _ in range(size):
                pos = _skip(data, _skip(data, pos, kinds >> 4), kinds & 0x0F)
        return pos
    if ftype == _STRUCT:
        while True:
            field_type, pos = _field_head(data, pos)
            if field_type is None:
                return pos
            pos = _skip(data, pos, field_type)
    raise ValueError(f"unknown Thrift type {ftype} in a Parquet footer")


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = out = 0
    while True:
        b = data[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, pos
        shift += 7


def _field_head(data: bytes, pos: int) -> tuple[int | None, int]:
    """(a struct field's type, where its value starts), or (None, after the struct's end)."""
    head = data[pos]
    pos += 1
    if head == 0:
        return None, pos
    if not head >> 4:  # the long form: the field id follows as a zigzag varint
        pos = _skip(data, pos, _I16)
    return head & 0x0F, pos


def footer(template: bytes, groups: Sequence[bytes], rows: int) -> bytes:
    """The footer (Thrift, its 4-byte length, ``PAR1``) of a file holding ``groups`` (``row_group``
    bytes) of ``rows`` rows in all, with ``template``'s schema, key-value metadata and writer: the
    template's bytes as they are, but the values of its fields 3 (num_rows) and 4 (row_groups)."""
    out = bytearray()
    pos, fid = 0, 0
    while True:
        start = pos
        ftype, pos = _field_head(template, pos)
        if ftype is None:
            out += template[start:pos]
            break
        head = template[start]
        fid = fid + (head >> 4) if head >> 4 else _zigzag_i16(template, start + 1)
        end = _skip(template, pos, ftype)
        out += template[start:pos]
        if fid == 3:
            out += _varint(2 * rows)
        elif fid == 4:
            out += _list_head(len(groups), _STRUCT) + b"".join(groups)
        else:
            out += template[pos:end]
        pos = end
    return bytes(out) + len(out).to_bytes(4, "little") + b"PAR1"


def _zigzag_i16(data: bytes, pos: int) -> int:
    n, _ = _read_varint(data, pos)
    return (n >> 1) ^ -(n & 1)
