"""A load engine's table for the compiled callback (``native_kernel``): what it covers, packed.

A ``LawTable`` takes over a rig's load laws from the Python path when every one of them can be
compiled: the spring bank (springs MuJoCo does not compute as tendon springs: damped one-sided
springs, stroke windows with preload, profiled numbers), the world wrenches (``force``,
``torque``, ``general`` with numbers, params or profiles) and the joint torques and frictions
(pin frictions stay in Python: their level comes from the step before). User callables keep the
whole rig on the Python path, which stays the reference.

The outputs Python reads (the springs' numbers, the wrenches, the joint values) live in the
table, and the banks and loads are given views of them, so telemetry reads what the callback
wrote. ``pack`` re-reads the loads' numbers (after an edit or a param's change; never per
step); ``stamp`` names the table in a simulation's ``userdata``; ``fork`` copies it for another
simulation (a lock-step trial with its own param values).

Threading: belongs to the stepping thread, as its engine.
"""

from __future__ import annotations

import weakref
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.compiled.native_kernel import encode, kernel
from mjrig.runtime.compiled.native_layout import (
    HEADER,
    JOINT,
    MAGIC,
    NUM,
    SPRING,
    USERDATA_WORDS,
    WRENCH,
    H,
    userdata_slot,
)
from mjrig.runtime.forces.joint_loads import JointFriction, JointTorque

__all__ = ["LawTable"]
_SLACK = 256
"""Words kept free for table profiles that grow after the table is made."""


def _every(nums: list[list[float] | None]) -> list[list[float]] | None:
    """Every field's words (``encode``), or None when one of them cannot be evaluated natively."""
    words = [x for x in nums if x is not None]
    return words if len(words) == len(nums) else None


def _flag(law: Any) -> int:
    return 3 if law.stroke_limited else 1 if law.tension_only else 2 if law.compression_only else 0


