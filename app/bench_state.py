"""The analysis windows' part of the command channel: what the panel state holds of the rig on
the bench -- the series the plots draw beside the signals (``MeasuredSignals``), a file offered
to the rig (``MeasuredOffer``), a fit's progress and result (``FitProgress``), published by
``session.bench`` as ``BenchPart`` -- and of its modes and frequency response (``ModesPart``,
published by ``session.analyses.modes``), and the commands the two windows send (``AddMeasured``,
``OfferPart``, ``RunFit``, ``UseEstimate``, ``WriteFittedModel``, ``ComputeModes``, ``ShowMode``; ``mjrig.commands`` re-exports them).
The same objects cross a thread queue or a process pipe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mjrig.panel_parts import panel_part
from mjrig.rig_edits import Command

__all__ = [
    "verdict_text",
    "MeasuredSignals",
    "NO_MEASURED",
    "MeasuredOffer",
    "FitProgress",
    "ModeRow",
    "BodeCurve",
    "ModesPart",
    "NO_MODES",
    "BenchPart",
    "FitVariable",
    "AddMeasured",
    "OfferPart",
    "RunFit",
    "UseEstimate",
    "WriteFittedModel",
    "ComputeModes",
    "ShowMode",
]


@dataclass(frozen=True, eq=False)
class MeasuredSignals:
    """The rig's ``[[measured]]`` series (or a replayed recording's ``mjrig.measured``) as the live
    plots draw them: (entry, signal, times s, values SI) each. The same object is published while
    the rig stays the same (compare by ``is``)."""

    series: tuple[tuple[str, str, np.ndarray, np.ndarray], ...] = ()

    def entries(self) -> list[str]:
        return list(dict.fromkeys(e for e, *_ in self.series))

    def of(self, entry: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {sig: (t, x) for e, sig, t, x in self.series if e == entry}  # an entry's series by signal


NO_MEASURED = MeasuredSignals()


@dataclass(frozen=True)
class MeasuredOffer:
    """A file of bench data opened or dropped, offered to the rig (``session.bench``): its
    numeric ``columns``, the guessed ``time`` column ("": an MCAP's log times) and its unit, a
    guessed entry ``name``, and per column the guessed (signal or "", unit); ``signals``: the rig's
    signals a column may be mapped to, with their SI units."""

    path: str
    columns: tuple[str, ...]
    time: str
    time_unit: str
    name: str
    guesses: tuple[tuple[str, str, str], ...]
    signals: tuple[tuple[str, str], ...]
    error: str = ""
    """Why the last mapping of it was refused (one line; the dialog keeps what was entered)."""
    part: str = ""
    """The workbook's sheet or TDMS file's group offered (the first with numeric columns; "": none)."""
    parts: tuple[str, ...] = ()
    """Every sheet or group of the file, in its order (the dialog offers a choice of them)."""


@dataclass(frozen=True)
class FitProgress:
    """A fit run from the app (``RunFit``): ``running``, the lowest cost after each batch of
    evaluations (``costs``, at ``counts`` evaluations), and when it ended its ``summary`` (``mjrig.fit``'s: estimate,
    standard errors, intervals, units, RMS errors, the experiments' series before and after) or
    ``error`` (one line); ``path``: its FIT.parquet."""

    running: bool = False
    costs: tuple[float, ...] = ()
    counts: tuple[int, ...] = ()
    """The evaluations done when each of ``costs`` was reached."""
    summary: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    path: str = ""
    stale: bool = False
    """Run on the model as it was before it was read again (a reload): shown, not current."""


@dataclass(frozen=True)
class ModeRow:
    """One mode as the Modes section lists it (``mjrig.runtime.analysis.modes.Mode``): ``kind``
    "oscillatory", "rigid", "unstable" or "decaying", frequencies (Hz), damping ratio and time
    constant (s; NaN/inf where they do not apply), and the joints' shape, largest first."""

    kind: str
    frequency_hz: float
    undamped_hz: float
    damping_ratio: float
    time_constant_s: float
    shape: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class BodeCurve:
    """A frequency response: ``output`` (a signal) to ``input`` (a param), magnitude in ``unit``."""

    input: str
    output: str
    unit: str
    frequency_hz: tuple[float, ...]
    magnitude_db: tuple[float, ...]
    phase_deg: tuple[float, ...]


@panel_part
@dataclass(frozen=True)
class ModesPart:
    """The rig's modes (``ComputeModes``): ``running`` while they are worked out, then ``modes``
    (the oscillatory ones first) of the state at simulated time ``at`` (s; ``equilibrium``: where
    it came to rest; ``point``: that operating point in words), or ``error`` (one line; the modes
    and responses before it stay); ``shown``: the oscillatory mode animated now (its index; None:
    none) with its ``amplitude`` and ``arrows``; ``bode``: the last responses asked for, one per
    output."""

    name: ClassVar[str] = "modes"  # its field of the panel state (``session.modes``)

    running: bool = False
    modes: tuple[ModeRow, ...] = ()
    at: float | None = None
    equilibrium: bool = False
    error: str = ""
    shown: int | None = None
    amplitude: float = 1.0
    arrows: bool = False
    bode: tuple[BodeCurve, ...] = ()
    stale: bool = False
    """Worked out on the model as it was before it was read again (a reload): shown, not current."""
    point: str = ""
    solved: str = ""
    """The equilibrium solved, in words: its residual and any trimmed inputs ("": not solved)."""


NO_MODES = ModesPart()


@panel_part
@dataclass(frozen=True)
class BenchPart:
    """Bench data offered to the rig, and the fit to it (``session.bench``)."""

    name: ClassVar[str] = "bench"

    measured_offer: MeasuredOffer | None = None
    """A file waiting to be mapped onto signals (the panel asks); None: none."""
    fit: FitProgress | None = None
    """The last fit run from the app (None: none yet)."""
    variables: tuple[FitVariable, ...] = ()
    """What a fit may estimate besides params (``initial.<joint>``, ``offset.<entry>``)."""
    planned: tuple[tuple[str, float, float, bool], ...] = ()
    """The scenario's ``[fit]`` params -- (name, low, high, log) each, as ``RunFit`` takes them --
    which the Fit section starts from (ticked, with their bounds and scales)."""


@dataclass(frozen=True)
class FitVariable:
    """A fit variable the rig offers (``mjrig.scenario.studies.fit``): its value before the fit
    (m, rad or s: ``unit``) and the bounds offered to search it in."""

    name: str
    value: float
    unit: str
    low: float
    high: float


def verdict_text(summary: dict[str, Any], *, reasons: bool = False) -> str:
    """ "converged", "converged, not identified" (with its ``reasons`` in brackets when asked) or
    "did not converge", of a fit's ``mjrig.fit`` summary (``FitProgress.summary``; one without a
    verdict: by convergence)."""
    if not summary["converged"]:
        return "did not converge"
    if summary.get("identified", True):
        return "converged"
    return "converged, not identified" + (f" ({'; '.join(summary['reasons'].values())})" if reasons else "")


# --- the analysis windows' commands -----------------------------------------------------------
@dataclass(frozen=True)
class AddMeasured(Command):
    """Add the offered bench file to the rig as a ``[[measured]]`` entry ``name``: its ``time``
    column ("": an MCAP's log times) in ``time_unit``, ``offset`` (s), and ``signals`` as
    (signal, column, unit) each. ``path`` "" declines the offer."""

    path: str
    name: str = ""
    time: str = ""
    time_unit: str = "s"
    offset: float = 0.0
    signals: tuple[tuple[str, str, str], ...] = ()
    part: str = ""
    """The sheet (``.xlsx``) or group (``.tdms``) read ("": the file's first, or none)."""


@dataclass(frozen=True)
class OfferPart(Command):
    """Offer the bench file being added again, from its sheet or group ``part``."""

    part: str


@dataclass(frozen=True)
class RunFit(Command):
    """Fit ``params`` -- (name, low, high, log) each -- to the rig's ``[[measured]]`` data as a
    background job (``mjrig fit``'s method; ``PanelState.bench.fit`` follows it)."""

    params: tuple[tuple[str, float, float, bool], ...]


@dataclass(frozen=True)
class UseEstimate(Command):
    """Set the params to the last fit's estimate (the sliders follow)."""


@dataclass(frozen=True)
class WriteFittedModel(Command):
    """Write a copy of the rig's MJCF to ``path`` whose params bound to model fields carry the
    last fit's estimate (``mjrig fit --write-model``)."""

    path: str


@dataclass(frozen=True)
class ComputeModes(Command):
    """Linearise the rig on a background job about the run's state now (``at``: the state a run
    from its start reaches at that time, s; then ``equilibrium``: the nearest state at rest,
    solved, with ``trim`` the actuator inputs that hold it too; ``settle``: where a run from
    there comes to rest), with the params as they are: its modes, and with ``bode`` (input, its
    output signals) the response of each output to the input."""

    equilibrium: bool = False
    bode: tuple[str, tuple[str, ...]] | None = None
    at: float | None = None
    settle: bool = False
    trim: bool = False


@dataclass(frozen=True)
class ShowMode(Command):
    """Animate oscillatory mode ``index`` (0: the lowest; None: stop, the run's state back) in the
    3D view, the run paused: its shape x ``amplitude`` (1: the default swing), ``arrows`` or not."""

    index: int | None = None
    amplitude: float = 1.0
    arrows: bool = False
