"""A recording's work folder (``OUT.parquet.parts``): its layout is described in
``mjrig.runtime.files.parquet_sink``. ``recover`` turns what a crash left there into the Parquet file:
the parts' row groups (``_parquet_stream``), or the raw segments (``seg-*.rows``) an older mjrig
wrote; ``discard`` removes the folder of a finished recording.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import re
import shutil
import threading
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mjrig.runtime.errors import MjrigError, OutputError, exception_text, output_fault
from mjrig.runtime.files._parquet_salvage import disagreement, part_stems, salvage_part, write_salvaged
from mjrig.runtime.files.atomic_output import replace_text
from mjrig.runtime.files.parquet_merge import UNITS_KEY, merge_dir, write_union
from mjrig.runtime.files.paths import fresh_path  # the recording's segments and lock
from mjrig.runtime.files.paths import work_dir as segment_dir

__all__ = ["META_NAME", "DamagedParts", "discard", "recover", "segment_dir", "segments", "check_str_map", "write_meta"]

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
    threading.Thread(
        target=shutil.rmtree, args=(done,), kwargs={"ignore_errors": True}, name="mjrig-discard-segments", daemon=False
    ).start()


def sweep_done(folder: Path) -> None:
    """Remove what a killed process left of discarded segment folders of ``folder``."""
    for left in folder.parent.glob(f".{folder.name}.done-*"):
        pid = left.name.rsplit(".done-", 1)[1].split("-")[0]
        if pid != str(os.getpid()):
            shutil.rmtree(left, ignore_errors=True)


_discarded = itertools.count(1)
DISCARD_NOW_BYTES = 64 * 2**20
"""Segments up to this size are removed at once (under about 10 ms)."""


class DamagedParts(UserWarning):
    """Some of a recording's parts could not be read or verified: the rows that could are
    recovered, and the parts are kept aside (``NAME.parts.damaged``); ``mjrig recover`` exits 2."""


def recover(path: str | os.PathLike) -> tuple[Path, int]:
    """After a crash, or a run that could not finish its file: the rows in ``path``'s work folder
    (``path.parts``) as a valid Parquet file. Returns (the file, rows).

    Only adds: every part is read as it was left (``_parquet_salvage``), the file is written under
    a new name in the folder and read back before it takes its place: ``path``, or the next free
    name when a file is there already (it is never replaced). Then the work folder is removed,
    or, when some of its bytes could not be read, renamed aside (``path.parts.damaged``) with a
    warning naming them. Raises MjrigError (one line, nothing changed) when there is nothing to
    recover or the file cannot be written."""
    path = Path(path)
    seg_dir = segment_dir(path)
    stems = part_stems(seg_dir)
    segs = segments(seg_dir) if seg_dir.is_dir() else []
    if not segs and not stems:
        raise MjrigError(f"nothing to recover for {path}: no recorded rows in {seg_dir}")
    metadata, units = _read_meta(seg_dir)
    final = fresh_path(path) if path.exists() else path
    _sweep_left(path)
    tmp = final.with_name(f".{final.name}.recover-{os.getpid()}")
    made: list[Path] = []
    try:
        if stems:
            rows, lost = _recover_parts(stems, tmp, made, metadata, units)
        else:
            made.append(tmp)
            rows, ok = merge_dir(segs, tmp, metadata, units)
            lost = [] if ok else [f"segments of {seg_dir} after the first unreadable one"]
        if rows == 0:
            raise MjrigError(
                f"nothing to recover for {path}: no whole row group in {seg_dir}"
                + (f" ({'; '.join(lost)}; left as it is)" if lost else "")
            )
        problem = disagreement(tmp, rows)  # the parts are gone only when their rows are in a verified file
        if problem is not None:
            aside = _set_aside(seg_dir)
            raise MjrigError(
                f"cannot recover {path}: the file made of its parts does not agree with itself ({problem}); nothing was deleted: the parts are kept in {aside}"
            )
        final = _place(tmp, final)
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        fault = output_fault(exc)
        raise OutputError(
            f"cannot write {final}: {fault.cause}; nothing in {seg_dir} was changed: "
            f"{fault.advice(f'`mjrig recover {path}` again')}"
        ) from exc
    finally:
        for f in made:
            f.unlink(missing_ok=True)
    if lost:
        aside = _set_aside(seg_dir)
        warnings.warn(
            f"{'; '.join(lost)}: {rows} rows before it recovered; the parts are kept in {aside}",
            DamagedParts,
            stacklevel=2,
        )
    else:
        shutil.rmtree(seg_dir, ignore_errors=True)
    if final != path:
        warnings.warn(f"{path} exists and was left as it is: the rows are recovered into {final}", stacklevel=2)
    return final, rows


def _recover_parts(
    stems: list[Path], tmp: Path, made: list[Path], metadata: dict[str, str], units: dict[str, str]
) -> tuple[int, list[str]]:
    """The parts ``stems`` read (never changed) into the new file ``tmp``, its name and those of
    the files made on the way in ``made`` (the caller removes them); returns (rows, what was lost)."""
    found = [salvage_part(stem) for stem in stems]
    for part in found:
        if part.note:
            warnings.warn(part.note, stacklevel=3)
    files = []  # (a finished file, its rows: read back and agreeing with itself)
    for part in found:
        if part.rows == 0 or part.source is None:
            continue
        if part.whole:
            own, rows = part.source, part.rows
        else:
            own = tmp.with_name(f"{tmp.name}.{part.stem.name}")
            made.append(own)
            rows = write_salvaged(part, own, metadata, units)
        problem = disagreement(own, rows) if rows else None
        if problem is not None:  # never taken: its rows are not what they seem
            part.lost = f"{part.stem.name}: the file made of it does not agree with itself: {problem}"
        elif rows:
            files.append((own, rows))
    lost = [part.lost for part in found if part.lost]
    made.append(tmp)
    if len(files) <= 1:
        if files:
            _link_or_copy(files[0][0], tmp)
        return sum(rows for _, rows in files), lost
    opened = [pq.ParquetFile(f) for f, _ in files]
    try:
        names = tuple(dict.fromkeys(n for part in opened for n in part.schema_arrow.names))
        tables = (part.read_row_group(i) for part in opened for i in range(part.num_row_groups))
        write_union(tmp, names, tables, metadata, units)
    finally:
        for part in opened:
            part.close()
    return sum(rows for _, rows in files), lost


def _sweep_left(path: Path) -> None:
    """Remove what a killed ``recover`` left beside ``path``: its hidden files
    (``.NAME.recover-PID...``) of a process that is gone."""
    for left in path.parent.glob(f".*{path.stem}*{path.suffix}.recover-*"):
        pid = left.name.rsplit(".recover-", 1)[1].split(".")[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            left.unlink(missing_ok=True)
        except OSError:
            pass


def _read_meta(seg_dir: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The recording's metadata and units from its ``meta.json`` (empty, with a warning, when unreadable)."""
    metadata: dict[str, str] = {}
    units: dict[str, str] = {}
    try:
        meta = json.loads((seg_dir / META_NAME).read_text(encoding="utf-8"))
        metadata = check_str_map(meta.get("metadata"), "metadata")
        units = check_str_map(meta.get("units"), "units")
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        warnings.warn(
            f"{seg_dir / META_NAME} unreadable ({exception_text(exc, with_type=True)}); "
            "recovering without file metadata and units",
            stacklevel=3,
        )
    metadata.pop(UNITS_KEY, None)
    return metadata, units