class LawTable:
    """The compiled callback's table for one engine (``make`` decides whether it can be)."""

    @classmethod
    def make(cls, engine: Any) -> LawTable | None:
        """A table covering ``engine``'s laws, or None when any of them must stay in Python (or
        numba is missing, ``MJRIG_COMPILED=0``, or the model has no userdata for it)."""
        if userdata_slot(engine.model) is None:
            return None
        bank, wrenches = engine.bank, engine.wrenches
        joints = [
            ld for ld in engine.slow if type(ld) in (JointTorque, JointFriction) and not getattr(ld, "uses_pin", False)
        ]
        if bank is not None and (bank.custom or any(ld.law is None for ld in bank.loads)):
            return None
        if len(joints) != len(engine.slow):
            return None
        # Ideal springs are always MuJoCo's tendon springs: a rig of only those needs no table
        # (and no compiling); a one-sided spring may need one when a param gives it damping.
        one_sided = bank is not None and (
            not bank.allow_native or any(_flag(ld.law) or ld.law.varies_in_time() for ld in bank.loads)
        )
        if not (one_sided or wrenches is not None or joints) or _profile_words(engine, joints) is None:
            return None
        k = kernel()
        return None if k is None else cls(k, engine, joints)

    def __init__(self, k: Any, engine: Any, joints: list[Any]) -> None:
        self.k, self.model, self.data = k, engine.model, engine.data
        self.bank, self.wrenches, self.joints = engine.bank, engine.wrenches, joints
        m = self.model
        nb = self.bank.n if self.bank is not None else 0
        nw = len(self.wrenches.loads) if self.wrenches is not None else 0
        nj = len(joints)
        self.coef = HEADER
        self.sout = self.coef + 7 * nb  # helper sites: lengths, rates and points (8 nb)
        self.wout = self.sout + 8 * nb
        self.jout = self.wout + 6 * nw
        self.scratch = self.jout + nj
        self.springs = self.scratch + 18
        self.columns = self.springs + SPRING * nb
        nnz = 0
        if self.bank is not None and self.bank.by_sites:  # each spring's ends' own dofs
            nnz = sum(len(a) + len(b) for a, b in self.bank.chains)
        elif self.bank is not None:
            tendons = self.bank.tendons
            nnz = int(m.ten_J_rownnz[tendons].sum())
        self.wrench_rows = self.columns + nnz
        self.joint_rows = self.wrench_rows + WRENCH * nw
        self.extra = self.joint_rows + JOINT * nj
        self.words = self.extra + (_profile_words(engine, joints) or 0) + _SLACK
        got = k.allocate(self.words)
        if got is None:
            raise MemoryError("the compiled laws' table pool is full")
        self.offset, self.generation = got
        self.T = k.pool[self.offset : self.offset + self.words]
        self.I = self.T.view(np.int64)
        f = k.fields  # the header's words that never change; ``pack`` writes the counts
        for key, value in dict(
            size=self.words,
            coef=self.coef,
            nb=nb,
            wout=self.wout,
            jout=self.jout,
            applyft=k.applyft,
            nv=m.nv,
            scratch=self.scratch,
            springs=self.springs,
            wrenches=self.wrench_rows,
            joints=self.joint_rows,
            time=f["time"],
            qvel=f["qvel"],
            qfrc=f["qfrc_applied"],
            tlen=f["ten_length"],
            tvel=f["ten_velocity"],
            tj=f["ten_J"],
            xpos=f["xpos"],
            xmat=f["xmat"],
            sxpos=f["site_xpos"],
            cvel=f["cvel"],
            cdof=f["cdof"],
            com=f["subtree_com"],
            sout=self.sout,
            bysites=int(self.bank is not None and self.bank.by_sites),
        ).items():
            self.I[H[key]] = value
        self._give_views(nb, nw)
        self._finalizer = weakref.finalize(self, k.release, self.offset, self.words)
        k.install()

    def _give_views(self, nb: int, nw: int) -> None:
        """Hand the banks and loads views of the table's outputs (their values copied over)."""
        if self.bank is not None:
            self.bank.keep_numbers_in(self.T[self.coef : self.coef + 7 * nb].reshape(7, nb))
            if self.bank.by_sites:
                g = self.T[self.sout : self.sout + 8 * nb]
                self.bank.keep_geometry_in(g[:nb], g[nb : 2 * nb], g[2 * nb :].reshape(2 * nb, 3))
        if self.wrenches is not None:
            self.wrenches.keep_values_in(self.T[self.wout : self.wout + 6 * nw].reshape(nw, 6))
        for i, ld in enumerate(self.joints):
            ld.keep_value_in(self.T[self.jout + i : self.jout + i + 1])

    def pack(self) -> bool:
        """Write every active law's numbers (call after the banks' refresh: which springs MuJoCo
        computes itself); False when a law can no longer be compiled (the engine then goes back
        to Python)."""
        m, I, T = self.model, self.I, self.T
        extra: list[float] = []
        ns = nw = nj = 0
        o, cols = self.springs, self.columns
        b = self.bank
        for i, ld in enumerate(b.loads if b is not None else []):
            row = int(b.pos[i])
            if b.by_sites:  # every spring: an inactive one still has its geometry worked out
                law = ld.law
                nums = _every([encode(getattr(law, n), extra, self.extra + len(extra)) for n in law.numbers])
                if nums is None:
                    return False
                (sa, sb), (ba, bb), (ra, rb) = b.sites[i], b.bodies[i], b.roots[i]
                mine, theirs = b.chains[i]
                flag = _flag(law) if ld.active else 4
                I[o : o + 12] = [sa, flag, row, 0, sb, len(mine), cols, ba, bb, ra, rb, len(theirs)]
                T[o + 3] = ld.r0
                T[o + 12 : o + SPRING] = np.concatenate(nums)
                I[cols : cols + len(mine) + len(theirs)] = list(mine) + list(theirs)
                o, cols, ns = o + SPRING, cols + len(mine) + len(theirs), ns + 1
                continue
            if b.native[row] or not ld.active:
                continue
            law, ten = ld.law, int(b.tendons[i])
            nums = _every([encode(getattr(law, n), extra, self.extra + len(extra)) for n in law.numbers])
            if nums is None:
                return False
            adr, nnz = int(m.ten_J_rowadr[ten]), int(m.ten_J_rownnz[ten])
            I[o : o + 7] = [ten, _flag(law), row, 0, adr, nnz, cols]
            T[o + 3] = ld.r0
            T[o + 12 : o + SPRING] = np.concatenate(nums)
            I[cols : cols + nnz] = m.ten_J_colind[adr : adr + nnz]
            o, cols, ns = o + SPRING, cols + nnz, ns + 1
        o = self.wrench_rows
        w = self.wrenches
        reaction = {i: k for k, i in enumerate(w.reacting)} if w is not None else {}
        for i, ld in enumerate(w.loads if w is not None else []):
            if not ld.active:
                continue
            nums = _every([encode(x, extra, self.extra + len(extra)) for x in (*ld.force, *ld.torque)])
            if nums is None:
                return False
            r = reaction.get(i)
            I[o], I[o + 4], I[o + 9] = int(w.body[i]), (int(w.rbody[r]) if r is not None else -1), i
            T[o + 1 : o + 4] = w.offset[i]
            T[o + 5 : o + 8] = w.roffset[r] if r is not None else 0.0
            T[o + 10 : o + WRENCH] = np.concatenate(nums)
            o, nw = o + WRENCH, nw + 1
        o = self.joint_rows
        for i, ld in enumerate(self.joints):
            self.T[self.jout + i] = 0.0
            if not ld.active:
                continue
            kind, numbers = _joint_numbers(ld)
            nums = _every(
                [encode(x, extra, self.extra + len(extra)) if x is not None else [0.0] * NUM for x in numbers]
            )
            if nums is None:
                return False
            if ld.dof < 0:
                ld.resolve_ids(m, self.data)
            I[o : o + 4] = [ld.dof, kind, i, int(kind == 1 and ld.breakaway is not None)]
            T[o + 4 : o + 4 + NUM * len(nums)] = np.concatenate(nums)
            o, nj = o + JOINT, nj + 1
        if self.extra + len(extra) > self.words:
            return False
        T[self.extra : self.extra + len(extra)] = extra
        I[H["ns"]], I[H["nw"]], I[H["nj"]] = ns, nw, nj
        return True

    def stamp(self, d: mujoco.MjData | None = None) -> None:
        """Name this table in ``d``'s userdata (default: the engine's data)."""
        d = self.data if d is None else d
        self.k.name_pool(self.model, d)
        d.userdata[-4], d.userdata[-3] = float(self.offset), float(self.generation)

    def stamped(self) -> bool:
        """Whether the engine's data names this table (a reset clears userdata)."""
        ud = self.data.userdata
        return float(ud[-3]) == self.generation and float(ud[-USERDATA_WORDS]) == MAGIC

    def fork(self) -> Fork:
        """A copy of the table as packed now, for another simulation of the same model (the pool
        named in the model, see ``Fork.userdata``)."""
        self.k.name_pool(self.model, self.data)
        return Fork(self)

    def release(self) -> None:
        """Give the table back (the engine is dropped, or goes back to Python): the banks and
        loads keep copies of their outputs."""
        if self.bank is not None:
            self.bank.keep_numbers_in(self.bank.coef.copy())
            if self.bank.by_sites:
                self.bank.keep_geometry_in(np.zeros(self.bank.n), np.zeros(self.bank.n), np.zeros((2 * self.bank.n, 3)))
        if self.wrenches is not None:
            self.wrenches.keep_values_in(self.wrenches.values.copy())
        for ld in self.joints:
            ld.keep_value_in(np.zeros(1))
        self._finalizer()


