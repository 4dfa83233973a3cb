"""The sections of the registry that check and measure a run: requirements (pass/fail bounds on
a signal), metrics (one number per run from a signal) and signals (frame signals: a point's motion
in a frame of the model). Part of the registry's data (``mjrig.scenario.kinds`` lists them with
the sections that attach loads, proximities, controls and tracers). GUI-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mjrig.runtime.analysis.metrics import METRIC_KINDS, MODE_KINDS, Metric, MetricError
from mjrig.runtime.analysis.requirements import Requirement, RequirementError
from mjrig.runtime.telemetry.frame_signals import FrameSignal
from mjrig.scenario.registry import EntryError, Field, Kind, Section, name_field

__all__ = ["METRICS", "REQUIREMENTS", "SIGNALS"]


def _requirement(v: Mapping[str, Any]) -> Requirement:
    try:
        return Requirement(
            **{k: v[k] for k in ("name", "signal", "min", "max", "final", "tolerance", "start", "end", "stop_on")}
        )
    except RequirementError as exc:
        raise EntryError(str(exc), field=exc.field) from None


REQUIREMENTS = Section(
    "requirements",
    "requirement",
    "monitor",
    kind_key=None,
    default_kind="requirement",
    kinds=(
        Kind(
            "requirement",
            (
                name_field("requirement"),
                Field("signal", "text", required=True, help="the telemetry column it checks (recorded or not)"),
                Field("min", "number", help="the signal must stay >= min over the window", of_signal=True),
                Field("max", "number", help="the signal must stay <= max over the window", of_signal=True),
                Field(
                    "final",
                    "number",
                    help="its value at the window's end must be within final ± tolerance",
                    of_signal=True,
                ),
                Field(
                    "tolerance",
                    "number",
                    nonneg=True,
                    help="half-width of the band around final (default 0)",
                    of_signal=True,
                ),
                Field("start", "number", "s", 0.0, nonneg=True, help="the window's start (simulated time)"),
                Field("end", "number", "s", help="the window's end (left out: the run's end)"),
                Field("stop_on", "text", help='"fail" or "pass": end a headless run when it fails or has passed'),
            ),
            _requirement,
            "a bound on one telemetry signal over a window of simulated time",
        ),
    ),
)
"""Pass/fail checks of signals (measure only)."""

_METRIC_SETTINGS = {
    "level": Field(
        "level", "number", required=True, help="the level whose first crossing (either way) it times", of_signal=True
    ),
    "band": Field("band", "number", positive=True, help="half-width of the settled band, as a fraction of abs(final)"),
    "band_abs": Field(
        "band_abs", "number", positive=True, help="half-width of the settled band, in the signal's unit", of_signal=True
    ),
    "against": Field(
        "against", "text", required=True, help="the [[measured]] entry whose samples it compares the signal with"
    ),
    "mode": Field("mode", "number", required=True, help="which oscillatory mode: 1 the lowest"),
}


def _metric(kind: str) -> Callable[[Mapping[str, Any]], Metric]:
    def build(v: Mapping[str, Any]) -> Metric:
        if isinstance(v.get("mode"), float) and v["mode"].is_integer():
            v = {**v, "mode": int(v["mode"])}
        try:
            return Metric(
                kind=kind,
                **{
                    k: v[k]
                    for k in ("name", "signal", "start", "end", "level", "band", "band_abs", "against", "mode")
                    if k in v
                },
            )
        except MetricError as exc:
            raise EntryError(str(exc), field=exc.field) from None

    return build


METRICS = Section(
    "metrics",
    "metric",
    "monitor",
    default_kind="max",
    readout="value",
    kinds=tuple(
        Kind(
            kind,
            (
                name_field("metric"),
                *(
                    ()
                    if kind in MODE_KINDS
                    else (
                        Field(
                            "signal", "text", required=True, help="the telemetry column it reduces (recorded or not)"
                        ),
                        Field("start", "number", "s", 0.0, nonneg=True, help="the window's start (simulated time)"),
                        Field("end", "number", "s", help="the window's end (left out: the run's end)"),
                    )
                ),
                *(_METRIC_SETTINGS[k] for k in settings),
            ),
            _metric(kind),
            f"the {'rig' if kind in MODE_KINDS else 'signal'}'s {kind.replace('_', ' ')}"
            + (" at the run's start (linearised)" if kind in MODE_KINDS else " over the window"),
        )
        for kind, settings in METRIC_KINDS.items()
    ),
)
"""Numbers read off a run: a signal reduced over a window (``mjrig.runtime.analysis.metrics``)."""

SIGNALS = Section(
    "signals",
    "signal",
    "monitor",
    kind_key=None,
    default_kind="signal",
    kinds=(
        Kind(
            "signal",
            (
                name_field("signal"),
                Field(
                    "of",
                    "text",
                    required=True,
                    help='"Loads/NAME" (its force and torque) or a point: '
                    "a site, body:NAME or body:NAME@x,y,z (its position and velocity)",
                ),
                Field("frame", "text", default="world", help='"world", body:NAME or a site\'s name'),
            ),
            lambda v: FrameSignal(v["name"], v["of"], v["frame"]),
            "telemetry expressed in another frame",
        ),
    ),
)
"""Extra telemetry in a body's or site's frame (``mjrig.runtime.telemetry.frame_signals``)."""
