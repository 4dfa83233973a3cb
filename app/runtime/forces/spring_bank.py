"""The spring bank: every point-to-point load of a rig with helpers (``rigmodel``), over arrays.

With helper tendons (the implicit integrators), their lengths, rates and Jacobians come from
MuJoCo, their tensions from ``spring_tension`` over arrays, and ``qfrc_applied = Jᵀ·tension`` is
one matrix product; springs MuJoCo computes exactly are handed to it as tendon spring-dampers.
With helper sites alone (Euler, RK4), the bank works the geometry out itself from the sites'
positions and the bodies' velocities (``sense``) and applies each end's force along the dofs of
its chain below the ends' common ancestor (``_apply_at_ends``); the compiled laws
(``native_table``, ``_native_springs``) do the same arithmetic without Python.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mujoco
import numpy as np

from mjrig.runtime.forces.loads import Load, PointToPointForce
from mjrig.runtime.forces.springs import spring_tension

__all__ = ["Helper", "SpringBank", "WRITTEN"]

Helper = int | tuple[int, int]
"""A point-to-point load's helper in a rig-compiled model: its tendon (id), or the sites (ids)
of its two ends (`at`, `to`) where the model has no rig tendons."""

WRITTEN = ("tendon_stiffness", "tendon_damping", "tendon_lengthspring")
"""Every MjModel field the bank writes (its native springs): a lock-step sweep gives each trial these."""

_FAR = 1e10
"""m: the open end of a tension- or compression-only spring's dead band (no model is this big)."""


def _chain(model: mujoco.MjModel, body: int) -> list[int]:
    """The dofs that move ``body``, from its own to its tree's root (``dof_parentid``)."""
    while body > 0 and model.body_dofnum[body] == 0:
        body = int(model.body_parentid[body])
    dofs: list[int] = []
    j = int(model.body_dofadr[body] + model.body_dofnum[body] - 1) if body > 0 else -1
    while j >= 0:
        dofs.append(j)
        j = int(model.dof_parentid[j])
    return dofs


