"""ARCHITECTURE.md's tables follow the code: every feature of the session has its row in the
features table, and every command of the command line is named with its family."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mjrig import cli
from mjrig.session.kernel import Session

TEXT = (Path(__file__).resolve().parents[2] / "ARCHITECTURE.md").read_text(encoding="utf-8")


def test_every_feature_of_the_session_has_its_row() -> None:
    rows = re.findall(r"^\| [^|]+ \| `([a-z_]+\.py)`", TEXT, flags=re.M)
    s = Session()
    try:
        modules = {type(f).__module__.rsplit(".", 1)[1] + ".py" for f in s.features}
    finally:
        s.close()
    assert modules <= set(rows), f"features without a row in ARCHITECTURE.md: {sorted(modules - set(rows))}"


@pytest.mark.parametrize("family", cli.FAMILIES, ids=lambda f: f.__name__.rsplit(".", 1)[1])
def test_every_command_is_named_with_its_family(family) -> None:
    name = family.__name__.rsplit(".", 1)[1]
    line = re.search(rf"`{name}`:\s+([a-z|]+)", TEXT)
    assert line is not None, f"cli/{name}.py is not in ARCHITECTURE.md's folders"
    assert line.group(1).split("|") == list(family.COMMANDS)


def test_every_named_thread_is_in_the_threads_table() -> None:
    """A thread the code names (``name="mjrig-..."``) has its row (or its job's) in the table."""
    app = Path(__file__).resolve().parents[2] / "app"
    named = {
        m
        for f in app.rglob("*.py")
        for m in re.findall(r'name="(mjrig-[a-z-]+)"', f.read_text(encoding="utf-8"))
        if "Thread" in f.read_text(encoding="utf-8") or "Process" in f.read_text(encoding="utf-8")
    }
    table = TEXT.split("## Threads and processes", 1)[1].split("\n## ", 1)[0]
    jobs = set(re.findall(r'jobs\.start\(\s*"(mjrig-[a-z-]+)"', "".join(f.read_text() for f in app.rglob("*.py"))))
    missing = {n for n in named | jobs if n not in table and f"`-{n.removeprefix('mjrig-')}`" not in table}
    assert named and not missing, f"threads missing from ARCHITECTURE.md's table: {sorted(missing)}"
