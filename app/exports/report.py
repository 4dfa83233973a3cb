"""``mjrig report``: one self-contained HTML file for a design review.

A recording's report: a summary (model, rig, PASS/FAIL counts, the metrics), then its set-up
(model path and SHA-256, versions, date, params with values and units), the requirements table
(name, signal, PASS/FAIL, value, limit, time of first failure), the metrics table, the modes
table (``report_modes``: the rig linearised about its initial state), plots of every
requirement's and metric's signal and of the ``--signals`` matches (one panel per unit), and the
scenario's text. A sweep's or study's report: counts per status, for a study the objective's
history and the best trial's params (several objectives: ``report_front``'s front and its
hypervolume), each varied param's rank correlation with each value, a
scatter of each param against each requirement value and metric, histograms of the drawn params
and the metrics, and the table of trials.

Everything is inline: styles in the page, figures as PNG ``data:`` URIs (matplotlib, Agg), no
script, font or image from elsewhere, so it opens offline from anywhere. Why PNG and not Plotly:
Plotly's inlined script alone is ~3.5 MiB per report and needs JavaScript; a PNG panel is
~30-60 KiB, and SVG of a 5000-point trace is larger than the PNG and slower to render.

GUI-free; any thread.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import mjrig
from mjrig.exports import plotting
from mjrig.exports import report_marks as marks
from mjrig.exports.report_front import front_section
from mjrig.exports.report_sobol import sobol_section
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import default_report_path
from mjrig.runtime.telemetry.units import scenario_units

__all__ = ["write_report", "default_report_path", "MAX_TABLE_ROWS", "MAX_SCATTERS"]

MAX_TABLE_ROWS = 500
"""A campaign's trial table shows at most this many rows (the rest are in the Parquet file)."""
MAX_SCATTERS = 48
"""At most this many param-vs-value scatters in a campaign's report (in the file's column order)."""
Progress = Callable[[int, int], None]


def _meta(path: Path) -> dict[str, str]:
    from mjrig.runtime.files.parquet_merge import read_schema

    return read_schema(path)[1]


def _json(meta: dict[str, str], key: str, default: Any) -> Any:
    try:
        return json.loads(meta[key]) if key in meta else default
    except ValueError:
        return default


def _scenario(meta: dict[str, str]) -> dict[str, Any]:
    try:
        return tomllib.loads(meta.get("mjrig.scenario", ""))
    except tomllib.TOMLDecodeError:
        return {}


def _fmt(x: Any, digits: int = 6) -> str:
    """A value for a table cell: numbers to ``digits`` significant digits, None as a dash."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return "—" if np.isnan(x) else f"{float(x):.{digits}g}"
    return str(x)


def _count(n: int, one: str) -> str:
    """ "1 load", "2 loads", "3 proximities"."""
    return f"{n} {one}" if n == 1 else f"{n} {one[:-1] + 'ies' if one.endswith('y') else one + 's'}"


def _common(path: Path, meta: dict[str, str], kind: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "file": path.name,
        "path": str(path),
        "model": meta.get("mjrig.model_path", "(not named)"),
        "sha256": meta.get("mjrig.model_sha256", ""),
        "mujoco_version": meta.get("mjrig.mujoco_version", "?"),
        "mjrig_version": meta.get("mjrig.version", "?"),
        "recorded": meta.get("mjrig.start_time", ""),
        "made": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "report_version": mjrig.__version__,
        "scenario_text": meta.get("mjrig.scenario", ""),
        "fmt": _fmt,
    }


# --- a recording -------------------------------------------------------------------------------
def _requirements(meta: dict[str, str], scenario: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """The requirements' verdicts: the recording's own (``mjrig.requirements``), else worked out
    from the scenario and the ``Requirements/<r>:pass`` columns (no value or limit then)."""
    entries = _json(meta, "mjrig.requirements", None)
    if isinstance(entries, list):
        return entries
    import polars as pl

    out = []
    cols = set(plotting.signal_columns(path))
    for spec in scenario.get("requirements", []):
        name, col = spec.get("name", "?"), f"Requirements/{spec.get('name', '?')}:pass"
        entry = {
            "name": name,
            "signal": spec.get("signal", ""),
            "pass": None,
            "value": None,
            "limit": None,
            "time": None,
        }
        if col in cols:
            df = pl.read_parquet(path, columns=["time", col]).drop_nulls()
            failed = df.filter(pl.col(col).cast(pl.Float64) < 0.5)
            entry["pass"] = failed.height == 0
            entry["time"] = float(failed["time"][0]) if failed.height else None
        out.append(entry)
    return out


def _params(
    scenario: dict[str, Any], units: dict[str, str], first: dict[str, float], shown: Any
) -> list[dict[str, Any]]:
    """Each param's value at the start, range and unit, in the units shown (``[units]``)."""
    out = []
    for name, spec in scenario.get("params", {}).items():
        spec = spec if isinstance(spec, dict) else {"value": spec}
        col = f"Params/{name}:value"
        factor, unit = shown.convert(spec.get("unit") or units.get(col, ""))
        scaled = lambda v, factor=factor: v * factor if isinstance(v, (int, float)) and not isinstance(v, bool) else v  # noqa: E731
        out.append(
            {
                "name": name,
                "value": scaled(first.get(col, spec.get("value"))),
                "min": scaled(spec.get("min")),
                "max": scaled(spec.get("max")),
                "unit": unit,
                "model": spec.get("model", ""),
            }
        )
    return out


