"""The manual's Python example (docs/python-api.md) runs as printed and writes what it promises."""

from __future__ import annotations

import re
import subprocess
import sys

import polars as pl

from tests.e2e.e2e_util import REPO, cli_env


def test_python_api_example_runs(tmp_path):
    text = (REPO / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "docs/python-api.md has no Python example"
    (tmp_path / "models").symlink_to(REPO / "models")  # the example runs from a checkout's root
    proc = subprocess.run(
        [sys.executable, "-c", blocks[0]], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    df = pl.read_parquet(tmp_path / "runs" / "out.parquet")
    assert abs(df.height - 2500) <= 1  # 5 s at rate = 500
    k = df.select("time", "Params/k:value")
    assert set(k.filter(pl.col("time") < 2.0)["Params/k:value"]) == {800.0}
    assert set(k.filter(pl.col("time") > 2.01)["Params/k:value"]) == {1600.0}
    assert {"Loads/main_spring:fx", "Loads/push:fx", "Proximities/gap:distance"} <= set(df.columns)
