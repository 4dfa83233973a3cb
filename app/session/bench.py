"""Bench data brought into the app, and params fitted to it.

A CSV, MAT, MCAP, Excel or TDMS file opened with File > Open or dropped on the 3D view is offered to the rig
(``BenchPart.measured_offer``): its columns, with a guess of the time column and of the signal
and unit each column measures. The panel asks; ``AddMeasured`` makes the answer a
``[[measured]]`` entry of the rig (saved with the scenario) and the plots draw it.

The guesses are ``session.bench_guess``'s.

``RunFit`` fits params to the rig's ``[[measured]]`` data as ``mjrig fit`` does (the rig as edited
now, a ``[fit]`` of the chosen bounds), on a background job writing ``runs/<model>-fit.parquet``;
``BenchPart.fit`` follows its evaluations and lowest cost and then holds its result.
``BenchPart.variables`` offers a start position and each bench's clock offset to fit beside the
params (``mjrig.scenario.studies.fit.offered_variables``). ``UseEstimate`` sets the params to the estimate, as the
sliders do, and an estimated start position or offset into the rig's ``[initial]`` and
``[[measured]]`` entry (Reset then starts there). ``WriteFittedModel`` writes a copy of the MJCF
carrying the estimate (``mjrig fit --write-model``'s ``exports.fitted_model``). Another rig opened forgets
the offer and the fit (one still running ends in the status log and its file alone). GUI-free.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjrig import commands as C
from mjrig.bench_state import verdict_text
from mjrig.runtime.errors import ConfigError, one_line
from mjrig.runtime.files.paths import fresh_path
from mjrig.runtime.telemetry.snapshots import put_snapshot
from mjrig.scenario.builder import reset_state
from mjrig.scenario.measured import TIME_UNITS
from mjrig.scenario.measured_files import MeasuredFileError, read_measured
from mjrig.scenario.measured_lab import LAB_SUFFIXES
from mjrig.scenario.measured_lab import parts as lab_parts
from mjrig.scenario.studies.best import put_values
from mjrig.scenario.studies.fit import is_variable, offered_variables
from mjrig.session.bench_guess import guess_signal, guess_unit, has_columns, listed_signals
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler
from mjrig.session.jobs import BackgroundJobs, Cancelled, Job

__all__ = ["Bench"]


@dataclass
class _BenchOfRig:
    """What the bench feature holds of one opened rig (in its ``RigScope``)."""

    offer: C.MeasuredOffer | None = None
    fit: C.FitProgress | None = None
    costs: list[tuple[int, float]] = field(default_factory=list)  # the running fit's: its thread appends
    variables: tuple[Any, tuple[C.FitVariable, ...]] = (None, ())  # (of the scenario, offered)
    reads: int = 0  # the model's readings (reloads): a fit of an older one is stale


class Bench(Feature):
    """The bench file offered to the rig, and its answer."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.jobs: BackgroundJobs = BackgroundJobs()

    @property
    def _here(self) -> _BenchOfRig:
        """This feature's state in the rig shown now (dropped whole when another rig opens)."""
        return self.ctx.scope().state(self, _BenchOfRig)

    @property
    def offer(self) -> C.MeasuredOffer | None:
        """The bench file offered to the rig shown, awaiting the panel's answer."""
        return self._here.offer

    @offer.setter
    def offer(self, value: C.MeasuredOffer | None) -> None:
        self._here.offer = value

    @property
    def fit(self) -> C.FitProgress | None:
        """The rig's fit: running (its progress) or ended (its result)."""
        return self._here.fit

    @fit.setter
    def fit(self, value: C.FitProgress | None) -> None:
        self._here.fit = value

    def handlers(self) -> dict[type[C.Command], Handler]:
        return {
            C.AddMeasured: self.add,
            C.RunFit: self.run_fit,
            C.UseEstimate: self.use_estimate,
            C.WriteFittedModel: self.write_model,
            C.OfferPart: self.offer_part,
        }

    def model_changed(self) -> None:
        """A reload: the fit stays shown, marked stale (its estimate is of the model before)."""
        here = self._here
        here.reads += 1
        if here.fit is not None:
            here.fit = dataclasses.replace(here.fit, stale=True)

    def publish(self) -> C.BenchPart:
        self.jobs.finish()  # a fit that ended reports here, on the simulation thread
        here = self._here
        if here.fit is not None and here.fit.running and len(here.costs) != len(here.fit.costs):
            done = list(here.costs)  # (evaluations, lowest cost) pairs its thread appended
            here.fit = C.FitProgress(True, tuple(c for _, c in done), tuple(n for n, _ in done), path=here.fit.path)
        return C.BenchPart(here.offer, here.fit, self.variables(), self.planned())

    def planned(self) -> tuple[tuple[str, float, float, bool], ...]:
        """The open scenario's ``[fit]`` params: (name, low, high, log) each."""
        rig = self.ctx.rig()
        spec = rig.scenario.fit if rig is not None else None
        if spec is None:
            return ()
        return tuple((n, float(r.low), float(r.high), bool(r.log)) for n, r in spec.params.items())

    def variables(self) -> tuple[C.FitVariable, ...]:
        """The fit variables the rig as it is now offers (worked out again when it changes)."""
        rig = self.ctx.rig()
        if rig is None:
            return ()
        here = self._here
        if here.variables[0] is not rig.scenario:
            data = mujoco.MjData(rig.model)  # the start state, apart from the running one
            if rig.initial is not None:
                put_snapshot(rig.model, data, rig.initial)
                mujoco.mj_forward(rig.model, data)
            else:
                reset_state(rig.model, data)
            offered = offered_variables(rig.scenario, rig.model, data)
            found = tuple(C.FitVariable(v.name, v.value, v.unit, v.low, v.high) for v in offered)
            here.variables = (rig.scenario, found)
        return here.variables[1]

    def run_fit(self, cmd: C.RunFit) -> None:
        s = self.ctx
        if self.fit is not None and self.fit.running:
            raise ConfigError("a fit is running: wait for it to end")
        if not cmd.params:
            raise ConfigError("fit: tick at least one param to estimate")
        doc = copy.deepcopy(s.document.doc)
        doc["fit"] = {
            "params": {n: {"low": lo, "high": hi, **({"log": True} if log else {})} for n, lo, hi, log in cmd.params}
        }
        sc = s.document.scenario(doc)  # the [fit] checked as a scenario's: one line at its field
        stem = s.document.model_path.stem if s.document.model_path else "rig"
        out = fresh_path(Path.cwd() / "runs" / f"{stem}-fit.parquet")
        out.parent.mkdir(parents=True, exist_ok=True)
        here = self._here
        costs: list[tuple[int, float]] = []
        here.costs = costs
        job = Job("a fit")

        def step(n: int, cost: float) -> None:
            costs.append((n, cost))
            job.step(note=f"{n} evaluation{'s' if n != 1 else ''}")  # Cancelled once a cancel is asked

        def work() -> Any:
            from mjrig.campaign.fit import run_fit

            return run_fit(sc, out=out, progress=step)

        scope, reads = s.scope(), here.reads

        def done(outcome: Any, error: BaseException | None) -> None:
            if not scope.current:  # another rig was opened meanwhile: its file and one line, nothing else
                s.log(
                    "info",
                    f"a fit of {scope.source or 'the rig before'} ended: {out}"
                    if error is None
                    else f"a fit of {scope.source or 'the rig before'} ended: {one_line(str(error))}",
                )
                return
            if reads != here.reads:  # the model was read again meanwhile: the panel stops waiting
                s.log(
                    "info",
                    f"a fit of the model as it was before ended: {out}"
                    if error is None
                    else f"fit: {one_line(str(error))}",
                )
                if here.fit is not None and here.fit.running:
                    here.fit = dataclasses.replace(here.fit, running=False, stale=True)
                return
            if isinstance(error, Cancelled):
                here.fit = C.FitProgress(
                    False, tuple(c for _, c in costs), tuple(n for n, _ in costs), error="cancelled", path=str(out)
                )
                s.log("info", f"fit cancelled after {len(costs)} evaluation{'s' if len(costs) != 1 else ''}")
                return
            if error is not None:
                here.fit = C.FitProgress(
                    False,
                    tuple(c for _, c in costs),
                    tuple(n for n, _ in costs),
                    error=one_line(str(error)),
                    path=str(out),
                )
                s.log("error", f"fit: {one_line(str(error))}")
                return
            here.fit = C.FitProgress(
                False, tuple(c for _, c in costs), tuple(n for n, _ in costs), outcome.summary, path=str(outcome.path)
            )
            est = ", ".join(f"{n} = {v:.6g}" for n, v in outcome.summary["estimate"].items())
            how = verdict_text(outcome.summary, reasons=True)
            s.log(
                "info" if outcome.identified else "warning",
                f"fit {how}: {est} ({outcome.evaluations} evaluations, {Path(outcome.path).name})",
            )

        self.fit = C.FitProgress(True, path=str(out))
        s.log("info", f"fitting {', '.join(n for n, *_ in cmd.params)} to the rig's measured data ...")
        self.jobs.start("mjrig-fit", work, done, job=job)

    def _ended(self) -> dict[str, Any]:
        """The summary of the fit that ended; ConfigError when none has, or it is stale."""
        if self.fit is None or not self.fit.summary:
            raise ConfigError("no fit has ended yet: run one first")
        if self.fit.stale:
            raise ConfigError("this fit was made before the model changed: run it again")
        return self.fit.summary

    def write_model(self, cmd: C.WriteFittedModel) -> None:
        from mjrig.exports.fitted_model import write_fitted_model

        summary, rig = self._ended(), self.ctx.rig()
        if rig is None:
            raise ConfigError("no rig is open")
        out = write_fitted_model(rig.scenario, summary, out=Path(cmd.path), where=Path(cmd.path).name)
        self.ctx.log("info", f"wrote the fitted model to {out}")

    def use_estimate(self, cmd: C.UseEstimate) -> None:
        estimate = self._ended()["estimate"]
        rig = self.ctx.rig()
        if rig is not None and any(is_variable(n) for n in estimate):
            # a start position or a clock offset: the rig's [initial] and [[measured]] edited with the params
            unknown = [n for n in estimate if not is_variable(n) and n not in rig.scenario.params]
            if unknown:
                raise ConfigError(f"the rig has no param '{unknown[0]}' any more")
            doc = copy.deepcopy(self.ctx.document.doc)
            put_values(doc, rig.scenario, estimate)
            self.ctx.rebuild(doc)
            self.ctx.log("info", "the params, start position and clock offsets are set to the fit's estimate")
            return
        rm = self.ctx.runtime
        for name, value in estimate.items():
            nv = next((p for p in rm.params if p.name == name), None)
            if nv is None:
                raise ConfigError(f"the rig has no param '{name}' any more")
            nv.value = value
            self.ctx.document.set_param_value(name, nv.value)
        self.ctx.log("info", "the params are set to the fit's estimate")

    def close(self) -> None:
        self.jobs.join()

    def offered(self, path: str | Path, *, part: str | None = None) -> None:
        """Offer the bench file ``path`` to the rig: a workbook's or TDMS file's ``part`` (sheet
        or group; None: the first with numbers). ConfigError: unreadable, a part without numbers,
        or no rig open."""
        rig = self.ctx.rig()
        if rig is None:
            raise ConfigError(f"{Path(path).name}: open a model or scenario first, then its bench data")
        path = Path(path).expanduser().resolve()
        parts: tuple[str, ...] = ()
        try:
            if path.suffix.lower() in LAB_SUFFIXES:
                parts = tuple(lab_parts(path))
                if part is None:  # the first sheet or group with numbers
                    part = next((p for p in parts if has_columns(path, p)), "")
                elif not has_columns(path, part):
                    kind = "sheet" if path.suffix.lower() == ".xlsx" else "group"
                    raise ConfigError(f"{path.name}: {kind} '{part}' has no column of numbers")
            f = read_measured(path, part=part or None)
        except MeasuredFileError as exc:
            raise ConfigError(str(exc)) from None
        units = rig.runtime.signal_units()
        cols = tuple(f.columns)
        time = "" if f.topic else next((c for c in cols if guess_unit(c)[0].lower() in ("t", "time")), "")
        if not time and not f.topic:
            time = next((c for c in cols if np.all(np.diff(f.columns[c][np.isfinite(f.columns[c])]) > 0)), cols[0])
        said = f.units.get(time) or guess_unit(time)[1]  # the file's units row, else the column's name
        time_unit = said if said in TIME_UNITS else "s"
        guesses = tuple(
            (c, *guess_signal(c, units, said=f.units.get(c, "")))
            for c in cols
            if c != time and not c.endswith("/log_time")
        )
        names = {m.name for m in rig.scenario.measured}
        name = next(n for n in (path.stem, *(f"{path.stem}-{i}" for i in range(2, 99))) if n not in names)
        self.offer = C.MeasuredOffer(
            str(path),
            cols,
            time,
            time_unit,
            name,
            guesses,
            listed_signals(units, guesses),
            part=part or "",
            parts=parts,
        )
        where = (
            f"{path.name}, {'sheet' if path.suffix.lower() == '.xlsx' else 'group'} {part}"
            if len(parts) > 1
            else path.name
        )
        self.ctx.log("info", f"{where}: bench data -- map its columns to signals in the dialog")

    def offer_part(self, cmd: C.OfferPart) -> None:
        """The dialog's sheet or group choice: the offered file again, from that part (a part
        without numbers leaves the offer as it was, with the reason)."""
        offer = self.offer
        if offer is None:
            raise ConfigError("no bench file is being added")
        try:
            self.offered(offer.path, part=cmd.part)
        except ConfigError as exc:
            self.offer = dataclasses.replace(offer, error=one_line(str(exc)))
            raise

    def add(self, cmd: C.AddMeasured) -> None:
        s = self.ctx
        if not cmd.path:
            if self.offer is not None:
                s.log("info", f"{Path(self.offer.path).name}: not added to the rig")
            self.offer = None
            return
        try:
            self._add(cmd)
        except ConfigError as exc:  # the offer stays, with the reason: the dialog keeps the mapping
            if self.offer is not None:
                self.offer = dataclasses.replace(self.offer, error=one_line(str(exc)))
            raise

    def _add(self, cmd: C.AddMeasured) -> None:
        s = self.ctx
        if not cmd.signals:
            raise ConfigError("measured data: map at least one column to a signal")
        entry: dict[str, Any] = {"name": cmd.name, "file": str(Path(cmd.path))}  # relative once saved
        if cmd.time:
            entry["time"] = cmd.time
        if cmd.time_unit != "s":
            entry["time_unit"] = cmd.time_unit
        if cmd.offset:
            entry["offset"] = float(cmd.offset)
        if cmd.part:
            entry["sheet" if Path(cmd.path).suffix.lower() == ".xlsx" else "group"] = cmd.part
        entry["signals"] = {
            sig: ({"column": col, "unit": unit} if unit else {"column": col}) for sig, col, unit in cmd.signals
        }
        doc = copy.deepcopy(s.document.doc)
        doc.setdefault("measured", []).append(entry)
        s.rebuild(doc)  # validated as the scenario would be: one line at the field otherwise
        self.offer = None
        s.log(
            "info",
            f"measured data '{cmd.name}' added: {len(cmd.signals)} signal{'s' if len(cmd.signals) != 1 else ''}"
            f" from {Path(cmd.path).name} (dotted on the plots; saved with the scenario)",
        )
