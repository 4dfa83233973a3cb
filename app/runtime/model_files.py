"""The files an MJCF model reads: the model itself, its ``<include>`` files, its assets.

MuJoCo opens every one of them itself and blocks on anything that is not a regular file (a named
pipe waits for a writer for ever), so mjrig looks at them first: ``check_model_files`` refuses a
model that names a pipe, a device or a folder with one line naming it, before MuJoCo sees the
model. ``model_files`` lists them (an output must never be one of a command's inputs).

Paths resolve as MuJoCo resolves them: an ``<include file=...>`` relative to the main model's
folder, an asset's ``file`` relative to the compiler's ``assetdir``/``meshdir``/``texturedir``
(themselves relative to the main model's folder). Only what exists is listed: a missing file is
MuJoCo's to report, with its own message.
"""
from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

from mjrig.runtime.errors import ConfigError

__all__ = ["model_files", "check_model_files"]

_ASSET_TAGS = {"mesh": "meshdir", "skin": "meshdir", "texture": "texturedir", "hfield": "assetdir",
               "model": "assetdir"}
"""Elements with a ``file`` attribute, and the compiler folder MuJoCo looks in for them."""
_MAX_FILES = 10_000
"""Files followed at most (an include cycle MuJoCo itself would refuse ends here)."""


def model_files(path: str | os.PathLike) -> list[Path]:
    """The model at ``path`` and every file it includes or loads that exists, resolved
    (symlinks followed), the model first. ConfigError when one is not a regular file."""
    root = Path(path)
    found: list[Path] = []
    seen: set[Path] = set()
    todo = [root]
    while todo and len(found) < _MAX_FILES:
        p = todo.pop(0)
        real = Path(os.path.realpath(p))
        if real in seen:
            continue
        seen.add(real)
        try:
            mode = os.stat(real).st_mode
        except OSError:
            if p is root:
                raise ConfigError(f"{root}: model file not found") from None
            continue
        if not stat.S_ISREG(mode):
            if p is root:
                raise ConfigError(f"{root}: not a regular file ({_kind(mode)}): a model is an .xml or .mjb file")
            raise ConfigError(f"{root}: it reads {p}, which is not a regular file ({_kind(mode)}): a model's includes "
                              "and assets must be files")
        found.append(real)
        if real.suffix.lower() == ".xml":
            todo.extend(_referenced(real, root.parent))
    return found


def check_model_files(path: str | os.PathLike) -> None:
    """ConfigError (one line) unless the model at ``path`` and what it reads are regular files."""
    model_files(path)


def _referenced(xml: Path, base: Path) -> list[Path]:
    """The files ``xml`` names (includes and assets) as MuJoCo would look for them."""
    try:
        tree = ET.parse(xml)
    except (ET.ParseError, OSError, ValueError):
        return []  # MuJoCo reports a malformed file its own way
    dirs = {"assetdir": base, "meshdir": base, "texturedir": base}
    for compiler in tree.iter("compiler"):
        asset = compiler.get("assetdir")
        if asset is not None:
            dirs = {k: base / asset for k in dirs}
        for key in ("meshdir", "texturedir"):
            if compiler.get(key) is not None:
                dirs[key] = base / compiler.get(key)  # type: ignore[operator]
    out = []
    for element in tree.iter():
        name = element.get("file")
        if name is None or not isinstance(element.tag, str):
            continue
        if element.tag == "include":
            out.append(base / name)
        elif element.tag in _ASSET_TAGS:
            out.append(dirs[_ASSET_TAGS[element.tag]] / name)
    return out


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
