"""``mjrig compare A B --report OUT.html``: the comparison of two recordings as a report.

One self-contained HTML page like ``mjrig report``'s (styles inline, figures as PNG ``data:``
URIs, no script): a header naming both files (path, model, its SHA-256, recorded when, versions)
and the tolerances; the table of every compared signal (unit, the largest |B − A| and its time,
the first time outside A's band or "within", the verdict), failing signals first; then per
signal a figure of A and B overlaid with A's band (rtol·|A| + atol) shaded and, below, B − A
with ±band, the first time outside marked by a vertical line and named in the caption. At most
``MAX_FIGURES`` signals are drawn (failing ones first), the others are in the table. With
``[[measured]]`` entries kept in A (``mjrig.measured``), each measured series is compared with
A's signal the same way in its own section (at the measured samples' times: see
``mjrig.recordings.compare.against_measured``); those verdicts are shown, they do not change
``mjrig compare``'s exit status, which is A against B.

The numbers come from ``mjrig.recordings.compare`` (the band is worked out there only), so the
report and ``mjrig compare``'s verdict agree. Values are shown in A's scenario's ``[units]`` (SI
without); ``atol`` is in each signal's SI unit, as the files store it.

GUI-free; any thread.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import mjrig
from mjrig.exports import plotting
from mjrig.recordings.compare import (
    Aligned,
    RecordingDiff,
    SignalDiff,
    against_measured,
    align,
    compare_recordings,
    read_signals,
)
from mjrig.runtime.files.parquet_merge import read_schema
from mjrig.scenario.measured import MEASURED_KEY, read_measured_metadata

__all__ = ["write_comparison_report", "comparison_context", "default_comparison_path", "MAX_FIGURES"]

MAX_FIGURES = 40
"""At most this many signals (and measured series) are drawn; the table lists every one."""
Progress = Callable[[int, int], None]
A_COLOR, B_COLOR, MARK_COLOR = plotting.COLORS[0], plotting.COLORS[3], "#c9252d"


def default_comparison_path(a: str | os.PathLike, b: str | os.PathLike) -> Path:
    """``A-vs-B.html`` beside recording ``a`` (the caller picks the next free name: ``fresh_path``)."""
    a = Path(a)
    return a.with_name(f"{a.stem}-vs-{Path(b).stem}.html")


def _fmt(x: float | None, digits: int = 6) -> str:
    """A number for the page: ``digits`` significant digits, a dash for None or NaN."""
    return "—" if x is None or not np.isfinite(x) else f"{float(x):.{digits}g}"


def _file(path: Path, meta: dict[str, str]) -> dict[str, str]:
    """What the header says of one recording."""
    return {
        "name": path.name,
        "path": str(path),
        "model": meta.get("mjrig.model_path", "(not named)"),
        "sha256": meta.get("mjrig.model_sha256", ""),
        "recorded": meta.get("mjrig.start_time", ""),
        "mjrig_version": meta.get("mjrig.version", "?"),
        "mujoco_version": meta.get("mjrig.mujoco_version", "?"),
    }


def _row(d: SignalDiff | Aligned, *, name: str, unit: str, factor: float, entry: str = "") -> dict[str, Any]:
    """A table row: values in the unit shown (``factor`` times SI), times in s."""
    s = d.diff(name) if isinstance(d, Aligned) else d
    return {
        "entry": entry,
        "name": name,
        "unit": unit,
        "max_abs": s.max_abs * factor if np.isfinite(s.max_abs) else None,
        "time": s.time,
        "first_outside": s.first_outside,
        "one_sided": s.one_sided,
        "within": s.within,
        "samples": int(d.time.size) if isinstance(d, Aligned) else None,
    }


def _figure(
    al: Aligned,
    *,
    unit: str,
    factor: float,
    first: float | None,
    labels: tuple[str, str],
    apart: Sequence[tuple[float, float]] = (),
):
    """A and B (``labels``) over time with A's band shaded; below, B − A with ±band; the first
    time outside the band a vertical line on both; the times ``apart`` (s, start and end) that
    only one recording covers shaded grey, "not compared"."""
    fig, (top, low) = plotting.panels(2, height=2.4)
    low.sharex(top)
    t, a, b, band = al.time, al.a * factor, al.b * factor, al.band * factor
    measured = labels[1].endswith("(measured)")
    top.fill_between(t, a - band, a + band, color=A_COLOR, alpha=0.22, lw=0, label=f"{labels[0]} ± band")
    top.plot(t, a, color=A_COLOR, lw=1.3, label=labels[0])
    if measured:
        top.plot(t, b, ".", ms=2.5, color=B_COLOR, label=labels[1])
    else:
        top.plot(t, b, color=B_COLOR, lw=1.2, ls="--", label=labels[1])
    low.fill_between(t, -band, band, color="#7f7f7f", alpha=0.3, lw=0, label="± band (rtol·|A| + atol)")
    low.plot(t, b - a, ".-" if measured else "-", ms=2.0, color=B_COLOR, lw=1.0, label=f"{labels[1]} − {labels[0]}")
    for ax in (top, low):
        for i, (start, end) in enumerate(apart):
            ax.axvspan(start, end, color="#9a9a9a", alpha=0.25, lw=0, label="not compared" if i == 0 else None)
        if first is not None:
            ax.axvline(first, color=MARK_COLOR, lw=1.2, ls=(0, (4, 3)), label=f"first outside: t = {first:.6g} s")
        ax.grid(True, alpha=0.3)
        # above the axes, at the right: never over the data, nor over an axis' offset ("1e-7")
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=4, fontsize=8, frameon=False)
    top.set_ylabel(unit or "(no unit)")
    low.set_ylabel(f"difference ({unit})" if unit else "difference")
    low.set_xlabel("time (s)")
    top.tick_params(labelbottom=False)
    return fig


def _caption(row: dict[str, Any], *, what: str) -> str:
    """What a figure's caption says: the first time outside (or within) and the largest difference."""
    unit = f" {row['unit']}" if row["unit"] else ""
    largest = f"largest |{what}| = {_fmt(row['max_abs'])}{unit} at t = {_fmt(row['time'])} s"
    if row["first_outside"] is None:
        return f"within the band everywhere; {largest}"
    return f"first outside the band at t = {_fmt(row['first_outside'])} s (dashed red line); {largest}"


