"""RuntimeManager: one rig (loads, proximities, params, telemetry, video) driving one model.

Typical use::

    rm = RuntimeManager(loads=[...], signal_manager=SignalManager("out.parquet"), playback_speed=0)
    model, data = rm.load_model("models/spring_mass.xml")   # compiles the rig's fast path in
    with rm:
        while data.time < 5.0:
            rm.step(model, data)
A model compiled elsewhere works too (its point-to-point loads take the per-load path)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.controls import Control
from mjrig.runtime.engine import LoadEngine, step_with_loads
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.frame_signals import FrameSignal, frame_sources
from mjrig.runtime.loads import Load, PointToPointForce
from mjrig.runtime.metrics import Metric, MetricLog
from mjrig.runtime.model_fields import ModelBinding
from mjrig.runtime.pacing import Pacer
from mjrig.runtime.proximity import Proximity
from mjrig.runtime.requirements import Requirement, RequirementSet
from mjrig.runtime.rig_drawing import RigDrawing
from mjrig.runtime.rig_extras import RigExtras
from mjrig.runtime.rigmodel import compile_rig, load_model_file, load_spec
from mjrig.runtime.signal_probe import SignalProbe, column_units
from mjrig.runtime.signals import Derived, SignalManager
from mjrig.runtime.snapshots import PhysicsState, put_snapshot, take_snapshot
from mjrig.runtime.step_plan import StepPlan
from mjrig.runtime.tracers import Tracer
from mjrig.runtime.values import NamedValue
from mjrig.runtime.visuals import ArrowConfig, ArrowScale, LineConfig

__all__ = ["RuntimeManager", "SyncHook", "load_model_file"]

SyncHook = Callable[[mujoco.MjModel, mujoco.MjData, list[ArrowConfig], list[LineConfig]], None]
"""Called after every step with (model, data, arrows, lines), e.g. to sync a viewer."""


@dataclass(eq=False)
class RuntimeManager(RigDrawing):
    """Applies loads, measures proximities, records telemetry and video, paces playback.

    ``playback_speed``: the real-time factor ``step`` paces to (1.0: real time; 0 or less: as fast as possible).
    ``params``: extra NamedValues to record besides the loads'. ``monitors``: extra SignalManagers sampled like
    ``signal_manager`` (e.g. a file-less one feeding live plots). ``native_springs``: MuJoCo evaluates the springs
    it computes exactly (ideal springs; tension-/compression-only springs without damping) as tendon
    spring-dampers, with no Python per step (False: mjrig's array path, same forces, left out of MuJoCo's energy).
    ``compiled_laws``: every other law runs in the compiled passive-force callback (``native_table``) when all
    of them can (False: the Python path, their reference).
    ``on_load_error(load, exc)`` is told about a load that raised (it is disabled and the run goes on; unset: the
    error propagates). ``controls`` hold actuator inputs, ``bindings`` write params into model fields, ``tracers``
    draw trails (``rig_extras``); ``requirements`` are checked and ``metrics`` logged at every step
    (``stop_requested``, ``finish_requirements``, ``metric_entries``); ``frame_signals`` record in other frames;
    ``on_warning(text)`` receives warnings (default: the ``mjrig`` logger); ``sync_hook(model, data, arrows,
    lines)`` gets the rig's drawing after every step (a viewer's sync); ``arrow_scale``: the arrows' lengths.
    Threading: use from one stepping thread. Loads and params may be edited from elsewhere."""

    signal_manager: SignalManager | None = None
    loads: list[Load] = field(default_factory=list)
    proximities: list[Proximity] = field(default_factory=list)
    video_recorders: list[Any] = field(default_factory=list)
    playback_speed: float = 1.0
    params: list[NamedValue] = field(default_factory=list)
    monitors: list[SignalManager] = field(default_factory=list)
    on_load_error: Callable[[Load, BaseException], None] | None = None
    native_springs: bool = True
    compiled_laws: bool = True
    controls: list[Control] = field(default_factory=list)
    bindings: list[ModelBinding] = field(default_factory=list)
    tracers: list[Tracer] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    on_warning: Callable[[str], None] | None = None
    sync_hook: SyncHook | None = None
    arrow_scale: ArrowScale = field(default_factory=ArrowScale)
    frame_signals: list[FrameSignal] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._resolved = False
        # the model compile_rig made, and each load's helper tendon with what it was made for (points_key)
        self._compiled: tuple[mujoco.MjModel, dict[str, tuple[int, tuple[str, ...]]]] | None = None
        self._engine: LoadEngine | None = None
        self._extras: RigExtras | None = None
        self._plan: StepPlan | None = None
        self._source = ""  # the model file, for snapshots' messages
        self._bound: tuple[mujoco.MjModel, mujoco.MjData] | None = None
        self._sampling: list[SignalManager] = []  # the samplers bound at the last resolve
        self._several = False
        self._pacer = Pacer(speed=self.playback_speed)
        self._distances = np.zeros(0)
        self._param_values = np.zeros(0)
        self._modes_of: tuple = ()  # (start state, param values) the mode metrics were worked out at
        self._param_list: list[NamedValue] = []
        self._due: list[SignalManager] = []
        self._vdue: list[Any] = []
        self._r0: dict[str, tuple[tuple[str, ...], float]] = {}
        self._prepare_loads: Callable[[], None] = lambda: None
        self._checks: RequirementSet | None = None
        # what the metrics start from at resolve (MetricLog.seed): the replaced rig's log, the plots' kept rows
        self.carried: tuple[MetricLog | None, Callable] = (None, lambda signal: (np.empty(0), np.empty(0)))
        self._closed = False

    # --- model -------------------------------------------------------------------------------
    def load_model(
        self, source: str | os.PathLike | mujoco.MjSpec, *, skip_unknown: bool = False
    ) -> tuple[mujoco.MjModel, mujoco.MjData]:
        """Compile ``source`` (MJCF path, .mjb path or MjSpec) with the rig; returns (model, data).

        Point-to-point loads get hidden helper tendons so they are evaluated array-wise.
        ``skip_unknown``: a load naming something the model lacks gets no tendon instead of an
        error (the caller checks every name against the model next, reporting it at its field).
        """
        if isinstance(source, mujoco.MjSpec):
            spec = source
        elif Path(source).suffix.lower() == ".mjb":
            model = load_model_file(source)
            data = mujoco.MjData(model)
            self._compiled = None
            return model, data
        else:
            spec = load_spec(source)
            self._source = str(source)
        model, layout = compile_rig(spec, self.loads, skip_unknown=skip_unknown)
        self._compiled = (
            model,
            {ld.name: (layout.tendon_of[ld.name], ld.points_key()) for ld in self.loads if ld.name in layout.tendon_of},
        )
        data = mujoco.MjData(model)
        self._resolved = False
        return model, data

    def resolve(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Check every name against the model (ConfigError naming an unknown one), take initial
        distances, build the sampling plan. Once after loading (``step`` does it when needed)."""
        mujoco.mj_forward(mj_model, mj_data)
        names = [ld.name for ld in self.loads]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ConfigError(f"duplicate load name '{sorted(dup)[0]}'")
        if self._engine is not None:
            self._engine.detach()
        tendon_of: dict[str, int] = {}
        if self._compiled is not None and self._compiled[0] is mj_model:
            helpers = self._compiled[1]
            tendon_of = {
                ld.name: helpers[ld.name][0]
                for ld in self.loads
                if ld.name in helpers and helpers[ld.name][1] == ld.points_key()
            }
        self._engine = LoadEngine(
            mj_model,
            mj_data,
            self.loads,
            tendon_of=tendon_of,
            on_load_error=self.on_load_error,
            native=self.native_springs,
            compiled=self.compiled_laws,
        )
        for ld in self.loads:  # an unchanged load keeps the initial distance it was resolved with
            kept = self._r0.get(ld.name)
            if kept is not None and kept[0] == ld.points_key() and isinstance(ld, PointToPointForce):
                ld.keep_r0(kept[1], mj_data)
                self._engine.invalidate()
        self._r0 = {ld.name: (ld.points_key(), ld.r0) for ld in self.loads if isinstance(ld, PointToPointForce)}
        if self._extras is not None:
            self._extras.detach()
        self._extras = RigExtras(
            mj_model,
            mj_data,
            loads=self.loads,
            controls=self.controls,
            bindings=self.bindings,
            tracers=self.tracers,
            on_warning=self.on_warning or logging.getLogger("mjrig").warning,
        )
        self._extras.hook(self._engine.before_step, self._engine.after_step)
        for p in self.proximities:
            p.resolve(mj_model, mj_data)
        self._distances = np.full(len(self.proximities), np.nan)
        seen: dict[str, NamedValue] = {}
        for nv in [
            *self.params,
            *(p for ld in self.loads for p in ld.params()),
            *(p for c in self.controls for p in c.params()),
            *(b.param for b in self.bindings),
        ]:
            seen.setdefault(nv.name, nv)
        for nv in self._param_list:
            nv.unsubscribe(self._param_changed)
        self._param_list = list(seen.values())
        self._param_values = np.array([nv.value for nv in self._param_list], dtype=float)
        for nv in self._param_list:
            nv.subscribe(self._param_changed)
        prepare, load_sources = self._engine.telemetry_sources()
        self._prepare_loads = prepare or (lambda: None)
        before = self._before_sample if (prepare is not None or self.proximities) else None
        extra: list = [x if isinstance(x, Derived) else ("loads", *x) for x in load_sources]
        extra.append(
            (
                "proximities",
                self._distances,
                [(f"Proximities/{p.name}:distance", i, "m") for i, p in enumerate(self.proximities)],
            )
        )
        extra.append(
            (
                "params",
                self._param_values,
                [(f"Params/{nv.name}:value", i, nv.unit) for i, nv in enumerate(self._param_list)],
            )
        )
        extra += frame_sources(self.frame_signals, mj_model, mj_data, extra)
        carried = self._checks.metrics if self._checks is not None else self.carried[0]  # the run so far
        self._checks = (
            RequirementSet(
                self.requirements,
                mj_model,
                mj_data,
                extra=extra,
                metrics=self.metrics,
                prepare={"loads": prepare, "proximities": before},
            )
            if self.requirements or self.metrics
            else None
        )
        if self._checks is not None:
            extra.append(self._checks.source)
            self._checks.metrics.seed(carried, self.carried[1])
        for sm in self._samplers():
            sm.bind(mj_model, mj_data, extra=extra, before_sample=before)
        self._sources = extra
        self._bound = (mj_model, mj_data)
        self._sampling = self._samplers()
        self._several = len(self._sampling) > 1
        self._plan = StepPlan(self._engine, self._checks, tuple(self._sampling), self.video_recorders, self._extras)
        self._resolved = True

    def inherit_layout(self, other: RuntimeManager) -> None:
        """Take over ``other``'s compiled layout and initial distances (unchanged loads keep both)."""
        self._compiled = other._compiled
        self._r0 = dict(other._r0)

    def detach(self) -> None:
        """Stop listening to loads and params (the manager is being replaced); nothing is closed."""
        if self._engine is not None:
            self._engine.detach()
        if self._extras is not None:
            self._extras.detach()
        for nv in self._param_list:
            nv.unsubscribe(self._param_changed)

    def _resolved_on(self) -> tuple[mujoco.MjModel, mujoco.MjData]:
        """The (model, data) of the last resolve; RuntimeError before any."""
        if self._bound is None:
            raise RuntimeError("the rig is not resolved on a model yet (resolve or step first)")
        return self._bound

    def _samplers(self) -> list[SignalManager]:
        out = list(self.monitors)
        if self.signal_manager is not None:
            out.insert(0, self.signal_manager)
        return out

    def set_recorder(self, sm: SignalManager | None) -> SignalManager | None:
        """Swap the recording SignalManager (None stops recording); returns the previous one,
        which the caller closes. The new one is bound at the next step."""
        old, self.signal_manager = self.signal_manager, sm
        self._resolved = False
        return old

    def _param_changed(self, nv: NamedValue) -> None:
        for i, p in enumerate(self._param_list):
            if p is nv:
                self._param_values[i] = nv.value

    def _before_sample(self) -> None:
        eng = self._engine
        if eng is not None:
            self._prepare_loads()
            for i, p in enumerate(self.proximities):
                self._distances[i] = p.measure(eng.model, eng.data) if p.active else np.nan

    # --- editing -----------------------------------------------------------------------------
    def add_load(self, load: Load) -> None:
        """Attach a load; it acts from the next step (and gets its own telemetry columns)."""
        if any(ld.name == load.name for ld in self.loads):
            raise ConfigError(f"a load named '{load.name}' already exists")
        self.loads.append(load)
        self._resolved = False

    # --- stepping ----------------------------------------------------------------------------
    @property
    def engine(self) -> LoadEngine | None:
        """The engine of the last resolve (loads' outputs live there)."""
        return self._engine

    def step(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Apply loads, record telemetry and video frames that are due, advance one timestep, pace.
        DivergenceError when the physics blows up (recorded rows stay safe)."""
        bound = self._bound
        if not self._resolved or bound is None or bound[0] is not mj_model or bound[1] is not mj_data:
            self.resolve(mj_model, mj_data)
        speed = self.playback_speed
        if speed > 0:
            self._pacer.speed = speed
            self._pacer.start(mj_data.time)
        hook: Callable[[], object] | None = None
        if self.video_recorders:
            t = mj_data.time
            self._due = [sm for sm in self._sampling if sm.due(t)]
            self._vdue = [r for r in self.video_recorders if getattr(r, "due", None) is None or r.due(t)]
            if self._due or self._vdue:
                hook = self._capture
        elif self._sampling:  # the common case, without the lists: one recorder or live monitor
            t = mj_data.time
            due = (
                [sm for sm in self._sampling if sm.due(t)]
                if self._several
                else (self._sampling if self._sampling[0].due(t) else [])
            )
            if due:
                self._due, self._vdue = due, []
                hook = self._capture
        if self._checks is not None and hook is None:  # requirements: every step (with rows: in _capture, first)
            hook = self._checks.evaluate
        engine = self._engine
        assert engine is not None  # made by resolve, which ran above when needed
        step_with_loads(engine, before_integrate=hook)
        if self.sync_hook is not None:
            arrows, lines = self.visuals(mj_model, mj_data)
            self.sync_hook(mj_model, mj_data, arrows, lines)
        if speed > 0:
            self._pacer.wait(mj_data.time)

    def _capture(self) -> None:
        eng = self._engine
        assert eng is not None  # a hook of ``step``, after resolve made the engine
        prepared = self._checks.evaluate() if self._checks is not None else False
        for sm in self._due:
            sm.sample(eng.data, prepared=prepared)
            prepared = True
        if self._vdue:
            arrows, lines = self.visuals(eng.model, eng.data)
            net = (
                self.net_force_arrows(eng.model, eng.data)
                if any(getattr(r, "show_net_force", False) for r in self._vdue)
                else None
            )
            more = {"arrow_scale": self.arrow_scale, **({} if net is None else {"net_forces": net})}
            for rec in self._vdue:
                rec.capture_frame(
                    mj_model=eng.model, mj_data=eng.data, custom_arrows=arrows, custom_lines=lines, **more
                )

    @property
    def stop_requested(self) -> bool:
        """A requirement with ``stop_on`` was decided at the last step: a headless run ends here."""
        return self._checks is not None and self._checks.stop

    def metric_entries(self) -> dict[str, dict[str, Any]]:
        """Each metric over the run so far by name: value (None for NaN), unit, signal, kind; the
        mode metrics of the rig linearised at the run's start (once a start and params)."""
        checks = self._checks
        if checks is None:
            return {}
        self._work_out_modes()
        return checks.metrics.entries(checks.units)

    def _work_out_modes(self) -> None:
        """The mode metrics' values, when the run's start or the params changed since."""
        checks = self._checks
        if checks is not None and checks.metrics.modal and checks.start is not None:
            from mjrig.runtime.modes import mode_metrics

            key = (checks.start.tobytes(), self._param_values.tobytes())
            if key != self._modes_of:
                checks.metrics.fixed = mode_metrics(self, *self._resolved_on(), checks.start, checks.metrics.modal)
                self._modes_of = key

    plan = property(
        lambda self: self._plan,
        doc="What the rig does between steps (a StepPlan: ``between_steps``), "
        "as of the last resolve; None before the first.",
    )

    def probe(self, names: list[str]) -> SignalProbe:
        """A ``SignalProbe`` reading columns ``names`` of the resolved rig at the current state
        (its outputs brought up to date first); KeyError(name) for a column it does not have."""
        return SignalProbe(*self._resolved_on(), names, extra=self._sources, prepare={"loads": self._prepare_loads})

    def signal_units(self) -> dict[str, str]:
        """Every telemetry column the resolved rig has (every signal group), with its SI unit."""
        return column_units(*self._resolved_on(), self._sources)

    checks = property(
        lambda self: self._checks,
        doc="The requirements and metrics (a RequirementSet: its metric "
        "log ``metrics``, ``value_units()``); None: the rig has neither.",
    )

    def finish_requirements(self) -> list[Requirement]:
        """Decide every requirement at the run's end (now: windows still open end here); returns
        ``requirements`` with their final state (``Requirement.entry()`` gives a report line)."""
        self._work_out_modes()
        return self._checks.finish() if self._checks is not None else list(self.requirements)

    # --- snapshots ---------------------------------------------------------------------------
    def snapshot(self, mj_data: mujoco.MjData) -> PhysicsState:
        """The run's whole state on ``mj_data`` (physics, the rig's own, the model's identity)."""
        model = self._model_of(mj_data)
        return take_snapshot(model, mj_data, rig=self._extras.state() if self._extras else {}, source=self._source)

    def rig_state(self) -> dict[str, float]:
        """The rig's own part of a snapshot, cheaply (empty for most rigs): for a history ring."""
        return self._extras.state() if self._extras is not None and self._extras.pins else {}

    def restore(self, mj_data: mujoco.MjData, snap: PhysicsState) -> None:
        """Put ``snap`` into ``mj_data``: stepping on repeats the run it was taken from bit for
        bit. ConfigError (one line) when it belongs to another model."""
        model = self._model_of(mj_data)
        put_snapshot(model, mj_data, snap)
        mujoco.mj_forward(model, mj_data)
        if self._extras is not None:
            self._extras.set_state(snap.rig)

    def _model_of(self, mj_data: mujoco.MjData) -> mujoco.MjModel:
        if self._bound is None or self._bound[1] is not mj_data:
            raise ConfigError("this MjData is not the rig's: step or resolve it with this manager first")
        return self._bound[0]

    # --- lifetime ----------------------------------------------------------------------------
    def save_recordings(self) -> None:
        """Finish every video recorder."""
        for rec in self.video_recorders:
            rec.save()

    def close(self) -> None:
        """Flush telemetry into a valid Parquet file and finish videos; safe twice."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.signal_manager is not None:
                self.signal_manager.close()
        finally:
            if self.video_recorders:
                self.save_recordings()
            if self._engine is not None:
                self._engine.detach()

    def __enter__(self) -> RuntimeManager:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close()
