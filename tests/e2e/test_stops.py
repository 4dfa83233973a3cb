"""Every stop at every moment is one line: SIGINT/SIGTERM while mjrig imports (before any command's
own handler), while tqdm makes its first bar, as a sweep's worker pool starts; a SIGKILLed sweep
driver leaves no "leaked semaphore" warning; a stopped export says truly what it left; what a
killed writer left is removed by the next command on that folder.

Moments that cannot be made certain are tried several times in a loop (each try a second or two);
the tests that loop say so and stay under about 15 s each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.e2e_util import mjrig, mjrig_popen, on_terminal, python
from tests.sweep_util import K_PARAM, spring_mass

STOP_LINES = {signal.SIGINT: ("mjrig: interrupted", 130), signal.SIGTERM: ("mjrig: terminated (SIGTERM)", 143)}


def _lines(text: str) -> list[str]:
    return [ln for ln in text.replace("\r", "\n").splitlines() if ln.strip()]


def _snippet(code: str, cwd: Path, *, tty: bool = False) -> tuple[int, str]:
    """Run Python ``code`` (which ends by calling mjrig's entry point); (status, stderr). With
    ``tty`` stderr is a pseudo-terminal (bars are drawn)."""
    if not tty:
        r = python("-c", code, cwd=cwd)
        return r.rc, r.stderr
    return on_terminal("-c", code, cwd=cwd, timeout=60)


def test_sigterm_while_mjrig_imports_mujoco_is_one_line(tmp_path):
    """SIGTERM lands while MuJoCo is imported (made certain with an import hook that sends it
    there): the handler mjrig takes first thing answers it with one line and 143."""
    code = (
        "import os, signal, sys\n"
        "class Stop:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mujoco':\n"
        "            os.kill(os.getpid(), signal.SIGTERM)\n"
        "            time.sleep(1)\n"
        "import time\n"
        "sys.meta_path.insert(0, Stop())\n"
        "sys.argv = ['mjrig', 'run', 'spring_mass']\n"
        "from mjrig.entry import main\n"
        "sys.exit(main())\n"
    )
    rc, err = _snippet(code, tmp_path)
    assert rc == 143 and err.strip() == "mjrig: terminated (SIGTERM)", (rc, err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_after_the_command_ended_keeps_its_status(tmp_path, sig):
    """``bode`` has written its plot and said so; a Ctrl-C (SIGTERM) that lands in the
    interpreter's teardown has nothing left to stop: the status stays the command's 0, never a
    death by the signal (-2) or a traceback, and the plot is whole."""
    code = (
        "import os, signal, sys, time\n"
        "sys.argv = ['mjrig', 'bode', 'spring_mass', '--input', 'k', '--output', 'Joints/slide_x:qpos', '-o', 'b.png']\n"
        "from mjrig.entry import main\n"
        "status = main()\n"
        f"os.kill(os.getpid(), {int(sig)})\n"
        "time.sleep(0.3)  # the signal is handled here, after the command\n"
        "sys.exit(status)\n"
    )
    rc, err = _snippet(code, tmp_path)
    lines = _lines(err)
    assert rc == 0 and "Traceback" not in err and lines[-1].startswith("wrote the plot"), (rc, err)
    from PIL import Image

    assert Image.open(tmp_path / "b.png").size[0] > 100


def _importing(proc: subprocess.Popen) -> None:
    """Wait until ``proc`` imports numpy (mjrig's heavy imports have begun: its handlers are in
    place); before that the interpreter itself is starting, and nothing of mjrig has run yet."""
    maps = Path(f"/proc/{proc.pid}/maps")
    if not maps.parent.exists():
        pytest.skip("needs /proc to see the process's imports")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if "numpy" in maps.read_text():
                return
        except OSError:
            pass
        time.sleep(0.005)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_at_any_moment_of_a_run_is_one_line(tmp_path, sig):
    """Five stops from the heavy imports on (0 to 0.8 s after numpy is loaded: imports, the
    model's compilation, the first steps): each is one line and 130/143, never a traceback or a
    death by the signal. Five runs of about a second each."""
    want, status = STOP_LINES[sig]
    for i, delay in enumerate((0.0, 0.2, 0.4, 0.6, 0.8)):
        proc = mjrig_popen(
            "run",
            "spring_mass",
            "--duration",
            "60",
            "--out",
            tmp_path / f"r{i}.parquet",
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _importing(proc)
        time.sleep(delay)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        lines = _lines(err)
        assert proc.returncode == status and len(lines) == 1 and lines[0].startswith(want), (
            delay,
            proc.returncode,
            err,
        )


def test_ctrl_c_while_tqdm_makes_the_first_bar_is_one_line(tmp_path):
    """Ctrl+C lands inside tqdm's constructor (made certain: its ``__init__`` sets ``disable``
    and raises KeyboardInterrupt, as the signal would there, once tqdm has listed the new bar):
    one line, 130, and no "Exception ignored" traceback of the half-made bar (``pos`` missing)."""
    code = (
        "import sys, gc\n"
        "import tqdm.std\n"
        "def stop(self, *a, **k):\n"
        "    self.disable = False  # the constructor got this far\n"
        "    raise KeyboardInterrupt\n"
        "tqdm.std.tqdm.__init__ = stop\n"
        f"sys.argv = ['mjrig', 'run', 'spring_mass', '--duration', '1', '--out', {str(tmp_path / 'x.parquet')!r}]\n"
        "from mjrig.entry import main\n"
        "rc = main()\n"
        "gc.collect()\n"
        "sys.exit(rc)\n"
    )
    rc, err = _snippet(code, tmp_path, tty=True)
    assert rc == 130 and "Traceback" not in err and "Exception ignored" not in err, (rc, err)
    assert _lines(err)[-1].startswith("mjrig: interrupted"), err


SWEEP = f"""{spring_mass(duration=3.0, params=(K_PARAM,))}
[recording]
path = "runs/rec.parquet"

[sweep]
trials = 8
[sweep.params]
k = {{ distribution = "uniform", low = 100.0, high = 400.0 }}
"""


def _sweep(tmp_path: Path) -> Path:
    """A sweep whose trials are recorded (so they run on worker processes, not in lock-step)."""
    path = tmp_path / "sw.toml"
    path.write_text(SWEEP, encoding="utf-8")
    return path


def test_sigterm_as_the_worker_pool_starts_adds_no_forkserver_traceback(tmp_path):
    """SIGTERM 0-0.4 s after the sweep holds its --out, as the forkserver forks the first
    workers (a worker forked after the driver removed the pool's semaphores printed a
    FileNotFoundError traceback): one line each time. Five sweeps of 2-3 s each."""
    scenario = _sweep(tmp_path)
    for i, delay in enumerate((0.0, 0.1, 0.2, 0.3, 0.4)):
        out = tmp_path / f"s{i}.parquet"
        proc = mjrig_popen(
            "sweep", scenario, "--out", out, "--workers", 2, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 30
        while not out.with_name(out.name + ".parts").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143 and len(_lines(err)) == 1 and "Traceback" not in err, (delay, err)


def test_a_sigkilled_sweep_driver_leaves_no_leaked_semaphore_warning(tmp_path):
    """The driver is SIGKILLed once its pool runs; the resource tracker cleans up after it and
    says nothing (it printed "There appear to be 5 leaked semaphore objects"). The pipe is read
    to its end: every process that holds it (tracker, forkserver, workers) has ended."""
    scenario = _sweep(tmp_path)
    out = tmp_path / "s.parquet"
    proc = mjrig_popen(
        "sweep", scenario, "--out", out, "--workers", 2, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("**/trial-*")) and time.monotonic() < deadline:  # a worker writes a trial
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and "leaked" not in err and "Traceback" not in err, err


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("stops")
    out = folder / "big.parquet"
    assert mjrig("run", "robot_arm", "--duration", "20", "--out", out, cwd=folder).rc == 0
    return out


def test_a_stopped_export_says_truly_what_it_left(recording, tmp_path):
    """SIGTERM at six moments of an export (imports, reading, writing): the line never claims
    that something was kept; it says nothing was written (or the file is as it was), and no part
    file stays. Six exports of about 1.5 s each."""
    out = tmp_path / "big.csv"
    for delay in (0.5, 0.7, 0.9, 1.1, 1.3, 1.5):
        existed = out.exists()
        proc = mjrig_popen(
            "export", recording, "--to", "csv", "-o", out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        lines = _lines(err)
        assert len(lines) == 1 and "Traceback" not in err and "kept" not in err, (delay, err)
        assert not list(tmp_path.glob(".*.part")), list(tmp_path.iterdir())
        if proc.returncode == 143 and "nothing was written" in lines[0]:
            assert not out.exists() and not existed, lines[0]
        elif proc.returncode == 143:
            assert lines[0] in (
                "mjrig: terminated (SIGTERM)",
                f"mjrig: terminated (SIGTERM); {out} is as it was (no partial file is left)",
            ), lines[0]
        else:
            assert proc.returncode == 0 and lines[0].startswith("wrote "), (delay, err)


def test_any_command_on_a_folder_removes_what_a_killed_writer_left(recording, tmp_path):
    """A part file named for a process that is gone (a SIGKILLed export) beside a command's input
    is removed by that command (a compare that writes nothing); one of a live process stays."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    folder = recording.parent
    dead = folder / f".big.csv.{gone.pid}.1a2b3c4d.part"
    live = folder / f".big.csv.{os.getpid()}.1a2b3c4d.part"
    dead.write_bytes(b"half a file")
    live.write_bytes(b"being written")
    try:
        r = mjrig("compare", recording, recording, "--signals", "Joints/*", cwd=tmp_path)
        assert r.rc == 0, r
        assert not dead.exists() and live.exists()
    finally:
        live.unlink(missing_ok=True)
