"""Bounds on what input may ask: a count a scenario or a flag gives (trials, samples, starts, a
population) or a duration that cannot finish is refused before any work starts, with one line
naming the estimate (CONTRACT 14, "Bounds on what input may ask").

The estimate is the rig's own: ``step_seconds`` times a few steps of it here (wall seconds a
step), and ``check_work`` multiplies by the steps a unit of work takes and the units asked, over
the workers. GUI-free; any thread.
"""

from __future__ import annotations

import math
import os
import time

import mujoco

from mjrig.runtime.errors import ConfigError

__all__ = ["MAX_DAYS", "step_seconds", "check_work", "check_memory", "human_duration", "available_bytes"]

MAX_DAYS = 30.0
"""Days of wall time past which work is refused as work that cannot finish (a month of a machine)."""
PROBE_STEPS = 20
"""Steps of the rig timed for its cost (a few milliseconds for most rigs)."""


def step_seconds(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """Wall seconds one ``mj_step`` of ``model`` takes here (the fastest of a few steps, on a copy
    of ``data``: the rig's state is untouched); at least 1 µs."""
    probe = mujoco.MjData(model)
    mujoco.mj_copyData(probe, model, data)
    best = math.inf
    for _ in range(PROBE_STEPS):
        t0 = time.perf_counter()
        mujoco.mj_step(model, probe)
        best = min(best, time.perf_counter() - t0)
    return max(best, 1e-6)


def human_duration(seconds: float) -> str:
    """``seconds`` of wall time as a person says it: "45 s", "12 min", "3 h 20 min", "2.1 days",
    "3e+07 years"."""
    if not math.isfinite(seconds):
        return "for ever"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        h, m = divmod(int(round(seconds / 60)), 60)
        return f"{h} h {m} min" if m else f"{h} h"
    days = seconds / 86400
    if days < 730:
        return f"{days:.1f} days"
    return f"{days / 365.25:.3g} years"


def check_work(*, what: str, count: int | float, each_s: float, workers: int = 1, where: str) -> None:
    """Refuse (ConfigError, one line naming ``where`` and the estimate) ``count`` units of work
    of ``each_s`` wall seconds each on ``workers`` workers when they would take more than
    ``MAX_DAYS``; a count that is not a finite whole number >= 0 is refused too."""
    if not (isinstance(count, int) or (isinstance(count, float) and math.isfinite(count))) or count < 0:
        raise ConfigError(f"{where}: {what} must be a finite count, got {count!r}")
    wall = count * max(each_s, 1e-9) / max(1, workers)
    if wall > MAX_DAYS * 86400:
        most = int(MAX_DAYS * 86400 * max(1, workers) / max(each_s, 1e-9))
        raise ConfigError(
            f"{where}: {count:,} {what} of about {each_s:.3g} s each would take about "
            f"{human_duration(wall)} on {workers} worker{'s' if workers != 1 else ''}; at most about {most:,} "
            f"finish in {MAX_DAYS:g} days here"
        )


def available_bytes() -> int:
    """Memory a process may still take here (bytes): MemAvailable, else the machine's memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2**63


def check_memory(*, what: str, nbytes: float, where: str) -> None:
    """Refuse (ConfigError, one line) work whose ``what`` would hold ``nbytes`` bytes at once,
    more than half the memory free here."""
    free = available_bytes()
    if nbytes > free / 2:
        raise ConfigError(
            f"{where}: {what} would need about {nbytes / 1e9:,.3g} GB of memory at once; "
            f"{free / 1e9:,.3g} GB is free here"
        )
