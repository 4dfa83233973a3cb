"""A sweep's results read back for the results view: ``mjrig RESULTS.parquet``.

``is_results(path)`` tells a sweep's results file (its key-value metadata holds ``mjrig.sweep``)
from a recording without reading its rows. ``SweepResults.open`` reads one (one-line ConfigError
for a missing, unreadable or non-results file) and answers what the view asks: the trials sorted
by any column and filtered by status (``rows``), one param against one requirement's value as
arrays grouped pass / fail / other (``scatter``), a trial's recording
(``RESULTS/trial-<n>.parquet`` beside the file) and param values, and the commands that open a
trial in the app -- its recording replayed (``replay_commands``), or the sweep's scenario with
the trial's param values set (``scenario_commands``). ``start_target`` is what the app shows
before a trial is opened: the sweep's scenario, else its model.

GUI-free (polars, pyarrow, numpy). Threading: immutable once opened; any thread.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, SupportsFloat

import numpy as np
import polars as pl

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.units import scenario_units

if TYPE_CHECKING:
    from mjrig.campaign.sobol import SobolReading

__all__ = ["SweepResults", "Scatter", "is_results", "FILTERS", "SWEEP_KEY", "STUDY_KEY", "SCENARIO_KEY"]

SWEEP_KEY = "mjrig.sweep"
"""The metadata key that makes a Parquet file a sweep's results (the ``[sweep]`` section as TOML)."""
STUDY_KEY = "mjrig.optimize"
"""The metadata key of a study's results (``mjrig optimize``: the ``[optimize]`` section as TOML)."""
SCENARIO_KEY = "mjrig.scenario_path"
"""The metadata key naming the scenario file the sweep ran (absolute path)."""
FILTERS = ("all", "pass", "fail", "diverged", "error")
"""The status filters: every trial, or those of one status."""


def _metadata(path: Path) -> dict[str, str]:
    """The file's key-value metadata; ConfigError (one line) when it is missing or not Parquet."""
    from mjrig.runtime.files.parquet_merge import read_schema

    return read_schema(path)[1]


