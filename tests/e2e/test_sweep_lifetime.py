"""A local sweep's processes end with its driver, however it ends: SIGKILL (nothing left after 5 s,
nothing written after the kill), SIGTERM (exit 143, finished trials kept, the same command resumes)
and Ctrl+C to the process group (exit 130).

The processes of one sweep (driver, forkserver, resource tracker, workers) are found by an
environment variable the driver is started with and every child inherits, not by name.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from e2e_util import cli_env

from tests.sweep_util import done_trials, write_scenario

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

MARK = "MJRIG_TEST_MARK"
PROMPT_S = 1.0
"""How long a driver may take to exit after SIGTERM or Ctrl+C (it needs ~0.1 s; before workers
were killed on a signal it waited for their running chunks, here ~2 s)."""


def sweep(n: int) -> str:
    return f"[sweep]\n[sweep.params]\nk = {{ range = [100.0, 400.0], steps = {n} }}\n"


class Sweep:
    """``mjrig sweep`` started in its own session with a unique environment marker."""

    def __init__(self, folder: Path, scenario: Path, *args: object) -> None:
        self.mark = uuid.uuid4().hex
        self.folder = folder
        self.out = folder / "res.parquet"
        self.cmd = [sys.executable, "-m", "mjrig", "sweep", str(scenario), "--out", str(self.out), *map(str, args)]

    def start(self, name: str) -> subprocess.Popen:
        """Start the command; its stdout/stderr go to files beside the folder (a pipe would be
        held open by any process that outlives the driver)."""
        env = {**cli_env(), MARK: self.mark}
        self.stderr = self.folder.parent / f"{name}.err"
        with open(self.folder.parent / f"{name}.out", "wb") as out, open(self.stderr, "wb") as err:
            return subprocess.Popen(
                self.cmd,
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )

    def processes(self) -> dict[int, str]:
        """Every live process carrying this sweep's marker: pid -> command line (a zombie has no
        environment left, so it counts as gone)."""
        entry = f"{MARK}={self.mark}".encode()
        found = {}
        for p in Path("/proc").iterdir():
            if not p.name.isdigit():
                continue
            try:
                if entry in (p / "environ").read_bytes().split(b"\0"):
                    found[int(p.name)] = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
            except OSError:  # gone meanwhile, or not ours to read
                pass
        return found

    def wait_gone(self, limit: float) -> tuple[float, dict[int, str]]:
        """Seconds until no marked process is left (at most ``limit``), and those still there."""
        t0 = time.monotonic()
        while (left := self.processes()) and time.monotonic() - t0 < limit:
            time.sleep(0.02)
        return time.monotonic() - t0, left

    def kill_all(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def wait_for_rows(self, proc: subprocess.Popen, n: int = 1) -> int:
        parts = self.out.with_name(self.out.name + ".parts")
        deadline = time.monotonic() + 60
        while (done := done_trials(parts)) < n and time.monotonic() < deadline:
            assert proc.poll() is None, self.stderr.read_text()
            time.sleep(0.01)
        assert done >= n, "no trial finished within 60 s"
        return done


@pytest.fixture
def make_sweep(tmp_path) -> Iterator:
    made: list[Sweep] = []

    def make(text: str, *args: object, record: bool = False) -> Sweep:
        folder = tmp_path / "work"
        folder.mkdir(exist_ok=True)
        made.append(Sweep(folder, write_scenario(folder, text, record=record), *args))
        return made[-1]

    yield make
    for s in made:  # whatever failed: leave no process of the test behind
        s.kill_all()


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder``: relative path -> (size, mtime in ns)."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root, name)
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            found[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return found


def test_sigkill_of_the_driver_ends_every_process_of_the_sweep_and_all_writing(make_sweep):
    # 40 recorded trials of 20 simulated seconds: ~0.2 s each, chunks of 5, ~4 s in all on 2 workers
    s = make_sweep(sweep(40), "--workers", "2", "--duration", "20", record=True)
    proc = s.start("driver")
    s.wait_for_rows(proc)
    assert len(s.processes()) >= 4, s.processes()  # driver, forkserver, resource tracker, 2 workers (+)
    killed_ns = time.time_ns()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    gone_after, left = s.wait_gone(5.0)
    assert not left, f"still running 5 s after the driver's SIGKILL: {left}"
    time.sleep(0.5)
    before = snapshot(s.folder)
    time.sleep(2.0)
    assert snapshot(s.folder) == before, "files changed after every process of the sweep was gone"
    late = {p: (m - killed_ns) / 1e9 for p, (_, m) in before.items() if m > killed_ns + 500_000_000}
    assert not late, f"written more than 0.5 s after the driver died (s after the kill): {late}"
    assert any(p.startswith("res/trial-") for p in before), sorted(before)  # the trials did record
    print(f"last process gone {gone_after:.2f} s after kill -9")


def test_sigterm_stops_the_sweep_keeps_finished_trials_and_the_same_command_resumes(make_sweep):
    # 32 trials of 100 simulated seconds: ~0.5 s each, chunks of 4 (~2 s) per task
    s = make_sweep(sweep(32), "--workers", "2", "--duration", "100")
    proc = s.start("first")
    done_before = s.wait_for_rows(proc)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=60)
    took = time.monotonic() - t0
    err = s.stderr.read_text()
    assert rc == 143, err
    assert "Traceback" not in err, err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    assert took < PROMPT_S, f"the driver took {took:.2f} s to end after SIGTERM"
    _, left = s.wait_gone(5.0)
    assert not left, f"left after SIGTERM: {left}"
    parts = s.out.with_name(s.out.name + ".parts")
    kept = done_trials(parts, which=True)
    assert len(kept) >= done_before and len(kept) == len(set(kept)) and len(kept) < 32, kept
    assert err.strip() == (
        f"mjrig: terminated (SIGTERM) after {len(kept)} of 32 trials; the finished ones are kept in "
        f"{parts.resolve()}: run the same command again to run the other {32 - len(kept)}"
    ), err
    again = s.start("again")
    assert again.wait(timeout=120) == 0, s.stderr.read_text()
    err = s.stderr.read_text()
    assert f"resuming: {len(kept)} of 32 trials already done, running {32 - len(kept)}" in err, err
    assert pl.read_parquet(s.out)["trial"].to_list() == list(range(32))
    assert not parts.exists()
    _, left = s.wait_gone(5.0)
    assert not left, f"left after the resumed sweep: {left}"


def test_ctrl_c_to_the_process_group_ends_the_sweep_at_once_with_one_line(make_sweep):
    s = make_sweep(sweep(32), "--workers", "2", "--duration", "100")
    proc = s.start("driver")
    s.wait_for_rows(proc)
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl+C does: every process of the group
    rc = proc.wait(timeout=60)
    took = time.monotonic() - t0
    err = s.stderr.read_text()
    assert rc == 130, err
    assert "Traceback" not in err and len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    assert took < PROMPT_S, f"the driver took {took:.2f} s to end after Ctrl+C"
    _, left = s.wait_gone(5.0)
    assert not left, f"left after Ctrl+C: {left}"


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_a_worker_whose_driver_already_ended_ends_at_once():
    gone = subprocess.Popen(["true"])
    gone.wait()
    r = run_python(f"from mjrig.campaign.trial import end_with_driver; end_with_driver({gone.pid}); print('alive')")
    assert r.returncode == -signal.SIGKILL and "alive" not in r.stdout, r


def test_without_pidfds_the_watch_is_skipped_and_the_worker_runs_on():
    r = run_python(
        "import os; del os.pidfd_open; from mjrig.campaign.trial import end_with_driver; "
        "print(end_with_driver(os.getppid()))"
    )
    assert r.returncode == 0 and r.stdout.strip() == "False", r
