"""numba primitives the compiled callbacks share: addresses as typed pointers, and a table's
number (a constant or a profile) at a time, as ``values`` evaluates it."""

from __future__ import annotations

import math
from typing import Any

from numba import njit, types
from numba.extending import intrinsic

__all__ = ["f64", "i32", "i64", "num", "pointer"]


def pointer(kind: Any) -> Any:
    """An intrinsic turning an int64 address into a pointer to ``kind``."""

    @intrinsic
    def cast(typingctx: Any, addr: Any) -> Any:
        sig = types.CPointer(kind)(types.int64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

        return sig, codegen

    return cast


f64, i64, i32 = pointer(types.float64), pointer(types.int64), pointer(types.int32)


@njit(cache=True, error_model="numpy")
def num(T: Any, o: int, t: float) -> float:
    """A number of the table at word ``o`` at time ``t`` (s), as ``values`` evaluates it."""
    kind = T[o]
    if kind == 0.0:
        return T[o + 1]
    if kind == 1.0:
        return T[o + 3] if t >= T[o + 1] else T[o + 2]
    if kind == 2.0:
        start, end, fr, to = T[o + 1], T[o + 2], T[o + 3], T[o + 4]
        if t <= start:
            return fr
        if t >= end:
            return to
        return fr + (to - fr) * (t - start) / (end - start)
    if kind == 3.0:
        return T[o + 4] + T[o + 1] * math.sin(2.0 * math.pi * T[o + 2] * t + T[o + 3])
    if kind == 5.0:  # a chirp: amplitude, f0, f1, duration
        if t < 0.0 or t > T[o + 4]:
            return 0.0
        return T[o + 1] * math.sin(2.0 * math.pi * (T[o + 2] * t + (T[o + 3] - T[o + 2]) * t * t / (2.0 * T[o + 4])))
    ts, n = int(T[o + 1]), int(T[o + 2])
    vs = ts + n
    if t <= T[ts]:
        return T[vs]
    if t >= T[ts + n - 1]:
        return T[vs + n - 1]
    i = 1
    while T[ts + i] <= t:
        i += 1
    t0, t1 = T[ts + i - 1], T[ts + i]
    return T[vs + i - 1] + (T[vs + i] - T[vs + i - 1]) * (t - t0) / (t1 - t0)
