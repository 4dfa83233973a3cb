"""The files a scenario reads, named for messages: its own file, the model and every file the
model includes or loads (MJCF ``<include>``, meshes, textures, height fields, skins), the
``[[measured]]`` bench files and the initial state. A command's explicit outputs are checked
against them (``mjrig.runtime.files.out_lock.check_outputs_apart``): writing one would destroy an input.

Reading the model's files follows ``<include file=...>`` recursively (each file once) and only
opens regular files (a named pipe is never read). A file that cannot be parsed is still named
but not followed: the model loader reports it, in its own words. GUI-free.
"""

from __future__ import annotations

from pathlib import Path

from mjrig.runtime.files.model_files import model_files
from mjrig.scenario.parse import Scenario

__all__ = ["scenario_inputs"]


def scenario_inputs(sc: Scenario) -> dict[str, Path]:
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
    initial = getattr(sc, "initial_state", None)
    if initial is not None:
        inputs["the scenario's initial state"] = Path(initial)
    return inputs
