"""Shared by the sweep tests (core and e2e): a spring-mass sweep scenario and a real local Ray head.

The rig is the bundled spring-mass (a 1 kg block on a slide joint, an ideal spring to a fixed
site, here undamped), so a trial's period is 2π√(m/k).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SPRING_MASS_XML = REPO / "models" / "spring_mass.xml"

K_PARAM = 'k = { value = 200.0, min = 0.0, max = 5000.0, unit = "N/m" }'
"""The spring's stiffness param ``k`` (N/m) as most spring-mass scenarios declare it."""
C_PARAM = "c = { value = 0.0, min = 0.0, max = 50.0 }"
"""A damping param ``c`` (N·s/m) that starts undamped."""
MASS_PARAM = 'mass = { value = 1.0, min = 0.1, max = 5.0, unit = "kg", model = "body:block.mass" }'
"""The block's mass (kg) as a param written into the model."""

MAIN_SPRING = {
    "name": "main_spring",
    "kind": "ideal_spring",
    "at": "tip",
    "to": "base",
    "stiffness": "k",
    "damping": "c",
    "rest_length": 0.25,
}
"""The spring-mass's spring as a scenario document's load: from the block's ``tip`` to the fixed
``base``, the param ``k`` its stiffness (N/m), the param ``c`` its damping (N·s/m), 0.25 m long at
rest."""


def spring_mass(
    *, duration: float, params: Sequence[str], timestep: float | None = None, damping: str | None = None
) -> str:
    """The head of a scenario of the bundled spring-mass rig (``models/spring_mass.xml``, by its
    absolute path), in this order: the model; a [simulation] of ``duration`` s (and ``timestep`` s,
    if given); a [params] table of the TOML lines ``params``; the load ``main_spring``, an ideal
    spring from the block's ``tip`` to the fixed ``base`` with the param ``k`` as its stiffness
    (N/m), a rest length of 0.25 m and, if given, the TOML value ``damping`` (N·s/m: a number or a
    param's name in quotes). Ends with a newline; a test appends its own tables."""
    timestep_line = f"timestep = {timestep}\n" if timestep is not None else ""
    params_lines = "".join(f"{line}\n" for line in params)
    load = {key: json.dumps(value) for key, value in MAIN_SPRING.items()} | {"damping": damping}
    load_lines = "".join(f"{key} = {value}\n" for key, value in load.items() if value is not None)
    return f"""model = "{SPRING_MASS_XML}"

[simulation]
duration = {duration}
{timestep_line}
[params]
{params_lines}
[[loads]]
{load_lines}"""


BASE = (
    spring_mass(duration=1.0, timestep=0.001, params=(K_PARAM, C_PARAM, MASS_PARAM), damping='"c"')
    + """
[[requirements]]
name = "travel"
signal = "Joints/slide_x:qpos"
min = -0.15
"""
)
"""An undamped spring-mass sweep's rig: 1 s at 1 ms, params k, c and mass, and a requirement
that the block's travel stays above -0.15 m."""

RECORDING = """
[recording]
path = "unused.parquet"
signals = ["joints", "params"]
"""


def write_scenario(folder: Path, sweep: str, *, record: bool = False, name: str = "sweep.toml") -> Path:
    """A spring-mass scenario with the ``[sweep]`` text ``sweep`` (and a [recording] if asked)."""
    path = folder / name
    path.write_text(BASE + (RECORDING if record else "") + "\n" + sweep, encoding="utf-8")
    return path


def done_trials(parts: Path, *, which: bool = False):
    """How many trials (``which``: which ones) an unfinished sweep's parts folder holds."""
    try:
        lines = (parts / "trials.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    except FileNotFoundError:
        lines = []
    trials = [json.loads(ln)["trial"] for ln in lines if ln.endswith("\n")]
    return trials if which else len(trials)


def ray_env() -> dict[str, str]:
    """Ray on loopback only, no usage statistics (FIELD-NOTES: Ray)."""
    return {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


@contextlib.contextmanager
def ray_head() -> Iterator[str]:
    """A real Ray head on this machine (2 CPUs, loopback, its own temp dir); yields its address.

    Skips (pytest) when Ray is not installed: ``pip install 'mjrig[ray]'``."""
    import pytest

    pytest.importorskip("ray", reason="Ray is not installed (pip install 'mjrig[ray]')")
    exe = Path(sys.executable).with_name("ray")
    if not exe.exists():
        pytest.skip("no `ray` command beside this Python")
    # One head at a time on this machine: `ray stop --force` ends every Ray process, so tests on
    # parallel workers (pytest-xdist) take turns.
    with open(Path(tempfile.gettempdir()) / "mjrig-tests-ray.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield from _ray_head(exe)


def _ray_head(exe: Path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="mjr-ray-", dir="/tmp")  # short: Ray's socket paths have a length limit
    env = {**os.environ, **ray_env()}
    start = [
        str(exe),
        "start",
        "--head",
        "--num-cpus",
        "2",
        "--port",
        str(port),
        "--node-ip-address",
        "127.0.0.1",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    proc = subprocess.run(start, env=env, capture_output=True, text=True, timeout=180)
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([str(exe), "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def bundled_spring_mass(folder: Path, tail: str, *, duration: float, model: str | None = None) -> Path:
    """``folder/rig.toml``: the bundled ``spring_mass.toml`` (its proximity left out) with the
    model at ``model`` (default: the bundled XML's absolute path), runs of ``duration`` s, and the
    TOML text ``tail`` (metrics, requirements, [optimize]...) appended."""
    models = Path(SPRING_MASS_XML).parent
    src = (models / "spring_mass.toml").read_text(encoding="utf-8").split("[[proximities]]")[0]
    path = folder / "rig.toml"
    path.write_text(
        src.replace('model = "spring_mass.xml"', f'model = "{model or SPRING_MASS_XML}"').replace(
            "duration = 5.0", f"duration = {duration}"
        )
        + tail,
        encoding="utf-8",
    )
    return path
