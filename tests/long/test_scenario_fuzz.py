"""Property-based fuzzing of the scenario parser (docs/scenario.md, "Scenario files").

The requirement: any input either loads or gives the one-line error, and scenario files are
data (nothing in them is evaluated, imported or unpickled). Four families of inputs:

1. arbitrary text / bytes, and mutations of the bundled ``models/*.toml`` texts;
2. scenario-shaped documents (always-valid ones, corrupted ones, randomly shaped ones),
   written with ``mjrig.scenario.toml_writer.dumps`` and with an independent hand-built TOML writer;
   valid ones must round-trip through ``dumps``;
3. code-looking strings (Python, YAML tags, pickle bytes, shell and ``${ENV}`` substitutions)
   in every kind of field: no marker file appears, no exec/import/open/spawn audit event fires
   while parsing, and in numeric fields the error names the field;
4. ``mjrig check`` on a few generated broken files: exit 2, one stderr line, no traceback.

Every test is derandomized and uses no example database, so CI runs are reproducible and
nothing is written into the repository.
"""

from __future__ import annotations

import copy
import math
import os
import pickle
import re
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import note as _note
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from mjrig.runtime.errors import ConfigError
from mjrig.runtime.telemetry.signals import SIGNAL_GROUPS
from mjrig.scenario.parse import LOAD_KINDS, Scenario, load_scenario, parse_scenario, scenario_from_doc
from mjrig.scenario.toml_writer import dumps
from tests.sweep_util import MAIN_SPRING

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
SOURCE = Path("fuzz.toml")
BUNDLED = {p.name: p.read_text(encoding="utf-8") for p in sorted(MODELS.glob("*.toml"))}
MODEL_FILES = sorted(p.name for p in MODELS.glob("*.xml"))
SPRINGS = ("ideal_spring", "compression_spring", "tension_spring")


def fuzz(n: int) -> settings:
    """Reproducible, deadline-free settings with ``n`` examples and no on-disk database."""
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def note(text: str) -> None:
    """hypothesis.note, also usable from plain (non-hypothesis) tests."""
    if currently_in_test_context():
        _note(text)


# --- the contract ---------------------------------------------------------------------------------


def assert_one_line(msg: str, where: str) -> None:
    """The one-line error: non-empty, no line break of any kind, starts with 'FILE:' / 'FILE: '."""
    assert msg, "empty error message"
    assert "\n" not in msg and "\r" not in msg, f"multi-line error: {msg!r}"
    assert len(msg.splitlines()) == 1, f"error splits into several lines: {msg!r}"
    assert msg.startswith(where + ":"), f"error does not start with {where!r}: {msg!r}"
    rest = msg[len(where) + 1 :]
    assert re.match(r"(\d+:)? \S", rest), f"no location/reason after the file name: {msg!r}"


def outcome(text: str, *, source: Path = SOURCE) -> Scenario | ConfigError:
    """parse_scenario's result; any exception but a well-formed ConfigError fails the test."""
    try:
        sc = parse_scenario(text, source=source, base=MODELS)
    except ConfigError as exc:
        note(f"ConfigError: {exc}")
        assert_one_line(str(exc), str(source))
        return exc
    assert isinstance(sc, Scenario)
    assert sc.model.is_file()
    return sc


def same(a: Any, b: Any) -> bool:
    """TOML-value equality: type-strict (1 != 1.0 != true), nan- and -0.0-aware, key order free."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict):
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def check_round_trip(sc: Scenario) -> None:
    """A valid scenario's document survives dumps -> parse, and re-validates from memory."""
    text = dumps(sc.doc)
    assert same(tomllib.loads(text), sc.doc), text
    again = parse_scenario(text, source=SOURCE, base=MODELS)
    assert same(again.doc, sc.doc)
    assert len(again.loads) == len(sc.loads) and len(again.proximities) == len(sc.proximities)
    assert list(again.params) == list(sc.params)
    scenario_from_doc(copy.deepcopy(sc.doc), base=MODELS, source=SOURCE)


# --- an independent TOML writer (other syntax than scenario_toml: literal strings, dotted keys,
# [params.NAME] sub-tables, inline arrays of tables, hex ints, multi-line arrays, comments) ----


def _h_string(s: str) -> str:
    if "'" not in s and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in s):
        return f"'{s}'"
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _h_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _h_string(k)


