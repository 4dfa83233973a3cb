"""A MATLAB v5 ``.mat`` file written as it is read: one struct whose ``data`` matrix goes to the
file a column at a time, so memory holds one column (8 bytes a row), not the matrix.

``scipy.io.savemat`` needs the whole matrix (and writes from a copy): a 1.33 GB recording took
2.9 GB of memory. The format (MathWorks, "MAT-File Format", Level 5) is a 128-byte header and
tagged data elements; a matrix's bytes are column-major, and every element's size is known
before its bytes are written, so the struct is laid out first (its small fields built in
memory) and the matrix streamed after. v5 caps a variable at 4 GiB (its size is a 32-bit
count): a larger recording is refused by the caller. Read back by ``scipy.io.loadmat`` and
MATLAB's ``load``.

GUI-free; any thread.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from typing import IO

import numpy as np

__all__ = ["write_struct", "MAX_BYTES"]

MAX_BYTES = 2**32 - 1
"""The largest variable v5 can hold (its element's byte count is a uint32)."""

_MI_INT8, _MI_INT32, _MI_UINT32, _MI_DOUBLE, _MI_MATRIX, _MI_UTF8 = 1, 5, 6, 9, 14, 16
_MX_CELL, _MX_STRUCT, _MX_CHAR, _MX_DOUBLE = 1, 2, 4, 6


def _element(kind: int, payload: bytes) -> bytes:
    """A data element: its tag, then ``payload`` padded to 8 bytes (a small one packed in 8)."""
    if 0 < len(payload) <= 4:
        return struct.pack("<HH", kind, len(payload)) + payload.ljust(4, b"\0")
    return struct.pack("<II", kind, len(payload)) + payload + b"\0" * (-len(payload) % 8)


def _header(mx_class: int, dims: tuple[int, ...], name: str = "") -> bytes:
    """A matrix's flags, dimensions and name sub-elements."""
    flags = _element(_MI_UINT32, struct.pack("<II", mx_class, 0))
    return flags + _element(_MI_INT32, struct.pack(f"<{len(dims)}i", *dims)) + _element(_MI_INT8, name.encode("ascii"))


def _matrix(body: bytes) -> bytes:
    return struct.pack("<II", _MI_MATRIX, len(body)) + body


def _char(text: str) -> bytes:
    """Text as a 1xN char array (UTF-8 bytes, N characters; 0x0 when empty, as MATLAB has it)."""
    return _matrix(_header(_MX_CHAR, (1, len(text)) if text else (0, 0)) + _element(_MI_UTF8, text.encode("utf-8")))


def _cell(texts: Iterable[str]) -> bytes:
    items = [_char(t) for t in texts]
    return _matrix(_header(_MX_CELL, (1, len(items))) + b"".join(items))


def _struct(fields: Mapping[str, bytes], *, name: str = "", tail: int = 0) -> tuple[bytes, int]:
    """A 1x1 struct's bytes up to its last field's start, and its whole size; ``fields`` are
    each field's matrix bytes, but the last one's may be only its head, ``tail`` bytes short."""
    width = max([len(f) for f in fields] + [1]) + 1
    names = b"".join(f.encode("ascii").ljust(width, b"\0") for f in fields)
    body = (
        _header(_MX_STRUCT, (1, 1), name)
        + _element(_MI_INT32, struct.pack("<i", width))
        + _element(_MI_INT8, names)
        + b"".join(fields.values())
    )
    return struct.pack("<II", _MI_MATRIX, len(body) + tail) + body, 8 + len(body) + tail


def write_struct(
    fh: IO[bytes],
    *,
    name: str,
    names: list[str],
    units: list[str],
    metadata: Mapping[str, str],
    rows: int,
    column: Callable[[int], np.ndarray],
) -> None:
    """Write a v5 file holding struct ``name`` with ``names`` and ``units`` (1xN cells of text),
    ``data`` (rows x N doubles; ``column(j)`` gives column j, float64, ``rows`` long) and
    ``metadata`` (a struct of text fields, keys already MATLAB field names). ValueError past
    MAX_BYTES."""
    cols = len(names)
    data_head = _header(_MX_DOUBLE, (rows, cols)) + struct.pack("<II", _MI_DOUBLE, 8 * rows * cols)
    data_size = len(data_head) + 8 * rows * cols  # a multiple of 8: no padding
    fields = {
        "names": _cell(names),
        "units": _cell(units),
        "metadata": _struct({k: _char(v) for k, v in metadata.items()})[0],
        "data": struct.pack("<II", _MI_MATRIX, data_size) + data_head,
    }
    head, total = _struct(fields, name=name, tail=8 * rows * cols)
    if total > MAX_BYTES:
        raise ValueError(f"{total} bytes is past MATLAB v5's 4 GiB per variable")
    text = b"MATLAB 5.0 MAT-file, written by mjrig".ljust(116, b" ")
    fh.write(text + b"\0" * 8 + struct.pack("<H", 0x0100) + b"IM")
    fh.write(head)
    for j in range(cols):
        values = np.ascontiguousarray(column(j), dtype="<f8")
        if values.shape != (rows,):
            raise ValueError(f"column {j} has {values.size} rows, not {rows}")
        fh.write(values.tobytes())
