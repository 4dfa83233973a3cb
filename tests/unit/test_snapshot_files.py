"""Snapshot files (``.npz``) are read through bounds: a small file that unpacks to gigabytes, or
an array header that claims more than its entry holds, is refused with one line before its memory
is taken; a pipe is refused without being opened."""

from __future__ import annotations

import io
import os
import tracemalloc
import zipfile

import numpy as np
import pytest

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.snapshots import MAX_SNAPSHOT_BYTES, load_snapshot


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def test_a_compressed_bomb_is_refused_before_it_is_unpacked(tmp_path):
    """A 300 MiB array of zeros packs into about 300 kB; refusing it takes no more than a few MiB
    (the whole unpacked array took 6.4 GB of a 3 MB file before)."""
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("state.npy", "w", force_zip64=True) as fh:
            chunk = bytes(2**20)
            for _ in range((MAX_SNAPSHOT_BYTES >> 20) + 44):
                fh.write(chunk)
        zf.writestr("format.npy", _npy(np.array("mjrig-snapshot-1")))
    assert bomb.stat().st_size < 2 * 2**20
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="unpacks to more than 256 MiB") as err:
            load_snapshot(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak
    assert str(bomb) in str(err.value) and "\n" not in str(err.value)


def test_an_entry_that_claims_more_than_it_holds_is_refused(tmp_path):
    """An array header saying 10^9 values, followed by 8 bytes: numpy would allocate 8 GB first."""
    raw = _npy(np.zeros(1))
    old, new = b"(1,), }", b"(1000000000,), }"
    lie = raw.replace(old + b" " * (len(new) - len(old)), new)  # the same length: the header stays aligned
    assert lie != raw and len(lie) == len(raw)
    path = tmp_path / "lie.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("state.npy", bytes(lie))
        zf.writestr("format.npy", _npy(np.array("mjrig-snapshot-1")))
    with pytest.raises(ConfigError, match="claims more data than it holds"):
        load_snapshot(path)


def test_a_pipe_is_not_opened(tmp_path):
    pipe = tmp_path / "state.npz"
    os.mkfifo(pipe)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_snapshot(pipe)
