"""One take per telemetry row: values from many arrays, in any order, also from arrays that are
not contiguous float64 (those are mirrored before each take)."""

from __future__ import annotations

import numpy as np

from mjrig.runtime.telemetry.row_gather import RowGather


def test_one_take_gathers_from_many_arrays_and_sees_their_later_values() -> None:
    a = np.arange(10.0)
    b = np.arange(100.0, 106.0).reshape(2, 3)
    strided = np.arange(200.0, 220.0)[::4]  # not contiguous: mirrored
    ints = np.array([7, 8, 9], dtype=np.int32)  # not float64: mirrored
    g = RowGather([a, b, strided, ints])
    offsets = np.concatenate([g.pick(1, [5, 0]), g.pick(0, [9]), g.pick(2, [1, 4]), g.pick(3, [2])])
    out = np.zeros(6)
    for _step in range(3):  # sources change in place between rows, as MjData does
        g.refresh()
        g.take(offsets, out)
        np.testing.assert_array_equal(out, [b.flat[5], b.flat[0], a[9], strided[1], strided[4], ints[2]])
        a += 1.0
        b *= 2.0
        strided -= 3.0
        ints += 1
    assert g.mirrored
