"""What the panel shows of a sweep's or a study's results: the views of the results file the
session opened, as the results panel reads them (``PanelState.results``). Protocols, so the panel
names no campaign code: ``mjrig.campaign.results.SweepResults`` and ``mjrig.campaign.sobol``'s
readings are what the session hands over."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # the tables' type only: the panel state does not load polars
    import polars as pl

__all__ = ["OpenedResults", "ScatterView", "SobolIndicesView", "SobolValueView"]


class SobolValueView(Protocol):
    """One value's Sobol indices as the results view draws them (``mjrig.campaign.sobol.SobolValue``)."""

    @property
    def reason(self) -> str: ...
    @property
    def computed(self) -> bool: ...
    def bars(self, order: str, *, width: float = 0.38) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
    def limits(self) -> tuple[float, float]: ...


class SobolIndicesView(Protocol):
    """A Saltelli sweep's Sobol indices read back (``mjrig.campaign.sobol.SobolReading``)."""

    @property
    def params(self) -> list[str]: ...
    @property
    def base_points(self) -> int: ...
    @property
    def confidence_level(self) -> float: ...
    @property
    def values(self) -> Mapping[str, SobolValueView]: ...


class ScatterView(Protocol):
    """One param (x) against one value (y), a point per trial (``mjrig.campaign.results.Scatter``)."""

    @property
    def x(self) -> np.ndarray:
        """The param's values (float64, in ``units``), shape (points,)."""

    @property
    def y(self) -> np.ndarray:
        """The value's values (float64, in ``units``), shape (points,)."""

    @property
    def trials(self) -> np.ndarray:
        """Each point's trial number (int64), shape (points,)."""

    def group(self, name: str) -> tuple[list[float], list[float]]:
        """The x and y lists of the points of one group ("pass", "fail", "other")."""


class OpenedResults(Protocol):
    """A sweep's or study's results as the session opened them (``mjrig.campaign.results.SweepResults``),
    which the results view reads: the trials sorted and filtered (``rows``: a polars DataFrame),
    a param against a value (``scatter``: ``x``, ``y``, ``trials`` arrays and ``group(name)``),
    a study's history, and the commands that open a trial. Immutable once opened (read-only
    members: a frozen dataclass is one); any thread."""

    @property
    def path(self) -> Path:
        """The results file (absolute)."""

    @property
    def table(self) -> pl.DataFrame:
        """One row per trial, values in ``units``."""

    @property
    def units(self) -> dict[str, str]:
        """Each column's unit as ``table`` holds it (the scenario's ``[units]``); left out: none."""

    @property
    def filters(self) -> tuple[str, ...]:
        """The status filters, "all" first."""

    @property
    def name(self) -> str: ...
    @property
    def params(self) -> list[str]: ...
    @property
    def values(self) -> list[str]: ...
    @property
    def requirement_values(self) -> list[str]: ...
    @property
    def is_study(self) -> bool: ...
    @property
    def scenario_path(self) -> Path | None: ...
    def counts(self) -> dict[str, int]: ...
    def sensitivity(self) -> dict[str, dict[str, float]]: ...
    def sobol(self) -> SobolIndicesView | None:
        """A Saltelli sweep's Sobol indices (``mjrig.campaign.sobol.SobolReading``), else None."""

    @property
    def is_pareto(self) -> bool: ...
    @property
    def objectives(self) -> list[str]: ...
    def maximized(self) -> list[bool]: ...
    def front(self) -> list[int]: ...
    def objective_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def hypervolume(self) -> tuple[np.ndarray, np.ndarray]:
        """(trials, the front's hypervolume after each, in ``units["hypervolume"]``); empty without it."""

    def history(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def best_trial(self) -> int | None: ...
    def rows(self, *, sort_by: str = "trial", descending: bool = False, status: str = "all") -> pl.DataFrame: ...
    def scatter(self, x: str, y: str, *, status: str = "all") -> ScatterView: ...
    def recording_path(self, trial: int) -> Path: ...
    def has_recording(self, trial: int) -> bool: ...
    def scenario_problem(self) -> str | None: ...
    def replay_commands(self, trial: int, *, discard: bool = False) -> list[Any]: ...
    def scenario_commands(self, trial: int, *, discard: bool = False) -> list[Any]: ...
