"""The session's model reload, actuator sliders, state snapshots, requirement verdicts and metrics.

"Slider" on an actuator adds a param over the actuator's ctrlrange and a ``[[controls]]`` entry
that holds ``data.ctrl`` at it, so the panel's ordinary param slider drives the actuator live
(and both are saved with the scenario). "Snapshot" writes the complete physics state to an
``.npz`` next to the scenario (in ``runs/`` for a bare model or a bundled rig); "Restore" puts
it back, refusing a snapshot of another model with one line. A snapshot belongs to the rig it
was taken of: after another rig is opened there is none until one is taken of it.

Threading: runs on the simulation thread, like the session that owns it.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any

import mujoco

from mjrig import commands as C
from mjrig.panel_state import bound_text
from mjrig.runtime.controls import ctrl_limited
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.paths import check_writable, fresh_path
from mjrig.runtime.points import find_id, is_rig_name
from mjrig.runtime.telemetry.snapshots import load_snapshot, save_snapshot
from mjrig.runtime.telemetry.units import DisplayUnits, read_units
from mjrig.scenario.builder import check_names
from mjrig.scenario.initial import SIZES
from mjrig.scenario.parse import load_scenario
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler

__all__ = ["RigTools", "METRICS_EVERY"]

METRICS_EVERY = 0.25
"""s of wall time between two workings-out of the metrics' live values."""


