"""A study's SQLite database (``STUDY.optuna.db``): Optuna made quiet, the study opened or
created (a database of another study refused), the trials a killed run left, and the database's
errors as one line.

What makes a study the same study (``study_fingerprint``): the scenario with its ``[optimize]
trials`` left out (a study may be given more), the model file's content and the seed; it is kept
as the study's user attribute ``mjrig.fingerprint``. Each finished trial keeps its results row as
the user attribute ``mjrig.row`` (``finished_rows`` reads them back), so the database alone is
enough to continue a study killed at any moment.

An error of the database (SQLAlchemy, SQLite or Optuna's storage) is never shown with its SQL
statement: a full disk, a read-only or unwritable folder, a file too large is OutputError (exit 5,
the cause named, the finished trials kept), anything else ConfigError (``database_error``).

Threads: the driver's (the caller's) only; SQLite's connection is Optuna's.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mjrig.runtime.errors import ConfigError, MjrigError, OutputError
from mjrig.runtime.files.atomic_output import fault_errno, output_error
from mjrig.scenario.parse import Scenario
from mjrig.scenario.studies.optimize import OptimizeSpec

__all__ = [
    "STUDY",
    "CONSTRAINED",
    "quiet_optuna",
    "open_study",
    "study_fingerprint",
    "unfinished_trials",
    "finished_rows",
    "database_error",
    "database_faults",
]

STUDY = "mjrig"
"""The study's name in its database."""
CONSTRAINED = ("tpe", "nsga2", "nsga3")
"""The samplers told each trial's requirements as a constraint (CMA-ES and random sampling ignore
constraints, and Optuna would warn of them)."""


def quiet_optuna() -> Any:
    """Optuna, imported, with its log lines and warnings kept from the user's terminal."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.logging.disable_default_handler()  # its lines would not be mjrig's one-line messages
    logging.getLogger("optuna").addHandler(logging.NullHandler())
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", module=r"optuna(\.|$)")  # its advice is not the user's business
    return optuna


_SQLITE_FAULTS = {
    "database or disk is full": errno.ENOSPC,
    "disk i/o error": errno.EIO,
    "readonly database": errno.EROFS,
    "read-only": errno.EROFS,
    "permission denied": errno.EACCES,
    "file too large": errno.EFBIG,
}
"""SQLite's words for an output fault, and the errno each means."""


def database_error(exc: BaseException, db: Path) -> Exception | None:
    """One line for an error of the study's database (SQLAlchemy, SQLite or Optuna's storage),
    never its SQL statement: OutputError (exit 5, the cause named) for the disk or the folder,
    ConfigError otherwise; None when ``exc`` is not the database's."""
    import sqlite3

    kinds = tuple(type(e).__module__.split(".")[0] for e in (exc, getattr(exc, "orig", None)) if e is not None)
    if not (isinstance(exc, sqlite3.Error) or {"sqlalchemy", "optuna", "sqlite3"} & set(kinds)):
        return None
    text = " ".join(str(getattr(exc, "orig", None) or exc).split("[SQL:")[0].split("(Background on")[0].split())
    text = text.removeprefix("(sqlite3.OperationalError) ")
    code = fault_errno(exc) or next((e for words, e in _SQLITE_FAULTS.items() if words in text.lower()), None)
    if code is not None:
        return output_error(
            OSError(code, os.strerror(code)), what="the study", path=db, kept="the finished trials are kept in it"
        )
    return ConfigError(f"{db}: the study's database failed: {text[:200] or type(exc).__name__}")


@contextlib.contextmanager
def database_faults(db: Path) -> Iterator[None]:
    """Errors of the study's database as one line (``database_error``)."""
    try:
        yield
    except MjrigError:
        raise
    except Exception as exc:
        error = database_error(exc, db)
        if error is None:
            raise
        raise error from None


def open_study(optuna: Any, db: Path, spec: OptimizeSpec, *, seed: int, fingerprint: str) -> Any:
    """The study in ``db`` (created for a new one) with ``spec``'s directions and sampler seeded
    with ``seed`` (an NSGA sampler with ``spec.population`` trials a generation when given);
    ConfigError when it holds another study (``fingerprint``: ``study_fingerprint``)."""
    old = {} if hasattr(optuna.trial.Trial, "set_constraint") else {"constraints_func": _constraints}  # Optuna 4
    size = {} if spec.population is None else {"population_size": spec.population}
    samplers = {
        "tpe": lambda: optuna.samplers.TPESampler(seed=seed, **old),
        "cmaes": lambda: optuna.samplers.CmaEsSampler(seed=seed),
        "random": lambda: optuna.samplers.RandomSampler(seed=seed),
        "nsga2": lambda: optuna.samplers.NSGAIISampler(seed=seed, **size, **old),
        "nsga3": lambda: optuna.samplers.NSGAIIISampler(seed=seed, **size, **old),
    }
    try:
        study = optuna.create_study(
            study_name=STUDY,
            storage=f"sqlite:///{db}",
            load_if_exists=True,
            directions=["maximize" if o.maximize else "minimize" for o in spec.objectives],
            sampler=samplers[spec.sampler](),
        )
    except Exception as exc:  # not a database, or a study of another direction
        error = database_error(exc, db)
        if isinstance(error, OutputError):
            raise error from None
        text = " ".join(str(getattr(exc, "orig", None) or exc).split("[SQL:")[0].split())
        raise ConfigError(f"{db}: cannot open the study: {text[:200]}") from None
    found = study.user_attrs.get("mjrig.fingerprint")
    if found is None:
        study.set_user_attr("mjrig.fingerprint", fingerprint)
    elif found != fingerprint:
        raise ConfigError(
            f"{db} holds a different study (other scenario or seed): run that study's command to "
            f"continue it, or delete the file"
        )
    return study


def study_fingerprint(sc: Scenario, meta: dict[str, str], *, seed: int) -> str:
    """What makes a study the same study: the scenario (its ``trials`` left out: a study may be
    given more; its ``reference`` too: the hypervolume's reference point changes what the results
    file says, not the search), the model file's content (``meta``: the results' metadata) and the seed."""
    doc = {k: v for k, v in sc.doc.items() if k != "optimize"}
    doc["optimize"] = {k: v for k, v in sc.doc.get("optimize", {}).items() if k not in ("trials", "reference")}
    text = json.dumps([doc, meta["mjrig.model_sha256"], seed], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _constraints(trial: Any) -> list[float]:
    """Optuna 4's constraints function: the ``mjrig.constraint`` a study sets on a trial as it
    tells it (positive: infeasible, as a trial not told yet)."""
    return trial.user_attrs.get("mjrig.constraint", [1.0])


def unfinished_trials(optuna: Any, study: Any, db: Path) -> list[Any]:
    """The trials a killed run asked for and never told, to run again first with their numbers
    and params (no holes in the numbers). One whose row was kept just before the kill counts as
    run: it is told failed here (its row stays, ``finished_rows``)."""
    pending = []
    storage = optuna.storages.RDBStorage(f"sqlite:///{db}")  # the database ids of the study's trials
    for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        if "mjrig.row" in t.user_attrs:
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)
        else:
            study_id = storage.get_study_id_from_name(STUDY)
            trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, t.number)
            pending.append(optuna.trial.Trial(study, trial_id))
    return pending


def finished_rows(study: Any) -> list[dict[str, Any]]:
    """The rows of the trials this study finished, by trial number."""
    rows = [t.user_attrs["mjrig.row"] for t in study.get_trials(deepcopy=False) if "mjrig.row" in t.user_attrs]
    return sorted(rows, key=lambda r: r["trial"])
