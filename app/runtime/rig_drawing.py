"""The rig's drawing: each load's arrow, each proximity's and tracer's line, the net force on
each body (``RuntimeManager`` has it as a mixin, over its loads, proximities and engine)."""

from __future__ import annotations

import mujoco

from mjrig.runtime.engine import LoadEngine
from mjrig.runtime.loads import Load
from mjrig.runtime.proximity import Proximity
from mjrig.runtime.rig_extras import RigExtras
from mjrig.runtime.visuals import ArrowConfig, ArrowScale, LineConfig, draw_all, net_force_arrows

__all__ = ["RigDrawing"]


class RigDrawing:
    """Drawing over ``loads``, ``proximities``, ``arrow_scale``, ``_engine`` and ``_extras``."""

    loads: list[Load]
    proximities: list[Proximity]
    arrow_scale: ArrowScale
    _engine: LoadEngine | None
    _extras: RigExtras | None

    def visuals(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[list[ArrowConfig], list[LineConfig]]:
        """Arrows of every active load and lines of every active proximity, at the current state."""
        arrows: list[ArrowConfig] = []
        for ld in self._current_loads():
            arrows.extend(ld.get_visuals(mj_model, mj_data))
        lines = []
        for p in self.proximities:
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
        return self.loads

    def draw(self, scene: mujoco.MjvScene, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> int:
        """Append the rig's arrows and lines to ``scene`` (never past maxgeom); returns the count."""
        arrows, lines = self.visuals(mj_model, mj_data)
        return draw_all(mj_model, scene, arrows, lines, scale=self.arrow_scale)
