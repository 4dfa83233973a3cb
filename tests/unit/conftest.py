"""Shared fixtures of the unit tests: helpers for the closed-form physics tests of the GUI-free core, and an app session.

``build(rm, xml, path)`` compiles an inline MJCF string through the rig (``rm.load_model``:
point-to-point loads get hidden helpers, tendons under the implicit integrators; "native": MuJoCo
evaluates the springs it can as tendon spring-dampers where there are tendons, "array": every
spring on mjrig's array path) or by hand (``spec.compile()``:
every load takes the general per-load path).

``open_session(path)`` opens a scenario in a new app ``Session`` working in the test's tmp_path
(the session tests' ``session`` fixtures).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np
import polars as pl
import pytest

from mjrig.runtime import RuntimeManager

if TYPE_CHECKING:
    from mjrig.session.kernel import Session

PATHS = ("native", "array", "self")
"""The ways a model reaches the engine: rig-compiled (native tendon springs, or every spring on
the array path) or self-compiled (per-load path)."""

INTEGRATORS = {
    "Euler": mujoco.mjtIntegrator.mjINT_EULER,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
    "RK4": mujoco.mjtIntegrator.mjINT_RK4,
}


def build_model(
    rm: RuntimeManager, xml: str, path: str, *, integrator: str | None = None
) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Compile ``xml`` the way ``path`` says (see PATHS); optionally force an integrator."""
    spec = mujoco.MjSpec.from_string(xml)
    if integrator is not None:  # compiled for it: the rig's helpers depend on it (``rigmodel``)
        spec.option.integrator = INTEGRATORS[integrator]
    if path in ("native", "array"):
        rm.native_springs = path == "native"
        model, data = rm.load_model(spec)
    elif path == "self":
        model = spec.compile()
        data = mujoco.MjData(model)
    else:  # pragma: no cover - a typo in a parametrization
        raise ValueError(path)
    return model, data


def run_until(
    rm: RuntimeManager, model: mujoco.MjModel, data: mujoco.MjData, t_end: float, each: Callable[[], None] | None = None
) -> None:
    """Step until simulated time reaches ``t_end`` (s), calling ``each()`` after every step."""
    eps = 0.5 * model.opt.timestep
    while data.time < t_end - eps:
        rm.step(model, data)
        if each is not None:
            each()


def rig_qfrc(data: mujoco.MjData) -> np.ndarray:
    """The generalized force of the rig's loads (N or N·m per dof) in the last step: what mjrig
    applied plus its native tendon springs and dampers (the test models have none of their own)."""
    return data.qfrc_applied + data.qfrc_spring + data.qfrc_damper


def wrench_of(rm: RuntimeManager, name: str) -> np.ndarray:
    """Last world-frame (fx, fy, fz, tx, ty, tz) of load ``name`` on its `at` point."""
    eng = rm.engine
    assert eng is not None
    eng.update_outputs()
    i = [ld.name for ld in eng.loads].index(name)
    return eng.wrench[i].copy()


def read_parquet(path: Path) -> pl.DataFrame:
    assert path.is_file(), f"no recording at {path}"
    return pl.read_parquet(path)


class Rig:
    """The helpers above, handed to tests as the ``rig`` fixture (no conftest imports needed)."""

    build = staticmethod(build_model)
    run = staticmethod(run_until)
    wrench = staticmethod(wrench_of)
    qfrc = staticmethod(rig_qfrc)
    read = staticmethod(read_parquet)


@pytest.fixture
def rig() -> type[Rig]:
    return Rig


@pytest.fixture
def open_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Session]:
    """Opens a scenario, model or recording in a new ``Session``, as the app does, with the
    test's ``tmp_path`` as the current folder (what the session writes lands there, never in the
    source tree). Closing the session is up to the test."""
    from mjrig.session.kernel import Session

    monkeypatch.chdir(tmp_path)

    def open_(path: Path) -> Session:
        s = Session()
        s.open(path)
        return s

    return open_


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> str:
    """Both compile paths: 'rig' (load_model) and 'self' (spec.compile + rm.step)."""
    return request.param
