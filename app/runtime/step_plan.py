"""The step plan: what a resolved rig does at each step, and the code that does it.

``StepPlan.build`` resolves a rig (``RuntimeManager``'s lists) on a model: the engine (its
loads), the extras (actuator inputs, model fields, pin reactions, tracers), the params table,
the requirements and metrics, the samplers (recorder first, then live monitors), the frame
sinks (videos, a viewer's sync) and the pacer. ``step`` runs them; ``between_steps`` names the
same parts from the same fields, so what is listed and what runs agree: ``mjrig run`` steps in
blocks of plain ``mj_step`` when the list is empty, a lock-step sweep (``mujoco.batch``, which
takes no Python) refuses a rig with work it cannot do itself, and linearisation steps the plan's
engine. A new per-step feature is one part here, listed and run by this class.

Threading: built and stepped on the stepping thread (its answers follow edits made since: a
load changed, a param bound to a model field moved).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from mjrig.runtime.analysis.metrics import MetricLog
from mjrig.runtime.analysis.requirements import Requirement, RequirementSet
from mjrig.runtime.drawing.frame_sinks import FrameSink
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.engine import LoadEngine, step_with_loads
from mjrig.runtime.pacing import Pacer
from mjrig.runtime.param_table import ParamTable
from mjrig.runtime.rig_extras import RigExtras
from mjrig.runtime.telemetry.frame_signals import frame_sources
from mjrig.runtime.telemetry.signal_probe import SignalProbe, column_units
from mjrig.runtime.telemetry.signals import Derived, SignalManager

if TYPE_CHECKING:
    from mjrig.runtime.manager import RuntimeManager
    from mjrig.runtime.rig_drawing import RigDrawing

__all__ = ["WORK", "StepPlan"]

WORK = {
    "loads": "loads MuJoCo does not compute itself",
    "requirements": "requirements",
    "metrics": "metrics",
    "recording": "a recording or live plots",
    "video": "a video",
    "actuator inputs": "actuator inputs",
    "model fields": "params written into model fields",
    "pin reactions": "joint friction from pin reactions",
    "tracers": "tracers",
    "step hooks": "other work at each step",
    "pacing": "real-time pacing",
    "viewer": "the 3D view",
}
"""Each kind of work between steps, as a sentence names it."""


class StepPlan:
    """A rig resolved on (``model``, ``data``): its per-step parts and the step that runs them.

    ``engine``: the loads; ``extras``: actuator inputs, model fields, pins, tracers; ``params``:
    the params table; ``checks``: requirements and metrics (None: neither); ``samplers``: the
    SignalManagers sampled between steps (recorder first); ``sinks``: frame sinks; ``pacer``:
    wall-clock pacing (its ``speed`` ≤ 0: as fast as possible); ``sources``: every telemetry
    source besides MuJoCo's own (for probes and units)."""

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
        self.set_sinks(sinks)
        self.pacer, self.drawing, self.sources = pacer, drawing, sources
        self._prepare_loads = prepare_loads
        self._several = len(self.samplers) > 1
        self._due: Sequence[SignalManager] = ()
        self._frames_due: list[FrameSink] = []
        self._modes_of: tuple = ()  # (start state, param values) the mode metrics were worked out at

    # --- building ----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        rig: RuntimeManager,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        *,
        tendon_of: dict[str, int],
        sinks: Sequence[FrameSink],
        pacer: Pacer,
        drawing: RigDrawing,
        carried: MetricLog | None,
    ) -> StepPlan:
        """Resolve ``rig`` on (``model``, ``data``): check every name (ConfigError naming an
        unknown one), take initial distances, bind the samplers. ``tendon_of``: each load's
        helper tendon (compiled with the model); ``carried``: the metric log the run so far
        kept (the replaced plan's)."""
        mujoco.mj_forward(model, data)
        names = [ld.name for ld in rig.loads]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ConfigError(f"duplicate load name '{sorted(dup)[0]}'")
        engine = LoadEngine(
            model,
            data,
            rig.loads,
            tendon_of=tendon_of,
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
        extras.hook(engine.before_step, engine.after_step)
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
                metrics=rig.metrics,
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
    def between_steps(self) -> tuple[str, ...]:
        """The work (``WORK`` keys) that runs in Python between this rig's steps now; empty: a
        step is a plain ``mj_step``."""
        eng, checks, extras = self.engine, self.checks, self.extras
        work = []
        if eng.python or eng.dirty:
            work.append("loads")
        hooked = bool(extras.controls or extras.bindings or extras.pins or extras.tracers)
        if (eng.before_step or eng.after_step) and not hooked:
            work.append("step hooks")
        if checks is not None and checks.items:
            work.append("requirements")
        if checks is not None and checks.metrics.metrics:
            work.append("metrics")
        if self.samplers:
            work.append("recording")
        if self._with_samples:
            work.append("video")
        if extras.controls is not None:
            work.append("actuator inputs")
        if extras.bindings is not None and extras.bindings.dirty:
            work.append("model fields")
        if extras.pins:
            work.append("pin reactions")
        if extras.tracers:
            work.append("tracers")
        if self.pacer.speed > 0:
            work.append("pacing")
        if self._after_step:
            work.append("viewer")
        return tuple(work)

    def step(self) -> None:
        """Apply loads, record telemetry and take frames that are due, advance one timestep,
        sync the viewer, pace. DivergenceError when the physics blows up (recorded rows stay
        safe)."""
        data, pacer = self.data, self.pacer
        paced = pacer.speed > 0
        if paced:
            pacer.start(data.time)
        hook: Callable[[], object] | None = None
        t = data.time
        if self._with_samples:
            self._due = [sm for sm in self.samplers if sm.due(t)]
            self._frames_due = [s for s in self._with_samples if s.due(t)]
            if self._due or self._frames_due:
                hook = self._capture
        elif self.samplers:  # the common case, without the lists: one recorder or live monitor
            due = (
                [sm for sm in self.samplers if sm.due(t)]
                if self._several
                else (self.samplers if self.samplers[0].due(t) else [])
            )
            if due:
                self._due, self._frames_due = due, []
                hook = self._capture
        if self.checks is not None and hook is None:  # requirements: every step (with rows: in _capture, first)
            hook = self.checks.evaluate
        step_with_loads(self.engine, before_integrate=hook)
        for sink in self._after_step:
            sink.take(self.model, data, self.drawing)
        if paced:
            pacer.wait(data.time)

    def _capture(self) -> None:
        """The samples and frames due at this step (the requirements evaluated first)."""
        prepared = self.checks.evaluate() if self.checks is not None else False
        for sm in self._due:
            sm.sample(self.data, prepared=prepared)
            prepared = True
        for sink in self._frames_due:
            sink.take(self.model, self.data, self.drawing)

    def set_sinks(self, sinks: Sequence[FrameSink]) -> None:
        """The frame sinks from the next step on (a video started or finished), split once here
        into those taken with the samples and those taken after the step, so that a step with a
        viewer's sync alone takes the plain path."""
        self.sinks: tuple[FrameSink, ...] = tuple(sinks)
        self._with_samples = tuple(s for s in self.sinks if not s.after_step)
        self._after_step = tuple(s for s in self.sinks if s.after_step)

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
                checks.metrics.fixed = mode_metrics(self, checks.start, checks.metrics.modal)
                self._modes_of = key
