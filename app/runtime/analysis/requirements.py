"""Requirements: pass/fail checks of one telemetry signal, evaluated at every step.

A ``Requirement`` bounds one signal (any telemetry column name, recorded or not) over a window
of simulated time ``[start, end]`` (s; ``end`` None: the run's end):

- ``min``: the signal stays >= min at every step of the window;
- ``max``: it stays <= max;
- ``final`` ± ``tolerance``: its value at the window's last step (the last step at or before
  ``end``, or the run's last step) lies within ``final - tolerance .. final + tolerance``.

Its state says whether it holds so far (``passed``), the observed value that decides it
(``value``: the observed min, max or final value), the bound it is held to (``limit``) and the
simulated time of its first violation (``first_violation``, exact to one step). The steps are
the ones telemetry rows describe: the state at the start of each step. ``RequirementSet``
evaluates a rig's requirements at every step (``mjrig.runtime.telemetry.signal_probe`` reads the signals),
keeps the ``Requirements/<name>:pass`` column's values (1.0 while a requirement holds, 0.0 from
the step it fails) and says when a ``stop_on`` requirement asks the run to end.

A step whose signal is NaN (the signal does not exist at that moment, e.g. an inactive
proximity) is not observed. A requirement whose window holds no observed step fails, with no
value. Time going back (a reset, a restored snapshot) restarts every requirement.

Threading: ``update``/``finish`` run on the stepping thread; the app reads the state elsewhere
(plain attributes: a reading may be one step old).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.analysis.metric_log import MetricLog
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.points import closest_names
from mjrig.runtime.telemetry.signal_probe import SignalProbe, column_units, rig_columns

_INTEGRATION = int(mujoco.mjtState.mjSTATE_INTEGRATION)

__all__ = ["Requirement", "RequirementSet", "RequirementError", "UnknownSignalError", "STOP_ON", "report_entries"]

STOP_ON = ("fail", "pass")
FAILED, PASSED = 1, 2
"""Events of ``Requirement.update``: it failed at this step / it was decided passed at this step."""


class RequirementError(ValueError):
    """A requirement that does not make sense; ``field`` names the field at fault (or None)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UnknownSignalError(ConfigError):
    """A requirement (or a metric) names a signal the rig does not have; ``requirement`` is its
    name, ``section`` "requirements" or "metrics"."""

    def __init__(self, message: str, *, requirement: str, section: str = "requirements") -> None:
        super().__init__(message)
        self.requirement, self.section = requirement, section


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


