"""A sweep's or study's requirements as a reviewer asks about them: how many trials failed each,
which trial failed it worst (the value farthest past its bound, in the scenario's SI units), and
which trial passed or failed what (``plotting.matrix_figure`` draws it).

GUI-free; any thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mjrig.exports.report_marks import number

__all__ = ["requirement_summary", "violation"]


def violation(spec: Mapping[str, Any], value: float | None) -> float:
    """How far ``value`` lies past the requirement's bounds (``min``, ``max``, ``final`` ±
    ``tolerance``; 0 within them, NaN without a value)."""
    if value is None or not math.isfinite(value):
        return math.nan
    past = 0.0
    lo, hi, final = number(spec.get("min")), number(spec.get("max")), number(spec.get("final"))
    if lo is not None:
        past = max(past, lo - value)
    if hi is not None:
        past = max(past, value - hi)
    if final is not None:
        past = max(past, abs(value - final) - (number(spec.get("tolerance")) or 0.0))
    return past


def requirement_summary(table: Any, specs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per requirement with ``Requirements/<r>:pass`` in ``table`` (a polars frame of
    trials): ``name``, ``failed`` (trials), ``of`` (trials with a verdict), and the ``worst``
    failing trial (``trial``, ``value``, ``past``: how far past its bound) or None."""
    by_name = {str(s.get("name")): s for s in specs if isinstance(s, Mapping)}
    out = []
    for name, spec in by_name.items():
        col, val = f"Requirements/{name}:pass", f"Requirements/{name}:value"
        if col not in table.columns:
            continue
        verdicts = table[col].to_list()
        trials = table["trial"].to_list()
        values = table[val].to_list() if val in table.columns else [None] * len(trials)
        failed = [(t, v) for t, ok, v in zip(trials, verdicts, values) if ok is False]
        worst = None
        if failed:
            scored = [(violation(spec, v), t, v) for t, v in failed]
            known = [s for s in scored if math.isfinite(s[0])]
            past, trial, value = max(known, key=lambda s: (s[0], -s[1])) if known else (math.nan, failed[0][0], None)
            worst = {"trial": int(trial), "value": value, "past": past}
        out.append(
            {
                "name": name,
                "signal": str(spec.get("signal", "")),
                "failed": len(failed),
                "of": sum(ok is not None for ok in verdicts),
                "worst": worst,
            }
        )
    return out
