"""numba code of the compiled load laws (see ``native_kernel`` for the table they read; the
springs' are in ``_native_springs``).

Every law is written as its Python reference writes it (``springs.spring_tension``,
``values.Profile``s, ``joint_loads.friction_force``, ``mj_applyFT`` for world wrenches), in the
same order of operations, so the two agree to the last bit except where a sum's order differs
(a tendon Jacobian's product, a point's rotation).
"""

from __future__ import annotations

import math
from typing import Any

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from mjrig.runtime.compiled._native_base import f64, i32, i64, num
from mjrig.runtime.compiled._native_springs import site_springs, springs
from mjrig.runtime.compiled.native_layout import JOINT, MAGIC, NUM, USERDATA_WORDS, WRENCH, H, R

__all__ = ["CALLBACKS", "evaluate", "locate", "record"]

_INF = math.inf
_TINY = 1e-9
(
    _NS,
    _NW,
    _NJ,
    _SPR,
    _WRE,
    _JOI,
    _COEF,
    _NB,
    _WOUT,
    _JOUT,
    _FT,
    _NV,
    _SCR,
    _TIME,
    _QVEL,
    _QFRC,
    _TLEN,
    _TVEL,
    _TJ,
    _XPOS,
    _XMAT,
    _SXPOS,
    _CVEL,
    _CDOF,
    _COM,
    _SOUT,
    _BYSITES,
) = (
    H[k]
    for k in (
        "ns",
        "nw",
        "nj",
        "springs",
        "wrenches",
        "joints",
        "coef",
        "nb",
        "wout",
        "jout",
        "applyft",
        "nv",
        "scratch",
        "time",
        "qvel",
        "qfrc",
        "tlen",
        "tvel",
        "tj",
        "xpos",
        "xmat",
        "sxpos",
        "cvel",
        "cdof",
        "com",
        "sout",
        "bysites",
    )
)


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


@njit(cache=True, error_model="numpy")
def _wrenches(T: Any, I: Any, tab: int, m: int, d: int, dw: Any, t: float) -> None:
    xpos, xmat = f64(dw[I[_XPOS]]), f64(dw[I[_XMAT]])
    qfrc, fn, s, w0 = dw[I[_QFRC]], I[_FT], I[_SCR], I[_WOUT]
    for pass_ in range(2):  # every load, then every reaction (the Python order)
        o = I[_WRE]
        for _ in range(I[_NW]):
            out = w0 + 6 * I[o + 9]
            if pass_ == 0:
                for j in range(6):
                    T[out + j] = num(T, o + 10 + j * NUM, t)
                b, off = I[o], o + 1
                sign = 1.0
            else:
                b, off = I[o + 4], o + 5
                sign = -1.0
            if b >= 0:
                for j in range(6):
                    T[s + j] = sign * T[out + j]
                for i in range(3):
                    r = 9 * b + 3 * i
                    T[s + 6 + i] = xmat[r] * T[off] + xmat[r + 1] * T[off + 1] + xmat[r + 2] * T[off + 2]
                    T[s + 6 + i] += xpos[3 * b + i]
                # numba's stubs give an intrinsic's call its definition's parameters, typingctx too
                _apply_ft(fn, m, d, tab + 8 * s, tab + 8 * (s + 3), tab + 8 * (s + 6), b, qfrc)  # type: ignore[call-arg]
            o += WRENCH


@njit(cache=True, error_model="numpy")
def _joints(T: Any, I: Any, dw: Any, q: Any, t: float) -> None:
    qvel = f64(dw[I[_QVEL]])
    o, j0 = I[_JOI], I[_JOUT]
    for _ in range(I[_NJ]):
        dof = I[o]
        if I[o + 1] == 0:
            f = num(T, o + 4, t)
        else:
            fc = num(T, o + 4, t)
            fc = fc if fc > 0.0 else 0.0
            fb = fc
            if I[o + 3]:
                b = num(T, o + 4 + NUM, t)
                fb = b if b > fc else fc
            sv = num(T, o + 4 + 2 * NUM, t)
            sv = sv if sv > _TINY else _TINY
            visc = num(T, o + 4 + 3 * NUM, t)
            visc = visc if visc > 0.0 else 0.0
            cv = num(T, o + 4 + 4 * NUM, t)
            cv = cv if cv > _TINY else _TINY
            v = qvel[dof]
            level = fc + (fb - fc) * math.exp(-((v / sv) ** 2))
            f = -(level * math.tanh(v / cv) + visc * v)
        T[j0 + I[o + 2]] = f
        q[dof] += f
        o += JOINT


@njit(cache=True, error_model="numpy")
def evaluate(m: int, d: int, tab: int) -> None:
    """Overwrite ``qfrc_applied`` of MjData ``d`` with the loads of the table at ``tab``."""
    T, I, dw = f64(tab), i64(tab), i64(d)
    t = f64(d)[I[_TIME]]
    q = f64(dw[I[_QFRC]])
    for i in range(I[_NV]):
        q[i] = 0.0
    if I[_NS]:
        if I[_BYSITES]:
            site_springs(T, I, dw, q, t)
        else:
            springs(T, I, dw, q, t)
    if I[_NW]:
        _wrenches(T, I, tab, m, d, dw, t)
    if I[_NJ]:
        _joints(T, I, dw, q, t)


@intrinsic
def _clock_now(typingctx: Any, fn: Any, clock: Any, ts: Any) -> Any:
    """Call ``clock_gettime(clock, ts)`` at address ``fn``."""
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ir.IntType(8).as_pointer()])
        fp = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(
            fp, [builder.trunc(args[1], ir.IntType(32)), builder.inttoptr(args[2], ir.IntType(8).as_pointer())]
        )
        return context.get_dummy_value()

    return sig, codegen


