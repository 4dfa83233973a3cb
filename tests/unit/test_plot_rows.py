"""The plots' row queue: bounded to its newest rows, and a newly opened model's mark is never lost."""

from __future__ import annotations

import numpy as np

from mjrig.session.plot_rows import RowQueue, is_new_model


def _block(t0: float, n: int) -> np.ndarray:
    return np.column_stack([t0 + np.arange(n) * 1e-3, np.zeros(n)])


def test_the_newest_rows_are_kept_and_the_new_model_mark_survives_the_trimming() -> None:
    q = RowQueue(100)
    q.push(["time", "wall_time"], _block(0.0, 60))  # the old model's rows
    q.mark_new_model("/m/new.xml")
    for k in range(5):  # the new model's: more than the queue keeps
        q.push(["time", "wall_time"], _block(k * 0.05, 50))
    out = q.drain()
    assert is_new_model(out[0][0]) and out[0][0][1] == "/m/new.xml"  # the mark first, the old rows gone
    rows = np.concatenate([b for c, b in out if not is_new_model(c)])
    assert len(rows) == 100 and np.allclose(rows[[0, -1], 0], [0.15, 0.249], rtol=0, atol=1e-12)
    assert q.drain() == []
    q.push(["time", "wall_time"], _block(0.0, 10))
    assert len(q.drain()) == 1 and not is_new_model(["time"]) and not is_new_model([])