def _h_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return hex(v) if 0 < v < 2**63 and v % 7 == 3 else str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "+inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _h_string(v)
    if isinstance(v, list):
        if len(v) > 2:
            return "[\n  " + ",\n  ".join(_h_value(x) for x in v) + ",  # trailing comma\n]"
        return "[" + ", ".join(_h_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_h_key(k)} = {_h_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def hand_toml(doc: dict) -> str:
    """TOML for ``doc`` written differently from scenario_toml (tables of tables become [a.b])."""
    lines = ["# hand-built fuzz scenario"]
    for k, v in doc.items():
        if not isinstance(v, dict):
            lines.append(f"{_h_key(k)} = {_h_value(v)}")
    for k, v in doc.items():
        if not isinstance(v, dict):
            continue
        lines.append(f"[{_h_key(k)}]   # table")
        subs = {kk: vv for kk, vv in v.items() if isinstance(vv, dict) and vv}
        for kk, vv in v.items():
            if kk not in subs:
                lines.append(f"{_h_key(kk)} = {_h_value(vv)}")
        for kk, vv in subs.items():
            lines.append(f"[{_h_key(k)}.{_h_key(kk)}]")
            lines += [f"{_h_key(k3)} = {_h_value(v3)}" for k3, v3 in vv.items()]
    return "\n".join(lines) + "\n"


# --- strategies: values ---------------------------------------------------------------------------

FINITE = st.floats(allow_nan=False, allow_infinity=False)
NONNEG = st.one_of(st.floats(min_value=0.0, allow_infinity=False), st.integers(0, 2**63 - 1))
POSITIVE = st.one_of(st.floats(min_value=0.0, exclude_min=True, allow_infinity=False), st.integers(1, 2**63 - 1))
WEIRD_NUMBERS = st.one_of(
    st.floats(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(),
    st.sampled_from(
        [0, -0.0, 1e308, -1e308, 5e-324, 2**63 - 1, -(2**63), 10**30, -(10**400), math.nan, math.inf, -math.inf]
    ),
)
# names: any unicode (incl. control chars, RTL marks, astral), no surrounding whitespace
NAME = st.text(min_size=1, max_size=10).filter(lambda s: s.strip() == s)
SITE = NAME.filter(lambda s: not s.startswith(("body:", "geom:")))
BODY = NAME.filter(lambda s: "@" not in s).map(lambda n: f"body:{n}")
BODY_POINT = st.builds(lambda n, x, y, z: f"body:{n}@{x!r},{y!r},{z!r}", NAME, FINITE, FINITE, FINITE)
GEOM = NAME.map(lambda n: f"geom:{n}")
POINT = st.one_of(SITE, BODY, BODY_POINT)
ODD_POINTS = st.sampled_from(
    [
        "body:x@1,2",
        "geom:",
        "@@",
        "body:",
        "body:@1,2,3",
        "body:x@1,2,3,4",
        "body:x@nan,0,0",
        "body:x@inf,0,0",
        "body:x@1e999,0,0",
        "body:x@,,",
        "body:x@ 1 , 2 ,3 ",
        "body:a@b@1,2,3",
        "geom:g",
        " tip ",
        "",
        "   ",
        "\t",
        "body:ñame@0,0,0",
        "sité\u200b",
        "world",
        "body:world",
        "body:x@0x1,0,0",
        "body:x@1_0,0,0",
        "geom: ",
        "body: ",
        "😀",
        "a\nb",
        "tip\u2028",
        "body:x\x00",
    ]
)
PAYLOAD_TEMPLATES = [
    "__import__('os').system('touch {m}')",
    "!!python/object/apply:os.system ['touch {m}']",
    "!!python/object/new:subprocess.Popen [['touch', '{m}']]",
    "$(touch {m})",
    "`touch {m}`",
    "${{MJRIG_FUZZ_CMD}}",
    "{{{{ cycler.__init__.__globals__.os.system('touch {m}') }}}}",
    "eval(\"open('{m}', 'w')\")",
    "exec('import os; os.system(\"touch {m}\")')",
    "lambda: open('{m}', 'w')",
    "os.system('touch {m}')",
    "{m}",
]
STRING_JUNK = st.one_of(
    st.text(max_size=20), ODD_POINTS, st.sampled_from([t.format(m="/nonexistent/x") for t in PAYLOAD_TEMPLATES])
)
SCALARS = st.one_of(WEIRD_NUMBERS, st.booleans(), STRING_JUNK)
KEYS = st.one_of(
    st.sampled_from(
        sorted(
            {
                "model",
                "simulation",
                "params",
                "loads",
                "proximities",
                "recording",
                "video",
                "duration",
                "value",
                "min",
                "max",
                "unit",
                "profile",
                "time",
                "name",
                "kind",
                "at",
                "to",
                "a",
                "b",
            }
            | set().union(*LOAD_KINDS.values())
        )
    ),
    st.text(max_size=8),
)
ANY = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=8
)

# --- strategies: always-valid scenarios -----------------------------------------------------------


@st.composite
def profiles(draw: st.DrawFn) -> dict:
    kind = draw(st.sampled_from(["constant", "step", "ramp", "sine", "table"]))
    if kind == "constant":
        return {"profile": kind, "value": draw(FINITE)}
    if kind == "step":
        return {"profile": kind, "time": draw(FINITE), "before": draw(FINITE), "after": draw(FINITE)}
    if kind == "ramp":
        start, end = sorted(draw(st.lists(FINITE, min_size=2, max_size=2, unique=True)))
        return {"profile": kind, "start": start, "end": end, "from": draw(FINITE), "to": draw(FINITE)}
    if kind == "sine":
        d = {"profile": kind, "amplitude": draw(FINITE), "frequency": draw(FINITE)}
        for k in draw(st.sets(st.sampled_from(["phase", "offset"]))):
            d[k] = draw(FINITE)
        return d
    times = sorted(draw(st.lists(FINITE, min_size=1, max_size=5, unique=True)))
    return {"profile": kind, "time": times, "value": draw(st.lists(FINITE, min_size=len(times), max_size=len(times)))}


@st.composite
def params_tables(draw: st.DrawFn) -> dict:
    out = {}
    for name in draw(st.lists(NAME, max_size=4, unique=True)):
        if draw(st.booleans()):
            out[name] = draw(st.one_of(FINITE, st.integers(-(2**63), 2**63 - 1)))
            continue
        lo, value, hi = sorted(draw(st.lists(FINITE, min_size=3, max_size=3)))
        spec: dict = {"value": value}
        if draw(st.booleans()):
            spec["min"] = lo
        if draw(st.booleans()):
            spec["max"] = hi
        if draw(st.booleans()):
            spec["unit"] = draw(st.text(max_size=6))
        out[name] = spec
    return out


@st.composite
def valid_docs(draw: st.DrawFn) -> dict:
    doc: dict = {
        "model": draw(
            st.one_of(st.sampled_from(MODEL_FILES), st.sampled_from(MODEL_FILES).map(lambda f: str(MODELS / f)))
        )
    }
    if draw(st.booleans()):
        doc["simulation"] = {
            k: draw(POSITIVE) for k in draw(st.sets(st.sampled_from(["duration", "timestep", "speed"])))
        }
    params = draw(params_tables())
    if params or draw(st.booleans()):
        doc["params"] = params
    # a param reference must match a param exactly (the parser strips it before looking it up)
    refs = st.sampled_from(sorted(params)) if params else st.nothing()
    number = st.one_of(FINITE, st.integers(-(2**63), 2**63 - 1), refs)
    nonneg = st.one_of(NONNEG, refs)
    component = st.one_of(number, profiles())
    loads = []
    for name in draw(st.lists(NAME, max_size=4, unique=True)):
        kind = draw(st.sampled_from(sorted(LOAD_KINDS)))
        ld: dict = {"name": name, "kind": kind}
        if kind in ("scalar_force", "scalar_torque"):
            ld["at"] = draw(SITE)
            ld["magnitude"] = draw(component)
        elif kind.startswith("joint_"):  # a joint load: no points (the joint is checked against the model)
            ld["joint"] = draw(NAME)
            if kind == "joint_torque":
                ld["magnitude"] = draw(component)
            elif draw(st.booleans()):
                ld["coulomb"] = draw(nonneg)
            else:
                ld["mu"], ld["pin_radius"] = draw(nonneg), draw(nonneg)
            if kind == "joint_friction":
                for k in draw(
                    st.lists(st.sampled_from(["viscous", "stribeck_velocity", "coulomb_velocity"]), unique=True)
                ):
                    ld[k] = draw(nonneg if k == "viscous" else st.one_of(POSITIVE, refs))
        else:
            ld["at"] = draw(POINT)
        if kind in SPRINGS or kind == "stroke_compression_spring":
            ld["to"] = draw(POINT)
            opt = ["stiffness", "damping"] + (
                ["preload", "max_stroke"] if kind.startswith("stroke") else ["rest_length"]
            )
            for k in draw(st.lists(st.sampled_from(opt), unique=True)):
                ld[k] = draw(nonneg)
        elif kind in ("force", "torque"):
            ld["vector"] = draw(st.lists(component, min_size=3, max_size=3))
        elif kind == "general":
            for k in draw(st.sets(st.sampled_from(["force", "torque"]))):
                ld[k] = draw(st.lists(component, min_size=3, max_size=3))
        if kind in ("force", "torque", "general") and draw(st.booleans()):
            ld["frame"] = draw(SITE)
        if kind not in SPRINGS and not kind.startswith(("stroke", "joint_")) and draw(st.booleans()):
            ld["to"] = draw(POINT)
        keys = draw(st.permutations(list(ld)))
        loads.append({k: ld[k] for k in keys})
    if loads:
        doc["loads"] = loads
    proxs = []
    for name in draw(st.lists(NAME, max_size=3, unique=True)):
        a, b = draw(st.one_of(st.tuples(POINT, POINT), st.tuples(GEOM, GEOM)))
        p = {"name": name, "a": a, "b": b}
        if draw(st.booleans()):
            p["threshold"] = draw(FINITE)
        proxs.append(p)
    if proxs:
        doc["proximities"] = proxs
    stem = st.text(
        st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="_- ."), min_size=1, max_size=8
    ).filter(lambda s: s.strip(". ") == s)
    if draw(st.booleans()):
        rec: dict = {}
        if draw(st.booleans()):
            rec["path"] = (
                draw(st.sampled_from(["", "runs/", "/tmp/"]))
                + draw(stem)
                + draw(st.sampled_from([".parquet", ".PARQUET"]))
            )
        if draw(st.booleans()):
            rec["rate"] = draw(POSITIVE)
        if draw(st.booleans()):
            rec["signals"] = draw(st.lists(st.sampled_from(SIGNAL_GROUPS), max_size=10))
        doc["recording"] = rec
    if draw(st.booleans()):
        vid: dict = {
            "path": draw(st.sampled_from(["", "runs/"])) + draw(stem) + draw(st.sampled_from([".mp4", ".gif", ".GIF"]))
        }
        if draw(st.booleans()):
            vid["camera"] = draw(NAME)
        for k in draw(st.sets(st.sampled_from(["fps", "width", "height"]))):
            vid[k] = draw(st.integers(1, 2**63 - 1))
        for k in draw(st.sets(st.sampled_from(["show_loads", "show_proximities", "show_contacts", "show_net_force"]))):
            vid[k] = draw(st.booleans())
        doc["video"] = vid
    return doc


