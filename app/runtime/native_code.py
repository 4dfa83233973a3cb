"""numba code of the compiled load laws (see ``native_kernel`` for the table they read).

Every law is written as its Python reference writes it (``springs.spring_tension``,
``values.Profile``s, ``joint_loads.friction_force``, ``mj_applyFT`` for world wrenches), in the
same order of operations, so the two agree to the last bit except where a sum's order differs
(a tendon Jacobian's product, a point's rotation).
"""
from __future__ import annotations

import math
from typing import Any

from llvmlite import ir
from numba import cfunc, njit, types
from numba.extending import intrinsic

from mjrig.runtime.native_kernel import H, NUM

__all__ = ["compile_callback"]

_INF = math.inf
_TINY = 1e-9
(_GEN, _NS, _NW, _NJ, _SPR, _WRE, _JOI, _COEF, _NB, _WOUT, _JOUT, _FT, _NV, _SCR, _TIME, _QVEL, _QFRC,
 _TLEN, _TVEL, _TJ, _XPOS, _XMAT) = (H[k] for k in ("gen", "ns", "nw", "nj", "springs", "wrenches", "joints",
                                                   "coef", "nb", "wout", "jout", "applyft", "nv", "scratch",
                                                   "time", "qvel", "qfrc", "tlen", "tvel", "tj", "xpos", "xmat"))


