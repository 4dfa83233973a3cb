"""RuntimeManager: one rig (loads, proximities, params, telemetry, video) driving one model.

Typical use::

    rm = RuntimeManager(loads=[...], signal_manager=SignalManager("out.parquet"), playback_speed=0)
    model, data = rm.load_model("models/spring_mass.xml")   # compiles the rig's fast path in
    with rm:
        while data.time < 5.0:
            rm.step(model, data)
A model compiled elsewhere works too (its point-to-point loads take the per-load path).

The manager keeps what the user edits (the rig's lists), the compiled model's layout, the
recorder and videos, snapshots and the lifetime; its ``plan`` (``StepPlan``, built at each
resolve) does the step."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from mjrig.runtime.analysis.metric_log import MetricLog
from mjrig.runtime.analysis.metrics import Metric
from mjrig.runtime.analysis.requirements import Requirement, RequirementSet
from mjrig.runtime.controls import Control
from mjrig.runtime.drawing.frame_sinks import FrameSink, SyncHook, VideoSink, ViewerSync
from mjrig.runtime.drawing.tracers import Tracer
from mjrig.runtime.drawing.visuals import ArrowScale
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.engine import LoadEngine
from mjrig.runtime.forces.loads import Load, PointToPointForce
from mjrig.runtime.forces.proximity import Proximity
from mjrig.runtime.model_fields import ModelBinding
from mjrig.runtime.pacing import Pacer
from mjrig.runtime.rig_drawing import RigDrawing
from mjrig.runtime.rigmodel import CompiledRig, compile_rig, load_model_file, load_spec
from mjrig.runtime.step_plan import StepPlan
from mjrig.runtime.telemetry.frame_signals import FrameSignal
from mjrig.runtime.telemetry.signal_probe import SignalProbe
from mjrig.runtime.telemetry.signals import SignalManager
from mjrig.runtime.telemetry.snapshots import PhysicsState, put_snapshot, take_snapshot
from mjrig.runtime.values import NamedValue

if TYPE_CHECKING:  # a video is started by its caller; the manager only takes its frames
    from mjrig.runtime.drawing.video import VideoRecorder

__all__ = ["RuntimeManager", "SyncHook", "load_model_file"]


@dataclass(eq=False)
class RuntimeManager:
    """Applies loads, measures proximities, records telemetry and video, paces playback.

    ``playback_speed``: the real-time factor ``step`` paces to at first (1.0: real time; 0 or less: as fast as
    possible); ``pacer.speed`` changes it later.
    ``params``: extra NamedValues to record besides the loads'. ``monitors``: extra SignalManagers sampled like
    ``signal_manager`` (e.g. a file-less one feeding live plots). ``native_springs``: MuJoCo evaluates the springs
    it computes exactly (ideal springs; tension-/compression-only springs without damping) as tendon
    spring-dampers, with no Python per step, where the model has rig tendons (the implicit integrators,
    ``rigmodel``; False: mjrig's array path, same forces, left out of MuJoCo's energy).
    ``compiled_laws``: every other law runs in the compiled passive-force callback (``native_table``) when all
    of them can (False: the Python path, their reference).
    ``on_load_error(load, exc)`` is told about a load that raised (it is disabled and the run goes on; unset: the
    error propagates). ``controls`` hold actuator inputs, ``bindings`` write params into model fields, ``tracers``
    draw trails (``rig_extras``); ``requirements`` are checked and ``metrics`` logged at every step
    (``stop_requested``, ``finish_requirements``, ``metric_entries``); ``frame_signals`` record in other frames;
    ``on_warning(text)`` receives warnings (default: the ``mjrig`` logger); ``sync_hook(model, data, arrows,
    lines)`` gets the rig's drawing after every step (a viewer's sync); ``arrow_scale``: the arrows' lengths;
    ``video_recorders``: the videos it starts with (``add_video``/``remove_video`` later).
    Threading: use from one stepping thread. Loads and params may be edited from elsewhere."""

    signal_manager: SignalManager | None = None
    loads: list[Load] = field(default_factory=list)
    proximities: list[Proximity] = field(default_factory=list)
    video_recorders: list[VideoRecorder] = field(default_factory=list)
    playback_speed: InitVar[float] = 1.0  # the speed ``pacer`` starts with (then ``pacer.speed``: its one owner)
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

    def __post_init__(self, playback_speed: float) -> None:
        self.pacer = Pacer(speed=playback_speed)  # the rig's pacing: its speed is set there alone
        self._resolved = False
        self._compiled: CompiledRig | None = None  # the model compile_rig made, with its helpers
        self._plan: StepPlan | None = None
        self._source = ""  # the model file, for snapshots' messages
        self._r0: dict[str, tuple[tuple[str, ...], float]] = {}
        self.drawing = RigDrawing(self)
        # what the metrics start from at resolve (MetricLog.seed): the replaced rig's log, the plots' kept rows
        self.carried: tuple[MetricLog | None, Callable[[str], tuple[np.ndarray, np.ndarray]]] = (
            None,
            lambda signal: (np.empty(0), np.empty(0)),
        )
        self._closed = False

    # --- model -------------------------------------------------------------------------------
    def load_model(
        self, source: str | os.PathLike | mujoco.MjSpec, *, skip_unknown: bool = False
    ) -> tuple[mujoco.MjModel, mujoco.MjData]:
        """Compile ``source`` (MJCF path, .mjb path or MjSpec) with the rig; returns (model, data).

        Point-to-point loads get hidden helpers (``rigmodel``) so they are evaluated array-wise.
        ``skip_unknown``: a load naming something the model lacks gets no helper instead of an
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
        self._compiled = CompiledRig.of(model, layout, self.loads)
        data = mujoco.MjData(model)
        self._resolved = False
        return model, data

    def resolve(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Check every name against the model (ConfigError naming an unknown one), take initial
        distances, build the step plan. Once after loading (``step`` does it when needed)."""
        old = self._plan
        if old is not None:
            old.detach()
        helper_of = {} if self._compiled is None else self._compiled.helpers_of(mj_model, self.loads)
        carried = old.checks.metrics if old is not None and old.checks is not None else self.carried[0]
        plan = StepPlan.build(
            self,
            mj_model,
            mj_data,
            helper_of=helper_of,
            sinks=self._sinks(),
            pacer=self.pacer,
            drawing=self.drawing,
            carried=carried,
        )
        for ld in self.loads:  # an unchanged load keeps the initial distance it was resolved with
            kept = self._r0.get(ld.name)
            if kept is not None and kept[0] == ld.points_key() and isinstance(ld, PointToPointForce):
                ld.keep_r0(kept[1], mj_data)
                plan.engine.invalidate()
        self._r0 = {ld.name: (ld.points_key(), ld.r0) for ld in self.loads if isinstance(ld, PointToPointForce)}
        self._plan = plan
        self._resolved = True

    def _sinks(self) -> list[FrameSink]:
        hook = [] if self.sync_hook is None else [ViewerSync(self.sync_hook)]
        return [*(VideoSink(r) for r in self.video_recorders), *hook]

    def inherit_layout(self, other: RuntimeManager) -> None:
        """Take over ``other``'s compiled layout and initial distances (unchanged loads keep both)."""
        self._compiled = other._compiled
        self._r0 = dict(other._r0)

    def detach(self) -> None:
        """Stop listening to loads and params (the manager is being replaced); nothing is closed."""
        if self._plan is not None:
            self._plan.detach()

    def _resolved_plan(self) -> StepPlan:
        """The plan of the last resolve; RuntimeError before any."""
        if self._plan is None:
            raise RuntimeError("the rig is not resolved on a model yet (resolve or step first)")
        return self._plan

    # --- editing -----------------------------------------------------------------------------
    def add_load(self, load: Load) -> None:
        """Attach a load; it acts from the next step (and gets its own telemetry columns)."""
        if any(ld.name == load.name for ld in self.loads):
            raise ConfigError(f"a load named '{load.name}' already exists")
        self.loads.append(load)
        self._resolved = False

    def set_recorder(self, sm: SignalManager | None) -> SignalManager | None:
        """Swap the recording SignalManager (None stops recording); returns the previous one,
        which the caller closes. The new one is bound at the next step."""
        old, self.signal_manager = self.signal_manager, sm
        self._resolved = False
        return old

    def add_video(self, recorder: VideoRecorder) -> None:
        """Record a video (a ``VideoRecorder``) from the next step on."""
        self.video_recorders.append(recorder)
        if self._plan is not None:
            self._plan.set_sinks(self._sinks())

    def remove_video(self, recorder: VideoRecorder) -> None:
        """Stop taking frames for ``recorder`` (the caller saves it); nothing when it is not one."""
        if recorder in self.video_recorders:
            self.video_recorders.remove(recorder)
            if self._plan is not None:
                self._plan.set_sinks(self._sinks())

    # --- stepping ----------------------------------------------------------------------------
    @property
    def plan(self) -> StepPlan | None:
        """What the rig does at each step (a StepPlan), as of the last resolve; None before the first."""
        return self._plan

    @property
    def engine(self) -> LoadEngine | None:
        """The engine of the last resolve (loads' outputs live there)."""
        return None if self._plan is None else self._plan.engine

    @property
    def checks(self) -> RequirementSet | None:
        """The requirements and metrics (a RequirementSet: its metric log ``metrics``,
        ``value_units()``); None: the rig has neither."""
        return None if self._plan is None else self._plan.checks

    def step(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Apply loads, record telemetry and video frames that are due, advance one timestep, pace.
        DivergenceError when the physics blows up (recorded rows stay safe)."""
        plan = self._plan
        if not self._resolved or plan is None or plan.model is not mj_model or plan.data is not mj_data:
            self.resolve(mj_model, mj_data)
            plan = self._plan
            assert plan is not None  # built by resolve
        plan.step()

    @property
    def stop_requested(self) -> bool:
        """A requirement with ``stop_on`` was decided at the last step: a headless run ends here."""
        return self._plan is not None and self._plan.stop_requested

    def metric_entries(self) -> dict[str, dict[str, Any]]:
        """Each metric over the run so far by name (``StepPlan.metric_entries``); empty before a resolve."""
        return {} if self._plan is None else self._plan.metric_entries()

    def finish_requirements(self) -> list[Requirement]:
        """Decide every requirement at the run's end (now: windows still open end here); returns
        ``requirements`` with their final state (``Requirement.entry()`` gives a report line)."""
        return list(self.requirements) if self.checks is None else self._resolved_plan().finish_requirements()

    def probe(self, names: list[str]) -> SignalProbe:
        """A ``SignalProbe`` reading columns ``names`` of the resolved rig (``StepPlan.probe``)."""
        return self._resolved_plan().probe(names)

    def signal_units(self) -> dict[str, str]:
        """Every telemetry column the resolved rig has (every signal group), with its SI unit."""
        return self._resolved_plan().signal_units()

    # --- snapshots ---------------------------------------------------------------------------
    def snapshot(self, mj_data: mujoco.MjData) -> PhysicsState:
        """The run's whole state on ``mj_data`` (physics, the rig's own, the model's identity)."""
        plan = self._plan_of(mj_data)
        return take_snapshot(plan.model, mj_data, rig=plan.extras.state(), source=self._source)

    def rig_state(self) -> dict[str, float]:
        """The rig's own part of a snapshot, cheaply (empty for most rigs): for a history ring."""
        return self._plan.extras.state() if self._plan is not None and self._plan.extras.pins else {}

    def restore(self, mj_data: mujoco.MjData, snap: PhysicsState) -> None:
        """Put ``snap`` into ``mj_data``: stepping on repeats the run it was taken from bit for
        bit. ConfigError (one line) when it belongs to another model."""
        plan = self._plan_of(mj_data)
        put_snapshot(plan.model, mj_data, snap)
        mujoco.mj_forward(plan.model, mj_data)
        plan.extras.set_state(snap.rig)

    def _plan_of(self, mj_data: mujoco.MjData) -> StepPlan:
        if self._plan is None or self._plan.data is not mj_data:
            raise ConfigError("this MjData is not the rig's: step or resolve it with this manager first")
        return self._plan

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
            if self._plan is not None:
                self._plan.engine.detach()

    def __enter__(self) -> RuntimeManager:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close()
