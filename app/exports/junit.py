"""JUnit XML of requirement verdicts (``mjrig run|check|sweep ... --junit OUT.xml``), the file a CI
server (GitHub Actions, GitLab, Jenkins) shows as tests.

One ``<testsuites>`` holding one ``<testsuite>`` (``tests``, ``failures``, ``errors``, ``skipped``,
``time`` in seconds of wall time, ``timestamp``, ``hostname``) of ``<testcase>`` elements:

- ``run``: one per requirement (``requirement_cases``): ``name`` the requirement's, ``classname``
  the scenario's name; a failed one holds ``<failure type="requirement">`` whose ``message`` gives
  the first violation's simulated time, the signal's value then and the bound it broke (SI units);
- ``check``: one per requirement, passed: the scenario is valid and the requirement's signal exists
  (``checked_cases``; nothing is run);
- ``sweep``: one per trial and requirement, ``name`` ``trial N: <requirement>``, the trial's params
  as ``<properties>`` (``sweep_cases``); a failure gives what the results keep: the value that
  decided it and the bound it is past (the results hold no time of the first violation).

A case that did not fail and whose window was still open when its run did not finish (the physics
diverged, a stop; a sweep's trial that diverged or ended in an error) holds ``<error>`` with why.
``time`` on each case is the wall time given (s), split evenly over the cases (their sum is the
suite's ``time``). Written with the standard library's ``xml.etree.ElementTree``, whole or not at
all (``atomic_output``). GUI-free; any thread.
"""

from __future__ import annotations

import math
import os
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mjrig.runtime.files.atomic_output import atomic_output

if TYPE_CHECKING:
    from mjrig.runtime.analysis.requirements import Requirement
    from mjrig.scenario.parse import Scenario

__all__ = [
    "JunitCase",
    "scenario_name",
    "requirement_cases",
    "checked_cases",
    "sweep_cases",
    "junit_element",
    "write_junit",
]


@dataclass(frozen=True)
class JunitCase:
    """One ``<testcase>``: ``failure`` (a one-line message) makes it failed, else ``error`` makes it
    errored, else it passed; ``detail`` is the failure's or error's text (several lines);
    ``properties`` are (name, value) pairs (a sweep trial's params)."""

    name: str
    classname: str
    failure: str | None = None
    error: str | None = None
    detail: str = ""
    properties: tuple[tuple[str, str], ...] = ()


def scenario_name(sc: Scenario) -> str:
    """The name a scenario's cases go under (``classname``): its file's stem (a bundled rig's
    scenario is named after the rig, a bare model's is the model file), else ``scenario``."""
    return Path(sc.source).stem if sc.source is not None else "scenario"


def _num(v: float, unit: str) -> str:
    """``v`` (SI) with its ``unit``: ``-0.0501 m``."""
    return f"{v:.6g} {unit}" if unit else f"{v:.6g}"


def _bounds(r: Requirement, unit: str) -> str:
    """What ``r`` asks, in words: ``min -0.05 m, max 0.5 m; window 0 s to 1 s``."""
    parts = []
    if r.min is not None:
        parts.append(f"min {_num(r.min, unit)}")
    if r.max is not None:
        parts.append(f"max {_num(r.max, unit)}")
    if r.final is not None:
        parts.append(f"final {_num(r.final, unit)} ± {_num(r.tolerance or 0.0, unit)}")
    end = "the run's end" if r.end is None else f"{r.end:g} s"
    return f"{', '.join(parts)}; window {r.start:g} s to {end}"


def _broken(r: Requirement, v: float, unit: str) -> str:
    """The bound value ``v`` (SI) breaks: ``below its min -0.05 m``, or '' when it breaks none."""
    if r.min is not None and v < r.min:
        return f"below its min {_num(r.min, unit)}"
    if r.max is not None and v > r.max:
        return f"above its max {_num(r.max, unit)}"
    if r.final is not None and abs(v - r.final) > (r.tolerance or 0.0):
        return f"outside its final {_num(r.final, unit)} ± {_num(r.tolerance or 0.0, unit)}"
    return ""


def _unit(units: Mapping[str, str], r: Requirement) -> str:
    return units.get(f"Requirements/{r.name}:value", "")


def requirement_cases(
    requirements: Sequence[Requirement],
    *,
    classname: str,
    units: Mapping[str, str] | None = None,
    unfinished: str | None = None,
    undecided: Collection[str] = (),
) -> list[JunitCase]:
    """The cases of a run's decided ``requirements`` (``mjrig run``). ``units``: the SI unit of
    each ``Requirements/<r>:value`` column (``RequirementSet.value_units``); ``unfinished``: why
    the run did not finish (a divergence, a stop), which the cases of ``undecided`` (the names of
    the requirements whose window was still open then) that did not fail hold as their error."""
    units = units or {}
    cases = []
    for r in requirements:
        unit = _unit(units, r)
        head = f"requirement '{r.name}': {r.signal}; {_bounds(r, unit)}"
        if r.passed:
            seen = "" if r.value is None else f"\nvalue so far: {_num(r.value, unit)}"
            why = None if unfinished is None or r.name not in undecided else f"not decided: {unfinished}"
            cases.append(JunitCase(r.name, classname, error=why, detail=f"{head}{seen}" if why else ""))
            continue
        t, v = r.first_violation, r.violation_value
        if t is None or v is None:
            message = f"{r.signal}: nothing observed in its window ({_bounds(r, unit)})"
        else:
            past = _broken(r, v, unit)
            worst = r.value
            message = f"{r.signal} = {_num(v, unit)} at t = {t:.6g} s" + (f", {past}" if past else "")
            if worst is not None and worst != v:
                message += f" (worst in the window: {_num(worst, unit)})"
        cases.append(JunitCase(r.name, classname, failure=message, detail=f"{head}\nfailed: {message}"))
    return cases


