"""The report of a fit's FIT.parquet (``mjrig report FIT.parquet``): the estimate with standard
errors and 95 % intervals, the correlation matrix, the RMS error per experiment and signal
before and after, the cost by evaluation, and each experiment's measured samples against the
simulation from the start and at the estimate, with the residuals left. Values in the units the
scenario's ``[units]`` show (SI without). GUI-free; any thread."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.campaign.fit import FIT_KEY
from mjrig.exports import plotting
from mjrig.runtime.telemetry.units import scenario_units

__all__ = ["fit_context", "FIT_KEY"]


def fit_context(path: Path, meta: dict[str, str]) -> dict[str, Any]:
    """The template's values of a fit's report."""
    import polars as pl

    s = json.loads(meta[FIT_KEY])
    shown = scenario_units(meta.get("mjrig.scenario", ""))
    units = s.get("signal_units", {})
    params = [
        {
            "name": n,
            "start": s["start"].get(n),
            "value": s["estimate"][n],
            "se": s["stderr"][n],
            "lo": s["ci95"][n][0],
            "hi": s["ci95"][n][1],
            "unit": s["units"].get(n, "").replace("*", "·"),
        }
        for n in s["params"]
    ]
    parts = [(s, "")] + ([(s["validation"], " (validation: not fitted)")] if s.get("validation") else [])
    errors = []
    for part, tag in parts:
        for exp, per in part["rms"].items():
            for sig, after in per.items():
                factor, unit = shown.convert(units.get(sig, ""))
                before = part.get("rms_before", {}).get(exp, {}).get(sig)
                errors.append(
                    {
                        "experiment": exp + tag,
                        "signal": sig,
                        "before": None if before is None else before * factor,
                        "after": after * factor,
                        "worse": bool(tag)
                        and before is not None
                        and after > before,  # held-out data the estimate fits worse
                        "unit": unit.replace("*", "·"),
                    }
                )
    rows = pl.read_parquet(path, columns=["trial", "cost"]).sort("trial")
    trials, cost = rows["trial"].to_numpy(), rows["cost"].to_numpy()
    figures = [
        {
            "title": f"experiment {exp}{tag}: measured (dots), from the start (dashed), at the estimate (solid)",
            "uri": plotting.data_uri(_experiment_figure(per, units, shown)),
        }
        for part, tag in parts
        for exp, per in part.get("series", {}).items()
    ]
    residuals = [
        {
            "title": f"experiment {exp}{tag}: residual (at the estimate − measured)",
            "uri": plotting.data_uri(_residual_figure(per, units, shown)),
        }
        for part, tag in parts
        for exp, per in part.get("series", {}).items()
    ]
    return {
        "fit": s,
        "fit_params": params,
        "fit_errors": errors,
        "correlation": s["correlation"],
        "cost_figure": plotting.data_uri(_cost_figure(trials, cost)),
        "fit_figures": figures,
        "residual_figures": residuals,
        "units_note": ", ".join(f"{q} in {u}" for q, u in shown.table().items()),
    }


def _cost_figure(trials: np.ndarray, cost: np.ndarray):
    fig = plotting.history_figure(trials, cost, np.minimum.accumulate(cost), label="cost (½ Σ r²)")
    fig.axes[0].set_yscale("log")
    fig.axes[0].set_xlabel("evaluation")
    return fig


def _experiment_figure(per: dict[str, Any], units: dict[str, str], shown: Any):
    fig, axes = plotting.panels(len(per))
    for ax, (sig, v) in zip(axes, per.items()):
        factor, unit = shown.convert(units.get(sig, ""))
        t = np.asarray(v["t"], float)
        for key, style in (
            ("before", dict(ls="--", color="#7f7f7f", lw=1.0, label="from the start")),
            ("after", dict(ls="-", color="#1f77b4", lw=1.4, label="at the estimate")),
        ):
            y = np.array([np.nan if x is None else x for x in v[key]], float) * factor
            ax.plot(t, y, **style)
        ax.plot(t, np.asarray(v["measured"], float) * factor, ".", ms=2.5, color="#d62728", label="measured")
        ax.set_ylabel(f"{sig}\n({unit.replace('*', '·') or 'no unit'})", fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8, framealpha=0.8)
    axes[-1].set_xlabel("time (s)")
    return fig


def _residual_figure(per: dict[str, Any], units: dict[str, str], shown: Any):
    fig, axes = plotting.panels(len(per), height=1.8)
    for ax, (sig, v) in zip(axes, per.items()):
        factor, unit = shown.convert(units.get(sig, ""))
        after = np.array([np.nan if x is None else x for x in v["after"]], float)
        ax.plot(v["t"], (after - np.asarray(v["measured"], float)) * factor, ".", ms=2.0, color="#1f77b4")
        ax.axhline(0.0, color="#444", lw=0.8)
        ax.set_ylabel(f"{unit.replace('*', '·') or 'no unit'}", fontsize=8)
        ax.set_title(sig, fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    return fig
