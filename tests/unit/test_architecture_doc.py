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