(
    _R_ARMED,
    _R_MODE,
    _R_DEC,
    _R_COUNT,
    _R_INV,
    _R_NEXT,
    _R_CON,
    _R_CLOCK,
    _R_BASE,
    _R_OFFS,
    _R_WIDTH,
    _R_ROWS,
    _R_STRIDE,
    _R_ROW,
    _R_WALL0,
    _R_TIME,
    _R_NCON,
    _R_CPTR,
    _R_CSIZE,
    _R_FN,
    _R_CID,
    _R_TS,
) = (
    R[k]
    for k in (
        "armed",
        "mode",
        "decimation",
        "count",
        "inv_rate",
        "next",
        "contacts",
        "clock",
        "base",
        "offsets",
        "width",
        "rows",
        "stride",
        "row",
        "wall0",
        "time",
        "ncon",
        "contact",
        "contact_size",
        "clock_fn",
        "clock_id",
        "timespec",
    )
)


@njit(cache=True, error_model="numpy")
def record(d: int, tab: int) -> None:
    """One telemetry row of MjData ``d`` into the recorder table at ``tab`` when one is due, as
    ``SignalManager.sample`` gathers it (only while the table is armed: steps stepped in a block)."""
    Ri, F = i64(tab), f64(tab)
    if Ri[_R_ARMED] <= 0:
        return
    Ri[_R_ARMED] -= 1
    t = f64(d)[Ri[_R_TIME]]
    if Ri[_R_MODE] == 1:  # a rate: SignalManager.due's schedule
        inv, nxt = F[_R_INV], F[_R_NEXT]
        if t + inv < nxt - inv:
            nxt = -_INF
        if not t + 1e-12 >= nxt:
            return
        if nxt == -_INF:
            nxt = t
        F[_R_NEXT] = nxt + inv
    else:
        Ri[_R_COUNT] += 1
        if Ri[_R_COUNT] % Ri[_R_DEC] != 0:
            return
    if Ri[_R_CON]:  # contact_values: the count and the deepest penetration
        c = f64(Ri[_R_CON])
        n = i32(d)[Ri[_R_NCON]]
        c[0] = float(n)
        c[1] = 0.0
        if n:
            first = i64(d)[Ri[_R_CPTR]]
            low = f64(first)[0]
            for i in range(1, n):
                v = f64(first + i * Ri[_R_CSIZE])[0]
                if v < low:
                    low = v
            deep = -low
            c[1] = deep if deep > 0.0 else 0.0
    clock = f64(Ri[_R_CLOCK])
    clock[0] = t
    # numba's stubs give an intrinsic's call its definition's parameters, typingctx too
    _clock_now(Ri[_R_FN], Ri[_R_CID], tab + 8 * _R_TS)  # type: ignore[call-arg]
    clock[1] = (float(Ri[_R_TS]) + float(Ri[_R_TS + 1]) * 1e-9) - F[_R_WALL0]
    row = f64(Ri[_R_ROWS] + 8 * Ri[_R_ROW] * Ri[_R_STRIDE])
    base, offsets = f64(Ri[_R_BASE]), i64(Ri[_R_OFFS])
    for k in range(Ri[_R_WIDTH]):
        row[k] = base[offsets[k]]
    Ri[_R_ROW] += 1


@njit(cache=True, error_model="numpy")
def locate(m: int, d: int, ud_at: int, nud_at: int, nnum_at: int, num_at: int, which: int) -> int:
    """The address of the table simulation ``d`` names (``which``: 2 the laws', 4 the recorder's),
    or 0 when it names none (another model, a reset, a freed table). ``*_at``: word offsets of
    ``mjData.userdata`` and of ``mjModel.nuserdata``, ``nnumericdata`` and ``numeric_data``.

    The last six userdata words are MAGIC, where the rig's numeric ``__mjrig_userdata`` starts in
    ``numeric_data`` (its words: the slot, the pool's address, the pool's words: written by this
    process, so a state restored from elsewhere never names memory it does not own), then each
    table's offset and generation."""
    n = i64(m)[nud_at]
    if n < USERDATA_WORDS:
        return 0
    ud = f64(i64(d)[ud_at])
    base = n - USERDATA_WORDS
    if ud[base] != MAGIC:
        return 0
    adr = ud[base + 1]
    if not (adr >= 0.0 and adr + 2.0 < float(i64(m)[nnum_at])):
        return 0
    numeric = f64(i64(m)[num_at])
    a = int(adr)
    if numeric[a] != float(base) or numeric[a + 1] == 0.0:
        return 0
    pool, words = int(numeric[a + 1]), numeric[a + 2]
    off = ud[base + which]
    if not (off >= 0.0 and off < words - 64.0):
        return 0
    tab = pool + 8 * int(off)
    head = i64(tab)
    if head[0] == 0 or float(head[0]) != ud[base + which + 1] or off + float(head[1]) > words:
        return 0
    return tab


CALLBACKS = """\"\"\"mjrig's compiled MuJoCo callbacks for one MuJoCo build (generated: native_kernel).\"\"\"
from numba import cfunc, types
from mjrig.runtime.compiled._native_code import evaluate, locate, record


@cfunc(types.void(types.int64, types.int64), error_model="numpy")
def passive(m, d):
    tab = locate(m, d, {userdata}, {nuserdata}, {nnumericdata}, {numeric_data}, 2)
    if tab:
        evaluate(m, d, tab)


@cfunc(types.void(types.int64, types.int64), error_model="numpy")
def control(m, d):
    tab = locate(m, d, {userdata}, {nuserdata}, {nnumericdata}, {numeric_data}, 4)
    if tab:
        record(d, tab)
"""
"""The callbacks' module, written once per MuJoCo build with its struct offsets as numbers (so
numba's cache keeps them compiled from one process to the next)."""
