"""The report's Sobol section: a Saltelli sweep's indices (``sensitivity = "sobol"``) as bars.

For each requirement's and metric's value, one figure: per param a first-order bar (S: the share
of the value's variance that param explains alone) and a total bar (ST: its share with every
interaction), each with its bootstrap interval as a whisker. A value without indices (holes in
the design, or no variance) is named with its reason instead. The context is None for results
without ``mjrig.sensitivity``: the report shows Spearman's rank correlations only.

GUI-free (matplotlib on Agg, through ``mjrig.exports.plotting``); any thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjrig.campaign.results import SweepResults
from mjrig.campaign.sobol import SobolValue
from mjrig.exports import plotting

__all__ = ["sobol_section", "sobol_figure", "FIRST_COLOUR", "TOTAL_COLOUR"]

FIRST_COLOUR = plotting.COLORS[0]
"""The first-order bars' colour (the results view uses the same)."""
TOTAL_COLOUR = plotting.COLORS[3]
"""The total bars' colour."""


def sobol_section(res: SweepResults) -> dict[str, Any] | None:
    """The report's context for ``res`` (``SweepResults``): ``base_points``, ``trials``,
    ``confidence`` (percent), ``figures`` (title, uri), ``wide`` (a figure a row) and ``skipped``
    (value, reason); None
    without Sobol indices."""
    reading = res.sobol()
    if reading is None:
        return None
    figures, skipped = [], []
    for col, value in reading.values.items():
        name = col.split("/", 1)[-1].removesuffix(":value")
        if not value.computed:
            skipped.append({"value": name, "reason": value.reason})
            continue
        fig = sobol_figure(value, confidence=reading.confidence_level)
        figures.append({"title": name, "uri": plotting.data_uri(fig)})
    return {
        "base_points": reading.base_points,
        "trials": reading.base_points * (len(reading.params) + 2),
        "params": reading.params,
        "confidence": f"{100 * reading.confidence_level:g}",
        "figures": figures,
        "wide": len(reading.params) > 4,  # a figure a row: many params' bars need the page's width
        "skipped": skipped,
    }


def sobol_figure(value: SobolValue, *, confidence: float = 0.95):
    """Grouped bars of one value's ``SobolValue``: per param (x) its first-order and total index
    (0..1, y), whiskers from each interval's low to high (a bound that is NaN draws none)."""
    params = list(value.params)
    fig, (ax,) = plotting.panels(1, width=max(4.2, 1.1 + 0.9 * len(params)), height=3.0)
    width = 0.38
    for order, label, colour in (
        ("first_order", "first-order S", FIRST_COLOUR),
        ("total_order", "total ST", TOTAL_COLOUR),
    ):
        x, height, below, above = value.bars(order, width=width)
        ax.bar(x, height, width=width, color=colour, alpha=0.85, label=label)
        ax.errorbar(x, height, yerr=np.vstack([below, above]), fmt="none", ecolor="#333333", elinewidth=1.0, capsize=3)
    ax.axhline(0.0, color="#555555", lw=0.8)
    ax.set_xticks(np.arange(len(params)), params, fontsize=9)
    ax.set_ylabel(f"Sobol index ({100 * confidence:g} % interval)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_ylim(*value.limits())
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)  # never over a bar
    return fig
