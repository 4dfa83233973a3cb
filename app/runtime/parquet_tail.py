"""The footer of a recording whose row groups were copied into its data file one at a time.

pyarrow's ``ParquetWriter`` keeps every row group's metadata as C++ objects until it writes the
footer, about 860 bytes per column chunk: a recording of 80 columns grew 70 kB a row group
(12 bytes a row), one of 9,606 columns 8 MB. ``RowGroupFile`` therefore encodes each row group
alone (``pq.write_table`` into memory), copies its pages into the data file, and keeps only what
the footer needs of it, encoded as the footer will hold it (``row_group``: Thrift, about 40 bytes
a column chunk). ``footer`` puts them under a template footer's schema and key-value metadata
(pyarrow writes that for an empty table of the recording's schema).

The Thrift compact protocol, as ``parquet_footer`` reads it: a field is a header byte (id delta
in the high nibble, type in the low one) and its value; integers are zigzag varints; 0 ends a
struct. A column chunk holds what ``parquet_footer.rebuild_row_group`` writes: type DOUBLE,
encodings, path, codec, values, sizes, data page offset (no statistics: ``ENCODING``).

GUI-free; any thread.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mjrig.runtime.parquet_footer import parse_footer

__all__ = ["column_heads", "row_group", "footer"]

_I16, _I32, _I64, _BINARY, _LIST, _STRUCT = 4, 5, 6, 8, 9, 12
_DOUBLE = 5
ENCODING_IDS = {"PLAIN": 0, "PLAIN_DICTIONARY": 2, "RLE": 3, "BIT_PACKED": 4, "RLE_DICTIONARY": 8}


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
    common = (bytes([0x26, 0x00, 0x1C, 0x15, 2 * _DOUBLE, 0x19]) + _list_head(len(enc), _I32)
              + b"".join(_varint(2 * e) for e in enc))
    heads = []
    for name in columns:
        raw = name.encode("utf-8")
        heads.append(common + bytes([0x19]) + _list_head(1, _BINARY) + _varint(len(raw)) + raw
                     + bytes([0x15]) + _varint(2 * codec))
    return heads


def row_group(heads: Sequence[bytes], *, start: int, rows: int, compressed: np.ndarray,
              uncompressed: np.ndarray, ordinal: int) -> bytes:
    """A RowGroup struct (Thrift bytes) of ``rows`` rows whose column chunks lie one after the
    other from byte ``start`` of the file, ``compressed``/``uncompressed`` bytes each."""
    offsets = start + np.concatenate([[0], np.cumsum(compressed[:-1])]) if len(compressed) else compressed
    n = _varint(2 * rows)
    parts = [b"\x19" + _list_head(len(heads), _STRUCT)]
    for head, c, u, off in zip(heads, compressed.tolist(), uncompressed.tolist(), offsets.tolist()):
        parts.append(b"".join((head, b"\x16", n, b"\x16", _varint(2 * u), b"\x16", _varint(2 * c),
                               b"\x26", _varint(2 * off), b"\x00\x00")))
    total_u, total_c = int(uncompressed.sum()), int(compressed.sum())
    parts.append(b"\x16" + _varint(2 * total_u) + b"\x16" + n + b"\x26" + _varint(2 * start)
                 + b"\x16" + _varint(2 * total_c))
    if ordinal < 2**15:  # an i16: none past it
        parts.append(b"\x14" + _varint(2 * ordinal))
    parts.append(b"\x00")
    return b"".join(parts)


def _encode(value: object, out: bytearray) -> None:
    """A value as ``parse_footer`` reads it (raw bytes, a list, or a struct) back to bytes."""
    if isinstance(value, list):
        etype, items = value
        out += _list_head(len(items), etype)
        for item in items:
            _encode(item, out)
    elif isinstance(value, (bytes, bytearray)):
        out += value
    else:  # a Struct
        last = 0
        for fid, ftype, v in value.fields:  # type: ignore[attr-defined]
            delta = fid - last
            out += bytes([(delta << 4) | ftype]) if 0 < delta <= 15 else bytes([ftype]) + _varint(2 * fid)
            _encode(v, out)
            last = fid
        out.append(0)


def footer(template: bytes, groups: Sequence[bytes], rows: int) -> bytes:
    """The footer (Thrift, its 4-byte length, ``PAR1``) of a file holding ``groups`` (``row_group``
    bytes) of ``rows`` rows in all, with ``template``'s schema, key-value metadata and writer."""
    fmd = parse_footer(template)
    fields = [f for f in fmd.fields if f[0] not in (3, 4)]  # num_rows, row_groups
    fields += [[3, _I64, _varint(2 * rows)], [4, _LIST, [_STRUCT, list(groups)]]]
    fmd.fields = sorted(fields, key=lambda f: f[0])
    out = bytearray()
    _encode(fmd, out)
    return bytes(out) + len(out).to_bytes(4, "little") + b"PAR1"
