"""The parts of a step: each kind of work a rig does between MuJoCo's steps, named once.

A ``StepPlan`` holds a tuple of ``Part``s and its step runs exactly that tuple: each part's
``before`` ahead of the physics (in the tuple's order), its ``at_start`` at the step's start state
(between ``mj_step1`` and ``mj_step2``, when ``due``), its ``after`` once the step is taken; the
``loads`` part is MuJoCo's physics with the rig's Python loads applied. What a plan lists
(``StepPlan.between_steps``) is the parts' ``work`` names, so a part left out of the tuple is
neither listed nor done, and an empty tuple is what lets ``mjrig run`` step blocks of plain
``mj_step``.

Threading: built and run on the stepping thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple, Protocol

import mujoco

from mjrig.runtime.analysis.requirements import RequirementSet
from mjrig.runtime.drawing.frame_sinks import Drawing, FrameSink
from mjrig.runtime.pacing import Pacer
from mjrig.runtime.telemetry.signals import SignalManager

__all__ = ["WORK", "Part", "Work", "checks_part", "frames_part", "samples_part", "sync_part", "pacing_part"]

Work = Literal[
    "loads",
    "requirements",
    "metrics",
    "recording",
    "video",
    "model fields",
    "actuator inputs",
    "pin reactions",
    "tracers",
    "viewer",
    "pacing",
]
"""Each kind of work between steps, by the name a plan lists it under."""

WORK: dict[Work, str] = {
    "loads": "loads MuJoCo does not compute itself",
    "requirements": "requirements",
    "metrics": "metrics",
    "recording": "a recording or live plots",
    "video": "a video",
    "model fields": "params written into model fields",
    "actuator inputs": "actuator inputs",
    "pin reactions": "joint friction from pin reactions",
    "tracers": "tracers",
    "viewer": "the 3D view",
    "pacing": "real-time pacing",
}
"""Each kind of work between steps, as a sentence names it (a lock-step sweep's refusal)."""


class StartWork(Protocol):
    """What a part does at the step's start state: whether it has work at the step starting at
    ``sim_time`` (s), and the work (``prepared``: the rig's outputs are up to date at this state;
    returns whether they are after it)."""

    def due(self, sim_time: float) -> bool: ...

    def run(self, prepared: bool) -> bool: ...


class Part(NamedTuple):
    """One kind of work between steps (``work``) and where in the step it runs: ``before`` the
    physics, ``at_start`` at the step's start state when due, ``after`` the step (None: nothing
    there). The ``loads`` part has none of the three: the physics applies the Python loads when
    the tuple has it."""

    work: Work
    before: Callable[[], None] | None = None
    at_start: StartWork | None = None
    after: Callable[[], None] | None = None


class _Always:
    """Start work at every step: the requirements and metrics (``RequirementSet.evaluate``)."""

    def __init__(self, checks: RequirementSet) -> None:
        self.checks = checks

    def due(self, sim_time: float) -> bool:
        return True

    def run(self, prepared: bool) -> bool:
        return self.checks.evaluate() or prepared


def checks_part(checks: RequirementSet) -> Part:
    """The requirements and the metrics, evaluated together at every step's start (one read of
    their signals): listed as ``requirements`` when the rig has any, else as ``metrics``."""
    return Part("requirements" if checks.items else "metrics", at_start=_Always(checks))


class _Samples:
    """The recorder's and live monitors' rows that are due, sampled at the step's start."""

    def __init__(self, samplers: Sequence[SignalManager], data: mujoco.MjData) -> None:
        self.samplers, self.data = tuple(samplers), data
        self._now: Sequence[SignalManager] = ()

    def due(self, sim_time: float) -> bool:
        s = self.samplers
        self._now = (s if s[0].due(sim_time) else ()) if len(s) == 1 else [sm for sm in s if sm.due(sim_time)]
        return bool(self._now)

    def run(self, prepared: bool) -> bool:
        for sm in self._now:
            sm.sample(self.data, prepared=prepared)
            prepared = True
        return prepared


def samples_part(samplers: Sequence[SignalManager], data: mujoco.MjData) -> Part:
    """Rows of every sampler (recorder first) at the steps each is due."""
    return Part("recording", at_start=_Samples(samplers, data))


class _Frames:
    """Video frames that are due, taken at the step's start with the rig's drawing."""

    def __init__(self, sinks: Sequence[FrameSink], model: mujoco.MjModel, data: mujoco.MjData, drawing: Drawing):
        self.sinks, self.model, self.data, self.drawing = tuple(sinks), model, data, drawing
        self._now: list[FrameSink] = []

    def due(self, sim_time: float) -> bool:
        self._now = [s for s in self.sinks if s.due(sim_time)]
        return bool(self._now)

    def run(self, prepared: bool) -> bool:
        for sink in self._now:
            sink.take(self.model, self.data, self.drawing)
        return prepared


def frames_part(sinks: Sequence[FrameSink], model: mujoco.MjModel, data: mujoco.MjData, drawing: Drawing) -> Part:
    """The videos' frames (sinks taken with the samples) at the steps each is due."""
    return Part("video", at_start=_Frames(sinks, model, data, drawing))


def sync_part(sinks: Sequence[FrameSink], model: mujoco.MjModel, data: mujoco.MjData, drawing: Drawing) -> Part:
    """The sinks taken after every step (a viewer's sync)."""

    def after() -> None:
        for sink in sinks:
            sink.take(model, data, drawing)

    return Part("viewer", after=after)


def pacing_part(pacer: Pacer, data: mujoco.MjData) -> Part:
    """Wall-clock pacing: the step's start noted before the physics, the wait after it."""
    return Part("pacing", before=lambda: pacer.start(data.time), after=lambda: pacer.wait(data.time))
