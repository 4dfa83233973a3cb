"""What ``mjrig fit`` minimises: the experiments as trial jobs, and residuals from their rows.

Each ``[[measured]]`` entry is one experiment: the scenario run with the entry's ``set`` values
and ``initial`` state, for as long as its last measured sample in the fit's window, carrying
that entry alone and one hidden ``rms_error`` metric per fitted signal (``fit<k>``), whose
``Trace/fit<k>`` row value is the simulation at the measured samples (``SweepJob.traces``).
Requirements, sweeps, studies, recordings and videos are left out of it.

The residual of a point stacks, for every experiment and fitted signal, weight x (simulated -
measured) at the measured samples in the window; the weight is the ``[fit] weights`` entry or
1 / the measured signal's standard deviation in the window. A sample the simulation did not
reach (it diverged, or ended early) counts as ``MISSING`` weighted units. GUI-free.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.campaign.trial import SweepJob
from mjrig.runtime.analysis.metrics import error_value
from mjrig.scenario.studies.fit import INITIAL, OFFSET

__all__ = ["Experiment", "Signal", "experiments", "residual", "per_signal", "series", "MISSING"]

MISSING = 1e3
"""The residual (weighted units) of a measured sample the simulation did not reach."""


@dataclass(frozen=True)
class Signal:
    """One fitted signal of an experiment: its hidden metric, measured samples and weight."""

    metric: str
    signal: str
    times: np.ndarray
    values: np.ndarray
    weight: float


@dataclass(frozen=True)
class Experiment:
    """One measured entry as a trial job, and its fitted signals."""

    name: str
    job: SweepJob
    signals: tuple[Signal, ...]
    keeps: frozenset[str] = frozenset()
    """Fit variables this experiment leaves alone: ``initial.<joint>`` of a validation entry
    that starts that joint itself (its own ``[measured.initial]``)."""

    def values(self, point: dict[str, float]) -> dict[str, float]:
        """``point`` as this experiment takes it (without what it ``keeps``)."""
        return {n: v for n, v in point.items() if n not in self.keeps}

    @property
    def size(self) -> int:
        return sum(s.times.size for s in self.signals)


def experiments(sc: Any, timestep: float, *, role: str = "fit") -> list[Experiment]:
    """The fit's experiments of scenario ``sc`` (its ``[fit]`` and ``[[measured]]`` entries of
    ``role``: "fit", in the residual, or "validation", scored only), whose model steps
    ``timestep`` (s)."""
    from mjrig.scenario.toml_writer import dumps

    spec = sc.fit
    out = []
    base = str(sc.source.resolve().parent if sc.source else Path.cwd())
    for i, entry in enumerate(sc.measured):
        if entry.role != role:
            continue
        wanted = [s for s in entry.signals if spec.signals is None or s in spec.signals]
        if not wanted:
            continue
        doc = copy.deepcopy(sc.doc)
        for key in ("sweep", "optimize", "fit", "recording", "video", "requirements"):
            doc.pop(key, None)
        doc["model"] = str(sc.model)
        sim = doc.setdefault("simulation", {})
        if sc.initial_state is not None:
            sim["initial_state"] = str(sc.initial_state)
        params = doc.get("params", {})
        for name, value in entry.set.items():
            if isinstance(params[name], dict):
                params[name]["value"] = value
            else:
                params[name] = value
        table = copy.deepcopy(doc["measured"][i])
        table["file"] = str(entry.file)
        if entry.initial:
            doc["initial"] = table.pop("initial")
        table.pop("set", None)
        table.pop("role", None)
        doc["measured"] = [table]
        signals, metrics = [], []
        last = 0.0
        # An estimated offset moves the samples by s_lo..s_hi (s): those scored stay inside the
        # window at every offset within its bounds, so each point scores the same samples.
        moved = spec.params.get(f"{OFFSET}{entry.name}")
        s_lo, s_hi = (moved.low - entry.offset, moved.high - entry.offset) if moved else (0.0, 0.0)
        start, end = spec.start - s_lo, (spec.end - s_hi if spec.end is not None else None)
        for k, sig in enumerate(wanted):
            t, x = entry.series(sig)
            inside = (t >= start - 1e-12) & ((t <= end + 1e-12) if end is not None else True)
            t, x = t[inside], x[inside]
            if t.size < 2:
                continue
            std = float(np.std(x))
            weight = spec.weights.get(sig, 1.0 / std if std > 0 else 1.0)
            metric = {"name": f"fit{k}", "signal": sig, "kind": "rms_error", "against": entry.name, "start": start}
            if end is not None:
                metric["end"] = end
            metrics.append(metric)
            signals.append(Signal(f"fit{k}", sig, t, x, weight))
            last = max(last, float(t[-1]))
        if not signals:
            continue
        doc["metrics"] = metrics
        sim["duration"] = last + max(s_hi, 0.0) + 2 * timestep  # the run reaches past the last sample
        out.append(
            Experiment(
                entry.name,
                SweepJob(text=dumps(doc), source=None, base=base, metadata=json.dumps({}), traces=True),
                tuple(signals),
                frozenset(f"{INITIAL}{j}" for j in entry.initial.qpos) if role == "validation" else frozenset(),
            )
        )
    return out


def residual(exps: list[Experiment], rows: list[dict[str, Any]]) -> tuple[np.ndarray, str]:
    """(stacked residual, status) of one point from its rows (one per experiment, in order):
    status "ok", or the first experiment's "diverged"/"error"."""
    parts, status = [], "ok"
    for exp, row in zip(exps, rows):
        if row.get("status") in ("diverged", "error") and status == "ok":
            status = row["status"]
        for s in exp.signals:
            sim = np.asarray(row.get(f"Trace/{s.metric}") or np.full(s.times.size, np.nan), dtype=float)
            r = s.weight * (sim - s.values)
            parts.append(np.where(np.isfinite(r), r, MISSING))
    return np.concatenate(parts) if parts else np.empty(0), status


def per_signal(exps: list[Experiment], r: np.ndarray) -> dict[str, dict[str, float]]:
    """RMS of (simulated - measured) per experiment and signal (SI) from a stacked residual, over
    the samples the simulation reached: the ``rms_error`` metric's function on its samples."""
    out: dict[str, dict[str, float]] = {}
    at = 0
    for exp in exps:
        for s in exp.signals:
            part = r[at : at + s.times.size]
            at += s.times.size
            simulated = np.where(part == MISSING, np.nan, part / s.weight + s.values)
            out.setdefault(exp.name, {})[s.signal] = error_value("rms_error", simulated, s.values)
    return out


def series(exps: list[Experiment], before: np.ndarray, after: np.ndarray, *, most: int = 4000) -> dict[str, Any]:
    """Each experiment's signals at the measured samples: times (s), measured, simulated from the
    start and at the estimate (SI; None where not reached), thinned evenly to ``most`` samples."""
    out: dict[str, Any] = {}
    at = 0
    for exp in exps:
        for s in exp.signals:
            n = s.times.size
            step = max(1, -(-n // most))
            sims = []
            for r in (before, after):
                part = r[at : at + n]
                sim = np.where(part == MISSING, np.nan, part / s.weight + s.values)[::step]
                sims.append([None if not np.isfinite(v) else float(v) for v in sim])
            out.setdefault(exp.name, {})[s.signal] = {
                "t": s.times[::step].tolist(),
                "measured": s.values[::step].tolist(),
                "before": sims[0],
                "after": sims[1],
            }
            at += n
    return out
