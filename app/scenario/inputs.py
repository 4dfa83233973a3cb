"""The files a scenario reads, named for messages: its own file, the model and every file the
model includes or loads (MJCF ``<include>``, meshes, textures, height fields, skins), the
``[[measured]]`` bench files and the initial state. A command's explicit outputs are checked
against them (``mjrig.runtime.out_lock.check_outputs_apart``): writing one would destroy an input.

Reading the model's files follows ``<include file=...>`` recursively (each file once) and only
opens regular files (a named pipe is never read). A file that cannot be parsed is still named
but not followed: the model loader reports it, in its own words. GUI-free.
"""
from __future__ import annotations

import stat
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

__all__ = ["model_files", "scenario_inputs"]

_ASSET_DIRS = {"mesh": "meshdir", "skin": "meshdir", "texture": "texturedir", "hfield": "texturedir"}
"""Asset elements with a ``file`` attribute, and the ``<compiler>`` folder their path is under."""

_MOST_FILES = 10_000
"""Files followed at most (a model including itself in a loop ends anyway)."""


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def model_files(model: str | Path) -> list[tuple[str, Path]]:
    """The files model ``model`` (an MJCF ``.xml``; a ``.mjb`` holds everything) reads besides
    itself, as ``(element, path)``: included MJCF files (``include``, recursively) and asset
    files (``mesh``, ``texture``, ``hfield``, ``skin``) that exist on disk. Paths are
    relative to the main file's folder (MuJoCo's rule for includes and the ``<compiler>``
    folders)."""
    model = Path(model)
    if model.suffix.lower() != ".xml":
        return []
    base = model.parent
    dirs: dict[str, Path] = {}
    found: list[tuple[str, Path]] = []
    seen = {model.resolve()}
    todo = [model]
    while todo and len(found) < _MOST_FILES:
        current = todo.pop()
        if not _regular(current):
            continue
        try:
            root = ET.parse(current).getroot()
        except (ET.ParseError, OSError, UnicodeError):
            continue
        for compiler in root.iter("compiler"):
            for key in ("assetdir", "meshdir", "texturedir"):
                if compiler.get(key):
                    dirs[key] = base / compiler.get(key, "")
        for el in root.iter():
            file = el.get("file")
            if not file or not isinstance(el.tag, str):
                continue
            if el.tag == "include":
                path = base / file
            elif el.tag in _ASSET_DIRS:
                folder = dirs.get(_ASSET_DIRS[el.tag]) or dirs.get("assetdir") or base
                path = folder / file
            else:
                continue
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            if path.exists():
                found.append((el.tag, path))
                if el.tag == "include":
                    todo.append(path)
    return found


def scenario_inputs(sc: Any) -> dict[str, Path]:
    """``{what: path}`` of every file scenario ``sc`` reads (``what`` as a message says it: "the
    scenario", "the model", "the model's include file 'arm.xml'", "the scenario's measured file 'bench'")."""
    inputs: dict[str, Path] = {}
    if sc.source is not None and Path(sc.source) != Path(sc.model):
        inputs["the scenario"] = Path(sc.source)
    inputs["the model"] = Path(sc.model)
    for tag, f in model_files(sc.model):
        inputs[f"the model's {tag} file '{f.name}'"] = f
    for m in getattr(sc, "measured", None) or []:
        inputs[f"the scenario's measured file '{m.name}'"] = Path(m.file)
    if getattr(sc, "initial_state", None) is not None:
        inputs["the scenario's initial state"] = Path(sc.initial_state)
    return inputs