def is_results(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a sweep's or a study's results file (not a recording); False for anything unreadable."""
    try:
        meta = _metadata(Path(path).expanduser())
        return SWEEP_KEY in meta or STUDY_KEY in meta
    except ConfigError:
        return False


@dataclass(frozen=True)
class Scatter:
    """Points of one param (x) against one requirement's value (y), one per trial that has both.

    ``x``, ``y`` (float64) and ``trials`` (int64) have shape (points,); ``groups`` maps "pass",
    "fail" and "other" (diverged, error) to boolean masks over the points."""

    x: np.ndarray
    y: np.ndarray
    trials: np.ndarray
    groups: dict[str, np.ndarray] = field(default_factory=dict)

    def group(self, name: str) -> tuple[list[float], list[float]]:
        """The x and y lists of one group (what a plot series takes)."""
        mask = self.groups[name]
        return self.x[mask].tolist(), self.y[mask].tolist()


@dataclass(frozen=True)
class SweepResults:
    """A sweep's results: one row per trial (``table``) and the file's metadata. Frozen: the
    panel's results view reads it as ``mjrig.panel_state.results.OpenedResults`` (read-only members)."""

    path: Path
    table: pl.DataFrame
    metadata: dict[str, str]
    units: dict[str, str] = field(default_factory=dict)
    """Each column's unit as ``table`` holds it (a column left out has none)."""
    si_table: pl.DataFrame | None = None
    """The file's values (SI) when ``table`` shows them in other units (``in_units``)."""
    filters: ClassVar[tuple[str, ...]] = FILTERS

    @classmethod
    def open(cls, path: str | os.PathLike) -> SweepResults:
        """Read the results at ``path``; ConfigError (one line) when it is not a sweep's results."""
        from mjrig.runtime.files.parquet_merge import read_schema, schema_units

        path = Path(path).expanduser().resolve()
        schema, meta = read_schema(path)
        if SWEEP_KEY not in meta and STUDY_KEY not in meta:
            raise ConfigError(
                f"{path}: not a sweep's or study's results (no '{SWEEP_KEY}' metadata): "
                "write one with `mjrig sweep SCENARIO.toml --out RESULTS.parquet`"
            )
        try:
            table = pl.read_parquet(path)
        except Exception as exc:  # polars raises its own error kinds for a damaged file
            raise ConfigError(f"{path}: not readable ({' '.join(str(exc).split())[:200]})") from None
        missing = [c for c in ("trial", "status") if c not in table.columns]
        if missing:
            raise ConfigError(f"{path}: not a sweep's results (no '{missing[0]}' column)")
        units = {c: u for c, u in zip(schema.names, schema_units(meta, schema)) if u}
        return cls(path, table, meta, units)

    def in_units(self) -> SweepResults:
        """These results with every value in the units the scenario shows (``[units]``; the same
        results without). The trials' param values that open a trial stay the file's."""
        shown = scenario_units(self.metadata.get("mjrig.scenario", ""))
        if shown.is_si or self.si_table is not None:
            return self
        table, labels = shown.columns(self.table, self.units)
        return dataclasses.replace(self, table=table, units={**self.units, **labels}, si_table=self.table)

    # --- what the file holds ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.path.name

    @property
    def params(self) -> list[str]:
        """The ``Params/<p>:value`` columns, in file order."""
        return [c for c in self.table.columns if c.startswith("Params/") and c.endswith(":value")]

    @property
    def requirement_values(self) -> list[str]:
        """The ``Requirements/<r>:value`` columns, in file order."""
        return [c for c in self.table.columns if c.startswith("Requirements/") and c.endswith(":value")]

    @property
    def metric_values(self) -> list[str]:
        """The ``Metrics/<m>:value`` columns, in file order."""
        return [c for c in self.table.columns if c.startswith("Metrics/") and c.endswith(":value")]

    @property
    def values(self) -> list[str]:
        """What a trial gives: the requirements' and metrics' value columns, and a study's
        ``objective`` (several objectives' columns are their metrics' values: not repeated)."""
        own = ["objective"] if self.is_study and "objective" in self.table.columns else []
        return self.requirement_values + self.metric_values + own

    @property
    def is_study(self) -> bool:
        """A study's results (``mjrig optimize``): ``objective`` (or several objectives' columns
        and ``pareto``) and ``feasible``."""
        return STUDY_KEY in self.metadata and ("objective" in self.table.columns or self.is_pareto)

    @property
    def is_pareto(self) -> bool:
        """A study of several objectives: ``Objectives/<m>:value`` columns and the ``pareto`` flag."""
        return STUDY_KEY in self.metadata and "pareto" in self.table.columns and bool(self.objectives)

    @property
    def objectives(self) -> list[str]:
        """A study's ``Objectives/<m>:value`` columns (several objectives), in file order."""
        return [c for c in self.table.columns if c.startswith("Objectives/") and c.endswith(":value")]

    def maximized(self) -> list[bool]:
        """For each of ``objectives``, whether the study maximised it (the study's metadata)."""
        import json

        try:
            stated = json.loads(self.metadata.get("mjrig.objective", "{}")).get("objectives", [])
            ways = {o["column"]: bool(o["maximize"]) for o in stated}
        except (ValueError, TypeError, KeyError, AttributeError):
            ways = {}
        return [ways.get(c, False) for c in self.objectives]

    def front(self) -> list[int]:
        """A study of several objectives: the trials on the Pareto front, by their first objective
        (the order a front is joined in); empty for any other file."""
        if not self.is_pareto:
            return []
        on = self.table.filter(pl.col("pareto").fill_null(False))
        return [int(t) for t in on.sort([self.objectives[0], "trial"])["trial"]]

    def objective_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A study of several objectives' feasible trials in objective space: (trials, their
        objectives' values: trials × objectives, on the front: bool per trial), by trial."""
        df = self.table.filter(pl.col("feasible").fill_null(False)).sort("trial")
        values = df.select(self.objectives).cast(pl.Float64).fill_null(np.nan).to_numpy()
        return (
            df["trial"].to_numpy().astype(np.int64),
            values.reshape(df.height, len(self.objectives)),
            df["pareto"].fill_null(False).to_numpy().astype(bool),
        )

    def hypervolume(self) -> tuple[np.ndarray, np.ndarray]:
        """A study of several objectives' front hypervolume after each trial: (trials, the
        ``hypervolume`` column: the objectives' units multiplied, ``units["hypervolume"]``), by
        trial; empty arrays for a file without it (a study written before it, or a sweep)."""
        if "hypervolume" not in self.table.columns:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        df = self.table.sort("trial")
        return df["trial"].to_numpy().astype(np.int64), df["hypervolume"].cast(pl.Float64).fill_null(np.nan).to_numpy()

    def history(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A study's objective by trial: (feasible trials, their objective, the best so far
        after each of them) -- the best is the smallest, or the largest when maximising."""
        df = self.table.filter(pl.col("feasible").fill_null(False)).sort("trial")
        trials, obj = df["trial"].to_numpy().astype(np.int64), df["objective"].to_numpy().astype(np.float64)
        import tomllib

        maximize = "maximize" in tomllib.loads(self.metadata.get(STUDY_KEY, "")).get("optimize", {})
        best = np.maximum.accumulate(obj) if maximize else np.minimum.accumulate(obj)
        return trials, obj, best

    def best_trial(self) -> int | None:
        """A study's best feasible trial (the first of equals), None when none is feasible."""
        trials, obj, best = self.history()
        return int(trials[int(np.flatnonzero(obj == best[-1])[0])]) if trials.size else None

    def sensitivity(self) -> dict[str, dict[str, float]]:
        """Which knob matters: for each requirement's and metric's value column, each varied
        param's Spearman rank correlation with it (-1..1) over the trials that have both (NaN
        with fewer than 3 such trials). Params that never vary are left out."""
        from scipy.stats import spearmanr

        varied = [p for p in self.params if self.table[p].drop_nulls().n_unique() > 1]
        out: dict[str, dict[str, float]] = {}
        for col in self.requirement_values + self.metric_values:
            out[col] = {}
            for p in varied:
                both = self.table.select(p, col).drop_nulls().filter(pl.col(col).is_finite())
                x, y = both[p].to_numpy(), both[col].to_numpy()
                ok = len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0
                out[col][p] = float(spearmanr(x, y).statistic) if ok else float("nan")
        return out

    def sobol(self) -> SobolReading | None:
        """A Saltelli sweep's Sobol indices (``mjrig.sensitivity``: ``mjrig.campaign.sobol``), None
        for any other results (their sensitivity is ``sensitivity()``'s)."""
        from mjrig.campaign.sobol import SENSITIVITY_KEY, SobolReading

        text = self.metadata.get(SENSITIVITY_KEY)
        return SobolReading.parse(text) if text else None

    @property
    def trials(self) -> list[int]:
        return [int(t) for t in self.table["trial"]]

    @property
    def scenario_path(self) -> Path | None:
        """The scenario file the sweep ran, as its metadata names it (it may have gone since)."""
        raw = self.metadata.get(SCENARIO_KEY, "")
        return Path(raw) if raw else None

    @property
    def model_path(self) -> Path | None:
        raw = self.metadata.get("mjrig.model_path", "")
        return Path(raw) if raw else None

    def counts(self) -> dict[str, int]:
        """How many trials of each filter ("all" and each status)."""
        statuses = self.table["status"].to_list()
        return {"all": len(statuses), **{s: statuses.count(s) for s in FILTERS[1:]}}

    def scenario_problem(self) -> str | None:
        """One line saying why a trial's scenario cannot be opened, or None when it can."""
        sc = self.scenario_path
        if sc is None:
            return (
                f"{self.name} names no scenario file ('{SCENARIO_KEY}'): a trial's set-up cannot be opened; "
                "run the sweep again with this mjrig to record it"
            )
        if not sc.is_file():
            return f"{self.name}: the sweep's scenario {sc} is missing: a trial's set-up cannot be opened"
        return None

    def start_target(self) -> tuple[Path | None, list[str]]:
        """What the app opens before any trial: the sweep's scenario when it exists, else its model
        (None: neither is there), and the warning lines to log about it."""
        notes = [p for p in (self.scenario_problem(),) if p]
        if self.scenario_path is not None and self.scenario_path.is_file():
            return self.scenario_path, notes
        model = self.model_path
        if model is not None and model.is_file():
            return model, notes
        notes.append(f"{self.name}: the sweep's model {model or '(not named)'} is missing: showing the default rig")
        return None, notes

    # --- the table and the scatter ------------------------------------------------------------
    def rows(self, *, sort_by: str = "trial", descending: bool = False, status: str = "all") -> pl.DataFrame:
        """The trials of ``status`` ("all" or one status) sorted by column ``sort_by`` (nulls last,
        ties by trial number); ConfigError for an unknown column or status."""
        self._check_status(status)
        if sort_by not in self.table.columns:
            raise ConfigError(f"{self.name}: no column '{sort_by}' to sort by")
        df = self.table if status == "all" else self.table.filter(pl.col("status") == status)
        if sort_by == "trial":
            return df.sort("trial", descending=descending)
        return df.sort([sort_by, "trial"], descending=[descending, False], nulls_last=True)

    def scatter(self, x: str, y: str, *, status: str = "all") -> Scatter:
        """``x`` (a param column) against ``y`` (a requirement's, metric's or the objective's value) over the trials of
        ``status``; trials where either is null or not finite (nothing to plot) are left out."""
        self._check_status(status)
        for col, choices in ((x, self.params), (y, self.values)):
            if col not in choices:
                raise ConfigError(f"{self.name}: no column '{col}' (choose from {', '.join(choices) or 'none'})")
        df = self.rows(status=status).filter(pl.col(x).is_finite() & pl.col(y).is_finite())
        st = df["status"].to_numpy()
        return Scatter(
            df[x].to_numpy().astype(np.float64),
            df[y].to_numpy().astype(np.float64),
            df["trial"].to_numpy().astype(np.int64),
            {"pass": st == "pass", "fail": st == "fail", "other": (st != "pass") & (st != "fail")},
        )

    def _check_status(self, status: str) -> None:
        if status not in FILTERS:
            raise ConfigError(f"unknown status filter '{status}' (choose from {', '.join(FILTERS)})")

    # --- one trial -----------------------------------------------------------------------------
    def row(self, trial: int) -> dict[str, object]:
        """Trial ``trial``'s row as a dict; ConfigError when the file has no such trial."""
        found = self.table.filter(pl.col("trial") == trial)
        if found.height == 0:
            raise ConfigError(f"{self.name}: no trial {trial}")
        return found.row(0, named=True)

    def recording_path(self, trial: int) -> Path:
        """Where trial ``trial``'s recording goes (``RESULTS/trial-<n>.parquet``); it exists only
        when the scenario had a ``[recording]``."""
        return self.path.with_suffix("") / f"trial-{int(trial)}.parquet"

    def has_recording(self, trial: int) -> bool:
        return self.recording_path(trial).is_file()

    def param_values(self, trial: int) -> dict[str, float]:
        """Trial ``trial``'s value of each param, by param name (null values left out)."""
        row = (self if self.si_table is None else dataclasses.replace(self, table=self.si_table)).row(trial)
        values: dict[str, float] = {}
        for c in self.params:
            value = row[c]
            if isinstance(value, SupportsFloat):
                values[c[len("Params/") : -len(":value")]] = float(value)
            elif value is not None:
                raise ConfigError(f"{self.name}: trial {trial}'s {c} is not a number ({value!r})")
        return values

    def replay_commands(self, trial: int, *, discard: bool = False) -> list[C.Command]:
        """Open trial ``trial``'s recording in replay mode; ConfigError (one line) when it has none."""
        path = self.recording_path(trial)
        if not path.is_file():
            raise ConfigError(
                f"trial {trial} has no recording ({path} is missing: the sweep's scenario had no [recording])"
            )
        return [C.OpenModel(str(path), discard=discard)]

    def scenario_commands(self, trial: int, *, discard: bool = False) -> list[C.Command]:
        """Open the sweep's scenario with each param at trial ``trial``'s value; ConfigError
        (one line) when the scenario is not named or missing."""
        problem = self.scenario_problem()
        if problem:
            raise ConfigError(problem)
        values = self.param_values(trial)
        return [C.OpenModel(str(self.scenario_path), discard=discard, params=tuple(values.items()))]
