"""``mjrig linearise``, and ``mjrig modes`` and ``mjrig bode`` at several operating points and
pairs, as a user runs them: the README's example (a ``.mat`` read by ``scipy.io.loadmat`` and
turned into a python-control ``ss`` whose step response is drawn), the ``.npz`` and ``.json``
forms with a second operating point and the step's own model, one JSON entry per ``--at``, and a
Bode of two inputs and two outputs (four panels). Each command is one process of 1-2 s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from e2e_util import mjrig, python

REPO = Path(__file__).resolve().parents[2]
K, M, C, STRETCH = 200.0, 1.0, 1.0, 0.1
"""The bundled spring_mass: its spring (N/m), block (kg), damping (N·s/m) and initial stretch (m)."""


def test_the_readmes_example_turns_the_model_into_a_python_control_system(tmp_path):
    """The README's two blocks run as written: the ``.mat`` holds A = [[0, 1], [-k/m, -c/m]], and
    the step response drawn from it settles where a step of k moves the block: -stretch/k."""
    control = pytest.importorskip("control")
    import scipy.io

    text = (REPO / "README.md").read_text(encoding="utf-8")
    command = re.search(r"^mjrig linearise [^#\n]*", text, flags=re.M).group(0).split()
    code = re.search(r"```python\n(import control.*?)```", text, flags=re.S).group(1)
    (tmp_path / "runs").mkdir()
    r = mjrig(*command[1:], cwd=tmp_path)
    assert r.rc == 0 and "linearise: 2 states, 2 inputs, 2 outputs (continuous) at initial state" in r.stdout, r
    from e2e_util import cli_env

    shown = python("-c", code, cwd=tmp_path, env={**cli_env(), "MPLBACKEND": "Agg"})
    assert shown.rc == 0, shown
    assert (tmp_path / "runs" / "step.png").stat().st_size > 10_000
    lin = scipy.io.loadmat(tmp_path / "runs" / "lin.mat")
    np.testing.assert_allclose(lin["A"], [[0.0, 1.0], [-K / M, -C / M]], atol=1e-6 * K)
    assert [str(x[0][0]) for x in lin["input_names"]] == ["k", "c"]
    assert [str(x[0][0]) for x in lin["state_names"]] == ["slide_x:q0", "slide_x:v0"]
    sys = control.ss(lin["A"], lin["B"], lin["C"], lin["D"])
    assert control.dcgain(sys[0, 0]) == pytest.approx(-STRETCH / K, rel=1e-6)


def test_npz_and_json_hold_each_operating_point_and_the_steps_model(tmp_path):
    """Two ``--at`` and ``--discrete``: the first point's model under its plain keys, the second's
    with ``_2``, both continuous A's the same linear system's, the step's ``Ad`` with its ``dt``."""
    for suffix in ("npz", "json"):
        out = tmp_path / f"lin.{suffix}"
        r = mjrig(
            "linearise", "spring_mass", "--at", 0.1, "--at", 0.3, "--input", "k",
            "--output", "Joints/slide_x:qpos", "-o", out, cwd=tmp_path,
        )  # fmt: skip
        assert r.rc == 0, r
        doc = dict(np.load(out)) if suffix == "npz" else json.loads(out.read_text())
        assert [str(p) for p in doc["points"]] == ["t = 0.1 s", "t = 0.3 s"]
        for tail in ("", "_2"):
            np.testing.assert_allclose(doc[f"A{tail}"], [[0.0, 1.0], [-K / M, -C / M]], atol=1e-6 * K)
        assert float(doc["time"]) == pytest.approx(0.1) and float(doc["time_2"]) == pytest.approx(0.3)
        assert not np.allclose(doc["qpos"], doc["qpos_2"])  # the block moved between them
    r = mjrig("linearise", "spring_mass", "--discrete", "-o", tmp_path / "step.json", cwd=tmp_path)
    doc = json.loads((tmp_path / "step.json").read_text())
    assert r.rc == 0 and doc["kind"] == "discrete" and doc["dt"] == pytest.approx(0.001)


def test_modes_at_two_times_and_a_bode_of_two_pairs_each(tmp_path):
    """``mjrig modes --at 0.2 --at 0.4 --json``: one table and one JSON entry per point; ``mjrig
    bode`` with two inputs and two outputs: four responses, and a plot of four panels."""
    r = mjrig("modes", "spring_mass", "--at", 0.2, "--at", 0.4, "--json", tmp_path / "m.json", cwd=tmp_path)
    assert r.rc == 0 and "t = 0.2 s (continuous):" in r.stdout and "t = 0.4 s (continuous):" in r.stdout, r
    doc = json.loads((tmp_path / "m.json").read_text())
    assert [p["state"]["point"] for p in doc["points"]] == ["t = 0.2 s", "t = 0.4 s"]
    assert doc["modes"] == doc["points"][0]["modes"] and doc["state"]["linearisation"] == "continuous"
    wn = np.sqrt(K / M) / (2 * np.pi)
    assert doc["points"][1]["modes"][0]["undamped_frequency_hz"] == pytest.approx(wn, rel=0.005)
    b = mjrig(
        "bode", "spring_mass", "--at", 0.2, "--input", "k", "--input", "c", "--output", "Joints/slide_x:qpos",
        "--output", "Loads/main_spring:tension", "--json", tmp_path / "b.json", "-o", tmp_path / "b.png", cwd=tmp_path,
    )  # fmt: skip
    assert b.rc == 0 and b.stdout.count("bode: ") == 4, b
    pairs = json.loads((tmp_path / "b.json").read_text())["responses"]
    assert [(p["input"], p["output"]) for p in pairs] == [
        ("k", "Joints/slide_x:qpos"),
        ("k", "Loads/main_spring:tension"),
        ("c", "Joints/slide_x:qpos"),
        ("c", "Loads/main_spring:tension"),
    ]
    from PIL import Image

    assert Image.open(tmp_path / "b.png").size[0] > 2 * Image.open(tmp_path / "b.png").size[1]  # four side by side
    bad = mjrig("bode", "spring_mass", "--at", 0.1, "--at", 0.2, "--input", "k", "--output", "x", cwd=tmp_path)
    assert bad.rc == 2 and bad.stderr.strip().splitlines()[-1].endswith("(give one --at)"), bad
