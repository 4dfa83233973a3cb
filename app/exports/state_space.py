"""A rig's state-space model written for other tools (``mjrig linearise -o LIN.mat|npz|json``).

Each operating point's model (``mjrig.linear.analysis.state_space``: ``A``, ``B``, ``C``, ``D``,
the names and units of the state, inputs and outputs, the point's ``qpos``, ``qvel``, ``act`` and
``time``) is written under its plain keys for the first point and with ``_2``, ``_3`` ... for the
next ones, with ``points`` naming them all. ``.mat``: MATLAB v5 (``scipy.io.savemat``; names as
cell arrays of strings, so ``ss(A, B, C, D)`` and ``StateName = state_names`` work); ``.npz``:
numpy arrays (names as string arrays); ``.json``: lists. Written through a temporary file.
GUI-free.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.atomic_output import atomic_output

__all__ = ["write_state_space", "SUFFIXES"]

SUFFIXES = (".mat", ".npz", ".json")


def _keyed(models: list[dict[str, Any]]) -> dict[str, Any]:
    """The models' entries under their keys (the first point's plain, then ``_2``...)."""
    out: dict[str, Any] = {"points": [m["point"] for m in models]}
    for k, model in enumerate(models):
        tail = "" if k == 0 else f"_{k + 1}"
        out.update({f"{key}{tail}": value for key, value in model.items()})
    return out


def write_state_space(models: list[dict[str, Any]], path: Path) -> Path:
    """Write ``models`` (one per operating point) to ``path`` by its suffix; ConfigError (one
    line) for another suffix."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(f"-o {path}: a state-space model is written as {', '.join(SUFFIXES)}")
    doc = _keyed(models)
    with atomic_output(path, what="-o") as tmp:
        if suffix == ".json":
            plain = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in doc.items()}
            tmp.write_text(json.dumps(plain, indent=1, allow_nan=False), encoding="utf-8")
        elif suffix == ".npz":
            with open(tmp, "wb") as fh:
                # allow_pickle named (its default): the arrays' names then bind to **kwds alone
                np.savez(fh, allow_pickle=True, **{k: np.asarray(v) for k, v in doc.items()})
        else:
            import scipy.io

            def cell(v: Any) -> Any:
                if isinstance(v, list) and all(isinstance(x, str) for x in v):
                    arr = np.empty((len(v), 1), dtype=object)  # a column cell array of char
                    arr[:, 0] = v
                    return arr
                return v

            with open(tmp, "wb") as fh:
                scipy.io.savemat(fh, {k: cell(v) for k, v in doc.items()}, oned_as="column")
    return path
