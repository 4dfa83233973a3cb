"""The report's front section: a study of several objectives' Pareto front and its hypervolume.

The front's figure (``pareto_plot.front_figure``: a scatter of two objectives with the front
joined, parallel coordinates for more) and beside it, small, the front's hypervolume against
trials (``pareto_plot.hypervolume_figure``: the ``hypervolume`` column, the objectives' units
multiplied, against the reference point the study used: ``mjrig.objective``'s ``reference``);
under them the front's trials with their objectives and params. A study written before the
hypervolume column has no such figure.

GUI-free (matplotlib on Agg, through ``mjrig.exports.plotting``); any thread.
"""

from __future__ import annotations

import json
from typing import Any

from mjrig.campaign.results import SweepResults
from mjrig.exports import plotting
from mjrig.runtime.telemetry.units import scenario_units

__all__ = ["front_section"]


def front_section(res: SweepResults, label: dict[str, str]) -> dict[str, Any]:
    """The page's context for ``res`` (a study of several objectives, in the units shown;
    ``label``: each column's label with its unit): the front's ``figure`` and ``caption``, the
    ``hypervolume`` figure and its caption (None without the column or a feasible trial), the
    ``objectives`` (label, direction), the ``params`` and the front's ``rows``."""
    from mjrig.exports.pareto_plot import LABELLED, front_figure

    trials, values, on = res.objective_points()
    ways = res.maximized()
    names = [label[c].removeprefix("Objectives/") for c in res.objectives]
    objectives = [{"label": n, "way": "maximize" if m else "minimize"} for n, m in zip(names, ways)]
    rows = [res.row(n) for n in res.front()]
    reference = _reference(res)
    figure = None
    if trials.size:
        fig = front_figure(trials, values, on, labels=names, maximize=ways, reference=reference)
        figure = plotting.data_uri(fig)
    two = len(names) == 2
    return {
        "objectives": objectives,
        "figure": figure,
        "caption": (
            "each feasible trial's objectives; the front's trials joined"
            + (", numbered" if len(rows) <= LABELLED else "")
            + ("; dashed: the hypervolume's reference point" if reference is not None else "")
            if two
            else "each feasible trial a line across the objectives, each axis from its best (bottom) to its worst"
        ),
        **_hypervolume(res, reference, has_feasible=bool(trials.size)),
        "params": [label[c].removeprefix("Params/") for c in res.params],
        "rows": [
            {"trial": r["trial"], "objectives": [r[c] for c in res.objectives], "params": [r[c] for c in res.params]}
            for r in rows
        ],
    }


def _reference(res: SweepResults) -> list[float] | None:
    """The hypervolume's reference point the study used (``mjrig.objective``'s ``reference``, in
    the objectives' units as the file holds them) in the units ``res`` shows them in; None
    without one (a study written before it, or no feasible trial)."""
    try:
        stated = json.loads(res.metadata.get("mjrig.objective", "{}"))
    except ValueError:
        return None
    reference, objectives = stated.get("reference"), stated.get("objectives", [])
    if not isinstance(reference, list) or not len(reference) == len(objectives) == len(res.objectives):
        return None
    shown = scenario_units(res.metadata.get("mjrig.scenario", ""))
    return [float(r) * shown.convert(str(o.get("unit", "")))[0] for r, o in zip(reference, objectives)]


def _hypervolume(res: SweepResults, reference: list[float] | None, *, has_feasible: bool) -> dict[str, Any]:
    """``hypervolume`` (the figure's URI, None without the column or a feasible trial),
    ``hypervolume_caption`` (``reference``, the point it is measured to, named in the units
    shown) and ``hypervolume_last`` (after the last trial, with its unit)."""
    from mjrig.exports.pareto_plot import hypervolume_figure

    trials, volume = res.hypervolume()
    if not trials.size or not has_feasible:
        return {"hypervolume": None, "hypervolume_caption": "", "hypervolume_last": ""}
    unit = res.units.get("hypervolume", "")
    at = ""
    if reference is not None:
        units = [res.units.get(c, "") for c in res.objectives]
        at = ", ".join(f"{r:.4g}{' ' + u if u else ''}" for r, u in zip(reference, units))
        at = f" up to the reference point ({at})"
    fig = hypervolume_figure(trials, volume, unit=unit)
    return {
        "hypervolume": plotting.data_uri(fig),
        "hypervolume_caption": (
            f"the front's hypervolume after each trial: the objective space the feasible trials so far "
            f"dominate{at}" + (f", in {unit}" if unit else "")
        ),
        "hypervolume_last": f"{volume[-1]:.6g}{' ' + unit if unit else ''}",
    }
