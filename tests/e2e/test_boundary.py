"""The GUI-free core and the headless CLI load no GUI module, with or without a screen.

Two checks: a subprocess imports the modules and runs `mjrig check` and `mjrig run` (with a
video), then lists what was really loaded -- once with DISPLAY unset and once on an Xvfb
screen, where MuJoCo's default GL backend would import glfw. And import-linter's static
contract in pyproject.toml (`lint-imports`), which also sees imports inside functions that no
run reaches; it cannot name ``mujoco.viewer`` (a subpackage of another project), which the
subprocess check covers. import-linter finds a package's modules in its folder, and
``mjrig.widgets`` is mapped from another one, so the contracts are checked on a tree of links laid
out as the package installs (``package_tree``): the widgets' contract sees the widgets of this
checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import sys
import mjrig.runtime, mjrig.scenario.parse, mjrig.scenario.toml_writer, mjrig.session.kernel, mjrig.headless, mjrig.cli
import mjrig.campaign.sweep, mjrig.campaign.results, mjrig.recordings.replay, mjrig.recordings.compare
import mjrig.progress, mjrig.runtime.mjwarnings, mjrig.settings.keys, mjrig.settings.panel_keys, mjrig.settings.recent
from mjrig.cli import main
assert main(["check", "spring_mass"]) == 0
assert main(["run", "spring_mass", "--duration", "0.05", "--out", "out.parquet", "--video", "out.mp4"]) == 0
bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dearpygui', 'glfw')
             or m.startswith(('mujoco.viewer', 'mujoco.glfw', 'mjrig.widgets', 'mjrig.desktop')))
print("GUI modules:", bad)
sys.exit(1 if bad else 0)
"""


def check_no_gui_modules(tmp_path: Path, display: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DISPLAY": display,
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no MUJOCO_GL: mjrig picks it
        "PYTHONPATH": str(package_tree(tmp_path / "tree")),
    }  # this checkout's modules, whatever is installed
    proc = subprocess.run(
        [sys.executable, "-c", CODE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "GUI modules: []" in proc.stdout
    assert (tmp_path / "out.parquet").is_file() and (tmp_path / "out.mp4").is_file()


def test_no_gui_modules_without_a_display(tmp_path):
    check_no_gui_modules(tmp_path, "")


@pytest.fixture
def xvfb_display():
    """A private Xvfb screen for this test (skips when Xvfb is not installed)."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    for number in range(77, 97):
        if not Path(f"/tmp/.X11-unix/X{number}").exists() and not Path(f"/tmp/.X{number}-lock").exists():
            break
    proc = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "640x480x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/tmp/.X11-unix/X{number}").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
            time.sleep(0.05)
        yield f":{number}"
    finally:
        proc.kill()
        proc.wait()


def test_no_gui_modules_with_a_display(tmp_path, xvfb_display):
    check_no_gui_modules(tmp_path, xvfb_display)


def package_tree(out: Path, *, extra_widgets: dict[str, str] | None = None) -> Path:
    """The import package laid out as it installs (pyproject's ``package-dir``: ``app/`` as
    ``mjrig``, ``widgets/`` as ``mjrig/widgets``...) as links under ``out``, which goes on
    PYTHONPATH; ``extra_widgets``: more widget modules (name -> source). Returns ``out``."""
    dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
        target = out.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for item in (ROOT / folder).iterdir():
            if item.name != "__pycache__" and not target.joinpath(item.name).exists():
                target.joinpath(item.name).symlink_to(item)
    for name, source in (extra_widgets or {}).items():
        (out / "mjrig" / "widgets" / f"{name}.py").write_text(source)
    return out


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [lint, "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_contract(tmp_path):
    proc = lint_imports(package_tree(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 kept, 0 broken" in proc.stdout, proc.stdout


def test_the_widgets_contract_refuses_a_widget_that_opens_files_itself(tmp_path):
    proc = lint_imports(
        package_tree(
            tmp_path,
            extra_widgets={
                "reads_itself": "from mjrig.recordings.replay import read_recording\n",
                "asks_the_session": "def f():\n    from mjrig.session.kernel import Session\n    return Session\n",
            },
        )
    )
    assert proc.returncode != 0 and "4 kept, 1 broken" in proc.stdout, proc.stdout
    assert "mjrig.widgets.reads_itself -> mjrig.recordings.replay" in proc.stdout, proc.stdout
    assert "mjrig.widgets.asks_the_session -> mjrig.session.kernel" in proc.stdout, proc.stdout


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: its strongly connected parts of more than one module
    (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_anywhere(tmp_path):
    """No module of mjrig imports, through any chain, a module that imports it back (imports
    inside functions count, and so do those made only for annotations, under ``TYPE_CHECKING``).
    The finder is checked on a circle of its own first."""
    pytest.importorskip("grimp")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = package_tree(tmp_path)
    code = (
        "import grimp, json\n"
        "g = grimp.build_graph('mjrig', exclude_type_checking_imports=False, cache_dir=None)\n"
        "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    edges = {m: set(ws) for m, ws in json.loads(proc.stdout).items()}
    assert len(edges) > 150, len(edges)  # the whole package was read (190 modules)
    assert _cycles(edges) == []
