"""MuJoCo's process-wide passive-force callback, shared safely by rigs stepped on several threads.

``mjcb_passive`` is one pointer for the whole process. A rig whose loads are evaluated in Python
under RK4 needs them at every stage of the step, so it has MuJoCo call back into Python; swapping
the pointer around each step from two threads (the simulation and a modes job, two trials) sent
a rig's force calls to the other's loads and could leave a dead closure installed (measured: 1,381
and 1,623 of ~160,000 calls went astray).

Here one Python router stands in for the pointer while any such step runs. It finds the rig by the
``MjData`` MuJoCo hands it (the bindings pass the caller's own object), calls that rig's loads, and
hands any other simulation to what was installed before (the compiled laws' callback, a user's,
or nothing). The last step to leave puts that back. The compiled laws install their callback
through ``install`` too, so a rig built meanwhile does not unseat the router.

Threading: ``routed`` and ``install`` may be called from any thread (one lock); the router runs
on whichever thread steps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import mujoco

__all__ = ["routed", "install", "installed"]

_lock = threading.Lock()
_routes: dict[int, Callable[[], None]] = {}
"""id(MjData) -> the loads of the rig stepping that data now."""
_outer: list[Callable[..., None] | None] = [None]
"""The callback the router stands in for (given back when the last routed step ends)."""


def _call_outer(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    outer = _outer[0]
    if outer is None:
        return
    if hasattr(outer, "argtypes"):  # a C function (ctypes): it takes the structs' addresses
        outer(m._address, d._address)
    else:
        outer(m, d)


def _router(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    route = _routes.get(id(d))
    if route is not None:
        route()
    else:
        _call_outer(m, d)


def installed() -> Callable[..., None] | None:
    """What MuJoCo calls for passive forces when no routed step runs (None: nothing)."""
    with _lock:
        return _outer[0] if _routes else mujoco.get_mjcb_passive()


def install(callback: Callable[..., None] | None) -> None:
    """Make ``callback`` MuJoCo's passive-force callback for every simulation not in a routed step
    (at once when none runs, else when the last one ends)."""
    with _lock:
        if _routes:
            _outer[0] = callback
        else:
            mujoco.set_mjcb_passive(callback)


@contextmanager
def routed(data: mujoco.MjData, loads: Callable[[], None]) -> Iterator[None]:
    """While the block runs, MuJoCo's passive-force callback calls ``loads()`` for ``data`` (and
    only for it). ``loads`` must not raise (keep the exception and raise it after the step)."""
    key = id(data)
    with _lock:
        if not _routes:
            _outer[0] = mujoco.get_mjcb_passive()
            mujoco.set_mjcb_passive(_router)
        _routes[key] = loads
    try:
        yield
    finally:
        with _lock:
            _routes.pop(key, None)
            if not _routes:
                mujoco.set_mjcb_passive(_outer[0])
                _outer[0] = None