def _failing_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["within"])  # stable: file order within each group


def comparison_context(
    a: str | os.PathLike,
    b: str | os.PathLike,
    *,
    signals: Sequence[str] = (),
    rtol: float = 1e-6,
    atol: float = 1e-9,
    diff: RecordingDiff | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The page's values for recordings ``a`` (the reference) and ``b``: ``signals`` globs as in
    ``compare_recordings`` (whose result ``diff`` is, when the caller has it already), ``rtol``
    (dimensionless) and ``atol`` (each signal's SI unit). ``rows`` and ``measured_rows`` hold,
    per signal, ``first_outside`` (s, None: within), ``max_abs`` and its ``time`` in the unit
    shown. ``progress(done, total)`` is called per figure drawn. ConfigError as
    ``compare_recordings``."""
    a, b = Path(a).expanduser().resolve(), Path(b).expanduser().resolve()
    if diff is None:
        diff = compare_recordings(a, b, signals=signals, rtol=rtol, atol=atol)
    meta_a, meta_b = read_schema(a)[1], read_schema(b)[1]
    units, shown = plotting.signal_units(a), plotting.display_units(a)
    conv = {d.name: shown.convert(units.get(d.name, "")) for d in diff.signals}
    rows = _failing_first([_row(d, name=d.name, unit=conv[d.name][1], factor=conv[d.name][0]) for d in diff.signals])
    columns = set(plotting.signal_columns(a))
    series = [
        (entry, sig, t, x)
        for entry, sig, t, x in read_measured_metadata(meta_a.get(MEASURED_KEY, ""))
        if sig in columns and (not signals or any(fnmatch.fnmatchcase(sig, p) for p in signals))
    ]
    drawn = [r["name"] for r in rows[:MAX_FIGURES]]
    budget = max(0, MAX_FIGURES - len(drawn))
    total, done = len(drawn) + min(len(series), budget), 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    figures = []
    if drawn:
        ta, ca = read_signals(a, drawn, "A")
        tb, cb = read_signals(b, drawn, "B")
        by_name = {r["name"]: r for r in rows}
        keep = np.ones(ta.shape, bool)
        if diff.compared is not None:
            keep = (ta >= diff.compared[0] - 1e-9) & (ta <= diff.compared[1] + 1e-9)
        for name in drawn:
            row, (factor, unit) = by_name[name], conv[name]
            al = align(ta[keep], ca[name][keep], tb, cb[name], rtol=rtol, atol=atol)
            first = row["first_outside"]
            fig = _figure(al, unit=unit, factor=factor, first=first, labels=("A", "B"), apart=diff.apart)
            figures.append({"row": row, "caption": _caption(row, what="B − A"), "uri": plotting.data_uri(fig)})
            tick()
    measured_rows, measured_figures = [], []
    if series:
        sigs = list(dict.fromkeys(sig for _, sig, _, _ in series))
        ta, ca = read_signals(a, sigs, "A")
        for k, (entry, sig, tm, xm) in enumerate(series):
            factor, unit = shown.convert(units.get(sig, ""))
            al = against_measured(ta, ca[sig], tm, xm, rtol=rtol, atol=atol)
            row = _row(al, name=sig, unit=unit, factor=factor, entry=entry)
            measured_rows.append(row)
            if k < budget and al.time.size:
                labels = ("A", f"{entry} (measured)")
                fig = _figure(al, unit=unit, factor=factor, first=row["first_outside"], labels=labels)
                caption = _caption(row, what="measured − A")
                measured_figures.append({"row": row, "caption": caption, "uri": plotting.data_uri(fig)})
                tick()
    failed = sum(not r["within"] for r in rows)
    return {
        "a": _file(a, meta_a),
        "b": _file(b, meta_b),
        "rtol": rtol,
        "atol": atol,
        "within": diff.within,
        "coverage": diff.coverage,
        "rows": rows,
        "failed": failed,
        "figures": figures,
        "more": len(rows) - len(drawn),
        "measured_rows": _failing_first(measured_rows),
        "measured_figures": measured_figures,
        "measured_more": len(measured_rows) - len(measured_figures),
        "units_note": ", ".join(f"{q} in {u}" for q, u in shown.table().items()),
        "made": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "report_version": mjrig.__version__,
        "fmt": _fmt,
    }


def write_comparison_report(
    a: str | os.PathLike,
    b: str | os.PathLike,
    *,
    out: Path,
    signals: Sequence[str] = (),
    rtol: float = 1e-6,
    atol: float = 1e-9,
    diff: RecordingDiff | None = None,
    progress: Progress | None = None,
) -> Path:
    """Write the comparison report of recordings ``a`` and ``b`` to ``out`` (HTML, through a
    temporary file: a failure leaves nothing half-written, a file there is replaced only when
    the new one is whole); returns ``out``. Options as ``comparison_context``."""
    import jinja2

    from mjrig.runtime.files.atomic_output import atomic_output

    ctx = comparison_context(a, b, signals=signals, rtol=rtol, atol=atol, diff=diff, progress=progress)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mjrig.exports", "."),
        autoescape=jinja2.select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    html = env.get_template("compare.html.j2").render(**ctx)
    with atomic_output(out, what="--report") as tmp:
        tmp.write_text(html, encoding="utf-8")
    return Path(out)
