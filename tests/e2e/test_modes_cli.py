"""``mjrig modes`` and ``mjrig bode`` as a user runs them: one line per mode, the JSON of
CONTRACT section 12, the Bode plot written (and looked at), mode metrics in ``mjrig run``'s
METRICS.json and bounded by a requirement in a sweep, and bad input as one line (exit 2)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import polars as pl
from e2e_util import mjrig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_modes import chain, pendulum  # noqa: E402

K, M, ALPHA = 800.0, 2.0, 0.2
F1 = math.sqrt(K * (3 - math.sqrt(5)) / (2 * M)) / (2 * math.pi)
F2 = math.sqrt(K * (3 + math.sqrt(5)) / (2 * M)) / (2 * math.pi)


def test_modes_prints_each_mode_and_writes_the_json(tmp_path):
    path = chain(tmp_path, k=K, m=M, alpha=ALPHA)
    r = mjrig("modes", path, "--json", tmp_path / "modes.json", cwd=tmp_path)
    assert r.rc == 0, r
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("mode 1: 1.967") and "x2 +1, x1 +0.618" in lines[0], lines
    assert lines[1].startswith("mode 2: 5.150") and "x1 +1, x2 -0.618" in lines[1], lines
    doc = json.loads((tmp_path / "modes.json").read_text())
    first = doc["modes"][0]
    assert set(first) >= {"frequency_hz", "undamped_frequency_hz", "damping_ratio", "time_constant_s", "shape"}
    assert (
        abs(first["undamped_frequency_hz"] / F1 - 1) < 0.005
        and abs(doc["modes"][1]["undamped_frequency_hz"] / F2 - 1) < 0.005
    )
    assert first["shape"] == {"x1": first["shape"]["x1"], "x2": 1.0} and abs(first["shape"]["x1"] - 0.618034) < 1e-4
    assert doc["state"]["time"] == 0.0 and doc["state"]["equilibrium"] is False


def test_bode_writes_the_response_and_its_plot(tmp_path):
    path = chain(tmp_path, k=K, m=M, alpha=ALPHA)
    r = mjrig(
        "bode",
        path,
        "--input",
        "F",
        "--output",
        "Joints/x2:qpos",
        "--json",
        tmp_path / "bode.json",
        "-o",
        tmp_path / "bode.png",
        cwd=tmp_path,
    )
    assert r.rc == 0, r
    assert r.stdout.strip().startswith("bode: Joints/x2:qpos / F: ") and "m/N" in r.stdout, r.stdout
    doc = json.loads((tmp_path / "bode.json").read_text())
    assert {"input", "output", "frequency_hz", "magnitude", "magnitude_db", "phase_deg"} <= set(doc)
    f, mag = doc["frequency_hz"], doc["magnitude"]
    assert abs(mag[0] / (2 / K) - 1) < 0.02  # a decade below the first mode: nearly the static gain
    k = max(range(len(f)), key=lambda i: mag[i] if f[i] < 1.5 * F1 else 0)
    assert abs(f[k] / F1 - 1) < 0.02
    assert abs(doc["magnitude_db"][k] - 20 * math.log10(mag[k])) < 1e-9
    assert doc["phase_deg"][0] > -5 and -200 < doc["phase_deg"][k + 20] < -160  # in phase, then opposed
    from PIL import Image

    img = Image.open(tmp_path / "bode.png")
    assert img.size[0] > 600 and img.size[1] > 400
    (Path(__file__).resolve().parents[1] / "artifacts").mkdir(exist_ok=True)
    img.save(Path(__file__).resolve().parents[1] / "artifacts" / "bode.png")


def test_mode_metrics_in_a_run_and_a_sweep(tmp_path):
    """The first mode's frequency in METRICS.json; a sweep of the stiffness whose requirement
    "first mode above 1.5 Hz" fails for the soft spring only (f1 scales with sqrt(k))."""
    path = chain(tmp_path, k=K, m=M, alpha=ALPHA)
    path.write_text(
        path.read_text()
        + """
[[metrics]]
name = "f1"
kind = "mode_frequency"
mode = 1

[[metrics]]
name = "zeta2"
kind = "mode_damping"
mode = 2

[[requirements]]
name = "stiff_enough"
signal = "Metrics/f1"
min = 1.5

