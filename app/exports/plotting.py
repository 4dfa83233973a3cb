"""Figures of recordings and campaign results: ``mjrig plot`` and the report's plots (one look).

A recording's signals are read as ``Trace`` s (time in s, values in SI with their unit from the
file's metadata); ``signals_figure`` draws them with time on x and one panel per unit, the unit
on each panel's y axis and a legend of signal names (the file's name in front when several files
are overlaid). ``scatter_figure``, ``histogram_figure`` and ``history_figure`` draw a sweep's or
study's trials. Figures are matplotlib ``Figure`` objects on the Agg canvas (no pyplot, no
screen), saved by suffix (``save``) or inlined as a PNG data URI (``data_uri``).

GUI-free; each call makes its own figure, so any thread may draw.
"""

from __future__ import annotations

import base64
import fnmatch
import io
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names
from mjrig.runtime.telemetry.units import DisplayUnits, scenario_units

__all__ = [
    "sigma_figure",
    "Trace",
    "bode_figure",
    "panels",
    "read_traces",
    "read_frame",
    "signal_columns",
    "signal_units",
    "display_units",
    "match_signals",
    "names_of",
    "signals_figure",
    "scatter_figure",
    "histogram_figure",
    "history_figure",
    "matrix_figure",
    "save",
    "data_uri",
    "FIGURE_SUFFIXES",
]

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
"""What ``save`` writes, by the output's suffix."""
NOT_SIGNALS = ("time", "wall_time")
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
STYLES = ("-", "--", ":", "-.")
STATUS_COLORS = {
    "pass": "#2ca02c",
    "fail": "#d62728",
    "other": "#7f7f7f",
    "feasible": "#1f77b4",
    "infeasible": "#d62728",
}


@dataclass(frozen=True)
class Trace:
    """One signal of one file: ``time`` (s) and ``values`` (float64, NaN where null), shape (rows,)."""

    name: str
    unit: str
    time: np.ndarray
    values: np.ndarray
    source: str = ""
    measured: bool = False
    """Samples measured on the bench (a ``[[measured]]`` entry's), drawn dotted beside the signal."""

    @property
    def label(self) -> str:
        """The legend entry: the signal's name, after its file's name when one is set."""
        return f"{self.source}: {self.name}" if self.source else self.name


def _schema(path: Path) -> tuple[list[str], dict[str, str], DisplayUnits]:
    """(numeric signal columns, SI units by column, the units its scenario shows values in) of
    recording ``path``; ConfigError if it is not one."""
    import pyarrow as pa

    from mjrig.runtime.files.parquet_merge import read_schema

    schema, meta = read_schema(path)
    if "mjrig.sweep" in meta or "mjrig.optimize" in meta:
        raise ConfigError(f"{path}: a sweep's or study's results, not a recording (`mjrig report` shows it)")
    if "time" not in schema.names:
        raise ConfigError(f"{path}: not an mjrig recording (no 'time' column)")
    numeric = [
        f.name
        for f in schema
        if f.name not in NOT_SIGNALS
        and (pa.types.is_floating(f.type) or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))
    ]
    try:
        units = json.loads(meta.get("mjrig.units", "{}"))
    except ValueError:
        units = {}
    for f in schema:  # a field's own unit where the file-level table has none
        if f.name not in units and f.metadata and b"unit" in f.metadata:
            units[f.name] = f.metadata[b"unit"].decode()
    shown = scenario_units(meta.get("mjrig.scenario", ""))
    return numeric, {k: str(v) for k, v in units.items()}, shown


def signal_columns(path: Path) -> list[str]:
    """The numeric signal columns of recording ``path`` (not ``time``/``wall_time``), in file order."""
    return _schema(Path(path))[0]


def signal_units(path: str | os.PathLike) -> dict[str, str]:
    """The SI unit of each column of recording ``path`` that has one (its metadata's)."""
    return _schema(Path(path))[1]


def display_units(path: str | os.PathLike) -> DisplayUnits:
    """The units recording ``path``'s scenario shows values in (``[units]``; SI without)."""
    return _schema(Path(path))[2]


def match_signals(names: Sequence[str], patterns: Sequence[str], *, where: str) -> list[str]:
    """The ``names`` matching any glob of ``patterns``, in ``names``' order; ConfigError naming the
    closest names for a pattern that matches nothing."""
    picked: set[str] = set()
    for pat in patterns:
        hits = [n for n in names if fnmatch.fnmatchcase(n, pat)]
        if not hits:
            raise ConfigError(f"{where}: --signals '{pat}' matches no signal{closest_names(pat, list(names))}")
        picked.update(hits)
    return [n for n in names if n in picked]


