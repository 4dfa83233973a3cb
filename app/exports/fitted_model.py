"""``mjrig fit --write-model OUT.xml``: the rig's MJCF with the fit's estimates written in.

The model file is read into an ``MjSpec`` and compiled; every param bound to a model field
(``model = "joint:slide.stiffness"``, ``mjrig.runtime.model_fields``) is written into the compiled
model the way a run writes it (a fitted param at its estimate, any other bound param at the
scenario's value, so the file gives the response the rig gave at the estimate), and
``MjSpec.copy_back`` carries the compiled values into the spec, which is saved as MJCF. An XML
comment at the top names the bench files, the date and each estimate with its 95 % interval.

The written file loads in plain MuJoCo (``mujoco.MjModel.from_xml_path``): it is compiled again
before it replaces anything, and asset folders are made absolute when it lies in another folder
than the model, so its meshes and textures are still found. The rig's own loads (springs, forces
attached by the scenario) are not model elements and are not in it.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.files.atomic_output import atomic_output
from mjrig.runtime.files.paths import check_suffix, check_writable
from mjrig.runtime.model_fields import BindingSet, ModelBinding
from mjrig.runtime.values import NamedValue

if TYPE_CHECKING:
    from mjrig.scenario.parse import Scenario

__all__ = ["check_model_output", "write_fitted_model"]


def check_model_output(sc: Scenario, out: Path, *, fitted: Iterable[str], where: str = "--write-model") -> None:
    """ConfigError (one line) before any work when ``out`` cannot take the fitted model: not ``.xml``,
    one of the scenario's inputs, a ``.mjb`` model (no MJCF to copy), or none of the ``fitted``
    params bound to a model field."""
    from mjrig.runtime.files.out_lock import check_outputs_apart
    from mjrig.scenario.inputs import scenario_inputs

    check_suffix(out, (".xml",), where=where)
    check_outputs_apart({where: out}, scenario_inputs(sc))
    if Path(sc.model).suffix.lower() != ".xml":
        raise ConfigError(f"{where}: the model {Path(sc.model).name} is not MJCF (.xml): there is no MJCF to copy")
    fitted = set(fitted)
    if not any(b.param.name in fitted for b in sc.bindings):
        names = ", ".join(sorted(fitted)) or "none"
        raise ConfigError(
            f"{where}: no fitted param ({names}) is bound to a model field "
            '(model = "joint:NAME.damping" ... in [params]): the model would not change'
        )
    check_writable(out, where)


def write_fitted_model(sc: Scenario, summary: Mapping[str, Any], *, out: Path, where: str = "--write-model") -> Path:
    """Write ``sc``'s MJCF with ``summary``'s estimates (``mjrig.fit`` metadata: converged, params,
    estimate, ci95, units) to ``out``; ConfigError (one line, nothing written) for a fit that did
    not converge, an output ``check_model_output`` refuses, or a model MuJoCo cannot compile."""
    out = Path(out)
    if not summary.get("converged"):
        raise ConfigError(f"{out.name} was not written: the fit did not converge, so there is no estimate")
    check_model_output(sc, out, fitted=summary["params"], where=where)
    model_path = Path(sc.model)
    try:
        spec = mujoco.MjSpec.from_file(str(model_path))
        model = spec.compile()
    except Exception as exc:  # MuJoCo's compile errors are plain ValueErrors
        raise ConfigError(f"{where}: cannot compile {model_path}: {exc}") from None
    estimate = {n: float(v) for n, v in summary["estimate"].items()}
    bindings = [
        ModelBinding(
            NamedValue(b.param.name, estimate.get(b.param.name, float(b.param.value)), unit=b.param.unit),
            field=b.field,
        )
        for b in sc.bindings
    ]
    BindingSet(model, bindings).apply()
    spec.copy_back(model)
    if out.resolve().parent != model_path.resolve().parent:
        _absolute_asset_folders(spec, model_path)
    spec.comment = _comment(sc, summary, bindings)
    text = exact_values(spec.to_xml(), model, bindings)
    with atomic_output(out, what=where) as tmp:
        tmp.write_text(text, encoding="utf-8")
        try:
            again = mujoco.MjModel.from_xml_path(str(tmp))
        except Exception as exc:
            raise ConfigError(f"{where}: the fitted model does not load in MuJoCo: {exc}") from None
        for b in bindings:
            if not np.array_equal(_values(again, b), _values(model, b)):
                raise ConfigError(f"{where}: {b.field} does not read back as {b.param.value!r} from the MJCF")
    return out


_TAGS = {"joint": ("joint",), "geom": ("geom",), "body": ("body",)}
"""The MJCF tags an entity kind is written as (tendons and actuators: any child of their section)."""


def _values(model: mujoco.MjModel, b: ModelBinding) -> np.ndarray:
    """The compiled values binding ``b`` writes: ``[(attribute, numbers), ...]`` flattened."""
    f = b.field
    i = b.check(model)
    if f.kind == "opt":
        return np.atleast_1d(model.opt.timestep if f.attr == "timestep" else model.opt.gravity).astype(float)
    if f.kind == "body":
        return np.concatenate([[model.body_mass[i]], model.body_inertia[i]])
    if f.kind == "joint" and f.attr != "stiffness":
        return np.atleast_1d(getattr(model, f"dof_{f.attr}")[int(model.jnt_dofadr[i])])
    table = {"joint": "jnt", "geom": "geom", "actuator": "actuator", "tendon": "tendon"}[f.kind]
    return np.atleast_1d(getattr(model, f"{table}_{f.attr}")[i]).astype(float)


def exact_values(text: str, model: mujoco.MjModel, bindings: list[ModelBinding]) -> str:
    """``text`` (MJCF from ``MjSpec.to_xml``, which writes six significant digits) with each bound
    field's attribute rewritten from ``model`` at full precision (the shortest repr that reads
    back as the same double), so the file steps exactly as the fitted rig does."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    for b in bindings:
        f = b.field
        numbers = " ".join(repr(float(v)) for v in _values(model, b))
        if f.kind == "opt":
            option = root.find("option")
            if option is None:
                option = ET.SubElement(root, "option")
            option.set("timestep" if f.attr == "timestep" else "gravity", numbers)
            continue
        if f.kind in ("tendon", "actuator"):
            found = [e for section in root.iter(f.kind) for e in section if e.get("name") == f.name]
        else:
            found = [e for tag in _TAGS[f.kind] for e in root.iter(tag) if e.get("name") == f.name]
        if not found:
            continue  # the read-back check names it
        element = found[0]
        if f.kind == "body":
            inertial = element.find("inertial")
            if inertial is None or inertial.get("fullinertia") is not None:
                continue
            mass, *diagonal = numbers.split()
            inertial.set("mass", mass)
            inertial.set("diaginertia", " ".join(diagonal))
        else:
            element.set(f.attr, numbers)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def _absolute_asset_folders(spec: mujoco.MjSpec, model_path: Path) -> None:
    """Point the spec's mesh and texture folders at absolute paths (from the model's folder)."""
    base = model_path.resolve().parent
    spec.meshdir = os.fspath(base / spec.meshdir) if spec.meshdir else os.fspath(base)
    spec.texturedir = os.fspath(base / spec.texturedir) if spec.texturedir else os.fspath(base)