@dataclass(eq=False, kw_only=True)
class Requirement:
    """A bound on telemetry column ``signal`` over the window ``start``..``end`` (simulated s).

    Give at least one of ``min``, ``max``, ``final`` (with ``tolerance``, default 0). ``stop_on``
    ("fail" or "pass") ends a headless run at the step it fails, or once it has passed (min/max:
    at the window's end with no violation; final: at the window's end, within tolerance).
    """

    name: str
    signal: str
    min: float | None = None
    max: float | None = None
    final: float | None = None
    tolerance: float | None = None
    start: float = 0.0
    end: float | None = None
    stop_on: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise RequirementError("a requirement needs a non-empty name", field="name")
        if not isinstance(self.signal, str) or not self.signal.strip():
            raise RequirementError(f"requirement '{self.name}' needs a signal", field="signal")
        self.min, self.max, self.final = _num(self.min), _num(self.max), _num(self.final)
        self.tolerance, self.end, self.start = _num(self.tolerance), _num(self.end), float(self.start or 0.0)
        for f in ("min", "max", "final", "tolerance", "start", "end"):
            v = getattr(self, f)
            if v is not None and not math.isfinite(v):
                raise RequirementError(f"must be a finite number, got {v}", field=f)
        if self.min is None and self.max is None and self.final is None:
            raise RequirementError("needs at least one bound: 'min', 'max' or 'final'")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise RequirementError(f"max ({self.max:g}) is below min ({self.min:g})", field="max")
        if self.tolerance is not None and self.final is None:
            raise RequirementError("'tolerance' goes with 'final'", field="tolerance")
        if self.tolerance is not None and self.tolerance < 0:
            raise RequirementError(f"must not be negative, got {self.tolerance:g}", field="tolerance")
        if self.start < 0:
            raise RequirementError(f"must not be negative, got {self.start:g}", field="start")
        if self.end is not None and self.end <= self.start:
            raise RequirementError(f"end ({self.end:g} s) must be after start ({self.start:g} s)", field="end")
        if self.stop_on is not None and self.stop_on not in STOP_ON:
            raise RequirementError(f'must be "fail" or "pass", got {self.stop_on!r}', field="stop_on")
        self.arm(0.0)

    # --- state -------------------------------------------------------------------------------
    def arm(self, timestep: float) -> None:
        """Set the model's ``timestep`` (s) and start over. The window's ends are matched to
        steps with a slack of a thousandth of a step (simulated time is a running sum)."""
        self.timestep = timestep
        eps = 1e-3 * timestep if timestep > 0 else 1e-12
        self._t0 = self.start - eps
        self._t1 = math.inf if self.end is None else self.end + eps
        self._last_from = self._t1 - timestep if timestep > 0 else self._t1  # a step at or past it is the window's last
        self.reset()

    def reset(self) -> None:
        """Back to "nothing observed yet" (a new run)."""
        self.passed = True  # holds so far (False from the step it fails)
        self.decided = False  # the window is over (or the run ended): ``passed`` is final
        self.first_violation: float | None = None  # simulated time (s) of the first failing step
        self.violation_value: float | None = None  # the signal's value then
        self._lo, self._hi = math.inf, -math.inf
        self._last = math.nan
        self._last_t: float | None = None
        self._n = 0
        self._prev_t = -math.inf
        self._failed_bound = ""

    def update(self, t: float, v: float) -> int:
        """Observe value ``v`` of the signal at simulated time ``t`` (s); returns FAILED when it
        failed at this step, PASSED when it was decided passed at this step, else 0."""
        if t < self._prev_t:
            self.reset()
        self._prev_t = t
        if self.decided or t < self._t0 or t > self._t1:
            return 0
        event = 0
        if v == v:  # NaN: the signal does not exist at this step
            self._n += 1
            if v < self._lo:
                self._lo = v
                if self.min is not None and v < self.min and self.passed:
                    event = self._fail(t, "min", v)
            if v > self._hi:
                self._hi = v
                if self.max is not None and v > self.max and self.passed:
                    event = self._fail(t, "max", v)
            self._last, self._last_t = v, t
        if t >= self._last_from:
            return self._decide() or event
        return event

    def window(self) -> tuple[float, float, float]:
        """(first, last, deciding) step times (s) of the window as matched to steps: a step at
        time t is observed when first <= t <= last; the step at or past ``deciding`` decides it."""
        return self._t0, self._t1, self._last_from

    def state(self) -> dict[str, Any]:
        """What it observed so far (for ``restore``): a run kept elsewhere, e.g. many trials'
        observations side by side in arrays (``mjrig.campaign.lockstep``)."""
        return {
            "passed": self.passed,
            "decided": self.decided,
            "first_violation": self.first_violation,
            "violation_value": self.violation_value,
            "lo": self._lo,
            "hi": self._hi,
            "last": self._last,
            "last_t": self._last_t,
            "n": self._n,
            "failed_bound": self._failed_bound,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Take over an observation ``state`` as ``state()`` gives it."""
        self.passed, self.decided = bool(state["passed"]), bool(state["decided"])
        self.first_violation, self.violation_value = state["first_violation"], state["violation_value"]
        self._lo, self._hi, self._last = float(state["lo"]), float(state["hi"]), float(state["last"])
        self._last_t, self._n, self._failed_bound = state["last_t"], int(state["n"]), state["failed_bound"]

    def decide_on(self, value: float, t: float) -> int:
        """Decide now on one ``value`` observed at ``t`` (s): a metric's, at the run's end."""
        self.reset()
        if value == value:
            self._n, self._lo, self._hi, self._last, self._last_t = 1, value, value, value, t
            if self.min is not None and value < self.min:
                self._fail(t, "min", value)
            elif self.max is not None and value > self.max:
                self._fail(t, "max", value)
        return self._decide()

    def finish(self) -> int:
        """Decide at the run's end (a window still open ends with the run); returns the event."""
        return 0 if self.decided else self._decide()

    def _fail(self, t: float | None, bound: str, v: float | None = None) -> int:
        self.passed = False
        self.first_violation = t
        self.violation_value = v
        self._failed_bound = bound
        return FAILED

    def _decide(self) -> int:
        self.decided = True
        if self._n == 0:
            return self._fail(None, "") if self.passed else 0
        if self.final is not None and self.passed and abs(self._last - self.final) > (self.tolerance or 0.0):
            return self._fail(self._last_t, "final", self._last)
        return PASSED if self.passed else 0

    # --- what decides it ---------------------------------------------------------------------
    def _bounds(self) -> list[tuple[str, float, float, float]]:
        """(bound, observed, limit, margin) of each bound given, once something was observed."""
        out: list[tuple[str, float, float, float]] = []
        if self._n == 0:
            return out
        if self.min is not None:
            out.append(("min", self._lo, self.min, self._lo - self.min))
        if self.max is not None:
            out.append(("max", self._hi, self.max, self.max - self._hi))
        if self.final is not None:
            tol = self.tolerance or 0.0
            edge = self.final - tol if self._last < self.final else self.final + tol
            out.append(("final", self._last, edge, tol - abs(self._last - self.final)))
        return out

    def _deciding(self) -> tuple[str, float, float, float] | None:
        bounds = self._bounds()
        if not bounds:
            return None
        failed = [b for b in bounds if b[0] == self._failed_bound]
        return failed[0] if failed else min(bounds, key=lambda b: b[3])

    @property
    def value(self) -> float | None:
        """The observed value that decides it: the window's min (for ``min``), max (for ``max``)
        or last value (for ``final``) -- of the bound that failed, else of the bound with the
        least margin. None before anything was observed."""
        b = self._deciding()
        return None if b is None else b[1]

    @property
    def limit(self) -> float | None:
        """The bound ``value`` is held to: ``min``, ``max``, or the edge of final ± tolerance
        nearer the value. Before anything was observed: the first bound given."""
        b = self._deciding()
        if b is not None:
            return b[2]
        return next(x for x in (self.min, self.max, self.final) if x is not None)

    def entry(self) -> dict[str, Any]:
        """Its line of a report: name, signal, pass, value, limit, time (first violation)."""

        def finite(x: float | None) -> float | None:
            return x if x is not None and math.isfinite(x) else None

        return {
            "name": self.name,
            "signal": self.signal,
            "pass": bool(self.passed),
            "value": finite(self.value),
            "limit": finite(self.limit),
            "time": self.first_violation,
        }


def report_entries(requirements: Sequence[Requirement]) -> list[dict[str, Any]]:
    """The report of ``requirements`` (``mjrig run --report``): one entry per requirement."""
    return [r.entry() for r in requirements]


class RequirementSet:
    """A rig's requirements on one (model, data): reads their signals and updates them each step.

    ``extra`` are the rig's signal sources as the recorder gets them (``SignalManager.bind``);
    ``prepare`` the group's functions that bring its outputs up to date (``SignalProbe``).
    ``pass_values`` backs the ``Requirements/<name>:pass`` columns (``source``). ``metrics`` (a
    ``MetricLog``; None: no metrics) logs its signals at the same steps; a requirement whose signal is
    ``Metrics/<name>`` is decided on that metric's value at the end (``finish``). ConfigError
    (``UnknownSignalError``) for a signal the rig does not have.
    """

    _units: dict[str, str] | None  # ``units`` once worked out

    @property
    def units(self) -> dict[str, str]:
        """The rig's signals' units by column, worked out at the first call (for the metrics'
        own: ``self.metrics.entries(self.units)``)."""
        if self._units is None:
            self._units = column_units(*self._unit_sources)
        return self._units

    def value_units(self) -> dict[str, str]:
        """The SI unit of each ``Requirements/<name>:value`` and ``Metrics/<name>:value`` column
        (a sweep's or study's results): a requirement's is its signal's, or its metric's."""
        units = self.units
        metric = self.metrics.units(units)
        out = {f"Requirements/{r.name}:value": metric.get(r.signal, units.get(r.signal, "")) for r in self.items}
        out.update({f"{k}:value": u for k, u in metric.items()})
        return out

    def __init__(
        self,
        requirements: Sequence[Requirement],
        model: mujoco.MjModel,
        data: mujoco.MjData,
        *,
        extra: Sequence[Any] = (),
        prepare: Mapping[str, Callable[[], None] | None] | None = None,
        metrics: MetricLog | None = None,
    ) -> None:
        self.items = list(requirements)
        names = [r.name for r in self.items]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ConfigError(f"duplicate requirement name '{dup[0]}'")
        self.data, self.model = data, model
        self.metrics = metrics if metrics is not None else MetricLog([])
        self.start: np.ndarray | None = None
        """The state (``mjSTATE_INTEGRATION``) the run started from, kept for mode metrics."""
        named = {f"Metrics/{m.name}": m for m in self.metrics.metrics}
        for r in self.items:
            if r.signal.startswith("Metrics/") and r.signal not in named:
                raise UnknownSignalError(
                    f"unknown metric '{r.signal}'{closest_names(r.signal, sorted(named))}", requirement=r.name
                )
        self._on_metric = [(i, r) for i, r in enumerate(self.items) if r.signal in named]
        signals = list(dict.fromkeys([*(r.signal for r in self.items if r.signal not in named), *self.metrics.signals]))
        try:
            self.probe = SignalProbe(model, data, signals, extra=extra, prepare=prepare)
        except KeyError as exc:
            bad = exc.args[0]
            culprit = next((r for r in self.items if r.signal == bad), None)
            known = rig_columns(model, data, extra=extra)
            raise UnknownSignalError(
                f"unknown signal '{bad}'{closest_names(bad, known)}",
                requirement=culprit.name
                if culprit is not None
                else next(m.name for m in self.metrics.metrics if m.signal == bad),
                section="requirements" if culprit is not None else "metrics",
            ) from None
        self._metric_slots = np.array([signals.index(x) for x in self.metrics.signals], dtype=np.intp)
        self._unit_sources = (model, data, list(extra))
        self._units = None
        timestep = float(model.opt.timestep)
        for r in self.items:
            if r.timestep != timestep:  # a new rig; a resolve of the same one keeps the state
                r.arm(timestep)
        self._plan = [(i, r, signals.index(r.signal)) for i, r in enumerate(self.items) if r.signal not in named]
        self.pass_values = np.array([1.0 if r.passed else 0.0 for r in self.items])
        self.stop = False
        """A ``stop_on`` requirement was decided: the run should end after this step."""

    @property
    def source(self) -> tuple[str, np.ndarray, list[tuple[str, int, str]]]:
        """The ``Requirements/<name>:pass`` columns as a recorder source."""
        return (
            "requirements",
            self.pass_values,
            [(f"Requirements/{r.name}:pass", i, "") for i, r in enumerate(self.items)],
        )

    def evaluate(self) -> bool:
        """Read the signals at the current state and update every requirement; returns whether
        the rig's outputs were brought up to date (so a recorder sampling next need not)."""
        read = self.probe.read()
        values = read.tolist()
        t = self.data.time
        log = self.metrics
        if log.modal and (not log.n or t < log.last_time):  # a run starts: the state its modes are of
            self.start = np.empty(mujoco.mj_stateSize(self.model, _INTEGRATION))
            mujoco.mj_getState(self.model, self.data, self.start, _INTEGRATION)
        if self._metric_slots.size or log.modal:
            log.add(t, read[self._metric_slots])
        for i, r, slot in self._plan:
            event = r.update(t, values[slot])
            if event or self.pass_values[i] != r.passed:
                self._note(i, r, event)
        return self.probe.prepares

    def _note(self, i: int, r: Requirement, event: int) -> None:
        self.pass_values[i] = 1.0 if r.passed else 0.0
        if (event == FAILED and r.stop_on == "fail") or (event == PASSED and r.stop_on == "pass"):
            self.stop = True

    def finish(self) -> list[Requirement]:
        """Decide every requirement at the run's end (now), those bounding a metric on its
        value over the whole run; returns them."""
        for i, r, _ in self._plan:
            self._note(i, r, r.finish())
        if self._on_metric:
            values = self.metrics.values()
            for i, r in self._on_metric:
                if not r.decided:
                    self._note(i, r, r.decide_on(values[r.signal[len("Metrics/") :]], self.data.time))
        return self.items
