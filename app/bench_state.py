"""The panel state's records of bench data: the series the plots draw beside the signals
(``MeasuredSignals``), a file offered to the rig (``MeasuredOffer``) and a fit's progress and
result (``FitProgress``), published by ``session.bench`` as ``BenchPart``. Part of the command
channel: the same objects cross a thread queue or a process pipe."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["MeasuredSignals", "NO_MEASURED", "MeasuredOffer", "FitProgress", "BenchPart"]


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


@dataclass(frozen=True)
class BenchPart:
    """Bench data offered to the rig (``session.bench``)."""

    measured_offer: MeasuredOffer | None = None
    """A file waiting to be mapped onto signals (the panel asks); None: none."""
    fit: FitProgress | None = None
    """The last fit run from the app (None: none yet)."""
