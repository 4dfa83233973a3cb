"""The report of a linearisation (``mjrig linearise ... --report OUT.html``): the operating point,
the state-space model's size, inputs and outputs, its modes, and for each input a small step
answered by the linear model and by the rig's own run from the same point, overlaid, with each
output's largest difference relative to the rig's peak change (``mjrig.linear.step_check``).
One self-contained HTML page (figures inline). GUI-free."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.exports import plotting
from mjrig.runtime.files.atomic_output import atomic_output

__all__ = ["write_linear_report"]


def _fmt(x: Any, digits: int = 6) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "—"
    return f"{v:.{digits}g}" if np.isfinite(v) else "—"


def _figure(check: dict[str, Any]) -> Any:
    """One panel per output: the rig's change (solid) and the linear model's (dashed) against time."""
    from matplotlib.figure import Figure

    outs = check["outputs"]
    fig = Figure(figsize=(8, 2.4 * len(outs) + 0.6), layout="constrained")
    axes = fig.subplots(len(outs), 1, sharex=True, squeeze=False)[:, 0]
    t = np.asarray(check["time"])
    for ax, o in zip(axes, outs):
        ax.plot(t, o["rig"], color="#1f77b4", label="the rig's run")
        ax.plot(t, o["linear"], color="#d62728", linestyle="--", label="the linear model")
        ax.set_ylabel(f"Δ {o['output']}\n({o['unit'].replace('*', '·') or '1'})", fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[0].set_title(f"step of {check['input']}: {check['step']:.4g} {check['unit'].replace('*', '·')}")
    axes[-1].set_xlabel("time after the step (s)")
    return fig


def write_linear_report(doc: dict[str, Any], out: Path) -> Path:
    """Write the report of ``doc`` (``target``, ``model``, ``kind``, ``point``, ``solved``,
    ``states``, ``inputs``, ``outputs``, ``modes`` as ``Mode.entry`` gives them, ``checks`` as
    ``step_checks`` gives them) to ``out``, whole or not at all."""
    import jinja2

    import mjrig

    checks = [
        {**c, "unit": c["unit"].replace("*", "·"), "figure": plotting.data_uri(_figure(c))} for c in doc["checks"]
    ]
    modes = [
        {**m, "shape": ", ".join(f"{j} {v:+.3g}" for j, v in sorted(m["shape"].items(), key=lambda kv: -abs(kv[1])))}
        for m in doc["modes"]
    ]
    gaps = [o["difference"] for c in doc["checks"] for o in c["outputs"]]
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mjrig.exports", "."),
        autoescape=jinja2.select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    html = env.get_template("linear.html.j2").render(
        **{**doc, "checks": checks, "modes": modes},
        worst=max(gaps) if gaps else None,
        fmt=_fmt,
        made=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        report_version=mjrig.__version__,
    )
    with atomic_output(out, what="--report") as tmp:
        tmp.write_text(html, encoding="utf-8")
    return out
