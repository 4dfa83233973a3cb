"""MuJoCo's warnings, routed in one place: to Python logging and to the sinks a run registers.

MuJoCo's default handler prints each warning to stderr and appends it to ``MUJOCO_LOG.TXT`` in
the working folder. ``install()`` replaces that handler for the whole process (MuJoCo has one):
every warning then goes to the ``mjrig.mujoco`` logger (silent unless the embedding program
configures logging) and to each sink registered with ``route()``; MuJoCo's log file is
switched off, so nothing is written into the working folder. The CLI routes warnings to one
line each on stderr, the app to its status log (``status_sink``).

Divergence is not detected here: MuJoCo reports a NaN/Inf/huge position, velocity or
acceleration once per reset, and the stepper reads ``MjData.warning`` counters for it
(``engine.step_with_loads``). Such warnings arrive with ``divergence=True`` so that sinks can
leave them to the DivergenceError the run raises.

Threading: MuJoCo calls the handler on whichever thread steps or compiles (the simulation
thread, the main thread while a model loads). Sinks are called on that thread, so they must
only hand the text on (``Session.log`` appends to a deque); registering and removing sinks is
safe from any thread.
"""

from __future__ import annotations

import logging
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import mujoco

__all__ = [
    "MujocoWarning",
    "Route",
    "install",
    "installed",
    "route",
    "compiler_notes",
    "status_sink",
    "version_problem",
    "LOGGER",
]

LOGGER = logging.getLogger("mjrig.mujoco")
LOGGER.addHandler(logging.NullHandler())  # a library prints nothing through logging.lastResort

_DIVERGENCE = tuple(
    mujoco.mju_warningText(w, 0).split(" at ")[0]
    for w in (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL, mujoco.mjtWarning.mjWARN_BADQACC)
)
"""Starts of MuJoCo's bad qpos/qvel/qacc texts ("Nan, Inf or huge value in QACC")."""

_TIME = re.compile(r"\s*Time = [-+0-9.eE]+\.?\s*$")


@dataclass(frozen=True)
class MujocoWarning:
    """One MuJoCo warning: ``text`` as MuJoCo wrote it, on one line (it often ends with
    "Time = S." in simulated seconds); ``divergence`` for a NaN/Inf/huge state, which the
    stepper reports itself as DivergenceError."""

    text: str
    divergence: bool

    @property
    def key(self) -> str:
        """The text without its trailing simulated time: equal for repeats of one warning."""
        return _TIME.sub("", self.text)


Sink = Callable[[MujocoWarning], None]

_lock = threading.Lock()
_routes: list[Route] = []


def _dispatch(msg: str) -> None:
    """MuJoCo's warning handler (any thread). Never raises: it runs inside MuJoCo's C code."""
    try:
        text = " ".join(str(msg).split())
        warning = MujocoWarning(text, text.startswith(_DIVERGENCE))
        LOGGER.warning("%s", text)
        with _lock:
            routes = list(_routes)
        for r in routes:
            r._deliver(warning)
    except Exception:  # noqa: BLE001 - an exception must not cross back into MuJoCo
        pass


def install() -> None:
    """Route MuJoCo's warnings through this module for the whole process; idempotent.

    Also switches MuJoCo's own log file off (mujoco >= 4 has ``MjLogConfig``), so no
    ``MUJOCO_LOG.TXT`` appears in the working folder.
    """
    with _lock:
        if mujoco.get_mju_user_warning() is not _dispatch:
            mujoco.set_mju_user_warning(_dispatch)
        config_cls = getattr(mujoco, "MjLogConfig", None)
        if config_cls is not None:
            config = config_cls.get()
            if config.logto_file:
                config.logto_file = False
                config.set()


def installed() -> bool:
    """True when MuJoCo's warnings go through this module."""
    return mujoco.get_mju_user_warning() is _dispatch


class Route:
    """A registered sink; ``close()`` (safe twice) or leaving the ``with`` block removes it.

    Each distinct warning (its text less the trailing "Time = S.") reaches the sink once per
    route; repeats are counted in ``repeats``. A sink that raises is removed, so a broken sink
    cannot turn every later warning into an error.
    """

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.repeats = 0
        self._seen: set[str] = set()
        self._closed = False

    def _deliver(self, warning: MujocoWarning) -> None:
        if self._closed:
            return
        if warning.key in self._seen:
            self.repeats += 1
            return
        self._seen.add(warning.key)
        try:
            self.sink(warning)
        except Exception:  # noqa: BLE001 - reported through logging, then this sink is dropped
            LOGGER.exception("MuJoCo warning sink %r failed; removed", self.sink)
            self.close()

    def close(self) -> None:
        """Stop sending warnings to the sink; safe twice."""
        self._closed = True
        with _lock:
            if self in _routes:
                _routes.remove(self)

    def __enter__(self) -> Route:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def route(sink: Sink) -> Route:
    """Install the handler (if not yet) and send every MuJoCo warning from now on to ``sink``
    until the returned Route is closed."""
    install()
    r = Route(sink)
    with _lock:
        _routes.append(r)
    return r


@contextmanager
def compiler_notes() -> Iterator[None]:
    """Send the notes MuJoCo's compiler gives while the block runs (the bindings raise them as
    Python ``UserWarning``s, e.g. a mesh's texture coordinates discarded) where MuJoCo's own
    warnings go, one line each, instead of Python's two-line warning with a source line."""
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always")
        yield
    for note in notes:
        _dispatch(str(note.message))


def status_sink(log: Callable[[str, str], None]) -> Sink:
    """A sink that adds each warning to a status log, ``log("warning", "MuJoCo: TEXT")``
    (``Session.log``); divergence warnings are left out (the run reports them as errors)."""

    def sink(warning: MujocoWarning) -> None:
        if not warning.divergence:
            log("warning", f"MuJoCo: {warning.text}")

    return sink


_KNOWN_BAD = {
    "4.0.0": "its Newton solver factors a sparse Hessian wrongly (wrong accelerations, divergence); "
    "pip install 'mujoco>=4.0.1'"
}


def version_problem(version: str | None = None) -> str | None:
    """One line on a MuJoCo release whose physics is known to be wrong (``version`` defaults to
    the one imported), or None. mjrig requires mujoco 4.0.1 or newer; an environment can still
    hold an older one (installed beside it), so the CLI and the app say so once rather than give
    wrong numbers silently."""
    version = mujoco.__version__ if version is None else version
    why = _KNOWN_BAD.get(version)
    return None if why is None else f"MuJoCo {version}: {why}"
