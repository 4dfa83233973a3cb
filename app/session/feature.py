"""What a feature of the session owes, and the features registered where they are defined.

The session kernel (``mjrig.session.kernel``) keeps its features in one tuple that it loops over
and hands each one ``RigContext`` (``mjrig.session.context``) and no sibling. A feature is a
``Feature``:

- ``handlers() -> {command type: handler}``: the commands it carries out (a command type two
  features claim is refused when the session starts: ``handler_table``);
- ``rig_opened()``: another rig was opened (not a reload): forget what belonged to the old one
  (state kept in the rig's ``RigScope``, ``ctx.scope()``, needs no forgetting: it goes with it);
- ``model_changed()``: the rig's model was read again (a reload, the rig kept): what it worked out
  on the old model is stale (shown as such, not as current);
- ``publish() -> PanelPart | None``: its part of the panel state, a frozen dataclass registered
  with ``mjrig.panel_state.parts.panel_part`` that the ``PanelState`` holds under the part's name;
- ``draws_in_view(model, data) -> bool``: about to draw a frame of the 3D view, it may put what
  it shows into ``data`` (a mode's shape); True when it did, and ``undraws_in_view`` then puts
  the run's state back once the frame is drawn; ``hides_rig`` True while the rig's arrows and
  lines would mislead there;
- ``close()``: finish its files and jobs (safe twice).

Each has a do-nothing default. An analysis window's feature registers itself where it is defined,
``@feature`` on its class, in a module of ``mjrig.session.analyses``: the kernel imports every
module of that room (``analyses()``) and makes one of each registered feature with its context,
after its own; nothing else names it (its part, its panel section and its drawing in the view
come through the hooks above).

Threading: simulation thread only, like the kernel's stepping.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import mujoco

from mjrig import commands as C
from mjrig.panel_parts import PanelPart
from mjrig.session.jobs import BackgroundJobs

if TYPE_CHECKING:
    from mjrig.session.context import RigContext

__all__ = ["Feature", "FeatureMaker", "Handler", "analyses", "feature", "handler_table"]

Handler = Callable[[Any], None]
"""A command's handler: takes the command (of the type it is registered for), returns nothing."""


class Feature:
    """A part of the session with one job (see the module docstring)."""

    jobs: BackgroundJobs | None = None
    """Its background work, if it has any: long jobs are shown and cancelled through it."""

    def handlers(self) -> dict[type[C.Command], Handler]:
        """The commands this feature carries out (none by default)."""
        return {}

    def rig_opened(self) -> None:
        """Another rig was opened (not a reload): forget what belonged to the old one."""

    def model_changed(self) -> None:
        """The rig's model was read again (a reload): mark what was worked out on the old one stale."""

    def publish(self) -> PanelPart | None:
        """Its part of the panel state (None: it shows nothing of its own)."""
        return None

    def draws_in_view(self, model: mujoco.MjModel, data: mujoco.MjData) -> bool:
        """Before a frame of the 3D view: put what it shows there into ``data``; True when it did
        (``undraws_in_view`` follows the frame)."""
        return False

    def undraws_in_view(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """After that frame: put the run's own state back into ``data``."""

    @property
    def hides_rig(self) -> bool:
        """Whether the rig's arrows and lines are left out of the 3D view now."""
        return False

    def close(self) -> None:
        """Finish its files and background jobs; safe twice."""


FeatureMaker = Callable[["RigContext"], Feature]
"""A registered feature: its class, made with the session's context."""
M = TypeVar("M", bound=FeatureMaker)

_REGISTERED: list[FeatureMaker] = []


def feature(cls: M) -> M:
    """Register a feature class (made with the session's ``RigContext`` alone), where it is
    defined; the kernel makes one of each, in the order they were registered."""
    if cls not in _REGISTERED:
        _REGISTERED.append(cls)
    return cls


def analyses() -> tuple[FeatureMaker, ...]:
    """The registered features, every module of ``mjrig.session.analyses`` imported first (each
    registers its own)."""
    from mjrig.session import analyses as room

    for info in sorted(pkgutil.iter_modules(room.__path__), key=lambda i: i.name):
        importlib.import_module(f"{room.__name__}.{info.name}")
    return tuple(_REGISTERED)


def handler_table(own: dict[type[C.Command], Handler], features: tuple[Feature, ...]) -> dict[type[C.Command], Handler]:
    """The kernel's ``own`` handlers and every feature's, in one table; a command type claimed
    twice is a mistake in the code, refused here (RuntimeError naming both) rather than one
    handler silently winning."""
    table = dict(own)
    owner = dict.fromkeys(own, "the session kernel")
    for f in features:
        for kind, handler in f.handlers().items():
            if kind in table:
                raise RuntimeError(f"{kind.__name__} is handled by both {owner[kind]} and {type(f).__name__}")
            table[kind], owner[kind] = handler, type(f).__name__
    return table
