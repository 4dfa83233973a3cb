"""Wide models recorded through `mjrig run`: every row kept at any width, and what it costs.

For each size, a bare model of N swinging bodies (``mjrig.models.scale.many_bodies``: chains of
hinged links, 16 columns a body with every signal group) is run by ``python -m mjrig run MODEL
--duration S --out X.parquet`` in a child process (the code path users run). Sampled every 0.2 s
from outside: the child's resident memory (VmRSS) and the disk the recording takes (its
``.parts`` folder and the file). Printed per size: columns, rows kept of rows expected
(duration / timestep), exit code and last line, wall time, RSS peak, disk peak while running,
the final file's size and its row groups (rows each).

Usage: python benchmarks/wide_record.py [--sizes 600 1000 3000] [--duration 10]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.soak import disk_bytes, rss_bytes  # noqa: E402
from mjrig.models.scale import many_bodies  # noqa: E402

MB = 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[600, 1000, 3000], help="bodies (default 600 1000 3000)")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mjrig-wide-"))
    ok = True
    for n in args.sizes:
        model = folder / f"bodies_{n}.xml"
        model.write_text(many_bodies(n))
        out = folder / f"bodies_{n}.parquet"
        cmd = [sys.executable, "-m", "mjrig", "run", str(model), "--duration", f"{args.duration:g}", "--out", str(out)]
        t0 = time.perf_counter()
        child = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=folder
        )
        rss_peak = disk_peak = 0
        while child.poll() is None:
            rss_peak = max(rss_peak, rss_bytes(child.pid) or 0)
            disk_peak = max(disk_peak, disk_bytes(out))
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        err = [ln for ln in child.stderr.read().splitlines() if ln.strip()] if child.stderr else []
        last = err[-1] if err else "(no line)"
        if out.is_file():
            meta = pq.ParquetFile(out).metadata
            rows, cols, groups = meta.num_rows, meta.num_columns, meta.num_row_groups
            sizes = sorted({meta.row_group(i).num_rows for i in range(groups)})
            size = out.stat().st_size
            step = float(pq.read_table(out, columns=["time"]).column("time")[1].as_py()) if rows > 1 else 0.0
        else:
            rows = cols = groups = size = 0
            sizes, step = [], 0.0
        expected = round(args.duration / step) if step else 0
        ok &= child.returncode == 0 and rows == expected
        print(
            f"{n:5d} bodies ({cols} columns): exit {child.returncode}, rows kept {rows} of {expected}, "
            f"wall {wall:.1f} s, RSS peak {rss_peak / MB:.0f} MB, disk peak {disk_peak / MB:.0f} MB / final file "
            f"{size / MB:.0f} MB, {groups} row groups of {sizes[-1] if sizes else 0} rows (fewest "
            f"{sizes[0] if sizes else 0})",
            flush=True,
        )
        print(f"      last line: {last}", flush=True)
        out.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