# --- strategies: corrupted and randomly shaped scenarios ------------------------------------------


def _slots(node: Any, path: tuple = ()) -> list[tuple]:
    """Every (container path, key/index) in a document."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((path, k))
            out += _slots(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((path, i))
            out += _slots(v, (*path, i))
    return out


def _at(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def corrupted_docs(draw: st.DrawFn) -> dict:
    """A valid document with 1-3 random edits: replace, delete, add, resize or swap values."""
    doc = draw(valid_docs())
    for _ in range(draw(st.integers(1, 3))):
        # not `model`: it is checked first and would mask every other edit (other tests fuzz it)
        slots = [s for s in _slots(doc) if s != ((), "model")]
        op = draw(
            st.sampled_from(["replace", "replace", "delete", "add", "swap", "point", "param", "number", "duplicate"])
        )
        numbers = [(p, k) for p, k in slots if type(_at(doc, (*p, k))) in (int, float)]
        if op == "number" and numbers:  # a number made negative, zero, nan, inf, huge...
            path, key = draw(st.sampled_from(numbers))
            _at(doc, path)[key] = draw(WEIRD_NUMBERS)
            continue
        tables = [(p, k) for p, k in slots if p in (("loads",), ("proximities",))]
        if op == "duplicate" and tables:  # a second load/proximity with the same name
            path, key = draw(st.sampled_from(tables))
            _at(doc, path).append(copy.deepcopy(_at(doc, (*path, key))))
            continue
        if op == "add" or not slots:
            containers = [()] + [(*p, k) for p, k in slots if isinstance(_at(doc, (*p, k)), (dict, list))]
            where = _at(doc, draw(st.sampled_from(containers)))
            if isinstance(where, dict):
                where[draw(KEYS)] = draw(ANY)
            else:
                where.insert(draw(st.integers(0, len(where))), draw(ANY))
            continue
        path, key = draw(st.sampled_from(slots))
        parent = _at(doc, path)
        if op == "replace":
            parent[key] = draw(ANY)
        elif op == "point":
            parent[key] = draw(st.one_of(ODD_POINTS, GEOM, POINT))
        elif op == "param":  # a reference to a param that may or may not exist
            names = sorted(doc.get("params", {})) if isinstance(doc.get("params"), dict) else []
            parent[key] = draw(
                st.one_of(st.sampled_from(names) if names else st.nothing(), NAME, st.sampled_from([" k ", "", "k"]))
            )
        elif op == "delete":
            del parent[key]
        else:  # swap with another slot's value
            path2, key2 = draw(st.sampled_from(slots))
            other = _at(doc, path2)
            a, b = copy.deepcopy(parent[key]), copy.deepcopy(other[key2])
            try:
                parent[key], other[key2] = b, a
            except (IndexError, KeyError):  # the first assignment reshaped the second's container
                pass
    return doc


def _shaped_table(fields: set[str], value: st.SearchStrategy) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={f: value for f in sorted(fields)})


SHAPED_LOAD = st.builds(
    lambda kind, body: {"kind": kind, **body},
    st.one_of(st.sampled_from(sorted(LOAD_KINDS)), ANY),
    _shaped_table(
        set().union(*LOAD_KINDS.values()) - {"kind"}, st.one_of(ANY, ODD_POINTS, profiles(), st.lists(ANY, max_size=5))
    ),
)
SHAPED_DOCS = st.fixed_dictionaries(
    {"model": st.sampled_from(MODEL_FILES)},
    optional={
        "simulation": st.one_of(_shaped_table({"duration", "timestep", "speed", "dt"}, ANY), ANY),
        "params": st.one_of(
            st.dictionaries(
                NAME, st.one_of(ANY, _shaped_table({"value", "min", "max", "unit", "step"}, ANY)), max_size=3
            ),
            ANY,
        ),
        "loads": st.one_of(st.lists(SHAPED_LOAD, max_size=3), ANY),
        "proximities": st.lists(
            _shaped_table({"name", "a", "b", "threshold", "c"}, st.one_of(ANY, ODD_POINTS, GEOM)), max_size=3
        ),
        "recording": _shaped_table(
            {"path", "rate", "signals"}, st.one_of(ANY, st.lists(st.sampled_from(SIGNAL_GROUPS)))
        ),
        "video": _shaped_table({"path", "camera", "fps", "width", "height", "show_loads", "show_contacts"}, ANY),
    },
)

# --- strategies: text mutations of the bundled scenarios ------------------------------------------

TOML_CHARS = "[]{}=\"',.\n #\\abkm0123456789-+_:@eE\t"
VALUE_TOKENS = [
    '"x"',
    "-1",
    "-1.5",
    "0",
    "nan",
    "-inf",
    "+inf",
    "1e400",
    "1" + "0" * 30,
    "9" * 5000,
    "true",
    "[]",
    "[1, 2]",
    "[1, 2, 3, 4]",
    "{}",
    '{ profile = "sine" }',
    '{ profile = "table", time = [1, 0], value = [1, 2] }',
    '"body:x@1,2"',
    '"geom:"',
    '"@@"',
    '"k"',
    '"nosuch"',
    "'__import__(\"os\")'",
    '"\\u0000"',
    '"a\\nb"',
    "1979-05-27T07:32:00Z",
    "0x_1",
    '"""\nmulti\n"""',
    "[" * 600 + "]" * 600,
    "{a={b={c=1}}}",
]


def _delete(draw: st.DrawFn, t: str) -> str:
    i = draw(st.integers(0, len(t)))
    return t[:i] + t[i + draw(st.integers(1, 20)) :]


def _insert(draw: st.DrawFn, t: str) -> str:
    i = draw(st.integers(0, len(t)))
    return t[:i] + draw(st.one_of(st.text(TOML_CHARS, min_size=1, max_size=8), st.text(min_size=1, max_size=4))) + t[i:]


def _replace(draw: st.DrawFn, t: str) -> str:
    if not t:
        return t
    i = draw(st.integers(0, len(t) - 1))
    return t[:i] + draw(st.one_of(st.sampled_from(TOML_CHARS), st.characters())) + t[i + 1 :]


def _line_op(draw: st.DrawFn, t: str, how: str) -> str:
    lines = t.splitlines(keepends=True)
    if not lines:
        return t
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    if how == "dup":
        lines.insert(j, lines[i])
    elif how == "del":
        del lines[i]
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


_KV = re.compile(r"^(\s*[A-Za-z0-9_\"-]+\s*=\s*)(.*?)(\s*(#.*)?)$")


def _kv_lines(t: str) -> tuple[list[str], list[int]]:
    lines = t.split("\n")
    return lines, [i for i, ln in enumerate(lines) if _KV.match(ln)]


def _swap_values(draw: st.DrawFn, t: str) -> str:
    lines, kv = _kv_lines(t)
    if len(kv) < 2:
        return t
    i, j = draw(st.sampled_from(kv)), draw(st.sampled_from(kv))
    mi, mj = _KV.match(lines[i]), _KV.match(lines[j])
    lines[i], lines[j] = mi.group(1) + mj.group(2), mj.group(1) + mi.group(2)
    return "\n".join(lines)


def _set_value(draw: st.DrawFn, t: str) -> str:
    lines, kv = _kv_lines(t)
    if not kv:
        return t
    i = draw(st.sampled_from(kv))
    lines[i] = _KV.match(lines[i]).group(1) + draw(st.sampled_from(VALUE_TOKENS))
    return "\n".join(lines)


MUTATIONS: list[Callable[[st.DrawFn, str], str]] = [
    _delete,
    _insert,
    _replace,
    _swap_values,
    _set_value,
    _set_value,
    lambda d, t: _line_op(d, t, "dup"),
    lambda d, t: _line_op(d, t, "del"),
    lambda d, t: _line_op(d, t, "swap"),
]


@st.composite
def mutated_bundled(draw: st.DrawFn) -> str:
    text = BUNDLED[draw(st.sampled_from(sorted(BUNDLED)))]
    for _ in range(draw(st.integers(1, 4))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


# --- 1. arbitrary and mutated text ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_scenarios_load_and_round_trip(name: str) -> None:
    sc = outcome(BUNDLED[name])
    assert isinstance(sc, Scenario), sc
    check_round_trip(sc)


@fuzz(400)
@given(
    st.one_of(
        st.text(max_size=400),
        st.text(TOML_CHARS, max_size=300),
        st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    )
)
def test_arbitrary_text_loads_or_one_line_error(text: str) -> None:
    outcome(text)


@fuzz(60)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.sampled_from(sorted(BUNDLED)).map(lambda n: BUNDLED[n].encode("utf-16")),
        st.builds(
            lambda n, b: BUNDLED[n].encode() + b, st.sampled_from(sorted(BUNDLED)), st.binary(min_size=1, max_size=8)
        ),
    )
)
def test_arbitrary_bytes_in_a_file(tmp_dir: Path, data: bytes) -> None:
    path = tmp_dir / "fuzz bytes.toml"
    path.write_bytes(data)
    try:
        sc = load_scenario(path)
    except ConfigError as exc:
        assert_one_line(str(exc), str(path))
    else:
        assert isinstance(sc, Scenario)


@fuzz(700)
@given(mutated_bundled())
def test_mutated_bundled_scenarios(text: str) -> None:
    sc = outcome(text)
    if isinstance(sc, Scenario):
        check_round_trip(sc)


def _scenario_with(extra: str, model: str = "spring_mass.xml") -> str:
    return f'model = "{model}"\n{extra}\n'


REGRESSIONS = {  # inputs that once escaped as other exceptions or multi-line errors
    "int beyond float": _scenario_with("[simulation]\nduration = 1" + "0" * 400),
    "int beyond str digits": _scenario_with("[simulation]\nduration = " + "1" * 5000),
    "deep arrays": "a = " + "[" * 3000 + "]" * 3000,
    "deep inline tables": "a = " + "{b=" * 3000 + "1" + "}" * 3000,
    "list as load kind": _scenario_with('[[loads]]\nname = "x"\nkind = [1]\nat = "tip"'),
    "table as load kind": _scenario_with('[[loads]]\nname = "x"\nkind = {a = 1}\nat = "tip"'),
    "list as profile": _scenario_with(
        '[[loads]]\nname = "x"\nkind = "scalar_force"\nat = "tip"\nmagnitude = {profile = [1]}'
    ),
    "unknown ~user": 'model = "~no_such_user_mjrig_fuzz/a.xml"\n',
    "unknown ~user in recording": _scenario_with('[recording]\npath = "~no_such_user_mjrig_fuzz/a.parquet"'),
    "file name too long": f'model = "{"a" * 5000}.xml"\n',
    "NUL in model": 'model = "a\\u0000b.xml"\n',
    "newline in key": _scenario_with('"a\\nb" = 1'),
    "line separator in key": _scenario_with('"a\\u2028b" = 1'),
    "newline in model": 'model = "a\\nb.xml"\n',
    "newline in param ref": _scenario_with(
        '[[loads]]\nname = "s"\nkind = "ideal_spring"\nat = "a"\nto = "b"\nstiffness = "k\\nx"'
    ),
    "newline in point": _scenario_with('[[loads]]\nname = "s"\nkind = "scalar_force"\nat = "body:\\nx"\nmagnitude = 1'),
    "newline in signal": _scenario_with('[recording]\nsignals = ["joints\\r\\nx"]'),
    "control char in video path": _scenario_with('[video]\npath = "a\\u001b[2J.avi"'),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions_give_one_line_errors(name: str) -> None:
    assert isinstance(outcome(REGRESSIONS[name]), ConfigError)


# --- 2. scenario-shaped documents -----------------------------------------------------------------


@fuzz(250)
@given(valid_docs(), st.booleans())
def test_valid_documents_load_and_round_trip(doc: dict, hand: bool) -> None:
    text = hand_toml(doc) if hand else dumps(doc)
    note(text)
    assert same(tomllib.loads(text), doc)
    sc = outcome(text)
    assert isinstance(sc, Scenario), f"a valid document was rejected: {sc}"
    assert same(sc.doc, doc)
    assert len(sc.loads) == len(doc.get("loads", [])) and len(sc.proximities) == len(doc.get("proximities", []))
    check_round_trip(sc)


@fuzz(450)
@given(st.one_of(corrupted_docs(), SHAPED_DOCS), st.booleans())
def test_corrupted_and_random_documents(doc: dict, hand: bool) -> None:
    text = hand_toml(doc) if hand else dumps(doc)
    note(text)
    assert same(tomllib.loads(text), doc), "the writer did not write the document it was given"
    sc = outcome(text)
    if isinstance(sc, Scenario):
        check_round_trip(sc)
    # the in-memory path (the app's editor) gives the same verdict and the same one-line
    # message, minus the file:line location (it names fields only, by design)
    try:
        scenario_from_doc(copy.deepcopy(doc), base=MODELS, source=SOURCE)
    except ConfigError as exc:
        assert isinstance(sc, ConfigError), f"only scenario_from_doc rejected it: {exc}"
        msg = str(exc)
        assert msg and len(msg.splitlines()) == 1 and "\n" not in msg and "\r" not in msg, repr(msg)
        if not hand:  # (the hand-built text may order keys differently, and messages quote values)
            assert msg == re.sub(r"^fuzz\.toml(:\d+)?: ", "", str(sc)), (msg, str(sc))
    else:
        assert isinstance(sc, Scenario), f"only parse_scenario rejected it: {sc}"


# --- 3. nothing is evaluated, imported or unpickled ------------------------------------------------

_WATCHING = [False]
_EVENTS: list[tuple[str, str]] = []
_FORBIDDEN = (
    "exec",
    "compile",
    "import",
    "open",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "subprocess.Popen",
    "pickle.find_class",
    "marshal.load",
    "marshal.loads",
    "ctypes.",
    "os.putenv",
    "os.unsetenv",
    "os.mkdir",
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.truncate",
    "os.chmod",
    "shutil.",
    "socket.",
    "urllib.",
    "builtins.input",
    "code.__new__",
    "function.__new__",
)


def _audit(event: str, args: tuple) -> None:
    if _WATCHING[0] and event.startswith(_FORBIDDEN):
        _EVENTS.append((event, repr(args)[:120]))


@pytest.fixture(scope="module")
def watch() -> Callable[[Callable[[], Any]], Any]:
    """``watch(fn)`` runs fn and fails if it exec'd, compiled, imported, opened or spawned anything."""
    sys.addaudithook(_audit)  # process-wide and permanent, but inert unless _WATCHING
    for name in sorted(BUNDLED):  # warm up lazy imports (scenario_from_doc imports scenario_toml)
        sc = parse_scenario(BUNDLED[name], source=SOURCE, base=MODELS)
        scenario_from_doc(sc.doc, base=MODELS)
    for text in REGRESSIONS.values():
        try:
            parse_scenario(text, source=SOURCE, base=MODELS)
        except ConfigError:
            pass

    def run(fn: Callable[[], Any]) -> Any:
        _EVENTS.clear()
        _WATCHING[0] = True
        try:
            return fn()
        finally:
            _WATCHING[0] = False
            assert not _EVENTS, f"parsing a scenario did: {_EVENTS}"

    return run


