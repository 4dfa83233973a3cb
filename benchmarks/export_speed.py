"""Exports of one recording, as ``mjrig export`` runs them: rows per second and peak memory per
format, as ratios to CSV measured in the same run.

The recording is the bundled robot arm run for ``--seconds`` simulated seconds (every signal
group; 500 rows a simulated second), or with ``--bodies N`` a bare model of N swinging bodies
(``mjrig.models.scale.many_bodies``, 16 columns a body: 53 bodies make a recording as wide as a
humanoid's with every group), made once in a temporary folder. Each export runs in a
fresh process (``mjrig.cli.main``), timed from the call, its peak resident memory read from
``getrusage`` as it ends. Printed per format: seconds, rows/s, peak RSS (MB), and the ratios of
rows/s and of memory to CSV's.

Usage: python benchmarks/export_speed.py [--seconds 400] [--bodies 53] [--formats csv mat mcap]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from mjrig.cli import main
t0 = time.perf_counter()
rc = main(["export", sys.argv[1], "--to", sys.argv[2], "-o", sys.argv[3]])
took = time.perf_counter() - t0
print(json.dumps({"rc": rc, "seconds": took, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=400.0, help="simulated seconds of the recording")
    parser.add_argument("--bodies", type=int, default=0, help="record N swinging bodies instead of the robot arm")
    parser.add_argument("--formats", nargs="+", default=["csv", "mat", "mcap"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rec = Path(tmp) / "arm.parquet"
        made = subprocess.run(
            [
                sys.executable,
                "-m",
                "mjrig",
                "run",
                str(_model(Path(tmp), args.bodies)),
                "--duration",
                str(args.seconds),
                "--out",
                str(rec),
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        if made.returncode != 0:
            raise SystemExit(made.stderr[-2000:])
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(rec).metadata
        rows, cols = meta.num_rows, meta.num_columns
        print(
            f"recording: {rows} rows x {cols} columns, {rec.stat().st_size / 1e6:.1f} MB Parquet "
            f"({8 * rows * cols / 1e6:.0f} MB as a float64 matrix)"
        )
        results = {}
        for fmt in args.formats:
            out = Path(tmp) / f"out.{fmt}"
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, str(rec), fmt, str(out)], capture_output=True, text=True, cwd=tmp
            )
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-2000:])
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            r["mb_out"] = out.stat().st_size / 1e6
            results[fmt] = r
            out.unlink()
        base = results.get("csv") or next(iter(results.values()))
        for fmt, r in results.items():
            speed = rows / r["seconds"]
            print(
                f"{fmt:5s}: {r['seconds']:7.2f} s, {speed:9.0f} rows/s (x{speed / (rows / base['seconds']):.2f} of csv), "
                f"peak RSS {r['rss_mb']:6.0f} MB (x{r['rss_mb'] / base['rss_mb']:.2f}), file {r['mb_out']:.0f} MB"
            )


def _model(folder: Path, bodies: int) -> Path:
    """The bundled robot arm's scenario, or a model of ``bodies`` swinging bodies written to ``folder``."""
    if not bodies:
        return ROOT / "models" / "robot_arm.toml"
    sys.path.insert(0, str(ROOT))
    from mjrig.models.scale import many_bodies

    model = folder / f"bodies{bodies}.xml"
    model.write_text(many_bodies(bodies), encoding="utf-8")
    return model


if __name__ == "__main__":
    main()
