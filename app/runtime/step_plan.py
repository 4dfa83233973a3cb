"""The step plan: what a resolved rig does at each step, and the code that does it.

``StepPlan.build`` resolves a rig (``RigLists``: the manager's lists) on a model: the engine
(its loads), the extras (actuator inputs, model fields, pin reactions, tracers), the params
table, the requirements and metrics, the samplers (recorder first, then live monitors), the
frame sinks (videos, a viewer's sync) and the pacer. Its step is a tuple of parts
(``step_parts.Part``), made from those when it is built and again when one of them changes
whether it has work (a load edited, a param bound to a model field moved, pacing switched, a
video started); ``step`` runs exactly that tuple and ``between_steps`` is its parts' names, so
what is listed and what runs are one: ``mjrig run`` steps in blocks of plain ``mj_step`` when
the tuple is empty, a lock-step sweep (``mujoco.batch``, which takes no Python) refuses a rig
with parts it cannot do itself, and linearisation steps the plan's engine. A new per-step
feature is one part in ``_make_parts``.

Threading: built and stepped on the stepping thread (its answers follow edits made since: a
load changed, a param bound to a model field moved).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import mujoco
import numpy as np

from mjrig.runtime.analysis.metric_log import MetricLog
from mjrig.runtime.analysis.metrics import Metric
from mjrig.runtime.analysis.requirements import Requirement, RequirementSet
from mjrig.runtime.controls import Control
from mjrig.runtime.drawing.frame_sinks import FrameSink
from mjrig.runtime.drawing.tracers import Tracer
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.engine import LoadEngine, step_with_loads
from mjrig.runtime.forces.loads import Load
from mjrig.runtime.forces.proximity import Proximity
from mjrig.runtime.forces.spring_bank import Helper
from mjrig.runtime.model_fields import ModelBinding
from mjrig.runtime.pacing import Pacer
from mjrig.runtime.param_table import ParamTable
from mjrig.runtime.rig_drawing import RigDrawing
from mjrig.runtime.rig_extras import RigExtras
from mjrig.runtime.step_parts import (
    WORK,
    Part,
    StartWork,
    Work,
    checks_part,
    frames_part,
    pacing_part,
    samples_part,
    sync_part,
)
from mjrig.runtime.telemetry.frame_signals import FrameSignal, frame_sources
from mjrig.runtime.telemetry.signal_probe import SignalProbe, column_units
from mjrig.runtime.telemetry.signals import Derived, SignalManager
from mjrig.runtime.values import NamedValue

__all__ = ["WORK", "Part", "RigLists", "StepPlan", "Work"]


class RigLists(Protocol):
    """What a plan is built from: the rig's lists as the user edits them (``RuntimeManager`` is
    one), its callbacks and switches, and what the metrics carry over (``carried``: the replaced
    rig's metric log and a reader of kept rows by signal)."""

    loads: list[Load]
    proximities: list[Proximity]
    params: list[NamedValue]
    controls: list[Control]
    bindings: list[ModelBinding]
    tracers: list[Tracer]
    requirements: list[Requirement]
    metrics: list[Metric]
    frame_signals: list[FrameSignal]
    signal_manager: SignalManager | None
    monitors: list[SignalManager]
    on_load_error: Callable[[Load, BaseException], None] | None
    on_warning: Callable[[str], None] | None
    native_springs: bool
    compiled_laws: bool
    carried: tuple[MetricLog | None, Callable[[str], tuple[np.ndarray, np.ndarray]]]


class StepPlan:
    """A rig resolved on (``model``, ``data``): its per-step parts and the step that runs them.

    ``engine``: the loads; ``extras``: actuator inputs, model fields, pins, tracers; ``params``:
    the params table; ``checks``: requirements and metrics (None: neither); ``samplers``: the
    SignalManagers sampled between steps (recorder first); ``sinks``: frame sinks; ``pacer``:
    wall-clock pacing (its ``speed`` ≤ 0: as fast as possible); ``drawing``: the rig's drawing
    (the frames' arrows); ``sources``: every telemetry source besides MuJoCo's own (for probes
    and units)."""

    def __init__(
        self,
        *,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        engine: LoadEngine,
        extras: RigExtras,
        params: ParamTable,
        checks: RequirementSet | None,
        samplers: Sequence[SignalManager],
        sinks: Sequence[FrameSink],
        pacer: Pacer,
        drawing: RigDrawing,
        sources: list[Any],
        prepare_loads: Callable[[], None],
    ) -> None:
        self.model, self.data = model, data
        self.engine, self.extras, self.params, self.checks = engine, extras, params, checks
        self.samplers = tuple(samplers)
        self.pacer, self.drawing, self.sources = pacer, drawing, sources
        self._prepare_loads = prepare_loads
        self._modes_of: tuple[bytes, bytes] | None = None  # (start state, param values) the mode metrics are of
        self.set_sinks(sinks)

    # --- building ----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        rig: RigLists,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        *,
        helper_of: dict[str, Helper],
        sinks: Sequence[FrameSink],
        pacer: Pacer,
        drawing: RigDrawing,
        carried: MetricLog | None,
    ) -> StepPlan:
        """Resolve ``rig`` on (``model``, ``data``): check every name (ConfigError naming an
        unknown one), take initial distances, bind the samplers, attach ``drawing`` to the new
        engine and extras. ``helper_of``: each load's helpers (compiled with the model, ``rigmodel``);
        ``carried``: the metric log the run so far kept (the replaced plan's)."""
        mujoco.mj_forward(model, data)
        names = [ld.name for ld in rig.loads]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ConfigError(f"duplicate load name '{sorted(dup)[0]}'")
        engine = LoadEngine(
            model,
            data,
            rig.loads,
            helper_of=helper_of,
            on_load_error=rig.on_load_error,
            native=rig.native_springs,
            compiled=rig.compiled_laws,
        )
        extras = RigExtras(
            model,
            data,
            loads=rig.loads,
            controls=rig.controls,
            bindings=rig.bindings,
            tracers=rig.tracers,
            on_warning=rig.on_warning or logging.getLogger("mjrig").warning,
        )
        drawing.attach(engine=engine, extras=extras)
        for p in rig.proximities:
            p.resolve(model, data)
        params = ParamTable(
            [
                *rig.params,
                *(p for ld in rig.loads for p in ld.params()),
                *(p for c in rig.controls for p in c.params()),
                *(b.param for b in rig.bindings),
            ]
        )
        distances = np.full(len(rig.proximities), np.nan)
        prepare, load_sources = engine.telemetry_sources()
        prepare_loads = prepare or (lambda: None)

        def before_sample() -> None:
            prepare_loads()
            for i, p in enumerate(rig.proximities):
                distances[i] = p.measure(model, data) if p.active else np.nan

        before = before_sample if (prepare is not None or rig.proximities) else None
        sources: list[Any] = [x if isinstance(x, Derived) else ("loads", *x) for x in load_sources]
        sources.append(
            (
                "proximities",
                distances,
                [(f"Proximities/{p.name}:distance", i, "m") for i, p in enumerate(rig.proximities)],
            )
        )
        sources.append(("params", params.array, params.columns()))
        sources += frame_sources(rig.frame_signals, model, data, sources)
        checks = None
        if rig.requirements or rig.metrics:
            checks = RequirementSet(
                rig.requirements,
                model,
                data,
                extra=sources,
                metrics=MetricLog(list(rig.metrics)),
                prepare={"loads": prepare, "proximities": before},
            )
            sources.append(checks.source)
            checks.metrics.seed(carried, rig.carried[1])
        samplers = [s for s in (rig.signal_manager, *rig.monitors) if s is not None]
        for sm in samplers:
            sm.bind(model, data, extra=sources, before_sample=before)
        return cls(
            model=model,
            data=data,
            engine=engine,
            extras=extras,
            params=params,
            checks=checks,
            samplers=samplers,
            sinks=sinks,
            pacer=pacer,
            drawing=drawing,
            sources=sources,
            prepare_loads=prepare_loads,
        )

    def detach(self) -> None:
        """Stop listening to loads and params (the plan is being replaced); nothing is closed."""
        self.engine.detach()
        self.extras.detach()
        self.params.detach()

    # --- what it does ------------------------------------------------------------------------
    def _has_work(self) -> tuple[bool, bool, bool]:
        """What decides which parts have work and may change between steps: the loads (changed,
        varying in time, or in Python), the model fields (a bound param moved), pacing on."""
        eng, bindings = self.engine, self.extras.bindings
        return (eng.python or eng.dirty, bindings is not None and bool(bindings.dirty), self.pacer.speed > 0)

    def _make_parts(self) -> tuple[Part, ...]:
        """The step's parts as the rig is now, in the order they run (each phase in turn)."""
        loads, fields, paced = self._made_for = self._has_work()
        extras, checks, m, d = self.extras, self.checks, self.model, self.data
        parts: list[Part] = []
        if loads:
            parts.append(Part("loads"))
        if checks is not None and (checks.items or checks.metrics.metrics):
            parts.append(checks_part(checks))
        if self.samplers:
            parts.append(samples_part(self.samplers, d))
        if self._with_samples:
            parts.append(frames_part(self._with_samples, m, d, self.drawing))
        if fields:
            parts.append(Part("model fields", before=extras.write_fields))
        if extras.controls is not None:  # after the fields: a control's input may read one
            parts.append(Part("actuator inputs", before=extras.hold_inputs))
        if extras.pins:
            parts.append(Part("pin reactions", after=extras.refresh_pins))
        if extras.tracers:
            parts.append(Part("tracers", after=extras.sample_tracers))
        if self._after_step:
            parts.append(sync_part(self._after_step, m, d, self.drawing))
        if paced:
            parts.append(pacing_part(self.pacer, d))
        return tuple(parts)

    def _set_parts(self, parts: tuple[Part, ...]) -> None:
        """Run ``parts`` from the next step on, split once here by phase."""
        self.parts = parts
        self._before = tuple(p.before for p in parts if p.before is not None)
        self._at_start: tuple[StartWork, ...] = tuple(p.at_start for p in parts if p.at_start is not None)
        self._after = tuple(p.after for p in parts if p.after is not None)
        self._loads = any(p.work == "loads" for p in parts)
        self._due: Sequence[StartWork] = ()

    def _current(self) -> None:
        """The parts made again when what decides them changed since they were made."""
        if self._has_work() != self._made_for:
            self._set_parts(self._make_parts())

    def between_steps(self) -> tuple[Work, ...]:
        """The work (``WORK`` keys) that runs in Python between this rig's steps now: its parts'
        names; empty: a step is a plain ``mj_step``."""
        self._current()
        return tuple(p.work for p in self.parts)

    def step(self) -> None:
        """Run the parts: their work before the physics, then one timestep (the Python loads
        applied when the ``loads`` part is there) with the start work that is due (requirements,
        rows, frames) at its start state, then their work after it (pins, tracers, the viewer's
        sync, pacing). DivergenceError when the physics blows up (recorded rows stay safe)."""
        self._current()
        for fn in self._before:
            fn()
        hook: Callable[[], object] | None = None
        at_start = self._at_start
        if at_start:
            t = self.data.time
            if len(at_start) == 1:
                self._due = at_start if at_start[0].due(t) else ()
            else:
                self._due = [w for w in at_start if w.due(t)]
            if self._due:
                hook = self._capture
        step_with_loads(self.engine, before_integrate=hook, loads=self._loads)
        for fn in self._after:
            fn()

    def _capture(self) -> None:
        """The start work due at this step, in order (the requirements first: the rig's outputs
        they bring up to date are not brought up again for the rows)."""
        prepared = False
        for w in self._due:
            prepared = w.run(prepared)

    def set_sinks(self, sinks: Sequence[FrameSink]) -> None:
        """The frame sinks from the next step on (a video started or finished), split once here
        into those taken with the samples and those taken after the step, so that a step with a
        viewer's sync alone takes the plain path."""
        self.sinks: tuple[FrameSink, ...] = tuple(sinks)
        self._with_samples = tuple(s for s in self.sinks if not s.after_step)
        self._after_step = tuple(s for s in self.sinks if s.after_step)
        self._set_parts(self._make_parts())

    # --- what it reads -----------------------------------------------------------------------
    def probe(self, names: list[str]) -> SignalProbe:
        """A ``SignalProbe`` reading columns ``names`` at the current state (the loads' outputs
        brought up to date first); KeyError(name) for a column the rig does not have."""
        return SignalProbe(self.model, self.data, names, extra=self.sources, prepare={"loads": self._prepare_loads})

    def signal_units(self) -> dict[str, str]:
        """Every telemetry column the rig has (every signal group), with its SI unit."""
        return column_units(self.model, self.data, self.sources)

    @property
    def stop_requested(self) -> bool:
        """A requirement with ``stop_on`` was decided at the last step: a headless run ends here."""
        return self.checks is not None and self.checks.stop

    def metric_entries(self) -> dict[str, dict[str, Any]]:
        """Each metric over the run so far by name: value (None for NaN), unit, signal, kind; the
        mode metrics of the rig linearised at the run's start (once a start and params)."""
        if self.checks is None:
            return {}
        self._work_out_modes()
        return self.checks.metrics.entries(self.checks.units)

    def finish_requirements(self) -> list[Requirement]:
        """Decide every requirement at the run's end (windows still open end here); returns them
        with their final state."""
        self._work_out_modes()
        return self.checks.finish() if self.checks is not None else []

    def _work_out_modes(self) -> None:
        """The mode metrics' values, when the run's start or the params changed since."""
        checks = self.checks
        if checks is not None and checks.metrics.modal and checks.start is not None:
            from mjrig.runtime.analysis.modes import mode_metrics

            key = (checks.start.tobytes(), self.params.array.tobytes())
            if key != self._modes_of:
                checks.metrics.fixed = mode_metrics(
                    self.engine, write_inputs=self.extras.write_inputs, start=checks.start, metrics=checks.metrics.modal
                )
                self._modes_of = key
