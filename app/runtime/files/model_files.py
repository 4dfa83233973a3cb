"""The files an MJCF model reads: the model itself, its ``<include>`` files, its assets.

One walk serves three users: ``check_model_files`` refuses a model that names a pipe, a device or
a folder (MuJoCo opens every file itself and blocks on a named pipe for ever) with one line
naming it, before MuJoCo sees the model; ``mjrig.scenario.inputs`` names them as a command's
inputs (an output must never be one); hot reload (``mjrig.session.file_watch``) watches them.

Paths resolve as MuJoCo resolves them: an ``<include file=...>`` relative to the main model's
folder (the including file's folder is tried first, for models that were written that way), an
asset's ``file`` relative to the compiler's ``assetdir``/``meshdir``/``texturedir`` (themselves
relative to the main model's folder). Only what exists is listed: a missing file is MuJoCo's to
report, in its own words; a file that does not parse is listed, not followed. GUI-free.
"""

from __future__ import annotations

import os
import re
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

from mjrig.runtime.errors import ConfigError

__all__ = ["model_files", "check_model_files"]

_ASSET_TAGS = {"mesh": "meshdir", "skin": "meshdir", "texture": "texturedir", "hfield": "assetdir", "model": "assetdir"}
"""Elements with a ``file`` attribute, and the compiler folder MuJoCo looks in for them."""
_MAX_FILES = 10_000
"""Files followed at most (an include cycle MuJoCo itself would refuse ends here)."""


def model_files(model: str | os.PathLike) -> list[tuple[str, Path]]:
    """What the model at ``model`` reads besides itself, as ``(element, path)`` (``include``,
    ``mesh``, ``texture``...), each that exists once (symlinks followed); a ``.mjb`` reads
    nothing else. Includes are followed when they are regular files."""
    root = Path(model)
    if root.suffix.lower() == ".urdf":
        from mjrig.runtime.files.urdf import urdf_meshes

        return [("mesh", p) for p in urdf_meshes(root)]
    if root.suffix.lower() != ".xml":
        return []
    found: list[tuple[str, Path]] = []
    seen = {Path(os.path.realpath(root))}
    todo = [root]
    while todo and len(found) < _MAX_FILES:
        current = todo.pop(0)
        for tag, candidates in _referenced(current, root.parent):
            path = next((p for p in candidates if p.exists()), None)
            if path is None:
                continue
            real = Path(os.path.realpath(path))
            if real in seen:
                continue
            seen.add(real)
            found.append((tag, path))
            if tag == "include":
                todo.append(path)  # followed when it is a regular file (``_referenced``)
    return found


def check_model_files(model: str | os.PathLike) -> None:
    """ConfigError (one line) unless the model at ``model`` and every file it reads are regular
    files (a model that is missing is said as such)."""
    root = Path(model)
    mode = _mode(root)
    if mode is None:
        raise ConfigError(f"{root}: model file not found")
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{root}: not a regular file ({_kind(mode)}): a model is an .xml, .urdf or .mjb file")
    for _, path in model_files(root):
        mode = _mode(path)
        if mode is not None and not stat.S_ISREG(mode):
            raise ConfigError(
                f"{root}: it reads {path}, which is not a regular file ({_kind(mode)}): a model's "
                "includes and assets must be files"
            )


def _referenced(xml: Path, base: Path) -> list[tuple[str, list[Path]]]:
    """The files ``xml`` names (includes and assets), each with the paths MuJoCo may mean."""
    mode = _mode(xml)
    if mode is None or not stat.S_ISREG(mode):
        return []
    try:
        tree = ET.parse(xml)
    except (ET.ParseError, OSError, ValueError):
        # MuJoCo reports a malformed file its own way, but first it opens what the file names, so
        # every name is checked (a DOCTYPE whose entities expat will not expand hides no include)
        return _named_in_text(xml, base)
    dirs = {"assetdir": base, "meshdir": base, "texturedir": base}
    for compiler in tree.iter("compiler"):
        asset = compiler.get("assetdir")
        if asset is not None:
            dirs = {k: base / asset for k in dirs}
        for key in ("meshdir", "texturedir"):
            folder = compiler.get(key)
            if folder is not None:
                dirs[key] = base / folder
    out: list[tuple[str, list[Path]]] = []
    for element in tree.iter():
        name = element.get("file")
        if name is None or not isinstance(element.tag, str):
            continue
        if element.tag == "include":
            out.append(("include", list(dict.fromkeys([xml.parent / name, base / name]))))
        elif element.tag in _ASSET_TAGS:
            out.append((element.tag, [dirs[_ASSET_TAGS[element.tag]] / name]))
    return out


_FILE_ATTR = re.compile(rb"""<\s*([A-Za-z_][\w.-]*)[^<>]*?\bfile\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _named_in_text(xml: Path, base: Path) -> list[tuple[str, list[Path]]]:
    """Every ``file=`` of a file that does not parse as XML, read as text: (its element, the
    paths MuJoCo may mean: beside the file, beside the main model)."""
    try:
        raw = xml.read_bytes()
    except OSError:
        return []
    out = []
    for m in _FILE_ATTR.finditer(raw):
        tag = m.group(1).decode("ascii", "replace")
        name = (m.group(2) if m.group(2) is not None else m.group(3) or b"").decode("utf-8", "replace")
        if name:
            out.append(
                (
                    tag if tag in ("include", *_ASSET_TAGS) else "file",
                    list(dict.fromkeys([xml.parent / name, base / name])),
                )
            )
    return out


def _mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode
    except OSError:
        return None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"