class Fork:
    """A copy of a ``LawTable`` (its own outputs, which nothing reads)."""

    def __init__(self, table: LawTable) -> None:
        k = table.k
        got = k.allocate(table.words)
        if got is None:
            raise MemoryError("the compiled laws' table pool is full")
        self.offset, self.generation = got
        dst = k.pool[self.offset : self.offset + table.words]
        dst[1:] = table.T[1:]
        self._finalizer = weakref.finalize(self, k.release, self.offset, table.words)

    def userdata(self, base: np.ndarray) -> np.ndarray:
        """The rig's userdata words of ``base`` (a simulation's, naming the pool) naming this
        copy as its laws' table, and no recorder table."""
        words = np.array(base[-USERDATA_WORDS:], dtype=float)
        words[2:] = float(self.offset), float(self.generation), 0.0, 0.0
        return words

    def release(self) -> None:
        self._finalizer()


def _profile_words(engine: Any, joints: list[Any]) -> int | None:
    """Words the table profiles of ``engine``'s laws take, or None when a number cannot be
    compiled (a Python callable)."""
    numbers: list[Any] = []
    for ld in engine.bank.loads if engine.bank is not None else []:
        numbers += [getattr(ld.law, n) for n in ld.law.numbers]
    for ld in engine.wrenches.loads if engine.wrenches is not None else []:
        numbers += [*ld.force, *ld.torque]
    for ld in joints:
        numbers += _joint_numbers(ld)[1]
    words: list[float] = []
    if any(encode(x, words, 0) is None for x in numbers if x is not None):
        return None
    return len(words)


def _joint_numbers(ld: Any) -> tuple[int, list[Any]]:
    if isinstance(ld, JointTorque):
        return 0, [ld.magnitude]
    return 1, [ld.coulomb, ld.breakaway, ld.stribeck_velocity, ld.viscous, ld.coulomb_velocity]
