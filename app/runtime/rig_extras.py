"""The rig's work at step boundaries besides the loads: actuator inputs, params bound to model
fields, the loads pin frictions carry, and tracer samples.

``RigExtras`` is built at every resolve; the step plan makes its work parts of the step
(``step_parts``): model-field writes, then ``data.ctrl``, before the physics reads them (in every
integrator); after the step, one ``mj_rnePostConstraint`` for the pins' reactions and the
tracers' samples. Nothing runs when the rig has none of these.

Threading: stepping thread only (params flag their bindings from anywhere).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mujoco

from mjrig.runtime.controls import Control, ControlSet
from mjrig.runtime.drawing.tracers import Tracer
from mjrig.runtime.drawing.visuals import Trail
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.forces.joint_loads import JointFriction, update_pin_reactions
from mjrig.runtime.forces.load_base import Load
from mjrig.runtime.model_fields import BindingSet, ModelBinding

__all__ = ["RigExtras"]

_PIN = "pin_load:"
"""Key prefix of a pin friction's carried load (N) in a snapshot's rig state."""


class RigExtras:
    """Controls, model-field bindings, pin reactions and tracers of one rig on (model, data)."""

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        *,
        loads: Sequence[Load],
        controls: Sequence[Control] = (),
        bindings: Sequence[ModelBinding] = (),
        tracers: Sequence[Tracer] = (),
        on_warning: Callable[[str], None],
    ) -> None:
        self.model, self.data = model, data
        self.bindings = BindingSet(model, list(bindings)) if bindings else None
        self.controls = ControlSet(model, list(controls), on_warning=on_warning) if controls else None
        self.pins = [ld for ld in loads if isinstance(ld, JointFriction) and ld.uses_pin]
        self.tracers = list(tracers)
        names = [t.name for t in self.tracers]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ConfigError(f"duplicate tracer name '{dup[0]}'")
        for t in self.tracers:
            t.point.get_id(model)
        if self.bindings is not None:
            self.bindings.apply()
            mujoco.mj_forward(model, data)  # masses, gravity... may have changed
        if self.controls is not None:
            self.controls.apply(data)
        self.refresh_pins()

    def detach(self) -> None:
        """Stop listening to params (the rig is being replaced)."""
        if self.bindings is not None:
            self.bindings.detach()

    def write_inputs(self) -> None:
        """What a step writes before its physics: changed model fields, then every control's
        input (what linearisation and a lock-step batch write too)."""
        self.write_fields()
        self.hold_inputs()

    def write_fields(self) -> None:
        """Write the params bound to model fields that changed since the last write."""
        if self.bindings is not None:
            self.bindings.apply()

    def hold_inputs(self) -> None:
        """Write every control's input into ``data.ctrl`` (held, or its profile at this time)."""
        if self.controls is not None:
            self.controls.apply(self.data)

    def sample_tracers(self) -> None:
        """Each active tracer's point at the step just taken (its kinematics describe the step's start)."""
        m, d = self.model, self.data
        t = d.time - m.opt.timestep
        for tr in self.tracers:
            if tr.active:
                tr.sample(m, d, time=t)

    def refresh_pins(self) -> None:
        """The pins' loads at the current state (needs current kinematics and forces: after
        ``mj_forward``, or after a step, whose kinematics and forces are of its start)."""
        update_pin_reactions(self.model, self.data, self.pins)

    def lines(self) -> list[Trail]:
        """Every active tracer's fading trail."""
        trails = (tr.trail() for tr in self.tracers)
        return [t for t in trails if t is not None]

    def state(self) -> dict[str, float]:
        """The rig's own state for a snapshot."""
        return {_PIN + ld.name: ld.pin_load for ld in self.pins}

    def set_state(self, rig: dict[str, float]) -> None:
        """Put a snapshot's rig state back (loads it does not name are recomputed); tracers restart."""
        self.refresh_pins()
        for ld in self.pins:
            if _PIN + ld.name in rig:
                ld.pin_load = rig[_PIN + ld.name]
        for tr in self.tracers:
            tr.clear()
