"""The rig's load laws as compiled code: one MuJoCo passive-force callback, without the GIL.

MuJoCo calls ``mjcb_passive`` inside ``mj_passive`` (once per ``mj_step``, at every RK4 stage,
and in ``mj_forward``), before it reads ``qfrc_applied``. The callback here is compiled by
numba (``cfunc``) and handed to MuJoCo as a C function pointer, so MuJoCo calls it without
Python: in ``mj_step(nstep=...)`` blocks and in ``mujoco.batch`` rollouts on every thread.

Which laws it evaluates, and with which numbers, is data: a *table* of float64 words (layout
below, filled by ``native_table``) in one pool allocated once per process. Each simulation
names its table in its own ``MjData.userdata``: the last three words are ``MAGIC``, the
table's offset in the pool (words) and the table's generation. A simulation without them
(any other model, or a reset one) gets no call's work; a generation that no longer matches
(the table was freed or reused) gets none either, so a stale state restored into a
``MjData`` never reads a stale table. The callback overwrites ``qfrc_applied`` with the
table's loads: what mjrig's Python path writes there.

Struct offsets of ``mjData``/``mjModel`` fields are found at first use by matching the
arrays' addresses (``fields``), never hard-coded, so another MuJoCo build gets its own.
"""
from __future__ import annotations

import ctypes
import math
import threading
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

__all__ = ["MAGIC", "POOL_WORDS", "kernel", "H", "NUM", "SPRING", "WRENCH", "JOINT", "HEADER"]

MAGIC = 7.0710678118654752e-297
"""The word before a table's offset in ``userdata`` (an improbable value for a model's own)."""
POOL_WORDS = 1 << 21
"""float64 words in the table pool (16 MiB of address space, touched only where used)."""

# Header words (int64): the table's generation, counts and section offsets, output offsets,
# mj_applyFT's address, the MjData field offsets (words into the struct).
H = dict(gen=0, size=1, ns=2, nw=3, nj=4, springs=5, wrenches=6, joints=7, coef=8, nb=9, wout=10,
         jout=11, applyft=12, nv=13, scratch=14, time=15, qvel=16, qfrc=17, tlen=18, tvel=19, tj=20,
         xpos=21, xmat=22)
HEADER = 24
NUM = 6
"""Words of one number: kind (0 constant, 1 step, 2 ramp, 3 sine, 4 table) and its data."""
SPRING = 7 + 5 * NUM
"""Words of a spring row: tendon, flag, coef row, r0, J row address, nnz, column list offset,
then stiffness, damping, rest length, preload and stroke."""
WRENCH = 10 + 6 * NUM
"""Words of a world wrench: body, offset xyz, reaction body (-1: none), its offset xyz, output
row, then fx fy fz tx ty tz."""
JOINT = 4 + 5 * NUM
"""Words of a joint load: dof, kind (0 torque, 1 friction), output index, breakaway given,
then magnitude (torque) or coulomb, breakaway, Stribeck velocity, viscous, Coulomb velocity."""
_TINY = 1e-9

_lock = threading.Lock()
_kernel: Any = None


def kernel() -> Any:
    """The compiled callback (``.address``, ``.pool``, ``.fields``, ``.install()``), compiled on
    first use (about a second); None where numba is missing."""
    global _kernel
    with _lock:
        if _kernel is None:
            try:
                _kernel = _Kernel()
            except ImportError:
                _kernel = False
    return _kernel or None


_PASSIVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def _struct_addresses(m: mujoco.MjModel, d: mujoco.MjData) -> tuple[int, int]:
    """The addresses of ``m``'s mjModel and ``d``'s mjData, as MuJoCo hands them to a callback."""
    got: list[tuple[int, int]] = []
    probe = _PASSIVE(lambda mp, dp: got.append((int(mp), int(dp))))
    previous = mujoco.get_mjcb_passive()
    mujoco.set_mjcb_passive(probe)
    try:
        mujoco.mj_forward(m, d)
    finally:
        mujoco.set_mjcb_passive(previous)
    if not got:
        raise ImportError("MuJoCo did not call the passive-force callback")
    return got[0]


