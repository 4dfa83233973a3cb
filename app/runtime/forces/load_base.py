"""The base of every load (``Load``) and of the loads with a reaction on a body (``BodyReactionForce``).

A load is data plus three operations: ``calculate`` (world-frame force N and torque N·m at the
current state), ``apply_load`` (add them to ``qfrc_applied``, with the reaction) and
``get_visuals`` (arrows for drawing). The concrete loads live in ``mjrig.runtime.forces.loads``.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, dataclass_transform

import mujoco
import numpy as np

from mjrig.runtime.drawing.visuals import ArrowConfig, Color
from mjrig.runtime.points import AnySite, Point, parse_point
from mjrig.runtime.values import NamedValue

__all__ = ["Load", "BodyReactionForce", "SCENARIO_WORDS"]

_SHOWN = 1e-4
"""Smallest force (N) or torque (N·m) that gets an arrow."""


SCENARIO_WORDS: dict[str, tuple[str, ...]] = {"at": ("action_site",), "to": ("xtion_body", "xtion_site")}
"""The scenario's words for the reference API's point fields: ``at`` is ``action_site``, ``to`` is
the reaction's point (``xtion_body``, or ``xtion_site`` on a point-to-point load). Every load's
constructor takes either spelling."""


def _accept_scenario_words(cls: type) -> None:
    """Let ``cls(...)`` take ``at=``/``to=`` for the fields they stand for (see SCENARIO_WORDS).

    Wraps the ``__init__`` the dataclass made (``@dataclass`` again keeps it: it never replaces
    an ``__init__`` the class has). A class with its own field ``at`` or ``to`` keeps it.
    """
    names = {f.name for f in fields(cls)}
    words = {
        w: next(f for f in fs if f in names)
        for w, fs in SCENARIO_WORDS.items()
        if w not in names and any(f in names for f in fs)
    }
    init = cls.__dict__["__init__"]

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        for word, name in words.items():
            if word in kwargs:
                if name in kwargs:
                    raise TypeError(
                        f"{type(self).__name__}() got '{word}' and '{name}', two names of one thing: pass one"
                    )
                kwargs[name] = kwargs.pop(word)
        init(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[misc]


def _as_load_dataclass(cls: type) -> None:
    """Make ``cls`` a keyword-only dataclass (identity equality) whose constructor also takes the
    scenario's words, in place.

    Fields with a ``default_factory`` keep their ``Field`` as class attribute, so decorating
    the class with ``@dataclass`` again (a user's habit) sees the same fields.
    """
    dataclass(eq=False, kw_only=True)(cls)
    _accept_scenario_words(cls)
    own = cls.__dict__.get("__annotations__", {})
    for f in fields(cls):
        if f.name in own and f.default_factory is not MISSING:
            setattr(cls, f.name, f)


@dataclass_transform(eq_default=False, kw_only_default=True)  # tells a type checker what __init_subclass__ does
@dataclass(eq=False, kw_only=True)
class Load(ABC):
    """Base class of every load: a named force/torque acting at ``action_site``.

    ``action_site``, ``rel_to_site`` (the frame its vectors are given in; None: world) and the
    reaction point accept Point objects or the contract's strings ("tip", "body:arm@0,0,0.1").
    The constructor takes the scenario's words too: ``at=`` for ``action_site``, ``to=`` for the
    reaction point (``xtion_body`` / ``xtion_site``); both spellings of one is a TypeError.
    Setting any field while the rig runs takes effect at the next step.

    To write your own load, subclass it, annotate fields (with defaults) and implement
    ``calculate``: every subclass is a keyword-only dataclass, no decorator needed::

        class Thrust(Load):
            newtons: float = 1.0
            def calculate(self, mj_model, mj_data):
                return np.array([self.newtons, 0.0, 0.0]), np.zeros(3)
    """

    name: str
    action_site: AnySite
    active: bool = True
    rel_to_site: AnySite | None = None

    is_point_to_point: ClassVar[bool] = False
    reports_wrench: ClassVar[bool] = True
    """Whether the load records ``Loads/<name>:fx ... :tz`` (False: a joint load, which records
    only its generalized force ``:value``, see ``signals``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _as_load_dataclass(cls)

    def __post_init__(self) -> None:
        self._listeners: list[Callable[[Load], None]] = []  # a private name: no listener is told
        if self.action_site is not None:  # None: a joint load, which acts on a dof, not at a point
            self.action_site = parse_point(self.action_site)
        if self.rel_to_site is not None:
            self.rel_to_site = parse_point(self.rel_to_site)
        self._last_f = np.zeros(3)
        self._last_t = np.zeros(3)

    def __setattr__(self, key: str, value: Any) -> None:
        object.__setattr__(self, key, value)
        if not key.startswith("_"):
            for fn in getattr(self, "_listeners", ()):
                fn(self)

    @property
    def kind(self) -> str:
        """The scenario kind this load was built as (``ideal_spring``...): set by the kind's build
        in ``mjrig.scenario.kinds``, the one place kinds are named; a load made in Python: its
        class name. Shown in the app's rig panel."""
        return self.__dict__.get("_kind") or type(self).__name__

    @kind.setter
    def kind(self, name: str) -> None:
        object.__setattr__(self, "_kind", name)

    @property
    def last_force(self) -> np.ndarray:
        """World-frame force (N, shape (3,)) the load last applied at its ``at`` point."""
        return self._last_f

    @property
    def last_torque(self) -> np.ndarray:
        """World-frame torque (N·m, shape (3,)) the load last applied."""
        return self._last_t

    def readout(self) -> tuple[tuple[float, str], ...]:
        """What the load applies now, as (magnitude, unit) pairs for a person to read: |F| in N
        here; a torque load gives |T| in N*m, a 6-DOF load both, a joint load its generalized
        force in N*m or N."""
        f = self.last_force
        return ((float(np.sqrt(f @ f)), "N"),)

    def report_into(self, force: np.ndarray, torque: np.ndarray) -> None:
        """Keep ``last_force``/``last_torque`` in these (3,) arrays from now on: an engine that
        evaluates many loads together hands each its rows of one array instead of copying."""
        self._last_f, self._last_t = force, torque

    def subscribe(self, fn: Callable[[Load], None]) -> None:
        """Call ``fn(self)`` whenever a public field changes."""
        if fn not in self._listeners:
            self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[[Load], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def points_key(self) -> tuple[str, ...]:
        """What its compiled helper and initial distance depend on: its class and its two points."""
        return (type(self).__name__, str(self.action_site), str(self.reaction))

    @property
    def reaction(self) -> Point | None:
        """Where the reaction acts (None: the world)."""
        return None

    def points(self) -> list[Point]:
        """Every point this load names (for validation)."""
        pts = [self.action_site]
        if self.rel_to_site is not None:
            pts.append(self.rel_to_site)
        if self.reaction is not None:
            pts.append(self.reaction)
        return pts

    def params(self) -> list[NamedValue]:
        """Params this load reads."""
        return []

    def signals(self) -> list[tuple[np.ndarray, list[tuple[str, int, str]]]]:
        """Telemetry besides the wrench: [(flat array read in place, [(column, index, unit)])]."""
        return []

    def resolve_ids(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> None:
        """Check every point against the compiled model (raises ConfigError naming the bad one)."""
        for p in self.points():
            p.get_id(mj_model)

    def _frame(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> np.ndarray | None:
        return None if self.rel_to_site is None else self.rel_to_site.rt_mat(mj_model, mj_data)

    @abstractmethod
    def calculate(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """World-frame (force N (3,), torque N·m (3,)) on the action point at the current state."""

    def apply_load(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData, *, qfrc: np.ndarray | None = None) -> None:
        """Compute the load at the current kinematics and add it to ``qfrc`` (default
        ``mj_data.qfrc_applied``) as generalized forces: the force (N) at the action point and the
        torque (N·m) on its body, and the opposite pair on the reaction point, if any.

        Call after ``mj_forward`` (or ``mj_step1``) and before integrating; it adds, so clear
        ``qfrc_applied`` between steps. An inactive load adds nothing and reports zero. A
        non-finite force or torque raises ValueError and adds nothing.
        """
        if not self.active:
            self._last_f[:] = 0.0
            self._last_t[:] = 0.0
            return
        f, t = self.calculate(mj_model, mj_data)
        f = np.ascontiguousarray(f, dtype=float).reshape(3)
        t = np.ascontiguousarray(t, dtype=float).reshape(3)
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(t))):
            raise ValueError(f"load '{self.name}': non-finite force or torque")
        self._last_f[:] = f
        self._last_t[:] = t
        target = mj_data.qfrc_applied if qfrc is None else qfrc
        body, _ = self.action_site.body_and_offset(mj_model)
        mujoco.mj_applyFT(mj_model, mj_data, f, t, self.action_site.rt_pos(mj_model, mj_data), body, target)
        react = self.reaction
        if react is not None:
            rbody, _ = react.body_and_offset(mj_model)
            mujoco.mj_applyFT(mj_model, mj_data, -f, -t, react.rt_pos(mj_model, mj_data), rbody, target)

    def get_visuals(self, mj_model: mujoco.MjModel, mj_data: mujoco.MjData) -> list[ArrowConfig]:
        """Arrows for the last applied force (emerald), torque (amber) and reaction force (rose)."""
        if not self.active:
            return []
        out: list[ArrowConfig] = []
        pos = self.action_site.rt_pos(mj_model, mj_data)
        f, t = np.array(self._last_f, float), np.array(self._last_t, float)
        if np.linalg.norm(f) > _SHOWN:
            out.append(ArrowConfig(pos=pos, vec=f, color=Color.EMERALD_500.rgba))
        if np.linalg.norm(t) > _SHOWN:
            out.append(ArrowConfig(pos=pos, vec=t, color=Color.AMBER_500.rgba, is_torque=True))
        react = self.reaction
        if react is not None and np.linalg.norm(f) > _SHOWN:
            out.append(ArrowConfig(pos=react.rt_pos(mj_model, mj_data), vec=-f, color=Color.ROSE_500.rgba))
        return out


_accept_scenario_words(Load)


class BodyReactionForce(Load):
    """A load whose equal and opposite reaction (−F, −T) acts on ``xtion_body`` (``to=`` too).

    ``xtion_body`` is a body point ("body:NAME", "body:NAME@x,y,z", a ``Body``) or a site; the
    reaction acts there. None: the reaction goes to the world (nothing is applied for it).
    """

    xtion_body: AnySite | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.xtion_body is not None:
            self.xtion_body = parse_point(self.xtion_body)

    @property
    def reaction(self) -> Point | None:
        return self.xtion_body
