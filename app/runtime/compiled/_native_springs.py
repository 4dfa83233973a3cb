"""numba code of the compiled springs (see ``native_table`` for the rows they read): the law of
``springs.spring_tension``, on helper tendons (MuJoCo's lengths, rates and Jacobians) or on
helper sites (the geometry and the chain walk of ``spring_bank``, in its order of operations)."""

from __future__ import annotations

import math
from typing import Any

from numba import njit

from mjrig.runtime.compiled._native_base import f64, num
from mjrig.runtime.compiled.native_layout import NUM, SPRING, H

__all__ = ["springs", "site_springs"]

_INF = math.inf
_NS, _SPR, _COEF, _NB, _SCR = H["ns"], H["springs"], H["coef"], H["nb"], H["scratch"]
_TLEN, _TVEL, _TJ = H["tlen"], H["tvel"], H["tj"]
_SXPOS, _CVEL, _CDOF, _COM, _SOUT = H["sxpos"], H["cvel"], H["cdof"], H["com"], H["sout"]


@njit(cache=True, error_model="numpy")
def _law(T: Any, I: Any, o: int, t: float, s: float, v: float) -> float:
    """The tension along the length's gradient (N, negative pulling the ends together) of the
    spring row at ``o`` at extension ``s`` (m) and rate ``v`` (m/s); its numbers written to
    the coef rows (``spring_tension``'s arithmetic, in its order)."""
    nb, c0, row, flag = I[_NB], I[_COEF], I[o + 2], I[o + 1]
    k = num(T, o + 12, t)
    c = num(T, o + 12 + NUM, t)
    if flag == 3:
        ref, p, tmin, lo, hi = T[o + 3], num(T, o + 12 + 3 * NUM, t), 0.0, 0.0, num(T, o + 12 + 4 * NUM, t)
    else:
        ref, p, tmin = num(T, o + 12 + 2 * NUM, t), 0.0, -_INF
        lo = 0.0 if flag == 1 else -_INF
        hi = 0.0 if flag == 2 else _INF
    T[c0 + row], T[c0 + nb + row], T[c0 + 2 * nb + row] = ref, p, k
    T[c0 + 3 * nb + row], T[c0 + 4 * nb + row] = c, tmin
    T[c0 + 5 * nb + row], T[c0 + 6 * nb + row] = lo, hi
    s = s - ref
    out = k * s
    out = p - out
    out = out - c * v
    if out < tmin:
        out = tmin
    return out * (1.0 if (s >= lo and s <= hi) else 0.0)


@njit(cache=True, error_model="numpy")
def springs(T: Any, I: Any, dw: Any, q: Any, t: float) -> None:
    tl, tv, tj = f64(dw[I[_TLEN]]), f64(dw[I[_TVEL]]), f64(dw[I[_TJ]])
    o = I[_SPR]
    for _ in range(I[_NS]):
        ten = I[o]
        out = _law(T, I, o, t, tl[ten], tv[ten])
        adr, nnz, cols = I[o + 4], I[o + 5], I[o + 6]
        for j in range(nnz):
            q[I[cols + j]] += out * tj[adr + j]
        o += SPRING


@njit(cache=True, error_model="numpy")
def site_springs(T: Any, I: Any, dw: Any, q: Any, t: float) -> None:
    """Springs between helper sites: each one's geometry into ``sout`` (length, rate, the two
    points), then its ends' forces along the dofs of their chains below the common ancestor
    (cdof · (arm × F, F)); the common dofs' shares cancel (F is along the line of the ends)."""
    sx, cvel, cdof, com = f64(dw[I[_SXPOS]]), f64(dw[I[_CVEL]]), f64(dw[I[_CDOF]]), f64(dw[I[_COM]])
    nb, g = I[_NB], I[_SOUT]
    s = I[_SCR]  # scratch: both ends' points (6), arms (6), velocities (6)
    o = I[_SPR]
    for _ in range(I[_NS]):
        row = I[o + 2]
        for e in range(2):
            site, body, root = I[o + 4 * e], I[o + 7 + e], I[o + 9 + e]
            for i in range(3):
                T[s + 3 * e + i] = sx[3 * site + i]
                T[s + 6 + 3 * e + i] = sx[3 * site + i] - com[3 * root + i]
            ax, ay, az = T[s + 6 + 3 * e], T[s + 7 + 3 * e], T[s + 8 + 3 * e]
            w = 6 * body
            T[s + 12 + 3 * e] = cvel[w + 3] + cvel[w + 1] * az - cvel[w + 2] * ay
            T[s + 13 + 3 * e] = cvel[w + 4] + cvel[w + 2] * ax - cvel[w] * az
            T[s + 14 + 3 * e] = cvel[w + 5] + cvel[w] * ay - cvel[w + 1] * ax
        dx, dy, dz = T[s + 3] - T[s], T[s + 4] - T[s + 1], T[s + 5] - T[s + 2]
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        safe = length if length > 1e-12 else 1e-12
        rate = (dx * (T[s + 15] - T[s + 12]) + dy * (T[s + 16] - T[s + 13]) + dz * (T[s + 17] - T[s + 14])) / safe
        T[g + row], T[g + nb + row] = length, rate
        for i in range(6):
            T[g + 2 * nb + 6 * row + i] = T[s + i]
        if I[o + 1] != 4:
            out = _law(T, I, o, t, length, rate)
            cols, na = I[o + 6], I[o + 5]
            for e in range(2):  # the force on `to` is out·u, on `at` its opposite
                f = out / safe if e == 1 else -out / safe
                fx, fy, fz = f * dx, f * dy, f * dz
                ax, ay, az = T[s + 6 + 3 * e], T[s + 7 + 3 * e], T[s + 8 + 3 * e]
                tx, ty, tz = ay * fz - az * fy, az * fx - ax * fz, ax * fy - ay * fx
                first, count = (cols, na) if e == 0 else (cols + na, I[o + 11])
                for j in range(count):
                    dof = I[first + j]
                    cd = 6 * dof
                    q[dof] += (
                        cdof[cd] * tx
                        + cdof[cd + 1] * ty
                        + cdof[cd + 2] * tz
                        + cdof[cd + 3] * fx
                        + cdof[cd + 4] * fy
                        + cdof[cd + 5] * fz
                    )
        o += SPRING
