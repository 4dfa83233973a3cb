"""The wheel installs ONE import package, ``mjrig`` (README, "Set-up"), and runs from anywhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import polars as pl
import pytest

from tests.e2e.e2e_util import REPO, mjrig, python

pytestmark = pytest.mark.slow  # builds a wheel, installs it, and resolves a clean install


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of the sources to build from: setuptools leaves a build/ folder beside what it
    builds, and tests never write into the source tree."""
    src = tmp_path_factory.mktemp("src") / "mjrig"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".venv", "artifacts", ".hypothesis", ".pytest_cache"
        ),
    )
    return src


def pip(*args: str, timeout: float) -> subprocess.CompletedProcess:
    """``python -m pip ARGS`` with this interpreter's pip, its output captured."""
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, source) -> Path:
    out = tmp_path_factory.mktemp("dist")
    src = source
    proc = pip("wheel", "--no-deps", "-q", "-w", str(out), str(src), timeout=600)
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob("mjrig-*.whl")
    return found


def test_wheel_has_one_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist()}
        names = set(zf.namelist())
    assert {t for t in tops if not t.endswith((".dist-info", ".data"))} == {"mjrig"}
    # the folders of the repository are mapped under it, with their data files
    assert {
        "mjrig/cli/__init__.py",
        "mjrig/runtime/manager.py",
        "mjrig/widgets/kit/forms.py",
        "mjrig/models/spring_mass.toml",
        "mjrig/models/spring_mass.xml",
        "mjrig/assets/DejaVuSans.ttf",
    } <= names


def test_installed_wheel_runs_a_bundled_rig_in_an_empty_folder(wheel, tmp_path):
    target = tmp_path / "site"
    proc = pip("install", "--no-deps", "-q", "--target", str(target), str(wheel), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in target.iterdir() if not p.name.endswith(".dist-info") and p.name != "bin"} == {"mjrig"}
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)  # ahead of any other mjrig on this machine
    where = python("-c", "import mjrig, mjrig.models; print(mjrig.__file__)", cwd=work, env=env, timeout=60)
    assert where.rc == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(target)
    run = mjrig("run", "spring_mass", "--duration", "0.2", cwd=work, env=env, timeout=300)
    assert run.rc == 0, run.stderr
    written = sorted(p.relative_to(work) for p in work.rglob("*.parquet"))
    assert written, f"nothing written under {work}"
    assert pl.read_parquet(work / written[0]).height > 0
    assert not list((target / "mjrig").rglob("*.parquet")), "outputs written inside the installed package"


def test_a_clean_install_gets_a_mujoco_with_correct_physics(wheel):
    """``pip install mjrig`` where nothing is installed yet (pip's resolver on the wheel's
    dependencies, from the index, ignoring what this machine has) brings MuJoCo as it ships:
    the `mujoco` metapackage 4.0.1 or newer, whose pin of mujoco-core is 4.0.1 or newer too (4.0.0's
    had the sparse-Cholesky bug). Resolved, not installed: the installed wheel runs a bundled rig
    above."""
    report = wheel.parent / "report.json"
    proc = pip("install", "--dry-run", "--ignore-installed", "-q", "--report", str(report), str(wheel), timeout=600)
    assert proc.returncode == 0, proc.stderr
    chosen = json.loads(report.read_text(encoding="utf-8"))["install"]
    versions = {p["metadata"]["name"].lower(): p["metadata"]["version"] for p in chosen}
    for name in ("mujoco", "mujoco-core"):
        assert tuple(int(x) for x in versions[name].split(".")[:3]) >= (4, 0, 1), versions
    assert {"numpy", "polars", "pyarrow", "dearpygui", "glfw", "mediapy"} <= set(versions), versions
