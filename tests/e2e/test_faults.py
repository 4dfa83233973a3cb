"""Faults a user meets end in one line, never a traceback, and leave nothing behind: a symbolic-
link loop as an output, a recording whose data pages are damaged, a damaged segment to recover,
the temporary file of an export that was killed."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from mjrig.runtime.files import _parquet_stream
from tests.e2e.e2e_util import cli_env, mjrig

MAGIC = _parquet_stream._MAGIC
"""The index records' magic of the recorder's parts."""


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> os.PathLike[str]:
    folder = tmp_path_factory.mktemp("faults")
    out = folder / "good.parquet"
    assert mjrig("run", "spring_mass", "--duration", "1", "--out", out, cwd=folder).rc == 0
    return out


def _one_line(r, *words: str) -> None:
    assert r.rc == 2 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    assert all(w in r.err_lines[0] for w in words), r


def test_a_symlink_loop_as_an_output_is_one_line(tmp_path):
    (tmp_path / "a.parquet").symlink_to(tmp_path / "b.parquet")
    (tmp_path / "b.parquet").symlink_to(tmp_path / "a.parquet")
    for args in (
        ("run", "spring_mass", "--duration", "0.1", "--out", "a.parquet"),
        ("export", "a.parquet", "--to", "csv"),
        ("report", "b.parquet"),
    ):
        _one_line(mjrig(*args, cwd=tmp_path), "a symbolic-link loop")


def test_damaged_data_pages_are_one_line_for_plot_report_and_export(recording, tmp_path):
    """Every data page scrambled, the footer left whole: the schema reads, the data does not."""
    data = bytearray(recording.read_bytes())
    footer = struct.unpack("<i", data[-8:-4])[0]
    for i in range(4, len(data) - footer - 8, 7):
        data[i] ^= 0x5A
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    for args in (
        ("plot", bad, "--signals", "Joints/*", "-o", tmp_path / "p.png"),
        ("report", bad),
        ("export", bad, "--to", "csv"),
    ):
        _one_line(mjrig(*args, cwd=tmp_path), str(bad))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet"]  # no figure, page or part file


def test_recovering_a_damaged_recording_says_what_was_kept_in_one_line(tmp_path):
    """A run killed after several row groups; the index record of the third is scrambled:
    recover keeps the two before it and says so as one warning line (it was a Python
    UserWarning), then what it wrote."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mjrig", "run", "spring_mass", "--duration", "300", "--out", "k.parquet"],
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    index = tmp_path / "k.parquet.parts" / "part-0001.index"
    deadline = time.monotonic() + 60
    while (not index.exists() or index.read_bytes().count(MAGIC) < 4) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    data = index.read_bytes()
    third = [i for i in range(len(data)) if data.startswith(MAGIC, i)][2]
    index.write_bytes(data[: third + 10] + b"\xff" * 8 + data[third + 18 :])
    before = sum(
        int.from_bytes(data[i + 12 : i + 20], "little")
        for i in [i for i in range(len(data)) if data.startswith(MAGIC, i)][:2]
    )  # the rows of the first two
    r = mjrig("recover", tmp_path / "k.parquet", cwd=tmp_path)
    assert r.rc == 0 and "Traceback" not in r.stderr and "UserWarning" not in r.stderr, r
    assert len(r.err_lines) == 2 and r.err_lines[0].startswith("mjrig: warning: part-0001.data: "), r
    assert "found from its pages after the 2 its index names" in r.err_lines[0], r
    rows = pq.ParquetFile(tmp_path / "k.parquet").metadata.num_rows
    assert r.err_lines[1] == f"recovered {rows} rows into {tmp_path / 'k.parquet'}" and rows > before, (r, before)


def test_an_export_removes_what_a_killed_export_left(recording, tmp_path):
    """A part file named for a process that is gone is removed by the next export to that file;
    one of a live process (this one) is left alone."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    out = tmp_path / "good.csv"
    dead = tmp_path / f".good.csv.{gone.pid}.1a2b3c4d.part"
    live = tmp_path / f".good.csv.{os.getpid()}.1a2b3c4d.part"
    dead.write_bytes(b"half a file")
    live.write_bytes(b"being written")
    r = mjrig("export", recording, "--to", "csv", "-o", out, cwd=tmp_path)
    assert r.rc == 0, r
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, live.name])


@pytest.mark.parametrize("how", ["KeyboardInterrupt()", "ImportError('initialization failed')"])
def test_ctrl_c_while_mjrig_imports_is_one_line(tmp_path, how):
    """Ctrl+C landing while MuJoCo is imported (made certain with an import hook that raises
    there, as the signal does; a native module raises ImportError from it): one line, 130."""
    code = (
        "import sys\n"
        "class Stop:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mujoco':\n"
        "            try:\n"
        "                raise KeyboardInterrupt()\n"
        "            except KeyboardInterrupt:\n"
        f"                raise {how}\n"
        "sys.meta_path.insert(0, Stop())\n"
        "sys.argv = ['mjrig', 'run', 'spring_mass']\n"
        "from mjrig.entry import main\n"
        "sys.exit(main())\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 130 and r.stderr.strip() == "mjrig: interrupted", r.stderr


def test_a_full_disk_stops_the_run_keeps_a_valid_file_and_exits_5(tmp_path):
    """Files may grow to 2 MB only (``RLIMIT_FSIZE``, SIGXFSZ ignored: every write past it fails
    as on a full disk, without needing a small file system): a 600 s run stops where its
    recording could not go on, says in one line what it kept and what to do about the file-size
    limit, and the file holds those rows. On a slow machine the run may first say how long it
    would take and write progress lines (stderr is a pipe); those are the only other lines, and
    the one about the recording is the last."""
    import re
    import resource

    import pyarrow.parquet as pq

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 2**20, 2 * 2**20))

    out = tmp_path / "full.parquet"
    r = subprocess.run(
        [sys.executable, "-m", "mjrig", "run", "spring_mass", "--duration", "600", "--out", out],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit,
    )
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 5 and lines and "Traceback" not in r.stderr, r.stderr
    *before, last = lines
    progress = [ln for ln in before if ln.startswith(("mjrig: 600 s simulated will take about ", "simulating: "))]
    assert before == progress, r.stderr  # nothing but the notice of a long run and progress lines
    assert sum(ln.startswith("mjrig: ") for ln in before) <= 1, r.stderr  # the notice said once
    m = re.fullmatch(
        r"mjrig: the recording stopped at t = ([0-9.]+) s: OSError: .*File too large.*; "
        rf"kept (\d+) rows in {re.escape(str(out))}, a valid file: raise the file-size limit and run "
        "again",
        last,
    )  # the cause named, not "free space"
    assert m and float(m.group(1)) < 600, r.stderr
    assert 0 < pq.read_metadata(out).num_rows == int(m.group(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full.parquet"]
