"""The rig's drawing: each load's arrow, each proximity's and tracer's line, the net force on
each body. ``RuntimeManager.drawing`` is one, over the rig's loads, proximities and arrow scale
(``DrawnRig``: the manager is one) and the parts of its step plan it is attached to: the engine
(the loads' outputs) and the extras (the tracers' trails).

Threading: read on the thread that steps the rig or holds its lock (the viewer's sync)."""

from __future__ import annotations

from typing import Protocol

import mujoco

from mjrig.runtime.drawing.visuals import ArrowConfig, ArrowScale, Line, draw_all, net_force_arrows
from mjrig.runtime.forces.engine import LoadEngine
from mjrig.runtime.forces.loads import Load
from mjrig.runtime.forces.proximity import Proximity
from mjrig.runtime.rig_extras import RigExtras

__all__ = ["DrawnRig", "RigDrawing"]


class DrawnRig(Protocol):
    """What the drawing reads of the rig as it is edited: its loads, proximities and arrow scale."""

    loads: list[Load]
    proximities: list[Proximity]
    arrow_scale: ArrowScale


class RigDrawing:
    """The drawing of ``rig`` at the state of the data it is asked about."""

    def __init__(self, rig: DrawnRig) -> None:
        self._rig = rig
        self._engine: LoadEngine | None = None
        self._extras: RigExtras | None = None

    def attach(self, *, engine: LoadEngine, extras: RigExtras) -> None:
        """Draw with the parts of the step plan just built: ``engine`` (the loads' outputs) and
        ``extras`` (the tracers' trails)."""
        self._engine, self._extras = engine, extras

    @property
    def arrow_scale(self) -> ArrowScale:
        """The arrows' lengths (m per N, m per N·m, or automatic)."""
        return self._rig.arrow_scale

    def visuals(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[list[ArrowConfig], list[Line]]:
        """Arrows of every active load and lines of every active proximity and tracer, at the
        current state."""
        arrows: list[ArrowConfig] = []
        for ld in self._current_loads():
            arrows.extend(ld.get_visuals(mj_model, mj_data))
        lines: list[Line] = []
        for p in self._rig.proximities:
            if p.active:
                p.measure(mj_model, mj_data)
                ln = p.get_visuals(mj_model, mj_data)
                if ln is not None:
                    lines.append(ln)
        if self._extras is not None:
            lines.extend(self._extras.lines())
        return arrows, lines

    def load_forces(self) -> dict[str, tuple[float, float, float]]:
        """Each load's world-frame force on its ``at`` point at the current state (N), by name."""
        return {
            ld.name: (float(ld.last_force[0]), float(ld.last_force[1]), float(ld.last_force[2]))
            for ld in self._current_loads()
        }

    def load_readouts(self) -> dict[str, tuple[tuple[float, str], ...]]:
        """Each load's ``Load.readout()`` (magnitude, unit) pairs at the current state, by name."""
        return {ld.name: ld.readout() for ld in self._current_loads()}

    def net_force_arrows(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> list[ArrowConfig]:
        """One arrow per loaded body: the sum of the rig's forces on it (N), at its centre of mass."""
        return net_force_arrows(self._current_loads(), mj_model, mj_data)

    def _current_loads(self) -> list[Load]:
        """The loads, with the engine's outputs (forces, lengths) brought up to the current state."""
        if self._engine is not None:
            self._engine.update_outputs()
        return self._rig.loads

    def draw(self, scene: mujoco.MjvScene, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> int:
        """Append the rig's arrows and lines to ``scene`` (never past maxgeom); returns the count."""
        arrows, lines = self.visuals(mj_model, mj_data)
        return draw_all(mj_model, scene, arrows, lines, scale=self.arrow_scale)
