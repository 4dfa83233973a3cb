"""An output that cannot be written is exit 5 and one line naming the real cause, for every command
that writes a file, and leaves no 0-byte or partial file: a full disk (a 64 kB tmpfs filled up),
a read-only file system (a tmpfs mounted ``ro``), a file-size limit (``RLIMIT_FSIZE``) and a
folder without write permission (the command run without root's permission override, through
``setpriv``). Commands that do not record (``check``, ``modes``, ``bode``) work in a read-only
working folder. Mounting needs root: the cases that mount are skipped elsewhere."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.e2e.e2e_util import MODELS, Result, mjrig
from tests.sweep_util import K_PARAM, spring_mass

SCENARIO = f"""model = "{MODELS / "spring_mass.xml"}"

[simulation]
duration = 0.2

[[metrics]]
name = "peak"
signal = "Joints/slide_x:qpos"
kind = "max"
"""


@pytest.fixture(scope="module")
def rig():
    """A world-readable folder (the permission case runs without root's override) with a
    scenario that records nothing and a recording."""
    folder = Path(tempfile.mkdtemp(prefix="mjrig-faults-"))
    folder.chmod(0o755)
    (folder / "rig.toml").write_text(SCENARIO, encoding="utf-8")
    assert mjrig("run", "spring_mass", "--duration", "0.2", "--out", folder / "rec.parquet", cwd=folder).rc == 0
    for f in folder.iterdir():
        f.chmod(0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _mount(folder: Path, *options: str) -> None:
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(("size=64k", *options)), "tmpfs", str(folder)], capture_output=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")


@contextlib.contextmanager
def _fault(kind: str, base: Path):
    """(output folder, command prefix, preexec_fn) for a fault of ``kind``."""
    out = base / "out"
    out.mkdir()
    prefix: list[str] = []
    preexec = None
    mounted = False
    if kind == "no space":
        _mount(out)
        mounted = True
        with contextlib.suppress(OSError), open(out / "filler", "wb") as fh:
            fh.write(b"\0" * 200_000)
    elif kind == "read-only":
        _mount(out, "ro")
        mounted = True
    elif kind == "file too large":

        def preexec() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
    elif kind == "permission denied":
        if not shutil.which("setpriv") or os.geteuid() != 0:
            pytest.skip("needs root and setpriv to drop root's permission override")
        out.chmod(0o555)
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    try:
        yield out, prefix, preexec
    finally:
        if mounted:
            subprocess.run(["umount", str(out)], check=False)


def _run(prefix: list[str], preexec, cwd: Path, *args: object) -> Result:
    return mjrig(*args, cwd=cwd, prefix=prefix, preexec_fn=preexec)


BODE = ["bode", "spring_mass", "--input", "k", "--output", "Joints/slide_x:qpos"]
"""The spring-mass's response at the block's position to its stiffness ``k``."""

COMMANDS = {
    "export": lambda rig, out: ["export", rig / "rec.parquet", "--to", "csv", "-o", out / "rec.csv"],
    "report": lambda rig, out: ["report", rig / "rec.parquet", "-o", out / "rec.html"],
    "plot": lambda rig, out: ["plot", rig / "rec.parquet", "--signals", "Joints/*", "-o", out / "rec.png"],
    "modes": lambda rig, out: ["modes", "spring_mass", "--json", out / "modes.json"],
    "bode-json": lambda rig, out: [*BODE, "--json", out / "bode.json"],
    "bode-plot": lambda rig, out: [*BODE, "-o", out / "bode.png"],
    "run-metrics": lambda rig, out: ["run", rig / "rig.toml", "--metrics", out / "metrics.json"],
}
FAULTS = ("no space", "read-only", "file too large", "permission denied")
CAUSE = {
    "no space": "no space left on the device",
    "read-only": "read-only file system",
    "file too large": "file too large",
    "permission denied": "permission denied",
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_output_fault_is_exit_5_one_line_and_no_file(rig, tmp_path, command, fault):
    with _fault(fault, tmp_path) as (out, prefix, preexec):
        r = _run(prefix, preexec, rig, *COMMANDS[command](rig, out))
        left = sorted(p.name for p in out.iterdir() if p.name != "filler")
    assert r.rc == 5 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    assert CAUSE[fault] in r.err_lines[0] and str(out) in r.err_lines[0], r
    assert left == []


@pytest.mark.parametrize(
    "command",
    [
        ["check", "spring_mass"],
        ["check", "clearance"],
        ["modes", "clearance"],
        BODE,
    ],
)
def test_commands_that_do_not_record_work_in_a_read_only_folder(tmp_path, command):
    """clearance's scenario has a [video] too: neither path is asked."""
    work = tmp_path / "work"
    work.mkdir()
    _mount(work, "ro")
    try:
        r = mjrig(*command, cwd=work)
    finally:
        subprocess.run(["umount", str(work)], check=False)
    assert r.rc == 0 and "Traceback" not in r.stderr, r


STUDY = f"""{spring_mass(duration=0.5, params=(K_PARAM,))}
[[metrics]]
name = "peak"
signal = "Joints/slide_x:qpos"
kind = "max"

[optimize]
minimize = "Metrics/peak"
trials = 40

[optimize.params]
k = {{ low = 50.0, high = 500.0 }}
"""


@pytest.mark.parametrize("filler", [20_000, 200_000])
def test_a_study_on_a_disk_that_fills_is_one_line_without_sql(rig, tmp_path, filler):
    """The study's database cannot grow (20 kB left of 64 kB: it fills after some trials) or
    cannot be made at all (nothing left): exit 5, one line naming the cause, no SQL statement."""
    (tmp_path / "opt.toml").write_text(STUDY, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    _mount(out)
    try:
        with contextlib.suppress(OSError), open(out / "filler", "wb") as fh:
            fh.write(b"\0" * filler)
        r = mjrig("optimize", tmp_path / "opt.toml", "--out", out / "s.parquet", "--workers", 1, cwd=tmp_path)
    finally:
        subprocess.run(["umount", str(out)], check=False)
    assert r.rc == 5 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    assert "no space left on the device" in r.err_lines[0] and "SQL" not in r.stderr, r


@pytest.mark.parametrize("fault", ["read-only", "permission denied"])
@pytest.mark.parametrize("command", ["run", "sweep", "optimize"])
def test_an_out_in_a_folder_that_refuses_it_is_exit_5(rig, tmp_path, command, fault):
    """``--out`` in a read-only or unwritable folder: exit 5 naming the cause (it was exit 2,
    "folder ... is not writable"), before any trial or step."""
    scenario = rig / "campaign.toml"
    if not scenario.exists():
        scenario.write_text(STUDY + "\n[sweep]\n[sweep.params]\nk = { values = [100.0, 400.0] }\n", encoding="utf-8")
        scenario.chmod(0o644)
    with _fault(fault, tmp_path) as (out, prefix, preexec):
        r = _run(
            prefix,
            preexec,
            rig,
            command,
            scenario,
            "--out",
            out / "o.parquet",
            *(["--workers", "1"] if command != "run" else ["--duration", "0.1"]),
        )
        left = sorted(p.name for p in out.iterdir())
    assert r.rc == 5 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    assert CAUSE[fault] in r.err_lines[0] and str(out) in r.err_lines[0], r
    assert left == []