class RigTools(Feature):
    """Actuator and snapshot commands of one session."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.last_snapshot: Path | None = None
        self._noted: set[tuple[str, float]] = set()  # (requirement, first violation) already told
        self._metrics: tuple[C.MetricInfo, ...] = ()
        self._metrics_at = -math.inf

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this part carries out."""
        return {
            C.Reload: self.reload,
            C.BindActuator: self.bind_actuator,
            C.TakeSnapshot: self.take_snapshot,
            C.RestoreSnapshot: self.restore_snapshot,
            C.UseCurrentAsInitial: self.use_current_as_initial,
            C.SetArrowScale: self.set_arrow_scale,
            C.SetUnits: self.set_units,
        }

    def rig_opened(self) -> None:
        """Another rig was opened: no snapshot of it yet, no requirement failure told yet."""
        self.last_snapshot = None
        self._noted.clear()

    def publish(self) -> C.ToolsPart:
        """Its part of the panel state: actuators, requirement verdicts, metrics, the last snapshot."""
        return C.ToolsPart(
            actuators=self.actuators(),
            requirements=self.requirements(),
            metrics=self.metrics(),
            snapshot_path=str(self.last_snapshot or "") or None,
            force_scale=self.ctx.document.doc.get("view", {}).get("force_scale"),
            shown_units=self.shown_units(),
        )

    def metrics(self) -> tuple[C.MetricInfo, ...]:
        """The rig's metrics over the run so far, worked out at most every ``METRICS_EVERY`` s of
        wall time (each is a pass over every step's values since the last reset)."""
        rm = self.ctx.runtime_or_none
        if rm is None or not rm.metrics:
            return ()
        now = time.monotonic()
        names = tuple(m.name for m in rm.metrics)
        if now - self._metrics_at >= METRICS_EVERY or tuple(x.name for x in self._metrics) != names:
            entries, self._metrics_at = rm.metric_entries(), now
            log = rm.checks.metrics if rm.checks is not None else None
            self._metrics = tuple(
                C.MetricInfo(
                    m.name,
                    m.signal,
                    m.kind,
                    _window(m, log.since(m.name) if log is not None else None),
                    entries.get(m.name, {}).get("value"),
                    entries.get(m.name, {}).get("unit", ""),
                )
                for m in rm.metrics
            )
        return self._metrics

    def reload(self, cmd: C.Reload) -> None:
        """Re-read the model file keeping the rig; loads whose points vanished are dropped, named.
        The scenario file changed on disk (``changed="scenario"``): the rig is read from it, state
        kept, unless the rig has unsaved edits (they are kept, and the log says so)."""
        s, rig = self.ctx, self.ctx.document
        if cmd.changed == "scenario" and rig.source is not None:
            if rig.dirty:
                s.log(
                    "warning",
                    f"{rig.source.name} changed on disk; the rig has unsaved edits, which are kept "
                    "(save them elsewhere, or open the file again to take its version)",
                )
                return
            sc = load_scenario(rig.source)
            s.load(copy.deepcopy(sc.doc), base=rig.source.parent, source=rig.source, reload=True)
            s.log("info", f"{rig.source.name} changed on disk: reloaded, the run goes on")
            return
        try:
            s.load(copy.deepcopy(rig.doc), base=rig.base, source=rig.source, reload=True)
        except ConfigError as exc:
            # A load whose site/body vanished is dropped with a message, not a crash.
            loads = rig.doc.get("loads", [])
            kept = [ld for ld in loads if self._survives(ld)]
            dropped = [ld.get("name") for ld in loads if ld not in kept]
            if not dropped:
                raise
            s.load(dict(copy.deepcopy(rig.doc), loads=kept), base=rig.base, source=rig.source, reload=True)
            s.log("warning", f"reloaded without load(s) {', '.join(map(str, dropped))}: {exc}")
            return
        name = rig.model_path.name if rig.model_path else ""
        s.log("info", f"{name} changed on disk: reloaded, loads kept" if cmd.changed else f"reloaded {name}")

    def _survives(self, load_spec: dict) -> bool:
        """Whether one load still validates against the model file as it is now."""
        try:
            check_names(self.ctx.document.scenario(dict(self.ctx.document.doc, loads=[load_spec])))
            return True
        except ConfigError:
            return False

    # --- requirements ----------------------------------------------------------------------------
    def requirements(self) -> tuple[C.RequirementInfo, ...]:
        """The live state of the rig's requirements; the first violation of each is also noted
        once in the session's events (marked on the plots' time axis) and its log."""
        rm = self.ctx.runtime_or_none
        if rm is None:
            return ()
        out = []
        for r in rm.requirements:
            bounds = (r.min, r.max, r.final, r.tolerance)
            bound = bound_text(bounds)
            t_fail = r.first_violation
            if t_fail is not None and (r.name, t_fail) not in self._noted:
                self._noted.add((r.name, t_fail))
                seen = "" if r.violation_value is None else f" was {r.violation_value:.6g}"
                self.ctx.note_event(
                    t_fail,
                    f"requirement '{r.name}' failed at t={t_fail:.4g} s ({r.signal}{seen}; wanted {bound})",
                    level="error",
                )
            out.append(
                C.RequirementInfo(
                    r.name,
                    r.signal,
                    bound,
                    bool(r.passed),
                    bool(r.decided),
                    r.value,
                    r.limit,
                    t_fail,
                    r.violation_value,
                    bounds=bounds,
                )
            )
        return tuple(out)

    # --- actuators -------------------------------------------------------------------------------
    def bind_actuator(self, cmd: C.BindActuator) -> None:
        s, doc = self.ctx, self.ctx.document
        m, d = s.model, s.data
        a = find_id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, cmd.actuator, kind="actuator", count=m.nu)
        driven = doc.specs("controls").get(cmd.actuator)
        if driven is not None:
            raise ConfigError(f"actuator '{cmd.actuator}' is already driven by {driven.get('value')!r}")
        lo, hi = (float(x) for x in m.actuator_ctrlrange[a]) if ctrl_limited(m, a) else (-1.0, 1.0)
        params = doc.doc.get("params", {})
        name, n = f"{cmd.actuator}_input", 2
        while name in params:
            name, n = f"{cmd.actuator}_input{n}", n + 1
        value = min(max(float(d.ctrl[a]), lo), hi)
        new = doc.with_param(name, value=value, min=lo, max=hi)
        new = doc.with_item("controls", {"actuator": cmd.actuator, "value": name}, replace=False, base=new)
        s.rebuild(new)
        s.log("info", f"actuator '{cmd.actuator}' follows the slider '{name}' ({lo:g} ... {hi:g})")

    def actuators(self) -> tuple[C.ActuatorInfo, ...]:
        """Every actuator of the model (the rig's own left out) with its input and driver."""
        rig = self.ctx.rig()
        if rig is None:
            return ()
        m, d = rig.model, rig.data
        controls = self.ctx.document.specs("controls")
        out = []
        for a in range(m.nu):
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}"
            if is_rig_name(name):
                continue
            spec = controls.get(name)
            rng = (float(m.actuator_ctrlrange[a, 0]), float(m.actuator_ctrlrange[a, 1])) if ctrl_limited(m, a) else None
            out.append(
                C.ActuatorInfo(name, float(d.ctrl[a]), rng, None if spec is None else _describe(spec.get("value")))
            )
        return tuple(out)

    # --- snapshots -------------------------------------------------------------------------------
    def _default_path(self) -> Path:
        doc = self.ctx.document
        source = doc.source
        if source is not None and source.suffix.lower() == ".toml" and not doc.bundled():
            return fresh_path(doc.resolve_path(f"{source.stem}-snapshot.npz"))
        return fresh_path(Path.cwd() / "runs" / f"snapshot-{time.strftime('%Y%m%d-%H%M%S')}.npz")

    def take_snapshot(self, cmd: C.TakeSnapshot) -> None:
        s = self.ctx
        path = Path(cmd.path).expanduser() if cmd.path else self._default_path()
        if path.suffix.lower() != ".npz":
            raise ConfigError(f"snapshot path {path}: must end in .npz")
        check_writable(path, "snapshot path")
        snap = s.runtime.snapshot(s.data)
        self.last_snapshot = save_snapshot(path, snap)
        s.log("info", f"snapshot of t = {snap.time:.4f} s saved to {self.last_snapshot}")

    def restore_snapshot(self, cmd: C.RestoreSnapshot) -> None:
        s = self.ctx
        path = Path(cmd.path).expanduser() if cmd.path else self.last_snapshot
        if path is None:  # nothing went wrong: there is just nothing to put back yet
            s.log("info", "no snapshot of this rig to restore yet: take one first (Snapshot, Ctrl+B)")
            return
        snap = load_snapshot(path, model=s.model)
        s.runtime.restore(s.data, snap)
        s.run.reset()  # out of an error state; pacing starts from here
        self.last_snapshot = Path(path)
        s.log("info", f"restored t = {snap.time:.4f} s from {path}")

    # --- the start state -------------------------------------------------------------------------
    def use_current_as_initial(self, cmd: C.UseCurrentAsInitial) -> None:
        """``[initial]`` from every named joint's position and velocity now; Reset returns here."""
        s = self.ctx
        m, d = s.model, s.data
        qpos: dict[str, Any] = {}
        qvel: dict[str, Any] = {}
        for j in range(m.njnt):
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
            if not name or is_rig_name(name):
                continue
            npos, nvel = SIZES[int(m.jnt_type[j])]
            pa, va = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
            pos, vel = d.qpos[pa : pa + npos].tolist(), d.qvel[va : va + nvel].tolist()
            qpos[name], qvel[name] = (pos[0] if npos == 1 else pos), (vel[0] if nvel == 1 else vel)
        if not qpos:
            s.log("warning", "the model has no named joint: nothing to start from by name")
            return
        doc = copy.deepcopy(s.document.doc)
        doc["initial"] = {"qpos": qpos, "qvel": qvel}
        s.rebuild(doc)
        rig = s.rig()
        if rig is not None:  # as a run of the saved scenario starts: here, at t = 0
            rig.initial = s.runtime.snapshot(s.data)
            if rig.initial.spec & int(mujoco.mjtState.mjSTATE_TIME):
                rig.initial.state[0] = 0.0
        s.log(
            "info",
            f"the state at t = {d.time:.4f} s is the rig's [initial] now ({len(qpos)} joints): "
            "Reset returns here; save the scenario to keep it",
        )

    def set_arrow_scale(self, cmd: C.SetArrowScale) -> None:
        """``[view]`` force_scale (and torque_scale five times it), or neither: automatic."""
        s = self.ctx
        if cmd.force is not None and not (math.isfinite(cmd.force) and cmd.force > 0):
            raise ConfigError(f"arrow scale must be a positive number of m per N, got {cmd.force:g}")
        doc = copy.deepcopy(s.document.doc)
        view = {k: v for k, v in doc.pop("view", {}).items() if k not in ("force_scale", "torque_scale")}
        if cmd.force is not None:
            view.update(force_scale=cmd.force, torque_scale=5 * cmd.force)
        if view:
            doc["view"] = view
        s.rebuild(doc)
        s.log(
            "info",
            "arrows: automatic (the largest a quarter of the model)"
            if cmd.force is None
            else f"arrows: {cmd.force:g} m per N, {5 * cmd.force:g} m per N·m",
        )

    def shown_units(self) -> DisplayUnits:
        """The rig's ``[units]`` (SI for a quantity it leaves out, or a table it cannot read)."""
        try:
            return read_units(self.ctx.document.doc.get("units", {}), lambda key, msg: ValueError(msg))
        except ValueError:
            return DisplayUnits()

    def set_units(self, cmd: C.SetUnits) -> None:
        """``[units]`` with ``cmd.quantity`` shown in ``cmd.unit`` (a quantity back in SI leaves the table)."""
        s = self.ctx
        try:
            units = self.shown_units().choose(cmd.quantity, cmd.unit)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        doc = copy.deepcopy(s.document.doc)
        doc.pop("units", None)
        if units.table():
            doc["units"] = units.table()
        s.document.scenario(doc)  # valid as a scenario; the rig itself is unchanged (no rebuild:
        s.document.edited(doc)  # the loads keep their outputs, a paused run shows the same values)
        s.log(
            "info",
            f"{cmd.quantity} shown in {cmd.unit} (plots, sliders, tables, reports and exports; "
            "files stay SI): save the scenario to keep it",
        )


def _describe(value: Any) -> str:
    """How a control's value reads in the panel: a number, a param's name or the profile kind."""
    if isinstance(value, dict):
        return f"{value.get('profile', 'profile')} profile"
    return str(value)


def _window(m: Any, since: float | None) -> str:
    """A metric's window as the Metrics table shows it: ``start..end s``, or from the first value
    known when that is more than 10 ms later (a metric added while the run went on, over what the
    plots kept: "2.350..end s (kept)"; a run's first step or plot row is within 10 ms of 0)."""
    end = "end" if m.end is None else f"{m.end:g}"
    if since is not None and since > m.start + 0.01 and (m.end is None or since < m.end):
        return f"{since:.3f}..{end} s (kept)"
    return f"{m.start:g}..{end} s"
