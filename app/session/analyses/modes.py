"""The rig's modes in the app: worked out on demand, one animated in the 3D view.

``ComputeModes`` linearises the rig as it is now (the document as edited, the params' values, the
run's state -- a paused or scrubbed instant of the timeline; ``at``: instead the state a run from
the start reaches at that time; ``equilibrium``: where it comes to rest from there) the way
``mjrig modes`` does (``mjrig.linear.analysis.analyse``), on a background job with a rig of its
own, so the run and the view go on meanwhile; with ``bode`` also several signals' responses to
an input (``mjrig bode``).

``ShowMode`` pauses the run and animates an oscillatory mode: at every frame of the 3D view
(``draws_in_view``, a ``Feature`` hook) it puts the
joints at the linearisation state plus the mode's shape times a swing that goes back and forth
(``SWING`` rad for a rotation, a tenth of the model's size for a translation, times the chosen
amplitude), at the mode's own frequency up to ``SHOWN_HZ`` and at ``SHOWN_HZ`` above it;
``undraws_in_view`` puts the run's state back once the frame is drawn, so the state a step, a
snapshot or a scrub sees is always the run's own. Play (or anything that steps) ends the
animation. GUI-free; simulation thread only (the job's thread touches its own rig alone).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from mjrig import commands as C
from mjrig.bench_state import NO_MODES, BodeCurve, ModeRow
from mjrig.runtime.errors import ConfigError, one_line
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler, feature
from mjrig.session.jobs import BackgroundJobs, Job

__all__ = ["RigModes", "SWING", "SHOWN_HZ"]

SWING = 0.35
"""rad: a rotation's swing at amplitude 1 (a translation's: a tenth of the model's extent)."""
SHOWN_HZ = 1.0
"""Hz: a faster mode is shown at this rate (its shape is what the eye follows)."""
_STATE = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
_KEEP = int(mujoco.mjtState.mjSTATE_INTEGRATION)


@dataclass
class _ModesOfRig:
    """What the Modes feature holds of one opened rig (in its ``RigScope``)."""

    part: C.ModesPart = NO_MODES
    found: list[Any] = field(default_factory=list)  # the oscillatory Modes (with their dofs), as the rows list them
    q0: np.ndarray | None = None  # the linearisation's joint positions
    model: mujoco.MjModel | None = None  # the model they were worked out on
    job: Job | None = None  # the modes job under way, if any
    reads: int = 0  # the model's readings (reloads) and cancels: a result of an older one is stale


