"""Rules of the code base that keep its parts apart: no reaching into another module's privates,
small modules, a short top level, one class to a name."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for p in [*REPO.glob("app/**/*.py"), *REPO.glob("widgets/**/*.py")] if "__pycache__" not in p.parts)
PRIVATE_API_ADAPTERS = (
    REPO / "app" / "desktop" / "viewer_adapter.py",
    REPO / "app" / "runtime" / "compiled" / "passive_route.py",
)
"""The modules allowed to use MuJoCo's private names: the viewer's API (pinned by
tests/gui/test_viewer_access.py), and the structs' ``_address`` handed to a C callback from Python
(tests/long/test_passive_route.py)."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _own_privates(tree: ast.AST) -> set[str]:
    """Private names a module defines itself: methods, functions, and attributes it assigns."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
            own.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and _private(node.target.id):
            own.add(node.target.id)
        elif isinstance(node, ast.Assign):
            own.update(t.id for t in node.targets if isinstance(t, ast.Name) and _private(t.id))
    return own


DOCUMENTED = {("os", "_exit")}
"""Names with a leading underscore that their library documents as public."""


def reach_ins(path: Path) -> list[str]:
    """``obj._name`` where ``obj`` is not self/cls and ``_name`` is not defined in this module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _own_privates(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in DOCUMENTED:
            continue
        if node.attr in own:
            continue
        found.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
    home = package_of(path)
    for node in ast.walk(tree):  # from mjrig.x import _private (a private module: from its own package only)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mjrig"):
            found.extend(
                f"{path.relative_to(REPO)}:{node.lineno}: import {a.name}"
                for a in node.names
                if _private(a.name) and not (node.module == home and _is_module(node.module, a.name))
            )
    for node in ast.walk(tree):  # import mjrig.x._private / from mjrig.x._private import name
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.append(node.module)
        for module in modules:
            package, _, last = module.rpartition(".")
            if module.startswith("mjrig.") and _private(last) and package != home:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: import {module} (private to {package})")
    return found


def package_of(path: Path) -> str:
    """The installed package a source file belongs to (app/ is ``mjrig``, widgets/ ``mjrig.widgets``)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    top = ("mjrig",) if parts[0] == "app" else ("mjrig", "widgets")
    return ".".join((*top, *parts[1:-1]))


def _is_module(package: str, name: str) -> bool:
    """Whether ``package.name`` is a module file of this repository."""
    folders = {"mjrig": REPO / "app", "mjrig.widgets": REPO / "widgets"}
    head = "mjrig.widgets" if package.startswith("mjrig.widgets") else "mjrig"
    rest = package[len(head) :].strip(".")
    return folders[head].joinpath(*rest.split(".") if rest else (), f"{name}.py").is_file()


def test_no_module_reaches_into_another_modules_privates():
    found = [hit for p in SOURCES if p not in PRIVATE_API_ADAPTERS for hit in reach_ins(p)]
    assert not found, "private attributes used across modules:\n" + "\n".join(found)


def test_the_check_sees_a_reach_in(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "def f(load):\n    load._r0 = 1.0\n    return load._last_f\n\nclass A:\n"
        "    def g(self, other):\n        self._x = other._x\n",
        encoding="utf-8",
    )
    global REPO
    saved, REPO = REPO, tmp_path
    try:
        assert sorted(reach_ins(src)) == [
            "m.py:2: ._r0",
            "m.py:3: ._last_f",
        ]  # other._x is the same class's own attribute
    finally:
        REPO = saved


def test_a_private_module_is_its_packages_own(tmp_path):
    """``_name.py`` (the recorder's crash-safe internals, the compiled callbacks' code) is imported
    by the modules of its own package only; others use the package's face (``parquet_sink``)."""
    global REPO
    files, session = tmp_path / "app" / "runtime" / "files", tmp_path / "app" / "session"
    files.mkdir(parents=True)
    session.mkdir(parents=True)
    (files / "_parquet_pace.py").write_text("", encoding="utf-8")
    source = "from mjrig.runtime.files import _parquet_pace\nfrom mjrig.runtime.files._parquet_stream import parts\n"
    for module in (files / "parquet_sink.py", session / "outputs.py"):
        module.write_text(source, encoding="utf-8")
    saved, REPO = REPO, tmp_path
    try:
        assert package_of(files / "parquet_sink.py") == "mjrig.runtime.files"
        assert reach_ins(files / "parquet_sink.py") == []
        assert [hit.split(": ", 1)[1] for hit in reach_ins(session / "outputs.py")] == [
            "import _parquet_pace",
            "import mjrig.runtime.files._parquet_stream (private to mjrig.runtime.files)",
        ]
    finally:
        REPO = saved


CEILING = 450
"""No module is longer: past it a module holds two concerns, and is split by concern (never
squeezed to a line count, never merged with a sibling to make room)."""
OVER_400 = {
    "app/session/kernel.py": 428,
    "app/scenario/parse.py": 432,
    "app/exports/report.py": 403,
    "app/runtime/files/parquet_sink.py": 411,
    "app/runtime/forces/engine.py": 416,
    "app/runtime/analysis/requirements.py": 409,
}
"""The modules past 400 lines, each at most as long as it is here: a number only goes down (lower
it when its module shrinks; drop the entry when it is 400 or less), and no module joins."""


def module_lengths() -> dict[str, int]:
    """Every source module's length in lines, by its path in the repository."""
    return {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines()) for p in SOURCES}


