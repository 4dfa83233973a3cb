"""Throughput of ParquetSink: does writing stay linear in the number of rows?

Writes N rows x 200 float64 columns through ParquetSink in blocks of 1000 rows (as fast as the
producer can hand them over), including close() (the final streaming merge), for N and 4N rows,
and prints rows/s, MB/s of raw float64 data and time(4N)/time(N). Linear is 4.0; target <= 4.4.
The reference implementation (re-read and rewrite the whole file each flush) is quadratic.

    python benchmarks/parquet_throughput.py [--rows 20000] [--columns 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mjrig.runtime.files.parquet_sink import ParquetSink  # noqa: E402


def run(rows: int, *, columns: int, block_rows: int = 1000) -> float:
    """Seconds to write ``rows`` rows (handing over, writing segments, merging on close)."""
    names = ["time", "wall_time"] + [f"Signals/s{i}:value" for i in range(columns - 2)]
    rng = np.random.default_rng(1)
    block = rng.normal(size=(block_rows, columns))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.parquet"
        start = time.perf_counter()
        sink = ParquetSink(out, metadata={"bench": "1"}, flush_seconds=0.5)
        for first in range(0, rows, block_rows):
            n = min(block_rows, rows - first)
            block[:n, 0] = np.arange(first, first + n) * 1e-3
            sink.write_block(names, block[:n])
            # pace like a producer the writer can keep up with, instead of tripping the queue cap
            while sink.pending_rows > 20 * block_rows:
                time.sleep(0.001)
        sink.close()
        elapsed = time.perf_counter() - start
        assert sink.error is None, sink.error
        assert sink.rows_written == rows
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000, help="N (the small run)")
    parser.add_argument("--columns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    run(2000, columns=args.columns)  # warm up imports and caches
    times = {}
    for rows in (args.rows, 4 * args.rows):
        best = min(run(rows, columns=args.columns) for _ in range(args.repeat))
        times[rows] = best
        mb = rows * args.columns * 8 / 1e6
        print(
            f"{rows:>8} rows x {args.columns} cols: {best:7.3f} s  {rows / best:>9,.0f} rows/s  {mb / best:7.1f} MB/s"
        )
    small, large = times[args.rows], times[4 * args.rows]
    ratio = large / small
    print(
        f"time(4x rows) / time(1x rows) = {ratio:.2f}  (linear 4.00, target <= 4.4: {'OK' if ratio <= 4.4 else 'OVER'})"
    )


if __name__ == "__main__":
    main()