[sweep]
[sweep.params]
k = { values = [400.0, 800.0] }
"""
    )
    r = mjrig("run", path, "--duration", "0.1", "--metrics", tmp_path / "m.json", cwd=tmp_path)
    assert r.rc == 0, r
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["f1"]["unit"] == "Hz" and abs(m["f1"]["value"] / F1 - 1) < 0.005
    assert abs(m["zeta2"]["value"] / (ALPHA / (4 * math.pi * F2)) - 1) < 0.02
    r = mjrig("sweep", path, "--out", tmp_path / "res.parquet", "--workers", 1, "--duration", "0.1", cwd=tmp_path)
    assert r.rc == 0, r
    res = pl.read_parquet(tmp_path / "res.parquet").sort("Params/k:value")
    f1 = res["Metrics/f1:value"].to_list()
    assert abs(f1[0] / (F1 / math.sqrt(2)) - 1) < 0.005 and abs(f1[1] / F1 - 1) < 0.005
    assert res["Requirements/stiff_enough:pass"].to_list() == [False, True]


def test_bad_input_is_one_line(tmp_path):
    path = chain(tmp_path, k=K, m=M, alpha=ALPHA)
    cases = [
        (("bode", path, "--input", "G", "--output", "Joints/x2:qpos"), "--input 'G': neither a param (closest: F"),
        (("bode", path, "--input", "F", "--output", "Joints/x3:qpos"), "--output 'Joints/x3:qpos': unknown signal"),
        (("bode", path, "--input", "k", "--output", "Joints/x2:qpos"), "--input 'k': neither the motion"),
        (
            ("modes", pendulum(tmp_path, m=0.5, l=0.4, ic=2e-3, c=0.0, torque=0.5), "--settle"),
            "--settle: the rig did not come to rest within 30 s",
        ),
        (("bode", path, "--input", "F", "--output", "Joints/x2:qpos", "-o", tmp_path / "b.jpg"), "-o"),
    ]
    for args, words in cases:
        r = mjrig(*args, cwd=tmp_path)
        assert r.rc == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r)
        assert "Traceback" not in r.stderr
    (tmp_path / "still.xml").write_text(
        '<mujoco><worldbody><body><joint type="slide" axis="1 0 0" damping="1"/>'
        '<geom size="0.1" mass="1"/></body></worldbody></mujoco>'
    )
    r = mjrig("modes", "gas_spring_door", cwd=tmp_path)  # its strut starts at its stroke's end
    assert r.rc == 0 and "mjrig: warning: the rig's laws have a corner at this state in 'hinge'" in r.stderr, r
    r = mjrig("modes", tmp_path / "still.xml", cwd=tmp_path)
    assert r.rc == 0 and r.stdout.strip().splitlines()[-1] == "no oscillatory mode (2 non-oscillatory)", r


def test_a_recordings_report_shows_the_modes_table(tmp_path):
    """The rig rebuilt from the recording (its scenario, model, --set values) and linearised: the
    chain's two modes at k = 1600 N/m, as the run had it; looked at in Chromium."""
    import html
    import re

    from test_report_cli import screenshot

    path = chain(tmp_path, k=K, m=M, alpha=ALPHA)
    r = mjrig("run", path, "--duration", "0.3", "--set", "k=1600", "--out", tmp_path / "modes.parquet", cwd=tmp_path)
    assert r.rc == 0, r
    r = mjrig("report", tmp_path / "modes.parquet", "-o", tmp_path / "modes.html", cwd=tmp_path)
    assert r.rc == 0, r
    page = html.unescape((tmp_path / "modes.html").read_text())
    section = page[page.index('<section id="modes">') : page.index('<section id="plots">')]
    undamped = [
        float(x)
        for x in re.findall(r'<tr><td>\d</td><td class="num">[0-9.]+</td><td class="num">([0-9.]+)</td>', section)
    ]
    assert len(undamped) == 2 and abs(undamped[0] / (F1 * math.sqrt(2)) - 1) < 0.005, section
    assert abs(undamped[1] / (F2 * math.sqrt(2)) - 1) < 0.005 and "x2 +1, x1 +0.618" in section
    assert "continuous-time dynamics linearised about its initial state (t = 0 s)" in section, section
    screenshot(tmp_path / "modes.html")


def test_a_recording_is_linearised_as_the_rig_it_ran(tmp_path):
    """``mjrig modes|linearise REC.parquet`` take the rig the recording carries (its scenario, its
    params as recorded: a ``--set`` run's own k) and give what the same command gives on the rig;
    a recording without a rig, or whose model is gone, is one line (exit 2)."""
    soft, stiff = tmp_path / "soft.parquet", tmp_path / "stiff.parquet"
    assert mjrig("run", "spring_mass", "--out", soft, cwd=tmp_path).rc == 0
    assert mjrig("run", "spring_mass", "--set", "k=800", "--duration", "0.1", "--out", stiff, cwd=tmp_path).rc == 0
    rig = mjrig("modes", "spring_mass", "--at", "0.9675", "--json", tmp_path / "rig.json", cwd=tmp_path)
    rec = mjrig("modes", soft, "--at", "0.9675", "--json", tmp_path / "rec.json", cwd=tmp_path)
    assert rig.rc == rec.rc == 0, (rig, rec)
    a, b = (json.loads((tmp_path / f).read_text())["modes"] for f in ("rig.json", "rec.json"))
    assert a == b and abs(b[0]["undamped_frequency_hz"] - 2.2508) < 5e-4, b
    r = mjrig("modes", stiff, "--json", tmp_path / "stiff.json", cwd=tmp_path)
    assert r.rc == 0, r
    f = json.loads((tmp_path / "stiff.json").read_text())["modes"][0]["undamped_frequency_hz"]
    assert abs(f / (math.sqrt(800.0 / 1.0) / (2 * math.pi)) - 1) < 1e-6, f  # the run's k, not the scenario's 200
    lin = mjrig("linearise", soft, "-o", tmp_path / "lin.json", cwd=tmp_path)
    assert lin.rc == 0 and "2 states" in lin.stdout, lin
    bare = tmp_path / "bare.parquet"
    pl.DataFrame({"time": [0.0, 0.001]}).write_parquet(bare)
    r = mjrig("modes", bare, cwd=tmp_path)
    assert r.rc == 2 and r.stderr.strip().count("\n") == 0 and "carries no rig" in r.stderr, r
