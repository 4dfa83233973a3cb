"""A scenario written again with other param values: a study's best set-up, a fit's estimate.

The copy keeps every file the scenario names (the model, an initial state, measured data) as the
scenario names them: a relative path is rewritten relative to where the copy is written, so the
copy opens from there. GUI-free.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mjrig.runtime.files.atomic_output import atomic_output
from mjrig.runtime.files.paths import fresh_path
from mjrig.scenario.parse import Scenario
from mjrig.scenario.studies.fit import INITIAL, OFFSET

__all__ = ["write_with_values", "put_values"]


def write_with_values(sc: Scenario, values: Mapping[str, float], path: Path) -> Path:
    """Write scenario ``sc`` with params ``values`` (by name; a fit's ``initial.<joint>`` into
    ``[initial]`` and the fitted entries' own, ``offset.<entry>`` into that entry) to ``path``,
    or the next free name when it exists; returns the path written."""
    from mjrig.scenario.toml_writer import dumps

    doc = copy.deepcopy(sc.doc)
    target = fresh_path(path)
    here = target.parent.resolve()

    def moved(text: Any, resolved: Path) -> Any:
        return text if Path(str(text)).expanduser().is_absolute() else Path(os.path.relpath(resolved, here)).as_posix()

    doc["model"] = moved(doc["model"], sc.model)
    sim = doc.get("simulation", {})
    if sc.initial_state is not None and "initial_state" in sim:
        sim["initial_state"] = moved(sim["initial_state"], sc.initial_state)
    for entry, measured in zip(doc.get("measured", []), sc.measured):
        entry["file"] = moved(entry["file"], measured.file)
    put_values(doc, sc, values)
    with atomic_output(target, what="scenario") as part:
        part.write_text(dumps(doc), encoding="utf-8")
    return target


def put_values(doc: dict[str, Any], sc: Scenario, values: Mapping[str, float]) -> None:
    """Write ``values`` into scenario document ``doc`` (of ``sc``): params' values; a fit's
    ``initial.<joint>`` into ``[initial]`` and the fitted entries' own start of that joint (every
    fitted experiment started there); ``offset.<entry>`` into that ``[[measured]]`` entry."""
    for name, value in values.items():
        if name.startswith(INITIAL):  # every fitted experiment's start: [initial] and an entry's own
            joint = name[len(INITIAL) :]
            doc.setdefault("initial", {}).setdefault("qpos", {})[joint] = float(value)
            for entry, measured in zip(doc.get("measured", []), sc.measured):
                if measured.role == "fit" and joint in measured.initial.qpos:
                    entry["initial"]["qpos"][joint] = float(value)
            continue
        if name.startswith(OFFSET):
            for entry in doc.get("measured", []):
                if entry.get("name") == name[len(OFFSET) :]:
                    entry["offset"] = float(value)
            continue
        entry = doc["params"][name]
        if isinstance(entry, dict):
            entry["value"] = float(value)
        else:
            doc["params"][name] = float(value)
