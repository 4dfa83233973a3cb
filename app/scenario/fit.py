"""The ``[fit]`` section: which params ``mjrig fit`` estimates from the ``[[measured]]`` data.

```toml
[fit]
params = { k = { low = 50.0, high = 2000.0 }, c = { low = 0.01, high = 50.0, log = true } }
signals = ["Joints/slide:qpos"]          # optional: the measured signals in the residual (default all)
weights = { "Joints/slide:qpos" = 1.0 }  # optional; default 1 / the measured signal's std
start = 0.0                              # optional window of each experiment, s
end = 4.0
starts = 1                               # optional: more starts (spread over the bounds) when > 1
```

``log = true`` fits the param on a log scale (its steps and bounds in log space). Besides
``[params]``, ``initial.<joint>`` and ``offset.<entry>`` (``fit_variables``). GUI-free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mjrig.runtime.points import closest_names
from mjrig.scenario.fields import FieldReader
from mjrig.scenario.fit_variables import OFFSET, check_offset, is_variable
from mjrig.scenario.optimize import SearchRange, search_range, search_ranges

__all__ = ["FitSpec", "parse_fit"]

_KEYS = {"params", "signals", "weights", "start", "end", "starts"}


@dataclass
class FitSpec:
    """A parsed ``[fit]``: the estimated ``params`` with their bounds, the residual's
    ``signals`` (None: every measured one) and ``weights`` (by signal; missing: 1/std), the
    window ``start``..``end`` (s) of each experiment, and how many ``starts``."""

    params: dict[str, SearchRange] = field(default_factory=dict)
    signals: list[str] | None = None
    weights: dict[str, float] = field(default_factory=dict)
    start: float = 0.0
    end: float | None = None
    starts: int = 1


def parse_fit(spec: Any, reader: FieldReader, params: Mapping[str, Any], measured: list[Any]) -> FitSpec:
    """Read ``[fit]`` with ``reader`` (FILE:LINE errors); ``params`` by name, ``measured`` entries."""
    path = ("fit",)
    table = reader.keys(spec, _KEYS, path)
    out = FitSpec()
    if not measured:
        raise reader.fail(path, "[fit] needs [[measured]] data to fit to")
    entries = table.get("params", {})
    if not isinstance(entries, dict) or not entries:
        raise reader.fail((*path, "params"), "needs params = { NAME = { low = ..., high = ... } } (at least one)")
    plain = {n: e for n, e in entries.items() if not is_variable(n)}
    out.params = search_ranges(plain, reader, path, params, what="the estimate")
    for name, entry in entries.items():
        if name.startswith(OFFSET) and (wrong := check_offset(name, measured)) is not None:
            raise reader.fail((*path, "params", name), wrong)
        if is_variable(name):
            out.params[name] = search_range(entry, reader, (*path, "params", name), what="the estimate")
    out.params = {n: out.params[n] for n in entries}  # as written
    for name, r in out.params.items():
        if is_variable(name):
            continue  # its start is known once the model is (fit_variables.start_value)
        value = float(params[name].value)
        if not r.low <= value <= r.high:
            raise reader.fail(
                (*path, "params", name),
                f"the param's value {value:g} (the fit's start) is outside [{r.low:g}, {r.high:g}]",
            )
    mapped = sorted({s for m in measured for s in m.signals})
    if "signals" in table:
        sig = table["signals"]
        if not isinstance(sig, list) or not sig or not all(isinstance(s, str) for s in sig):
            raise reader.fail((*path, "signals"), "must be a list of measured signals' names")
        for s in sig:
            if s not in mapped:
                raise reader.fail((*path, "signals"), f"no [[measured]] entry maps '{s}'{closest_names(s, mapped)}")
        out.signals = list(sig)
    if "weights" in table:
        weights = reader.keys(table["weights"], set(mapped), (*path, "weights"))
        out.weights = {s: reader.number(w, (*path, "weights", s), positive=True) for s, w in weights.items()}
    if "start" in table:
        out.start = reader.number(table["start"], (*path, "start"), nonneg=True)
    if "end" in table:
        out.end = reader.number(table["end"], (*path, "end"), positive=True)
        if out.end <= out.start:
            raise reader.fail((*path, "end"), f"end ({out.end:g} s) must be after start ({out.start:g} s)")
    if "starts" in table:
        v = table["starts"]
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 64:
            raise reader.fail((*path, "starts"), f"must be a whole number from 1 to 64, got {v!r}")
        out.starts = v
    return out
