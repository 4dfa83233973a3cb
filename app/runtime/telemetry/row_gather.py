"""One ``np.take`` for a whole telemetry row, whatever arrays the row's values live in.

Every source (MjData fields, the rig's output arrays, the recorder's own clock) is a float64
array at a fixed address for as long as the recorder is bound. Seen through one strided view
that starts at the lowest of those addresses, each value is an element offset into that view,
so gathering a row from a dozen arrays costs one C call (about 1 µs for 300 values) instead of
one numpy call per array (about 0.25 µs each). Only the precomputed offsets are ever read, and
each lies inside its own array; the view keeps a reference to every source, so none of them
can be freed while it is in use.
``place_raw`` lays out the hidden raw inputs of derived columns in a row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["RowGather", "place_raw"]


class RowGather:
    """Element offsets of the values of one row, over one view spanning every source array.

    ``sources`` are the arrays a row reads (any shape, float64); ``pick(i, index)`` turns
    elements ``index`` of ``sources[i]`` (flat indices) into offsets for :meth:`take`. A source
    that is not a contiguous, 8-byte-aligned float64 array is mirrored: :meth:`refresh` copies it
    into a buffer of its own before each take (nothing like that happens with numpy or MuJoCo
    arrays, but the gather stays correct whatever it is given).
    """

    def __init__(self, sources: Sequence[np.ndarray]) -> None:
        flat: list[np.ndarray] = []
        self._mirrors: list[tuple[np.ndarray, np.ndarray]] = []
        for a in sources:
            ok = a.dtype == np.float64 and a.flags.c_contiguous and a.__array_interface__["data"][0] % 8 == 0
            if ok:
                flat.append(a.reshape(-1))
            else:
                mirror = np.empty(a.size)
                self._mirrors.append((mirror, a))
                flat.append(mirror)
        addr = [f.__array_interface__["data"][0] for f in flat]
        lowest = int(np.argmin(addr)) if flat else 0
        base = addr[lowest] if flat else 0
        span = max((a + 8 * f.size for a, f in zip(addr, flat)), default=base) - base
        self._offsets = [(a - base) // 8 for a in addr]
        self.mirrored = bool(self._mirrors)
        self._keep = flat  # every source stays alive as long as the view is in use
        self.view = (
            np.lib.stride_tricks.as_strided(flat[lowest], shape=(max(span // 8, 1),), strides=(8,), writeable=False)
            if flat
            else np.zeros(1)
        )

    def pick(self, i: int, index: np.ndarray | Sequence[int]) -> np.ndarray:
        """Offsets in :attr:`view` of elements ``index`` (flat) of source ``i``."""
        return self._offsets[i] + np.asarray(index, dtype=np.intp)

    def refresh(self) -> None:
        """Copy the mirrored sources (if any) before a take."""
        for mirror, src in self._mirrors:
            np.copyto(mirror, src.reshape(-1))

    def take(self, offsets: np.ndarray, out: np.ndarray) -> None:
        """Gather the values at ``offsets`` into ``out`` (contiguous, same length)."""
        self.view.take(offsets, out=out, mode="clip")  # the method: np.take's Python wrapper costs 0.5 µs


def place_raw(
    arrays: Sequence[np.ndarray], raw: list[np.ndarray], placed: list[tuple[int, int, int]]
) -> slice | np.ndarray:
    """Where ``arrays`` sit in the hidden raw part of a row: appended to ``raw``, unless their
    memory lies inside an array copied there already (a body's pose read by several
    ``[[signals]]``, inside the ``cvel`` the bodies group reads whole). ``placed`` holds
    (address, bytes, position) of every contiguous float64 array in ``raw``. A slice when they
    sit side by side, else their positions."""
    pos: list[np.ndarray] = []
    for a in arrays:
        addr = a.__array_interface__["data"][0]
        flat = a.dtype == np.float64 and a.flags.c_contiguous
        at = next(
            (
                p + (addr - start) // 8
                for start, nbytes, p in placed
                if flat and start <= addr and addr + a.nbytes <= start + nbytes and (addr - start) % 8 == 0
            ),
            None,
        )
        if at is None:
            at = sum(x.size for x in raw)
            raw.append(a)
            if flat:
                placed.append((addr, a.nbytes, at))
        pos.append(np.arange(at, at + a.size))
    out = np.concatenate(pos) if pos else np.zeros(0, dtype=np.intp)
    if len(out) and np.array_equal(out, np.arange(out[0], out[0] + len(out))):
        return slice(int(out[0]), int(out[0]) + len(out))
    return out