@feature
class RigModes(Feature):
    """The Modes section's state: the modes last worked out, and the one animated."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.jobs: BackgroundJobs = BackgroundJobs()
        self._kept: np.ndarray | None = None  # the run's state while a frame shows the mode
        self._t0 = 0.0

    @property
    def _here(self) -> _ModesOfRig:
        """This feature's state in the rig shown now (dropped whole when another rig opens)."""
        return self.ctx.scope().state(self, _ModesOfRig)

    @property
    def part(self) -> C.ModesPart:
        """The Modes section of the rig shown: its modes, responses, the one animated."""
        return self._here.part

    @part.setter
    def part(self, value: C.ModesPart) -> None:
        self._here.part = value

    def handlers(self) -> dict[type[C.Command], Handler]:
        return {C.ComputeModes: self.compute, C.ShowMode: self.show}

    def model_changed(self) -> None:
        """A reload: the modes and the response stay listed, marked stale; none can be shown (its
        shape is of the old model's joints)."""
        here = self._here
        here.reads += 1
        here.found, here.q0, here.model = [], None, None
        if self.part.modes or self.part.bode:
            self.part = dataclasses.replace(self.part, stale=True, shown=None)

    def publish(self) -> C.ModesPart:
        self.jobs.finish()
        here = self._here
        if here.part.running and here.job is not None and here.job.cancel.is_set():  # the panel stops waiting now
            here.part = dataclasses.replace(here.part, running=False)
            here.reads += 1  # what the abandoned job brings later is not taken
            self.ctx.log("info", "modes: cancelled")
        return self.part

    def close(self) -> None:
        self.jobs.join()

    # --- working them out ----------------------------------------------------------------------
    def compute(self, cmd: C.ComputeModes) -> None:
        s = self.ctx
        if self.part.running:
            raise ConfigError("modes are being worked out: wait for them")
        rig = s.rig()
        assert rig is not None
        m, d = rig.model, rig.data
        state = np.empty(mujoco.mj_stateSize(m, _STATE))
        mujoco.mj_getState(m, d, state, _STATE)
        sc = s.document.scenario(copy.deepcopy(s.document.doc))
        for nv in rig.runtime.params:  # the sliders' values now
            if nv.name in sc.params:
                sc.params[nv.name].value = nv.value
        inputs, outputs = ((cmd.bode[0],), tuple(cmd.bode[1])) if cmd.bode else ((), ())
        here, scope = self._here, s.scope()
        reads = here.reads

        ctrl = {m.actuator(i).name: float(d.ctrl[i]) for i in range(m.nu)}  # the inputs now
        now = float(d.time)

        def work() -> Any:
            from mjrig.linear.analysis import analyse, responses
            from mjrig.runtime.analysis.inputs import as_param

            if cmd.bode and cmd.bode[0] not in sc.params:  # a load's magnitude, an actuator's input
                as_param(sc, cmd.bode[0], time=now, ctrl=lambda a: ctrl.get(a, 0.0))
            an = analyse(
                sc,
                equilibrium=cmd.equilibrium,
                settle=cmd.settle,
                trim=cmd.trim,
                inputs=inputs,
                outputs=outputs,
                state=state if cmd.at is None else None,
                at=cmd.at,
                where_input="Bode input",
                where_output="Bode output",
            )
            return an, (responses(an, sc, where="Bode input") if cmd.bode else None)

        def done(result: Any, error: BaseException | None) -> None:
            if not scope.current:  # another rig opened meanwhile: one line, nothing on the new rig's panels
                s.log(
                    "info", f"modes of {scope.source or 'the rig before'} were worked out after it was closed: not kept"
                )
                return
            if reads != here.reads:  # the model was read again (or the job was cancelled) meanwhile
                here.part = dataclasses.replace(here.part, running=False)
                s.log("info", "modes worked out on the model as it was before were not kept: work them out again")
                return
            if error is not None:  # what was listed before stays (a failed response takes no modes away)
                self.part = dataclasses.replace(self.part, running=False, error=one_line(str(error)))
                s.log("error", f"modes: {one_line(str(error))}")
                return
            from mjrig.linear.analysis import solved_text

            an, doc = result
            rows = tuple(
                ModeRow(
                    x.kind,
                    x.frequency_hz,
                    x.undamped_frequency_hz,
                    x.damping_ratio,
                    x.time_constant_s,
                    tuple(sorted(x.shape.items(), key=lambda kv: -abs(kv[1]))),
                )
                for x in an.modes
            )
            curves = (
                (() if self.part.stale else self.part.bode)  # modes alone: the last responses stay, if current
                if doc is None
                else tuple(
                    BodeCurve(
                        one["input"],
                        one["output"],
                        one["unit"],
                        tuple(one["frequency_hz"]),
                        tuple(one["magnitude_db"]),
                        tuple(one["phase_deg"]),
                    )
                    for one in doc.get("responses", [doc])
                )
            )
            here.found = [x for x in an.modes if x.kind == "oscillatory"]
            here.q0, here.model = an.linear.qpos.copy(), m
            here.part = C.ModesPart(
                modes=rows,
                at=an.linear.time,
                equilibrium=an.at_rest,
                bode=curves,
                point=an.point,
                solved=solved_text(an) if an.solved is not None else "",
            )
            osc = len(here.found)
            if an.linear.kinks:
                from mjrig.linear.analysis import kink_text

                s.log("warning", f"modes: {kink_text(an.linear.kinks)}")
            s.log(
                "info",
                f"modes at {an.point}"
                + ("" if an.point.startswith("t = ") else f" (t = {an.linear.time:.4g} s)")
                + f": {osc} oscillatory"
                + (f", the lowest {here.found[0].frequency_hz:.4g} Hz" if osc else "")
                + (
                    f"; response of {', '.join(c.output for c in curves)} to {curves[0].input} worked out"
                    if doc
                    else ""
                ),
            )

        self.part = C.ModesPart(
            running=True, modes=self.part.modes, at=self.part.at, bode=self.part.bode, stale=self.part.stale
        )
        s.log("info", "working out the rig's modes ...")
        here.job = Job("a frequency response" if cmd.bode else "modes")
        self.jobs.start("mjrig-modes", work, done, job=here.job)

    # --- showing one ---------------------------------------------------------------------------
    def show(self, cmd: C.ShowMode) -> None:
        if cmd.index is not None and self.part.stale:
            raise ConfigError("these modes were worked out before the model changed: work them out again")
        if cmd.index is not None and not 0 <= cmd.index < len(self._here.found):
            raise ConfigError(f"no oscillatory mode {cmd.index + 1}: work the modes out first")
        if cmd.index is not None and self.part.shown is None:
            self.ctx.run.pause()
            self._t0 = time.monotonic()
        self.part = dataclasses.replace(
            self.part, shown=cmd.index, amplitude=max(0.0, cmd.amplitude), arrows=cmd.arrows
        )

    @property
    def hides_rig(self) -> bool:
        """Whether the frame shown now leaves the rig's arrows out."""
        return self._kept is not None and not self.part.arrows

    def draws_in_view(self, model: mujoco.MjModel, data: mujoco.MjData) -> bool:
        """Put the joints where the animated mode has them now (the run's state kept for
        ``undraws_in_view``); False when no mode is shown (or the run plays: the animation ends)."""
        k = self.part.shown
        if k is None:
            return False
        here = self._here
        # here.model checked for None first: ``model is here.model`` then narrows it to a model
        if self.ctx.run.state == C.RunState.RUNNING or here.model is None or model is not here.model or here.q0 is None:
            here.part = dataclasses.replace(here.part, shown=None)
            return False
        mode = here.found[k]
        self._kept = np.empty(mujoco.mj_stateSize(model, _KEEP))
        mujoco.mj_getState(model, data, self._kept, _KEEP)
        f = min(mode.frequency_hz, SHOWN_HZ)
        swing = self.part.amplitude * math.sin(2 * math.pi * f * (time.monotonic() - self._t0))
        big = int(np.abs(mode.dofs).argmax())
        j = int(model.dof_jntid[big])
        moves = int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_SLIDE) or (
            int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE) and big - int(model.jnt_dofadr[j]) < 3
        )
        scale = 0.1 * float(model.stat.extent) if moves else SWING
        data.qpos[:] = here.q0
        mujoco.mj_integratePos(model, data.qpos, mode.dofs * (scale * swing), 1.0)
        data.qvel[:] = 0.0
        mujoco.mj_forward(model, data)
        return True

    def undraws_in_view(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Put the run's state back after a frame ``draws_in_view`` showed."""
        if self._kept is not None:
            mujoco.mj_setState(model, data, self._kept, _KEEP)
            mujoco.mj_forward(model, data)
            self._kept = None