def _recording(path: Path, meta: dict[str, str], signals: Sequence[str], progress: Progress | None) -> dict[str, Any]:
    import polars as pl

    scenario = _scenario(meta)
    numeric = plotting.signal_columns(path)
    units = _json(meta, "mjrig.units", {})
    requirements = _requirements(meta, scenario, path)
    metrics = _json(meta, "mjrig.metrics", {})
    units = {**units, **{f"Metrics/{k}": m.get("unit", "") for k, m in metrics.items() if isinstance(m, dict)}}
    wanted = [e.get("signal", "") for e in requirements] + [m.get("signal", "") for m in metrics.values()]
    if not signals:  # no --signals: the rig's [plots] (CONTRACT 13)
        plots = scenario.get("plots", {})
        wanted += [n for n in plots.get("signals", []) if isinstance(n, str)] if isinstance(plots, dict) else []
    traces = plotting.read_traces(path, patterns=signals, names=[w for w in wanted if w in numeric])
    shown = plotting.display_units(path)
    requirements = [_shown_entry(e, shown.convert(units.get(e.get("signal", ""), ""))) for e in requirements]
    spans = {str(spec.get("name")): spec for spec in scenario.get("metrics", []) if isinstance(spec, dict)}
    metrics = {
        k: {**_shown_metric(m, shown), "window": marks.window_text(spans.get(k, {}))} for k, m in metrics.items()
    }
    params_cols = [c for c in numeric if c.startswith("Params/")]
    head = plotting.read_frame(path, lambda: pl.read_parquet(path, columns=["time", *params_cols], n_rows=1))
    first = head.row(0, named=True) if head.height else {}
    rows = plotting.read_frame(
        path, lambda: pl.scan_parquet(path).select(pl.len(), pl.col("time").max()).collect()
    ).row(0)
    by_unit: dict[str, list[plotting.Trace]] = {}
    for tr in traces:
        by_unit.setdefault(tr.unit, []).append(tr)
    figures = []
    for i, (unit, group) in enumerate(by_unit.items()):
        if progress is not None:
            progress(i, len(by_unit))
        names = {tr.name for tr in group}
        bounds = [b for b in marks.requirement_bounds(scenario, units, shown) if b.signal in names]
        windows = [w for w in marks.metric_windows(scenario) if w.signal in names]
        figures.append(
            {
                "title": f"signals in {unit}" if unit else "signals without a unit",
                "marks": marks.caption(bounds, windows),
                "uri": plotting.data_uri(
                    plotting.signals_figure(
                        group,
                        limits=[(b.signal, b.value, b.label or "_nolegend_") for b in bounds],
                        spans=[(w.signal, w.start, w.end, w.label) for w in windows],
                    )
                ),
            }
        )
    loads = scenario.get("loads", [])
    from mjrig.exports.report_modes import modes_section

    return {
        "requirements": requirements,
        "metrics": metrics,
        "params": _params(scenario, units, first, shown),
        "modes": modes_section(meta),
        "units_note": ", ".join(f"{q} in {u}" for q, u in shown.table().items()),
        "figures": figures,
        "rows": rows[0],
        "duration": rows[1],
        "rig": ", ".join(
            _count(n, one)
            for n, one in (
                (len(loads), "load"),
                (len(scenario.get("proximities", [])), "proximity"),
                (len(requirements), "requirement"),
                (len(metrics), "metric"),
            )
        ),
        "passed": sum(1 for e in requirements if e.get("pass")),
        "failed": sum(1 for e in requirements if e.get("pass") is False),
    }


