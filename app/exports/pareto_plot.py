"""The Pareto front of a study of several objectives, drawn for its report (matplotlib).

Two objectives: a scatter of every feasible trial in objective space, the front's trials
highlighted, joined in order of the first objective and labelled with their trial numbers. More:
parallel coordinates -- one vertical axis per objective, each scaled to its feasible trials'
range (its best end at the bottom, so lower is better on every axis), a line per trial, the
front's in colour over the others in grey. Beside it, small: the front's hypervolume after each
trial (a staircase; a dot where the front grew).

GUI-free. Threading: call from one thread at a time (matplotlib's figures).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mjrig.exports.plotting import COLORS, panels

__all__ = ["front_figure", "hypervolume_figure", "LABELLED"]

LABELLED = 25
"""Front trials labelled with their numbers at most (more would cover the points)."""


def front_figure(
    trials: np.ndarray,
    values: np.ndarray,
    on_front: np.ndarray,
    *,
    labels: Sequence[str],
    maximize: Sequence[bool],
    reference: Sequence[float] | None = None,
):
    """The front of feasible ``trials`` (their ``values``: trials × objectives, in the units of
    ``labels``, one per objective) with ``on_front`` marking the Pareto trials; ``maximize``:
    per objective, whether larger is better. ``reference``: the hypervolume's reference point (in
    the same units), drawn as two dashed lines with two objectives."""
    if values.shape[1] == 2:
        return _scatter(trials, values, on_front, labels=labels, maximize=maximize, reference=reference)
    return _parallel(trials, values, on_front, labels=labels, maximize=maximize)


def _scatter(trials: np.ndarray, values: np.ndarray, on_front: np.ndarray, *, labels, maximize, reference=None):
    fig, (ax,) = panels(1, width=7.5, height=4.8)
    if reference is not None:  # the corner the hypervolume is measured to
        ax.axvline(reference[0], color="#8a93a3", lw=0.9, ls="--", label="hypervolume's reference")
        ax.axhline(reference[1], color="#8a93a3", lw=0.9, ls="--")
    ax.scatter(values[~on_front, 0], values[~on_front, 1], s=14, color="#9a9a9a", label="dominated")
    order = np.argsort(values[on_front, 0], kind="stable")
    front, numbers = values[on_front][order], trials[on_front][order]
    ax.plot(front[:, 0], front[:, 1], "-o", ms=5, lw=1.3, color=COLORS[1], label=f"Pareto front ({len(front)})")
    if len(front) <= LABELLED:
        for (x, y), n in zip(front, numbers):
            ax.annotate(str(n), (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7)
    ax.set_xlabel(f"{labels[0]} ({'max' if maximize[0] else 'min'}imised)")
    ax.set_ylabel(f"{labels[1]} ({'max' if maximize[1] else 'min'}imised)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return fig


def _parallel(trials: np.ndarray, values: np.ndarray, on_front: np.ndarray, *, labels, maximize):
    k = values.shape[1]
    fig, (ax,) = panels(1, width=max(7.5, 1.9 * k), height=4.8)
    lo, hi = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    scaled = (values - lo) / np.where(hi > lo, hi - lo, 1.0)
    scaled = np.where(np.asarray(maximize, dtype=bool), 1.0 - scaled, scaled)  # the best end down
    from matplotlib.collections import LineCollection

    xs = np.arange(k)
    for rows, colour, width, label in (
        (scaled[~on_front], "#b0b0b0", 0.8, f"dominated ({int((~on_front).sum())})"),
        (scaled[on_front], COLORS[1], 1.4, f"Pareto front ({int(on_front.sum())})"),
    ):
        if len(rows):  # one collection a group: thousands of trials draw as fast as a few
            lines = LineCollection([np.column_stack([xs, r]) for r in rows], colors=colour, linewidths=width)
            lines.set_label(label)
            ax.add_collection(lines)
    for x in xs:
        ax.axvline(x, color="#444444", lw=0.8)
        best, worst = (hi[x], lo[x]) if maximize[x] else (lo[x], hi[x])
        ax.annotate(f"{best:.4g}", (x, 0), xytext=(3, -12), textcoords="offset points", fontsize=7)
        ax.annotate(f"{worst:.4g}", (x, 1), xytext=(3, 4), textcoords="offset points", fontsize=7)
    ax.set_xticks(xs, [f"{label}\n({'max' if m else 'min'})" for label, m in zip(labels, maximize)], fontsize=8)
    ax.set_yticks([0, 1], ["best", "worst"])
    ax.set_ylim(-0.1, 1.1)
    ax.set_xlim(-0.2, k - 0.6)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)  # over no value
    return fig


def hypervolume_figure(trials: np.ndarray, volume: np.ndarray, *, unit: str):
    """The front's hypervolume ``volume`` (in ``unit``, the objectives' units multiplied) after
    each of ``trials``: a staircase, a dot at each trial that made it grow. Small: it stands
    beside the front's figure."""
    fig, (ax,) = panels(1, width=3.4, height=4.8)
    ax.step(trials, volume, where="post", color=COLORS[1], lw=1.5)
    grew = np.flatnonzero(np.diff(volume, prepend=0.0) > 0)
    ax.plot(trials[grew], volume[grew], "o", ms=3.5, color=COLORS[1], label=f"front grew ({grew.size})")
    ax.set_xlabel("trial")
    ax.set_ylabel(f"hypervolume{f' [{unit}]' if unit else ''}")
    ax.set_ylim(bottom=0.0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return fig