@intrinsic
def _f64(typingctx: Any, addr: Any) -> Any:
    """An int64 address as a float64 pointer."""
    sig = types.CPointer(types.float64)(types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return sig, codegen


@intrinsic
def _i64(typingctx: Any, addr: Any) -> Any:
    """An int64 address as an int64 pointer."""
    sig = types.CPointer(types.int64)(types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
    return sig, codegen


@intrinsic
def _apply_ft(typingctx: Any, fn: Any, m: Any, d: Any, f: Any, t: Any, p: Any, body: Any, q: Any) -> Any:
    """Call ``mj_applyFT(m, d, force, torque, point, body, qfrc_target)`` at address ``fn``."""
    sig = types.void(*([types.int64] * 8))

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        vp = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [vp, vp, vp, vp, vp, ir.IntType(32), vp])
        fp = builder.inttoptr(args[0], fnty.as_pointer())
        call = [builder.inttoptr(a, vp) for a in args[1:6]]
        call += [builder.trunc(args[6], ir.IntType(32)), builder.inttoptr(args[7], vp)]
        builder.call(fp, call)
        return context.get_dummy_value()
    return sig, codegen


@njit(cache=True)
def _num(T: Any, o: int, t: float) -> float:
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


@njit(cache=True)
def _springs(T: Any, I: Any, dw: Any, q: Any, t: float) -> None:
    tl, tv, tj = _f64(dw[I[_TLEN]]), _f64(dw[I[_TVEL]]), _f64(dw[I[_TJ]])
    nb, c0 = I[_NB], I[_COEF]
    o = I[_SPR]
    for _ in range(I[_NS]):
        ten, flag, row = I[o], I[o + 1], I[o + 2]
        k = _num(T, o + 7, t)
        c = _num(T, o + 7 + NUM, t)
        if flag == 3:
            ref, p, tmin, lo, hi = T[o + 3], _num(T, o + 7 + 3 * NUM, t), 0.0, 0.0, _num(T, o + 7 + 4 * NUM, t)
        else:
            ref, p, tmin = _num(T, o + 7 + 2 * NUM, t), 0.0, -_INF
            lo = 0.0 if flag == 1 else -_INF
            hi = 0.0 if flag == 2 else _INF
        T[c0 + row], T[c0 + nb + row], T[c0 + 2 * nb + row] = ref, p, k
        T[c0 + 3 * nb + row], T[c0 + 4 * nb + row] = c, tmin
        T[c0 + 5 * nb + row], T[c0 + 6 * nb + row] = lo, hi
        s = tl[ten] - ref
        out = k * s
        out = p - out
        out = out - c * tv[ten]
        if out < tmin:
            out = tmin
        out = out * (1.0 if (s >= lo and s <= hi) else 0.0)
        adr, nnz, cols = I[o + 4], I[o + 5], I[o + 6]
        for j in range(nnz):
            q[I[cols + j]] += out * tj[adr + j]
        o += 7 + 5 * NUM


@njit(cache=True)
def _wrenches(T: Any, I: Any, tab: int, m: int, d: int, dw: Any, t: float) -> None:
    xpos, xmat = _f64(dw[I[_XPOS]]), _f64(dw[I[_XMAT]])
    qfrc, fn, s, w0 = dw[I[_QFRC]], I[_FT], I[_SCR], I[_WOUT]
    for pass_ in range(2):  # every load, then every reaction (the Python order)
        o = I[_WRE]
        for _ in range(I[_NW]):
            out = w0 + 6 * I[o + 9]
            if pass_ == 0:
                for j in range(6):
                    T[out + j] = _num(T, o + 10 + j * NUM, t)
                b, off = I[o], o + 1
                sign = 1.0
            else:
                b, off = I[o + 4], o + 5
                sign = -1.0
            if b >= 0:
                for j in range(6):
                    T[s + j] = sign * T[out + j] if pass_ else T[out + j]
                for i in range(3):
                    r = 9 * b + 3 * i
                    T[s + 6 + i] = xmat[r] * T[off] + xmat[r + 1] * T[off + 1] + xmat[r + 2] * T[off + 2]
                    T[s + 6 + i] += xpos[3 * b + i]
                _apply_ft(fn, m, d, tab + 8 * s, tab + 8 * (s + 3), tab + 8 * (s + 6), b, qfrc)
            o += 10 + 6 * NUM


@njit(cache=True)
def _joints(T: Any, I: Any, dw: Any, q: Any, t: float) -> None:
    qvel = _f64(dw[I[_QVEL]])
    o, j0 = I[_JOI], I[_JOUT]
    for _ in range(I[_NJ]):
        dof = I[o]
        if I[o + 1] == 0:
            f = _num(T, o + 4, t)
        else:
            fc = _num(T, o + 4, t)
            fc = fc if fc > 0.0 else 0.0
            fb = fc
            if I[o + 3]:
                b = _num(T, o + 4 + NUM, t)
                fb = b if b > fc else fc
            sv = _num(T, o + 4 + 2 * NUM, t)
            sv = sv if sv > _TINY else _TINY
            visc = _num(T, o + 4 + 3 * NUM, t)
            visc = visc if visc > 0.0 else 0.0
            cv = _num(T, o + 4 + 4 * NUM, t)
            cv = cv if cv > _TINY else _TINY
            v = qvel[dof]
            level = fc + (fb - fc) * math.exp(-(v / sv) ** 2)
            f = -(level * math.tanh(v / cv) + visc * v)
        T[j0 + I[o + 2]] = f
        q[dof] += f
        o += 4 + 5 * NUM


@njit(cache=True)
def evaluate(m: int, d: int, tab: int) -> None:
    """Overwrite ``qfrc_applied`` of MjData ``d`` with the loads of the table at ``tab``."""
    T, I, dw = _f64(tab), _i64(tab), _i64(d)
    t = _f64(d)[I[_TIME]]
    q = _f64(dw[I[_QFRC]])
    for i in range(I[_NV]):
        q[i] = 0.0
    if I[_NS]:
        _springs(T, I, dw, q, t)
    if I[_NW]:
        _wrenches(T, I, tab, m, d, dw, t)
    if I[_NJ]:
        _joints(T, I, dw, q, t)


def compile_callback(pool: int, words: int, userdata: int, nuserdata: int, magic: float) -> Any:
    """The ``mjcb_passive`` cfunc for a pool at address ``pool`` of ``words`` float64 words;
    ``userdata``/``nuserdata``: word offsets of ``mjData.userdata`` and ``mjModel.nuserdata``."""

    @cfunc(types.void(types.int64, types.int64), cache=False)
    def passive(m: int, d: int) -> None:
        n = _i64(m)[nuserdata]
        if n < 3:
            return
        ud = _f64(_i64(d)[userdata])
        if ud[n - 3] != magic:
            return
        off = ud[n - 2]
        if not (off >= 0.0 and off < words - 64):
            return
        tab = pool + 8 * int(off)
        head = _i64(tab)
        if float(head[0]) != ud[n - 1] or head[0] == 0 or int(off) + head[1] > words:
            return
        evaluate(m, d, tab)

    return passive