def _field_offsets() -> dict[str, int]:
    """Word offsets of the pointers and numbers the callback reads, in mjData (and mjModel's
    nuserdata), found by matching known values in two differently sized models (ImportError
    when one is not found)."""
    found: dict[str, set[int]] = {}
    for nud, nbody in ((12347, 2), (23459, 5)):
        bodies = "".join(f"<body pos='0 0 {i}'><joint name='j{i}' type='slide'/><geom size='.1'/><site name='s{i}'/>"
                         "</body>" for i in range(nbody))
        m = mujoco.MjModel.from_xml_string(  # every kind of array non-empty: no two fields share an address
            f"<mujoco><worldbody>{bodies}<site name='w' pos='1 1 1'/><body mocap='true'/></worldbody>"
            "<tendon><spatial><site site='s0'/><site site='w'/></spatial></tendon>"
            "<equality><joint joint1='j0' joint2='j1'/></equality><actuator><motor joint='j0'/></actuator>"
            f"<size nuserdata='{nud}'/></mujoco>")
        d = mujoco.MjData(m)
        d.time = 1234.5678125 + nud
        m_address, d_address = _struct_addresses(m, d)
        words = np.ctypeslib.as_array((ctypes.c_uint64 * 60000).from_address(d_address))
        for name in ("qvel", "qfrc_applied", "ten_length", "ten_velocity", "ten_J", "xpos", "xmat", "userdata"):
            hits = set(np.flatnonzero(words == getattr(d, name).ctypes.data).tolist())
            found[name] = found.get(name, hits) & hits
        dbl = words.view(np.float64)
        hits = set(np.flatnonzero(dbl == d.time).tolist())
        found["time"] = found.get("time", hits) & hits
        mw = np.ctypeslib.as_array((ctypes.c_int64 * 4000).from_address(m_address))
        hits = set(np.flatnonzero(mw == nud).tolist())
        found["nuserdata"] = found.get("nuserdata", hits) & hits
    out = {}
    for name, hits in found.items():
        # An empty array has the address of the next array allocated: the field is the last of
        # a run of neighbouring hits.
        ordered = sorted(hits)
        if not ordered or ordered[-1] - ordered[0] != len(ordered) - 1:
            raise ImportError(f"cannot place mjData.{name} in this MuJoCo build")
        out[name] = ordered[-1]
    return out


class _Kernel:
    def __init__(self) -> None:
        from mjrig.runtime import native_code  # imports numba (ImportError without it)

        self.fields = _field_offsets()
        self.pool = np.zeros(POOL_WORDS)
        lib = ctypes.CDLL(str(next(Path(mujoco.__file__).parent.glob("libmujoco.so*"), "libmujoco.so")))
        self.applyft = int(ctypes.cast(lib.mj_applyFT, ctypes.c_void_p).value or 0)
        self.callback = native_code.compile_callback(self.pool.ctypes.data, POOL_WORDS, self.fields["userdata"],
                                                     self.fields["nuserdata"], MAGIC)
        self.address = int(self.callback.address)
        self._pointer = ctypes.cast(self.address, _PASSIVE)
        self.free: list[tuple[int, int]] = [(0, POOL_WORDS)]
        self.generation = 0

    def install(self) -> None:
        """Make the callback MuJoCo's ``mjcb_passive`` (process-wide; a no-op for other data)."""
        if mujoco.get_mjcb_passive() is None or not self.installed():
            mujoco.set_mjcb_passive(self._pointer)

    def installed(self) -> bool:
        current = mujoco.get_mjcb_passive()
        return current is not None and ctypes.cast(current, ctypes.c_void_p).value == self.address

    def allocate(self, words: int) -> tuple[int, int] | None:
        """(offset, generation) of a fresh table of ``words`` in the pool, or None when full."""
        with _lock:
            for i, (start, size) in enumerate(self.free):
                if size >= words:
                    self.free[i] = (start + words, size - words)
                    self.generation += 1
                    self.pool[start:start + words] = 0.0
                    self.pool.view(np.int64)[start] = self.generation
                    return start, self.generation
        return None

    def release(self, start: int, words: int) -> None:
        """Give a table's words back; its generation is cleared so no state names it any more."""
        with _lock:
            self.pool.view(np.int64)[start] = 0
            self.free.append((start, words))
            self.free.sort()
            merged: list[tuple[int, int]] = []
            for s, n in self.free:
                if merged and merged[-1][0] + merged[-1][1] == s:
                    merged[-1] = (merged[-1][0], merged[-1][1] + n)
                else:
                    merged.append((s, n))
            self.free = merged


def encode(x: Any, t_words: list[float], base: int) -> list[float] | None:
    """The ``NUM`` words of a numeric field (a number, a param or a profile), appending a
    table profile's points to ``t_words``, which start ``base`` words into the table; None for
    a field the callback cannot evaluate (a Python callable) or a non-finite number."""
    from mjrig.runtime.values import Constant, NamedValue, Ramp, Sine, Step, Table

    if isinstance(x, NamedValue):
        x = x.value
    if isinstance(x, Constant):
        x = x.value
    if isinstance(x, (int, float)):
        return [0.0, float(x), 0.0, 0.0, 0.0, 0.0] if math.isfinite(float(x)) else None
    if isinstance(x, Step):
        words = [1.0, x.time, x.before, x.after, 0.0, 0.0]
    elif isinstance(x, Ramp):
        words = [2.0, x.start, x.end, x.from_, x.to, 0.0]
    elif isinstance(x, Sine):
        words = [3.0, x.amplitude, x.frequency, x.phase, x.offset, 0.0]
    elif isinstance(x, Table) and len(x.time) >= 1:
        words = [4.0, float(base + len(t_words)), float(len(x.time)), 0.0, 0.0, 0.0]
        t_words.extend(float(v) for v in x.time)
        t_words.extend(float(v) for v in x.value)
    else:
        return None
    return [float(w) for w in words] if all(math.isfinite(w) for w in words) else None