@pytest.fixture(scope="module")
def tmp_dir() -> Path:
    with tempfile.TemporaryDirectory(prefix="mjrig-fuzz-") as d:
        yield Path(d)


class _Boom:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # unpickling this would run os.system
        return (os.system, (f"touch {self.marker}",))


def payloads(marker: Path) -> list[str]:
    out = [t.format(m=marker) for t in PAYLOAD_TEMPLATES]
    out.append(pickle.dumps(_Boom(marker), protocol=0).decode("latin-1"))
    out.append(pickle.dumps(_Boom(marker), protocol=4).decode("latin-1"))
    return out


BASE_DOC = {
    "model": "spring_mass.xml",
    "simulation": {"duration": 1.0, "timestep": 0.001, "speed": 1.0},
    "params": {"k": {"value": 200.0, "min": 0.0, "max": 5000.0, "unit": "N/m"}, "c": 1.0},
    "loads": [
        {**MAIN_SPRING, "name": "spring"},
        {
            "name": "push",
            "kind": "force",
            "at": "body:block@0,0,0.1",
            "frame": "tip",
            "vector": [0.0, 1.0, {"profile": "sine", "amplitude": 1.0, "frequency": 2.0}],
        },
        {
            "name": "drive",
            "kind": "scalar_force",
            "at": "tip",
            "magnitude": {"profile": "table", "time": [0.0, 1.0], "value": [0.0, 1.0]},
        },
    ],
    "proximities": [{"name": "gap", "a": "tip", "b": "stop", "threshold": 0.05}],
    "recording": {"path": "runs/out.parquet", "rate": 500, "signals": ["joints", "loads"]},
    "video": {"path": "runs/out.mp4", "camera": "track", "fps": 30, "width": 64, "height": 48, "show_loads": True},
}
# (path in BASE_DOC, what the field is, its dotted name in errors)
FIELDS = [
    (("simulation", "duration"), "number", "simulation.duration"),
    (("simulation", "timestep"), "number", "simulation.timestep"),
    (("simulation", "speed"), "number", "simulation.speed"),
    (("params", "c"), "number", "params.c"),
    (("params", "k", "value"), "number", "params.k.value"),
    (("params", "k", "min"), "number", "params.k.min"),
    (("loads", 0, "stiffness"), "param", "loads[0].stiffness"),
    (("loads", 0, "rest_length"), "param", "loads[0].rest_length"),
    (("loads", 1, "vector", 1), "param", "loads[1].vector"),
    (("loads", 1, "vector", 2, "amplitude"), "number", "loads[1].vector.amplitude"),
    (("loads", 2, "magnitude"), "param", "loads[2].magnitude"),
    (("loads", 2, "magnitude", "time", 1), "number", "loads[2].magnitude.time"),
    (("proximities", 0, "threshold"), "number", "proximities[0].threshold"),
    (("recording", "rate"), "number", "recording.rate"),
    (("video", "fps"), "number", "video.fps"),
    (("model",), "text", "model"),
    (("params", "k", "unit"), "text", "params.k.unit"),
    (("loads", 0, "name"), "text", "loads[0].name"),
    (("loads", 0, "kind"), "text", "loads[0].kind"),
    (("loads", 0, "at"), "text", "loads[0].at"),
    (("loads", 1, "frame"), "text", "loads[1].frame"),
    (("loads", 1, "vector", 2, "profile"), "text", "loads[1].vector.profile"),
    (("proximities", 0, "b"), "text", "proximities[0].b"),
    (("recording", "path"), "text", "recording.path"),
    (("recording", "signals", 0), "text", "recording.signals"),
    (("video", "path"), "text", "video.path"),
    (("video", "camera"), "text", "video.camera"),
]