def read_traces(
    path: str | os.PathLike, *, patterns: Sequence[str] = (), names: Sequence[str] = (), source: str = ""
) -> list[Trace]:
    """The exact ``names`` of recording ``path`` (those it lacks are skipped), then the signals
    matching the globs ``patterns``, as Traces labelled with ``source``."""
    import polars as pl

    path = Path(path)
    numeric, units, shown = _schema(path)
    wanted = [n for n in dict.fromkeys(names) if n in numeric]
    for n in match_signals(numeric, patterns, where=str(path)) if patterns else []:
        if n not in wanted:
            wanted.append(n)
    if not wanted:
        return []
    df = read_frame(path, lambda: pl.read_parquet(path, columns=["time", *wanted]))
    time = df["time"].cast(pl.Float64).to_numpy()
    out = []
    for n in wanted:  # in the units the recording's scenario shows values in (SI without [units])
        factor, label = shown.convert(units.get(n, ""))
        out.append(Trace(n, label, time, df[n].cast(pl.Float64).fill_null(float("nan")).to_numpy() * factor, source))
    from mjrig.runtime.files.parquet_merge import read_schema
    from mjrig.scenario.measured import MEASURED_KEY, read_measured_metadata

    for entry, sig, t, x in read_measured_metadata(read_schema(path)[1].get(MEASURED_KEY, "")):
        if sig in wanted:  # the bench's twin of a signal shown, in the same unit
            factor, label = shown.convert(units.get(sig, ""))
            out.append(Trace(sig, label, t, x * factor, f"{source}: {entry}" if source else entry, measured=True))
    return out


def read_frame(path: Path, read: Callable[[], Any]) -> Any:
    """``read()`` of recording ``path``; ConfigError (one line naming the file) when its data
    cannot be read (a damaged page: the footer alone read well)."""
    try:
        return read()
    except Exception as exc:  # polars and pyarrow raise their own kinds for a damaged file
        text = " ".join(str(exc).split())[:160]
        raise ConfigError(f"{path}: its data cannot be read, the file is damaged ({text})") from None


