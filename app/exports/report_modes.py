"""The modes table of a recording's report: the recorded rig linearised about its initial state.

The rig is rebuilt from the recording's metadata as the run had it: the scenario it kept, on the
model file it names (whose SHA-256 must still be the recorded one), with the param values the
run was given (``mjrig.set``); what only produces files (recording, video) or reads other files
(bench data) is left out. It is then linearised as ``mjrig modes`` does. When the model file is
missing or changed, or the rig is larger than ``MOST_DOFS`` degrees of freedom, the section says
why instead of showing numbers that might not be the run's.
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["modes_section", "MOST_DOFS"]

MOST_DOFS = 300
"""Degrees of freedom up to which a report works the modes out (2·(2·nv) steps of the rig)."""


def _fmt(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else "—"


def modes_section(meta: dict[str, str]) -> dict[str, Any]:
    """``{"rows": [...], "note": "..."}``: each mode's number (oscillatory ones), kind, frequency and
    undamped frequency (Hz), damping ratio, time constant (s) and the joints moving most."""
    from mjrig.runtime.errors import MjrigError
    from mjrig.runtime.files.paths import file_sha256

    model = Path(meta.get("mjrig.model_path", ""))
    try:
        doc = tomllib.loads(meta.get("mjrig.scenario", ""))
    except tomllib.TOMLDecodeError:
        return {"rows": [], "note": "The recording keeps no readable scenario: no modes."}
    if not model.is_file():
        return {"rows": [], "note": f"The model file {model} is not here: the modes were not worked out."}
    if meta.get("mjrig.model_sha256") and file_sha256(model) != meta["mjrig.model_sha256"]:
        return {
            "rows": [],
            "note": f"The model file {model.name} changed since the run: the modes were not worked out.",
        }
    doc = copy.deepcopy(doc)
    for key in ("recording", "video", "measured", "sweep", "optimize", "fit", "metrics", "requirements"):
        doc.pop(key, None)
    doc["model"] = str(model)
    try:
        from mjrig.linear.analysis import TooLarge, analyse
        from mjrig.runtime.analysis.modes import shape_text
        from mjrig.scenario.parse import scenario_from_doc

        sc = scenario_from_doc(doc, base=model.parent)
        for name, value in json.loads(meta.get("mjrig.set", "{}")).items():
            if name in sc.params:
                sc.params[name].value = float(value)
        an = analyse(sc, most_dofs=MOST_DOFS)
    except TooLarge as exc:
        return {"rows": [], "note": f"{exc}."}
    except (MjrigError, ValueError, OSError) as exc:
        return {"rows": [], "note": f"The rig could not be rebuilt for its modes: {exc}"}
    rows, k = [], 0
    for m in an.modes:
        k += m.kind == "oscillatory"
        shape = shape_text(m.shape)
        rows.append(
            {
                "mode": str(k) if m.kind == "oscillatory" else m.kind,
                "hz": _fmt(m.frequency_hz),
                "undamped": _fmt(m.undamped_frequency_hz),
                "damping": _fmt(m.damping_ratio),
                "tau": _fmt(m.time_constant_s) if m.kind != "oscillatory" else "",
                "shape": shape,
            }
        )
    osc = sum(m.kind == "oscillatory" for m in an.modes)
    note = (
        f"The rig's {an.linear.kind}-time dynamics linearised about its {an.point} (t = {an.linear.time:g} s) "
        f"with the run's params: {osc} oscillatory mode{'s' if osc != 1 else ''}, lowest first, then the others."
    )
    return {"rows": rows, "note": note}