def _link_or_copy(src: Path, dst: Path) -> None:
    """``dst`` a new name of ``src`` (a hard link), or a copy where links are not supported."""
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        with open(src, "rb") as a, open(dst, "xb") as b:
            shutil.copyfileobj(a, b, 8 * 2**20)
            b.flush()
            os.fsync(b.fileno())


def _place(tmp: Path, final: Path) -> Path:
    """``tmp`` (read back) under ``final``, or the next free name should one appear there
    meanwhile: never over a file. Returns the name taken."""
    while True:
        try:
            _link_or_copy(tmp, final)
            return final
        except FileExistsError:
            final = fresh_path(final)


def _set_aside(seg_dir: Path) -> Path:
    """``seg_dir`` renamed ``NAME.damaged`` (``NAME.damaged-2``...: none replaced); ``seg_dir``
    itself when it cannot be renamed."""
    for n in itertools.count(1):
        aside = seg_dir.with_name(f"{seg_dir.name}.damaged" + (f"-{n}" if n > 1 else ""))
        if aside.exists():
            continue
        try:
            os.rename(seg_dir, aside)
            return aside
        except OSError:
            return seg_dir
    raise AssertionError("count never ends")  # pragma: no cover


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
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"{what} must map str to str, got {value!r}")
    return dict(value)


def write_meta(folder: Path, metadata: dict[str, str], units: dict[str, str]) -> None:
    replace_text(folder / META_NAME, json.dumps({"metadata": metadata, "units": units}, indent=1))