def _shown_entry(entry: dict[str, Any], conv: tuple[float, str]) -> dict[str, Any]:
    """A requirement's verdict with its value and limit in the units shown (and the unit)."""
    factor, label = conv
    return {
        **entry,
        "unit": label,
        **{
            k: entry[k] * factor
            for k in ("value", "limit")
            if isinstance(entry.get(k), (int, float)) and not isinstance(entry[k], bool)
        },
    }


def _shown_metric(metric: dict[str, Any], shown: Any) -> dict[str, Any]:
    """A metric's value in the units shown (a time or frequency, in s or Hz, as it is)."""
    factor, label = shown.convert(metric.get("unit", ""))
    value = metric.get("value")
    return {**metric, "unit": label, "value": value * factor if isinstance(value, (int, float)) else value}


# --- a sweep or a study ------------------------------------------------------------------------
def _campaign(path: Path, progress: Progress | None) -> dict[str, Any]:
    from mjrig.campaign.results import STUDY_KEY, SWEEP_KEY, SweepResults

    si = SweepResults.open(path)
    res = si.in_units()  # every figure and number below in the units shown
    t, unit = res.table, res.units
    study = res.is_study
    section = res.metadata.get(STUDY_KEY if study else SWEEP_KEY, "")
    short = {c: c.removesuffix(":value") for c in t.columns}
    label = {c: f"{short[c]} [{unit[c]}]" if unit.get(c) else short[c] for c in t.columns}
    varied = [p for p in res.params if t[p].drop_nulls().n_unique() > 1]
    pairs = [(p, v) for v in res.values for p in varied][:MAX_SCATTERS]
    hists = [c for c in varied + res.metric_values if t[c].drop_nulls().len()]
    total = len(pairs) + len(hists) + (1 if study else 0)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    scatters = []
    for p, v in pairs:
        if study:
            df = t.filter(t[p].is_finite() & t[v].is_finite()) if v != "objective" else t.filter(t[p].is_finite())
            feas = df["feasible"].fill_null(False).to_numpy()
            x, y = df[p].to_numpy().astype(float), df[v].cast(float).fill_null(np.nan).to_numpy()
            groups = {"feasible": feas, "infeasible": ~feas}
        else:
            sc = res.scatter(p, v)
            x, y, groups = sc.x, sc.y, sc.groups
        fig = plotting.scatter_figure(x, y, groups, xlabel=label[p], ylabel=label[v])
        scatters.append({"title": f"{short[p]} → {short[v]}", "uri": plotting.data_uri(fig)})
        tick()
    histograms = []
    for c in hists:
        fig = plotting.histogram_figure(t[c].cast(float).fill_null(np.nan).to_numpy(), label=label[c])
        histograms.append({"title": label[c], "uri": plotting.data_uri(fig)})
        tick()
    ctx: dict[str, Any] = {
        "counts": res.counts(),
        "section": section,
        "scatters": scatters,
        "histograms": histograms,
        "more_scatters": max(0, len(varied) * len(res.values) - len(pairs)),
        "sensitivity": {short[k]: {short[p]: r for p, r in v.items()} for k, v in res.sensitivity().items()},
        "sobol": sobol_section(res),
        "varied": [short[p] for p in varied],
    }
    checks = _requirements_of_trials(si.table, _scenario(res.metadata))
    shown = scenario_units(res.metadata.get("mjrig.scenario", ""))
    for r in checks["req_summary"]:  # worked out in SI (the bounds are), shown converted
        factor, r["unit"] = shown.convert(si.units.get(f"Requirements/{r['name']}:value", ""))
        if r["worst"] is not None:
            r["worst"] = {
                **r["worst"],
                **{k: r["worst"][k] * factor for k in ("value", "past") if isinstance(r["worst"][k], (int, float))},
            }
    ctx.update(checks)
    columns = [c for c in t.columns if c not in ("message",)]
    table = t.sort("trial").head(MAX_TABLE_ROWS)
    ctx["units_note"] = ", ".join(f"{q} in {u}" for q, u in shown.table().items())
    ctx["table"] = {
        "columns": [label[c] for c in columns],
        "rows": table.select(columns).rows(),
        "hidden": max(0, t.height - MAX_TABLE_ROWS),
    }
    ctx["front"] = None
    if res.is_pareto:
        ctx["feasible"] = int(t["feasible"].fill_null(False).sum())
        ctx["front"] = front_section(res, label)
        tick()
    elif study:
        trials, obj, best = res.history()
        ctx["feasible"] = int(t["feasible"].fill_null(False).sum())
        objective = tomllib.loads(section).get("optimize", {}) if section else {}
        stated = _json(res.metadata, "mjrig.objective", {})
        ctx["objective"] = stated.get("text") or objective.get("minimize") or objective.get("maximize") or "objective"
        ctx["objective_unit"] = unit.get("objective", stated.get("unit", ""))
        ctx["direction"] = "maximize" if "maximize" in objective else "minimize"
        ctx["history"] = (
            plotting.data_uri(plotting.history_figure(trials, obj, best, label="objective")) if trials.size else None
        )
        tick()
        bt = res.best_trial()
        row = res.row(bt) if bt is not None else {}  # in the units shown (``param_values``: the file's)
        params = {
            c[len("Params/") : -len(":value")]: (row[c], unit.get(c, "")) for c in res.params if row[c] is not None
        }
        ctx["best"] = None if bt is None else {"trial": bt, "objective": row["objective"], "params": params}
    return ctx