def _chains(model: mujoco.MjModel, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The dofs moving body ``a`` and not ``b``, and those moving ``b`` and not ``a``: a spring's
    ends' forces, equal and opposite along the line joining them, do no work on the others."""
    ca, cb = _chain(model, a), _chain(model, b)
    common = set(ca) & set(cb)
    return np.array([j for j in ca if j not in common], int), np.array([j for j in cb if j not in common], int)


class SpringBank:
    """Array state of the point-to-point loads with helpers (n springs)."""

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        loads: list[PointToPointForce],
        helpers: list[Helper],
        *,
        native: bool = True,
    ) -> None:
        n = len(loads)
        self.loads = loads
        self.by_sites = bool(helpers) and not isinstance(helpers[0], int)
        """Whether the ends are helper sites (the bank's own geometry) rather than tendons."""
        if self.by_sites:
            self.sites = np.array(helpers, dtype=int).reshape(n, 2)
            self.tendons = np.zeros(0, dtype=int)
            self.t0 = 0
            self.pos = np.arange(n)
        else:
            self.tendons = np.array(helpers, dtype=int)
            order = np.argsort(self.tendons)
            assert np.all(np.diff(self.tendons[order]) == 1) or n <= 1, "rig tendons must be contiguous"
            self.t0 = int(self.tendons.min()) if n else 0
            self.pos = self.tendons - self.t0  # row of each load within the tendon slice
        self.n = n
        # The laws' numbers in one block, so a telemetry row copies them at once.
        self.coef = np.zeros((7, n))
        self.ref, self.p, self.k, self.c, self.tmin, self.lo, self.hi = self.coef
        self.s, self.tension, self.tmp = np.zeros(n), np.zeros(n), np.zeros(n)
        self.mask, self.mask2 = np.zeros(n, bool), np.zeros(n, bool)
        self.custom = [i for i, ld in enumerate(loads) if ld.magnitude_func is not None]
        self.custom_rows = np.array([self.pos[i] for i in self.custom], dtype=int)
        self.allow_native = native and not self.by_sites
        self.native = np.zeros(n, bool)  # rows MuJoCo evaluates as tendon springs
        self.apply_lo, self.apply_hi = np.full(n, math.inf), np.full(n, -math.inf)
        self.python = True  # whether any row needs apply() every step
        self.plain = False  # all rows ideal: forces() takes its shortcut
        self.pull = np.zeros(n)  # -tension (N) in that shortcut
        self.on_error: Callable[[Load, BaseException], None] = lambda ld, exc: None  # set by LoadEngine
        self.length: np.ndarray  # m, by row (``bind``: MuJoCo's tendon lengths, or the bank's own)
        self.rate: np.ndarray  # m/s, by row
        self.points: np.ndarray  # (2 n, 3) m: each row's `at` then `to` point, world frame
        self.bind(model, data)

    def keep_numbers_in(self, block: np.ndarray) -> None:
        """Keep the laws' numbers (7, n) in ``block`` from now on (the compiled laws' table,
        which writes a profiled number's value at each evaluation); its values are copied over."""
        block[...] = self.coef
        self.coef = block
        self.ref, self.p, self.k, self.c, self.tmin, self.lo, self.hi = self.coef

    def keep_geometry_in(self, length: np.ndarray, rate: np.ndarray, points: np.ndarray) -> None:
        """Keep the lengths (n), rates (n) and end points (2 n, 3) in these arrays from now on
        (the compiled laws' table, which writes them at each evaluation); values copied over."""
        length[...], rate[...], points[...] = self.length, self.rate, self.points
        self.length, self.rate, self.points = length, rate, points

    def bind(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Cache views of ``data`` (valid for the life of that MjData)."""
        self.delta, self.force = np.zeros((self.n, 3)), np.zeros((self.n, 3))
        self.scale, self.safe_len = np.zeros((self.n, 1)), np.zeros(self.n)
        self.row_out = np.zeros(9 * self.n)  # current_outputs' row; torques stay zero
        if self.by_sites:
            self._bind_sites(model, data)
        else:
            self._bind_tendons(model, data)

    def _bind_sites(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        n = self.n
        self.length, self.rate, self.points = np.zeros(n), np.zeros(n), np.zeros((2 * n, 3))
        self.fixed_points = True
        self.bodies = model.site_bodyid[self.sites].astype(int)  # (n, 2)
        self.roots = model.body_rootid[self.bodies].astype(int)
        self.site_xpos, self.cvel, self.com, self.cdof = data.site_xpos, data.cvel, data.subtree_com, data.cdof
        self.chains = [_chains(model, int(a), int(b)) for a, b in self.bodies]
        self.arm = np.zeros((n, 2, 3))
        self.sense()

    def sense(self) -> None:
        """Work the lengths (m), rates (m/s) and end points out of the current kinematics and
        velocities (``site_xpos``; ``cvel`` about each tree's ``subtree_com``), helper sites only.
        The compiled laws' arithmetic, in its order (``_native_springs.site_springs``)."""
        ends = self.site_xpos[self.sites]  # (n, 2, 3)
        self.points[...] = ends.reshape(-1, 3)
        w = self.cvel[self.bodies]  # (n, 2, 6): angular then linear, at the root's centre of mass
        arm = self.arm
        np.subtract(ends, self.com[self.roots], out=arm)
        ax, ay, az = arm[..., 0], arm[..., 1], arm[..., 2]
        vx = w[..., 3] + w[..., 1] * az - w[..., 2] * ay
        vy = w[..., 4] + w[..., 2] * ax - w[..., 0] * az
        vz = w[..., 5] + w[..., 0] * ay - w[..., 1] * ax
        d = ends[:, 1] - ends[:, 0]
        self.length[...] = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
        np.maximum(self.length, 1e-12, out=self.safe_len)
        dv = (d[:, 0] * (vx[:, 1] - vx[:, 0]) + d[:, 1] * (vy[:, 1] - vy[:, 0])) + d[:, 2] * (vz[:, 1] - vz[:, 0])
        self.rate[...] = dv / self.safe_len

    def _bind_tendons(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        n, nv = self.n, model.nv
        sl = slice(self.t0, self.t0 + n)
        self.length = data.ten_length[sl]
        self.rate = data.ten_velocity[sl]
        adr0 = int(model.ten_J_rowadr[self.t0])
        last = self.t0 + n - 1
        adr1 = int(model.ten_J_rowadr[last] + model.ten_J_rownnz[last])
        self.jvals = data.ten_J[adr0:adr1]
        rows = np.repeat(np.arange(n), model.ten_J_rownnz[sl])
        self.jflat_idx = rows * nv + model.ten_J_colind[adr0:adr1]
        self.jdense = np.zeros((n, nv))
        self.jflat = self.jdense.reshape(-1)
        # The tendon path points (two per rig tendon) give each spring's direction for telemetry.
        self.wrap = data.wrap_xpos.reshape(-1, 3)
        self.wrapadr = data.ten_wrapadr
        # Where the rig tendons' path points start moves only if a tendon before them wraps
        # around a geom (its path then has a varying number of points).
        geom_wraps = (int(mujoco.mjtWrap.mjWRAP_SPHERE), int(mujoco.mjtWrap.mjWRAP_CYLINDER))
        first = int(model.tendon_adr[self.t0]) if n else 0
        self.fixed_points = not any(int(t) in geom_wraps for t in model.wrap_type[:first])
        if self.fixed_points:
            adr = int(data.ten_wrapadr[self.t0]) if n else 0
            self.points = self.wrap[adr : adr + 2 * n]
        else:
            self.points = np.zeros((2 * n, 3))

    def refresh(self, model: mujoco.MjModel, t: float) -> None:
        """Re-read each law's numbers (after a param or field changed, or every step if profiled),
        and hand every spring MuJoCo can evaluate exactly to it as a tendon spring-damper."""
        springs_on = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SPRING
        dampers_on = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_DAMPER
        bands: dict[int, tuple[float, float]] = {}  # row -> MuJoCo's dead band, for native rows
        for i, ld in enumerate(self.loads):
            row = self.pos[i]
            if ld.magnitude_func is not None or ld.law is None:
                self.lo[row], self.hi[row] = -math.inf, math.inf
                self.native[row] = False
                continue
            (self.ref[row], self.p[row], self.k[row], self.c[row], self.tmin[row], self.lo[row], self.hi[row]) = (
                ld.law.coefficients(ld.r0, t)
            )
            if not ld.active:  # an empty window switches the spring off at no per-step cost
                self.lo[row], self.hi[row] = math.inf, -math.inf
            band = ld.law.native_band(t) if self.allow_native else None
            self.native[row] = (
                band is not None and (springs_on or self.k[row] == 0.0) and (dampers_on or self.c[row] == 0.0)
            )
            if self.native[row]:
                bands[row] = band  # type: ignore[assignment]
        self.python = bool(self.custom) or not bool(self.native.all())
        # Telemetry's shortcut: every spring two-sided, no preload or floor (ideal springs).
        self.plain = (
            not self.custom
            and bool(np.all(self.p == 0.0))
            and bool(np.all(np.isneginf(self.tmin)))
            and bool(np.all(np.isneginf(self.lo)))
            and bool(np.all(np.isposinf(self.hi)))
        )
        if self.by_sites:  # no tendons to hand anything to
            self.apply_lo, self.apply_hi = self.lo.copy(), self.hi.copy()
            return
        # Native rows: MuJoCo's tendon spring (dead band lengthspring) and damper; nothing in Python.
        tendons = self.tendons[np.argsort(self.pos)]
        on = self.native & (self.lo <= self.hi)
        model.tendon_stiffness[tendons] = np.where(on, self.k, 0.0)
        model.tendon_damping[tendons] = np.where(on, self.c, 0.0)
        for row, (low, high) in bands.items():
            model.tendon_lengthspring[tendons[row]] = (max(0.0, self.ref[row] + low), min(_FAR, self.ref[row] + high))
        self.apply_lo = np.where(self.native, math.inf, self.lo)
        self.apply_hi = np.where(self.native, -math.inf, self.hi)

    def release(self, model: mujoco.MjModel) -> None:
        """Hand the tendons back switched off (the engine is being replaced)."""
        if self.by_sites:
            return
        model.tendon_stiffness[self.tendons] = 0.0
        model.tendon_damping[self.tendons] = 0.0

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, qfrc: np.ndarray) -> None:
        """Overwrite ``qfrc`` with Jᵀ·tension of every spring."""
        if self.by_sites:
            self.sense()
        np.subtract(self.length, self.ref, out=self.s)
        spring_tension(
            self.s,
            self.rate,
            self.k,
            self.c,
            self.p,
            self.tmin,
            self.apply_lo,
            self.apply_hi,
            out=self.tension,
            tmp=self.tmp,
            mask=self.mask,
            mask2=self.mask2,
        )
        for i in self.custom:
            ld = self.loads[i]
            row = self.pos[i]
            self.tension[row] = 0.0
            if not ld.active:
                continue
            try:  # a user callable must not take the simulation down (as on the general path)
                tension = ld.tension(float(self.length[row]), float(self.rate[row]), model, data)
                if not math.isfinite(tension):
                    raise ValueError("non-finite tension")
            except Exception as exc:
                self.on_error(ld, exc)
                continue
            self.tension[row] = tension
        if self.by_sites:
            self._apply_at_ends(model, data, qfrc)
            return
        np.put(self.jflat, self.jflat_idx, self.jvals)
        np.dot(self.tension, self.jdense, out=qfrc)

    def _apply_at_ends(self, model: mujoco.MjModel, data: mujoco.MjData, qfrc: np.ndarray) -> None:
        """``qfrc`` = each spring's forces on its two ends (N, ± tension along the line of
        them), along the dofs of each end's chain below the common ancestor (cdof · (arm × F, F)):
        the compiled laws' arithmetic, in its order."""
        qfrc.fill(0.0)
        pts = self.points.reshape(self.n, 2, 3)
        for i in range(self.n):
            out = float(self.tension[i])
            if out == 0.0:
                continue
            safe = float(self.safe_len[i])
            dx, dy, dz = (float(x) for x in pts[i, 1] - pts[i, 0])
            for e, dofs in enumerate(self.chains[i]):
                f = out / safe if e == 1 else -out / safe
                fx, fy, fz = f * dx, f * dy, f * dz
                ax, ay, az = (float(x) for x in self.arm[i, e])
                tx, ty, tz = ay * fz - az * fy, az * fx - ax * fz, ax * fy - ay * fx
                cd = self.cdof[dofs]
                qfrc[dofs] += (
                    cd[:, 0] * tx + cd[:, 1] * ty + cd[:, 2] * tz + cd[:, 3] * fx + cd[:, 4] * fy + cd[:, 5] * fz
                )

    def forces(self) -> np.ndarray:
        """World force on each spring's `at` point, (n, 3) in tendon order: tension · (a − b)/|a − b|."""
        if self.by_sites:
            pts = self.points
        else:
            adr = int(self.wrapadr[self.t0])
            pts = self.wrap[adr : adr + 2 * self.n]
        np.maximum(self.length, 1e-12, out=self.safe_len)
        np.subtract(self.length, self.ref, out=self.s)
        if self.plain:  # two-sided springs only: -tension = k·s + c·v, with the sign in (b − a)
            np.multiply(self.k, self.s, out=self.pull)
            np.multiply(self.c, self.rate, out=self.tmp)
            np.add(self.pull, self.tmp, out=self.pull)
            np.subtract(pts[1::2], pts[0::2], out=self.delta)
            np.divide(self.pull, self.safe_len, out=self.scale[:, 0])
        else:
            custom = self.tension[self.custom_rows] if self.custom else None  # the user callables' tension
            spring_tension(
                self.s,
                self.rate,
                self.k,
                self.c,
                self.p,
                self.tmin,
                self.lo,
                self.hi,
                out=self.tension,
                tmp=self.tmp,
                mask=self.mask,
                mask2=self.mask2,
            )
            if custom is not None:
                self.tension[self.custom_rows] = custom
            np.subtract(pts[0::2], pts[1::2], out=self.delta)
            np.divide(self.tension, self.safe_len, out=self.scale[:, 0])
        np.multiply(self.delta, self.scale, out=self.force)
        return self.force

    def current_outputs(self) -> np.ndarray:
        """:meth:`block_outputs`' columns at the current state, as one row (9 n), computed with
        the preallocated :meth:`forces` (a few µs) instead of a block pass over one row."""
        n = self.n
        out = self.row_out
        out[: 3 * n] = self.forces().reshape(-1)
        out[6 * n : 7 * n] = self.length
        out[7 * n : 8 * n] = self.rate
        if self.plain:
            out[8 * n :] = self.pull
        else:
            np.negative(self.tension, out=out[8 * n :])
        return out

    def copy_points(self) -> None:
        """Copy the current path points into ``points`` (when their place in MjData moves)."""
        adr = int(self.wrapadr[self.t0])
        np.copyto(self.points, self.wrap[adr : adr + 2 * self.n])

    def raw(self) -> list[np.ndarray]:
        """What one telemetry row keeps of the springs, for :meth:`block_outputs`: lengths,
        rates, path points, the laws' numbers and (with user callables) their tensions."""
        return [self.length, self.rate, self.points, self.coef] + ([self.tension] if self.custom else [])

    def block_outputs(self, raw: np.ndarray) -> np.ndarray:
        """From rows of :meth:`raw`, every spring's (fx fy fz, tx ty tz, length, velocity, tension)
        as (rows, 9 n) in column order: all fx fy fz, then all torques (zero), lengths, rates and
        tensions (N, positive pulling the points together)."""
        n, rows = self.n, raw.shape[0]
        length, rate = raw[:, :n], raw[:, n : 2 * n]
        pts = raw[:, 2 * n : 8 * n].reshape(rows, n, 2, 3)
        ref, p, k, c, tmin, lo, hi = (raw[:, (8 + i) * n : (9 + i) * n] for i in range(7))
        tension, tmp = np.empty((rows, n)), np.empty((rows, n))
        s = length - ref
        spring_tension(
            s,
            rate,
            k,
            c,
            p,
            tmin,
            lo,
            hi,
            out=tension,
            tmp=tmp,
            mask=np.empty((rows, n), bool),
            mask2=np.empty((rows, n), bool),
        )
        if self.custom:
            tension[:, self.custom_rows] = raw[:, 15 * n : 16 * n][:, self.custom_rows]
        scale = tension / np.maximum(length, 1e-12)
        force = (pts[:, :, 0, :] - pts[:, :, 1, :]) * scale[:, :, None]
        return np.concatenate([force.reshape(rows, 3 * n), np.zeros((rows, 3 * n)), length, rate, -tension], axis=1)