def checked_cases(requirements: Sequence[Requirement], *, classname: str) -> list[JunitCase]:
    """The cases of a scenario validated, not run (``mjrig check``): one passed case per
    requirement (its signal exists on the built rig)."""
    return [JunitCase(r.name, classname) for r in requirements]


def _property(v: Any) -> str:
    """A param's value as text: an integer stays one, a float in its shortest exact form."""
    if v is None:
        return ""
    return repr(float(v)) if isinstance(v, float) else str(v)


_NOT_WHEN = (
    "(a sweep's results keep the value that decided each requirement, not when it first failed: "
    "`mjrig run` the scenario with this trial's params set (--set) to see when)"
)


def sweep_cases(
    rows: Iterable[Mapping[str, Any]],
    requirements: Sequence[Requirement],
    *,
    classname: str,
    units: Mapping[str, str] | None = None,
) -> list[JunitCase]:
    """The cases of a sweep's results ``rows`` (one mapping per trial, as the results file holds
    them: ``trial``, ``status``, ``message``, ``Params/<p>:value``, ``Requirements/<r>:pass`` and
    ``:value``): one per trial and requirement, the trial's params as properties. ``units``: the
    SI unit of each column (the results' field metadata)."""
    units = units or {}
    cases = []
    for row in rows:
        trial, status = int(row["trial"]), str(row.get("status") or "")
        props = tuple(
            (key.removeprefix("Params/").removesuffix(":value"), _property(v))
            for key, v in row.items()
            if key.startswith("Params/") and key.endswith(":value")
        )
        said = " ".join(str(row.get("message") or "").split())
        trouble = f"trial {trial} {'diverged' if status == 'diverged' else 'ended in an error'}" + (
            f": {said}" if said else ""
        )
        for r in requirements:
            unit = _unit(units, r)
            name = f"trial {trial}: {r.name}"
            head = f"requirement '{r.name}': {r.signal}; {_bounds(r, unit)}"
            verdict, value = row.get(f"Requirements/{r.name}:pass"), row.get(f"Requirements/{r.name}:value")
            if verdict is False:
                if value is None or not math.isfinite(value):
                    message = f"{r.signal}: nothing observed in its window"
                else:
                    past = _broken(r, value, unit)
                    message = f"failed: {r.signal} reached {_num(value, unit)}" + (f", {past}" if past else "")
                extra = f"\n{trouble}" if status in ("diverged", "error") else ""
                detail = f"{head}\n{message}{extra}\n{_NOT_WHEN}"
                case = JunitCase(name, classname, failure=message, detail=detail, properties=props)
            elif verdict is None or status in ("diverged", "error"):
                case = JunitCase(name, classname, error=trouble, detail=f"{head}\n{trouble}", properties=props)
            else:
                case = JunitCase(name, classname, properties=props)
            cases.append(case)
    return cases


def _seconds(s: float) -> str:
    return f"{max(0.0, s):.3f}"


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML 1.0 cannot hold (escaped or not): a name or message with one would make the
file unreadable, so they are dropped."""


def _xml(text: str) -> str:
    return _NOT_XML.sub("", text)


def junit_element(cases: Sequence[JunitCase], *, suite: str, seconds: float) -> ET.Element:
    """The JUnit document (its ``<testsuites>`` root) of ``cases`` in one suite named ``suite``;
    ``seconds`` of wall time in all (the suite's ``time``), split evenly over the cases."""
    failures = sum(c.failure is not None for c in cases)
    errors = sum(c.failure is None and c.error is not None for c in cases)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": "mjrig", **counts, "time": _seconds(seconds)})
    ts = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _xml(suite),
            **counts,
            "skipped": "0",
            "time": _seconds(seconds),
            "timestamp": datetime.now().replace(microsecond=0).isoformat(),
            "hostname": socket.gethostname(),
        },
    )
    each = seconds / len(cases) if cases else 0.0
    for c in cases:
        attrs = {"name": _xml(c.name), "classname": _xml(c.classname), "time": _seconds(each)}
        tc = ET.SubElement(ts, "testcase", attrs)
        if c.properties:
            props = ET.SubElement(tc, "properties")
            for k, v in c.properties:
                ET.SubElement(props, "property", {"name": _xml(k), "value": _xml(v)})
        for tag, kind, message in (("failure", "requirement", c.failure), ("error", "unfinished", c.error)):
            if message is not None:
                ET.SubElement(tc, tag, {"message": _xml(message), "type": kind}).text = _xml(c.detail or message)
                break
    ET.indent(root)
    return root


def write_junit(path: str | os.PathLike, cases: Sequence[JunitCase], *, suite: str, seconds: float) -> None:
    """Write ``junit_element(cases, suite=, seconds=)`` (``seconds``: wall time, s) to ``path``,
    UTF-8, whole or not at all; OutputError (exit 5) when the disk or folder refuses it."""
    root = junit_element(cases, suite=suite, seconds=seconds)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    with atomic_output(path, what="--junit") as tmp:
        tmp.write_bytes(text.encode("utf-8"))