def test_base_document_is_valid() -> None:
    assert isinstance(outcome(dumps(BASE_DOC)), Scenario)


@fuzz(160)
@given(st.integers(0, len(PAYLOAD_TEMPLATES) + 1), st.sampled_from(FIELDS), st.booleans(), st.booleans())
def test_code_in_strings_is_never_evaluated(
    tmp_dir: Path, watch, which: int, target: tuple, hand: bool, as_key: bool
) -> None:
    marker = tmp_dir / f"pwned-{which}"
    payload = payloads(marker)[which]
    path, what, dotted = target
    doc = copy.deepcopy(BASE_DOC)
    if as_key:  # the payload as a param name / table key as well
        doc["params"][payload] = 1.0
    _at(doc, path[:-1])[path[-1]] = payload
    text = hand_toml(doc) if hand else dumps(doc)
    env = {"MJRIG_FUZZ_CMD": f"touch {marker}", "MJRIG_FUZZ_DIR": str(tmp_dir)}
    with mock.patch.dict(os.environ, env):
        got = watch(lambda: outcome(text))
        if isinstance(got, Scenario):
            check_round_trip(got)
    assert not any(tmp_dir.glob("pwned*")), "a scenario string was executed"
    if what == "number" or (what == "param" and not as_key):
        assert isinstance(got, ConfigError)
        msg = str(got)
        assert dotted in msg, msg
        assert ("unknown param" if what == "param" else "must be") in msg, msg
    elif what == "param" and isinstance(got, Scenario):  # a payload that names an existing param
        assert payload in got.params


def test_env_vars_and_shell_syntax_in_paths_are_not_expanded(tmp_dir: Path, watch) -> None:
    with mock.patch.dict(os.environ, {"MJRIG_FUZZ_MODELS": str(MODELS)}):
        for model in (
            "${MJRIG_FUZZ_MODELS}/spring_mass.xml",
            "$MJRIG_FUZZ_MODELS/spring_mass.xml",
            "%MJRIG_FUZZ_MODELS%/spring_mass.xml",
            "$(echo spring_mass.xml)",
            "`echo spring_mass.xml`",
        ):
            got = watch(lambda: outcome(f'model = "{model}"\n'))
            assert isinstance(got, ConfigError) and "model file not found" in str(got), got
