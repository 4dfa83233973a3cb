"""A recording's work folder (``OUT.parquet.parts``): its layout is described in
``mjrig.runtime.parquet_sink``. ``recover`` turns what a crash left there into the Parquet file:
the parts' row groups (``parquet_stream``), or the raw segments (``seg-*.rows``) an older mjrig
wrote; ``discard`` removes the folder of a finished recording.
"""
from __future__ import annotations

import json
import os
import re
import itertools
import shutil
import threading
import warnings
from pathlib import Path

import pyarrow as pa

from mjrig.runtime.errors import MjrigError, exception_text
from mjrig.runtime.parquet_merge import UNITS_KEY, merge_dir
from mjrig.runtime.parquet_stream import finish_parts, parts
from mjrig.runtime.paths import work_dir as segment_dir  # the recording's segments and lock

__all__ = ["META_NAME", "discard", "recover", "segment_dir", "segments", "check_str_map", "write_meta"]

META_NAME = "meta.json"
_SEGMENT_RE = re.compile(r"^seg-(\d+)\.rows$")

def discard(folder: Path) -> None:
    """Remove a segment folder whose rows are safe in the Parquet file.

    Freeing a few hundred MB of segments takes ext4 tens of milliseconds, so a folder of more
    than ``DISCARD_NOW_BYTES`` is renamed out of the way at once (``.NAME.parts.done-PID-N``: a new recording to the same
    path can start) and removed by a thread the interpreter waits for at exit. Whatever a kill
    leaves of such folders is removed by the next recording to that path (``sweep_done``)."""
    try:
        size = sum(e.stat().st_size for e in os.scandir(folder))
    except OSError:
        size = 0
    if size < DISCARD_NOW_BYTES:
        shutil.rmtree(folder, ignore_errors=True)
        return
    done = folder.with_name(f".{folder.name}.done-{os.getpid()}-{next(_discarded)}")
    try:
        os.replace(folder, done)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    threading.Thread(target=shutil.rmtree, args=(done,), kwargs={"ignore_errors": True},
                     name="mjrig-discard-segments", daemon=False).start()


def sweep_done(folder: Path) -> None:
    """Remove what a killed process left of discarded segment folders of ``folder``."""
    for left in folder.parent.glob(f".{folder.name}.done-*"):
        pid = left.name.rsplit(".done-", 1)[1].split("-")[0]
        if pid != str(os.getpid()):
            shutil.rmtree(left, ignore_errors=True)


_discarded = itertools.count(1)
DISCARD_NOW_BYTES = 64 * 2**20
"""Segments up to this size are removed at once (under about 10 ms)."""


def recover(path: str | os.PathLike) -> tuple[Path, int]:
    """After a crash: merge whatever segments exist for ``path`` into a valid ``path``.

    Returns (path, rows). Removes the segment folder unless a segment was unreadable (then the
    readable prefix is merged, a warning is issued and the folder is kept). Raises MjrigError
    with one clear line if there is nothing to recover.
    """
    path = Path(path)
    seg_dir = segment_dir(path)
    stems = parts(seg_dir)
    segs = segments(seg_dir) if seg_dir.is_dir() else []
    if not segs and not stems:
        raise MjrigError(f"nothing to recover for {path}: no recorded rows in {seg_dir}")
    metadata: dict[str, str] = {}
    units: dict[str, str] = {}
    try:
        meta = json.loads((seg_dir / META_NAME).read_text(encoding="utf-8"))
        metadata = check_str_map(meta.get("metadata"), "metadata")
        units = check_str_map(meta.get("units"), "units")
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        warnings.warn(f"{seg_dir / META_NAME} unreadable ({exception_text(exc, with_type=True)}); "
                      "recovering without file metadata and units", stacklevel=2)
    metadata.pop(UNITS_KEY, None)
    if stems:
        try:
            rows = finish_parts(stems, path, metadata, units)
        except (OSError, ValueError, KeyError) as exc:
            raise MjrigError(f"cannot write {path}: {exception_text(exc, with_type=True)}") from exc
        if rows == 0:
            path.unlink(missing_ok=True)
            raise MjrigError(f"nothing to recover for {path}: no whole row group in {seg_dir}")
        shutil.rmtree(seg_dir, ignore_errors=True)
        return path, rows
    try:
        rows, ok = merge_dir(segs, path, metadata, units)
    except (OSError, pa.ArrowException) as exc:
        raise MjrigError(f"cannot write {path}: {exception_text(exc, with_type=True)}") from exc
    if rows == 0 and not ok:
        path.unlink(missing_ok=True)
        raise MjrigError(f"nothing to recover for {path}: no readable segment in {seg_dir}")
    if ok:
        shutil.rmtree(seg_dir, ignore_errors=True)
    return path, rows


# --- helpers -------------------------------------------------------------------------------

def segments(folder: Path) -> list[Path]:
    """Closed segment files of ``folder`` in write order (temp files are ignored)."""
    found = []
    for entry in os.scandir(folder):
        m = _SEGMENT_RE.match(entry.name)
        if m:
            found.append((int(m.group(1)), Path(entry.path)))
    return [p for _, p in sorted(found)]


def check_str_map(value: dict[str, str] | None, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"{what} must map str to str, got {value!r}")
    return dict(value)


def write_meta(folder: Path, metadata: dict[str, str], units: dict[str, str]) -> None:
    tmp = folder / (META_NAME + ".tmp")
    tmp.write_text(json.dumps({"metadata": metadata, "units": units}, indent=1), encoding="utf-8")
    os.replace(tmp, folder / META_NAME)