def panels(rows: int, *, width: float = 9.0, height: float = 2.6):
    """A figure of ``rows`` panels stacked (inches: ``width``, ``height`` a panel)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, max(2.2, height * rows)), layout="constrained")
    return fig, [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]


def signals_figure(
    traces: Sequence[Trace],
    *,
    title: str = "",
    limits: Sequence[tuple[str, float, str]] = (),
    spans: Sequence[tuple[str, float, float | None, str]] = (),
):
    """Time on x, one panel per unit (in first-seen order), the unit on each y axis, a legend; a
    colour per signal and, when several files are overlaid, a line style per file. ``limits``:
    (signal, value, label) drawn as a dashed line on that signal's panel (a requirement's bound,
    in the unit the panel shows); ``spans``: (signal, start, end or None, label) shaded in the
    signal's colour on its panel (a metric's window, s)."""
    by_unit: dict[str, list[Trace]] = {}
    for tr in traces:
        by_unit.setdefault(tr.unit, []).append(tr)
    fig, axes = panels(max(1, len(by_unit)))
    sources = list(
        dict.fromkeys(tr.source for tr in traces if not tr.measured)
    )  # a line style per file, a colour per signal
    for ax, (unit, group) in zip(axes, by_unit.items()):
        names = list(dict.fromkeys(tr.name for tr in group))
        for tr in group:
            style = (0, (1, 1.6)) if tr.measured else STYLES[sources.index(tr.source) % len(STYLES)]
            ax.plot(
                tr.time,
                tr.values,
                lw=1.6 if tr.measured else 1.2,
                color=COLORS[names.index(tr.name) % len(COLORS)],
                linestyle=style,
                label=f"{tr.label} (measured)" if tr.measured else tr.label,
            )
        for signal, value, label in limits:
            if signal in names:
                ax.axhline(
                    value,
                    color=COLORS[names.index(signal) % len(COLORS)],
                    lw=1.0,
                    ls=(0, (5, 4)),
                    alpha=0.8,
                    label=label,
                )
        for signal, start, end, label in spans:
            if signal in names:
                last = max((float(tr.time[-1]) for tr in group if tr.name == signal and len(tr.time)), default=start)
                ax.axvspan(
                    start,
                    end if end is not None else last,
                    color=COLORS[names.index(signal) % len(COLORS)],
                    alpha=0.12,
                    lw=0,
                    label=label,
                )
        ax.set_ylabel(unit or "(no unit)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8, framealpha=0.8)
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def scatter_figure(x: np.ndarray, y: np.ndarray, groups: dict[str, np.ndarray], *, xlabel: str, ylabel: str):
    """One param (x) against one value (y), a colour per group (pass, fail, feasible, ...)."""
    fig, (ax,) = panels(1, width=4.2, height=3.0)
    for name, mask in groups.items():
        if np.any(mask):
            ax.scatter(x[mask], y[mask], s=14, color=STATUS_COLORS.get(name, COLORS[0]), label=name, alpha=0.8)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    if any(np.any(m) for m in groups.values()):
        ax.legend(fontsize=7)
    return fig


def histogram_figure(values: np.ndarray, *, label: str):
    """How the trials' values of one column are spread (finite values only)."""
    fig, (ax,) = panels(1, width=4.2, height=2.6)
    finite = values[np.isfinite(values)]
    ax.hist(finite, bins=min(30, max(5, int(np.sqrt(max(finite.size, 1))))), color=COLORS[0], alpha=0.85)
    ax.set_xlabel(label, fontsize=8)
    ax.set_ylabel("trials", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    return fig


def history_figure(trials: np.ndarray, objective: np.ndarray, best: np.ndarray, *, label: str):
    """A study's objective of each feasible trial and the best so far."""
    fig, (ax,) = panels(1, width=9.0, height=3.0)
    ax.scatter(trials, objective, s=14, color=COLORS[0], label="trial")
    ax.step(trials, best, where="post", color=COLORS[1], lw=1.5, label="best so far")
    ax.set_xlabel("trial")
    ax.set_ylabel(label)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def save(fig, out: Path) -> None:
    """Write ``fig`` to ``out`` as PNG, SVG or PDF by its suffix (to a temporary file first). An
    SVG keeps its words as text (``<text>``: searchable, editable, selectable), not as outlines."""
    import matplotlib

    from mjrig.runtime.files.atomic_output import atomic_output

    fmt = out.suffix.lower().lstrip(".")
    with atomic_output(out, what="-o") as tmp, matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(tmp, format=fmt, dpi=120)


def data_uri(fig, *, dpi: int = 96) -> str:
    """``fig`` as a PNG ``data:`` URI, for an ``<img>`` that needs no other file."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def names_of(paths: Iterable[Path]) -> list[str]:
    """Legend prefixes for several files: their names, or their paths when names repeat."""
    paths = list(paths)
    names = [p.name for p in paths]
    return names if len(set(names)) == len(names) else [str(p) for p in paths]


def matrix_figure(trials: Sequence[int], names: Sequence[str], verdicts: Sequence[Sequence[bool | None]]):
    """Trials (x) by requirements (y): green passed, red failed, grey no verdict (diverged,
    errored). ``verdicts[i][j]``: requirement ``names[i]`` in trial ``trials[j]``."""
    from matplotlib.colors import ListedColormap

    grid = np.array([[np.nan if v is None else float(v) for v in row] for row in verdicts], dtype=float)
    fig, (ax,) = panels(1, width=7.5, height=0.5 + 0.32 * max(1, len(names)))
    colors = ListedColormap([STATUS_COLORS["fail"], STATUS_COLORS["pass"]]).with_extremes(bad="#c8ccd4")
    ax.imshow(
        np.ma.masked_invalid(grid),
        aspect="auto",
        cmap=colors,
        vmin=0,
        vmax=1,
        interpolation="nearest",
        extent=(-0.5, len(trials) - 0.5, len(names) - 0.5, -0.5),
    )
    ax.set_yticks(range(len(names)), names, fontsize=8)
    step = max(1, len(trials) // 20)
    ax.set_xticks(range(0, len(trials), step), [str(t) for t in trials[::step]], fontsize=7)
    ax.set_xlabel("trial", fontsize=8)
    return fig


def bode_figure(doc: dict[str, Any]) -> Any:
    """Magnitude (dB) over phase (deg) over log frequency, each mode's frequency a dotted line:
    one column of panels per (input, output) pair of ``doc`` (a ``responses`` list, or one)."""
    from matplotlib.figure import Figure

    pairs = doc.get("responses", [doc])
    fig = Figure(figsize=(max(8, 5 * len(pairs)), 6), layout="constrained")
    axes = fig.subplots(2, len(pairs), sharex="col", squeeze=False)
    for k, one in enumerate(pairs):
        mag, ph = axes[0, k], axes[1, k]
        f = one["frequency_hz"]
        mag.semilogx(f, one["magnitude_db"], color="#1f77b4")
        ph.semilogx(f, one["phase_deg"], color="#d62728")
        for ax in (mag, ph):
            for fm in one["modes_hz"]:
                ax.axvline(fm, color="0.5", linestyle=":", linewidth=1)
            ax.grid(True, which="both", alpha=0.3)
        mag.set_ylabel(f"magnitude (dB re 1 {one['unit']})")
        ph.set_ylabel("phase (deg)")
        ph.set_xlabel("frequency (Hz)")
        mag.set_title(f"{one['output']} / {one['input']}")
    return fig


def sigma_figure(sigma: dict[str, Any]) -> Any:
    """The singular values of a MIMO response (``linear.transfer.singular_values``) in dB over log
    frequency, the largest first."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.subplots()
    values = np.asarray(sigma["values"], dtype=float)
    for k in range(values.shape[1]):
        ax.semilogx(sigma["frequency_hz"], 20 * np.log10(np.maximum(values[:, k], 1e-300)), label=f"σ{k + 1}")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("singular value (dB)")
    ax.set_title(f"singular values: {len(sigma['outputs'])} outputs / {len(sigma['inputs'])} inputs")
    ax.legend()
    return fig