def _comment(sc: Scenario, summary: Mapping[str, Any], bindings: list[ModelBinding]) -> str:
    """The file's comment: source, bench files, date, each estimate with its interval and field."""
    from mjrig import __version__

    fields = {b.param.name: str(b.field) for b in bindings}
    source = f"{sc.source} (model {Path(sc.model).name})" if sc.source is not None else str(sc.model)
    lines = [
        f"Fitted by mjrig {__version__} on {datetime.date.today().isoformat()}: {source}",
        "bench files: " + ", ".join(f"{m.name} = {m.file}" for m in sc.measured or []),
    ]
    for n in summary["params"]:
        unit = f" {summary['units'][n].replace('*', '·')}" if summary["units"].get(n) else ""
        low, high = summary["ci95"][n]
        into = f" -> {fields[n]}" if n in fields else " (not a model field: not in this file)"
        lines.append(f"{n} = {summary['estimate'][n]:.9g}{unit}, 95 % interval {low:.6g} … {high:.6g}{into}")
    for b in bindings:
        if b.param.name not in summary["params"]:
            unit = f" {b.param.unit}" if b.param.unit else ""
            lines.append(f"{b.param.name} = {b.param.value:.9g}{unit} as in the scenario -> {b.field}")
    text = "".join(f"\n  {line}" for line in lines) + "\n"
    return text.replace("--", "- -")  # "--" may not appear inside an XML comment