def _requirements_of_trials(t: Any, scenario: dict[str, Any]) -> dict[str, Any]:
    """Each requirement's failed trials and worst one, and the pass/fail matrix (trials by
    requirements, a picture) of a sweep's or study's table ``t``."""
    from mjrig.exports.campaign_checks import requirement_summary

    summary = requirement_summary(t, scenario.get("requirements", []))
    if not summary:
        return {"req_summary": [], "matrix": None}
    ordered = t.sort("trial")
    verdicts = [ordered[f"Requirements/{r['name']}:pass"].to_list() for r in summary]
    fig = plotting.matrix_figure(ordered["trial"].to_list(), [r["name"] for r in summary], verdicts)
    return {"req_summary": summary, "matrix": plotting.data_uri(fig)}


# --- the page ----------------------------------------------------------------------------------
def write_report(
    path: str | os.PathLike, *, out: Path, signals: Sequence[str] = (), progress: Progress | None = None
) -> Path:
    """Write the report of ``path`` (a recording, a sweep's results or a study) to ``out``
    (through a temporary file: a failure leaves nothing half-written); returns ``out``.
    ``signals``: globs of more columns to plot (recordings only). ConfigError (one line) for a
    missing or unreadable file or a pattern matching nothing."""
    import jinja2

    path = Path(path).expanduser().resolve()
    meta = _meta(path)
    campaign = "mjrig.sweep" in meta or "mjrig.optimize" in meta
    if campaign and signals:
        raise ConfigError(f"{path}: --signals goes with a recording; this is a sweep's or study's results")
    kind = ("study" if "mjrig.optimize" in meta else "sweep") if campaign else "recording"
    from mjrig.exports.fit_report import FIT_KEY, fit_context

    if FIT_KEY in meta:
        if signals:
            raise ConfigError(f"{path}: --signals goes with a recording; this is a fit's results")
        kind = "fit"
    ctx = _common(path, meta, kind)
    if kind == "fit":
        ctx.update(fit_context(path, meta))
    else:
        ctx.update(_campaign(path, progress) if campaign else _recording(path, meta, signals, progress))
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mjrig.exports", "."),
        autoescape=jinja2.select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    html = env.get_template("fit.html.j2" if kind == "fit" else "report.html.j2").render(**ctx)
    from mjrig.runtime.files.atomic_output import atomic_output

    with atomic_output(out, what="-o") as tmp:
        tmp.write_text(html, encoding="utf-8")
    return out