def test_modules_stay_small():
    """One concern per module: past about 300 lines a module usually holds two. None is past
    ``CEILING``, and one past 400 lines does not grow (``OVER_400``): the caps point down."""
    lengths = module_lengths()
    assert {m: n for m, n in lengths.items() if n > CEILING} == {}, f"past {CEILING} lines"
    grown = {m: (n, OVER_400.get(m, 400)) for m, n in lengths.items() if n > OVER_400.get(m, 400)}
    assert grown == {}, "modules past 400 lines that grew (now, allowed): split them by concern"
    shrunk = {m: (lengths.get(m, 0), n) for m, n in OVER_400.items() if lengths.get(m, 0) < n}
    assert shrunk == {}, "modules shorter than OVER_400 says (now, listed): lower their numbers"


def test_the_top_level_stays_short():
    """The package's top level holds the entry points and the command channel; everything else
    lives in the subpackage its layer names (ARCHITECTURE.md)."""
    top = sorted(p.name for p in REPO.glob("app/*.py"))
    assert len(top) <= 12, f"{len(top)} modules directly in app/: {top}"


def test_no_folder_holds_more_than_twenty_modules():
    """A folder is a room a reader can take in: past about twenty modules its families want rooms
    of their own (``runtime/`` has ``forces``, ``telemetry``, ``files``...)."""
    folders = {p.parent for p in SOURCES}
    crowded = {
        str(f.relative_to(REPO)): n
        for f in folders
        if (n := len([m for m in f.glob("*.py") if m.name != "__init__.py"])) > 20
    }
    assert not crowded, f"folders with more than 20 modules: {crowded}"


def test_every_package_folder_is_installed():
    """``pyproject.toml`` lists the packages (its folders are mapped, so they are not found by
    themselves): a room left out of the list would be missing from the wheel."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"mjrig"}
    for base, name in (("app", "mjrig"), ("widgets", "mjrig.widgets")):
        for init in (REPO / base).glob("**/__init__.py"):
            rel = init.parent.relative_to(REPO / base).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), f"package folders not in pyproject.toml's packages: {sorted(found - listed)}"


def test_no_class_name_is_defined_twice():
    """Two classes of one name (a panel state and a physics state both called Snapshot) make
    every reader check which one is meant."""
    seen: dict[str, list[str]] = {}
    for p in SOURCES:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                seen.setdefault(node.name, []).append(f"{p.relative_to(REPO)}:{node.lineno}")
    twice = {name: where for name, where in seen.items() if len(where) > 1}
    assert not twice, f"class names defined more than once: {twice}"
