"""What a resolved rig does between MuJoCo's steps, answered in one place.

``RuntimeManager.resolve`` builds a ``StepPlan``: the engine (its loads), the requirements and
metrics, the samplers (recorder, live monitors), the videos and the rig's step hooks (actuator
inputs, model fields, pin reactions, tracers). ``between_steps`` names every piece of Python
work a step of the rig needs now; ``mjrig run`` steps in blocks of plain ``mj_step`` when there
is none, and a lock-step sweep (``mujoco.batch``, which takes no Python) refuses a rig with work
it cannot do itself. A new per-step feature joins the plan here, so no caller misses it.

Threading: built and read on the stepping thread (its answers follow edits made since: a load
changed, a param bound to a model field moved).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mjrig.runtime.engine import LoadEngine
from mjrig.runtime.requirements import RequirementSet
from mjrig.runtime.rig_extras import RigExtras
from mjrig.runtime.signals import SignalManager

__all__ = ["StepPlan", "WORK"]

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


@dataclass(frozen=True)
class StepPlan:
    """A resolved rig's per-step parts (references: the objects go on changing state)."""

    engine: LoadEngine
    checks: RequirementSet | None
    samplers: tuple[SignalManager, ...]  # sampled between steps (recorder first)
    videos: Sequence[Any]  # the manager's list of VideoRecorders (added to after a resolve)
    extras: RigExtras | None

    def between_steps(self, *, pacing: bool = False, viewer: bool = False) -> tuple[str, ...]:
        """The work (``WORK`` keys) that runs in Python between this rig's steps now; empty: a
        step is a plain ``mj_step``. ``pacing``/``viewer``: whether the caller paces the run to
        real time or draws it."""
        eng, checks, extras = self.engine, self.checks, self.extras
        work = []
        if eng.python or eng.dirty:
            work.append("loads")
        hooked = extras is not None and bool(extras.controls or extras.bindings or extras.pins or extras.tracers)
        if (eng.before_step or eng.after_step) and not hooked:
            work.append("step hooks")
        if checks is not None and checks.items:
            work.append("requirements")
        if checks is not None and checks.metrics.metrics:
            work.append("metrics")
        if self.samplers:
            work.append("recording")
        if self.videos:
            work.append("video")
        if extras is not None:
            if extras.controls is not None:
                work.append("actuator inputs")
            if extras.bindings is not None and extras.bindings.dirty:
                work.append("model fields")
            if extras.pins:
                work.append("pin reactions")
            if extras.tracers:
                work.append("tracers")
        if pacing:
            work.append("pacing")
        if viewer:
            work.append("viewer")
        return tuple(work)
