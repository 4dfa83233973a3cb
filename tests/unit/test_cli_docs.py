"""The command line's page (docs/cli.md) is what scripts/cli_docs.py makes of the parsers now, and it
documents every command and option the CLI accepts."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _cli_docs():
    spec = importlib.util.spec_from_file_location("cli_docs", REPO / "scripts" / "cli_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_page_is_what_the_parsers_make_now():
    """Compared in memory: nothing is written into the source tree."""
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == _cli_docs().render(), "docs/cli.md is out of date: run python scripts/cli_docs.py"


def test_every_command_and_option_is_on_the_page():
    from mjrig import cli

    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in cli.parser()[0]._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(sub.choices) == sorted(cli.SUBCOMMANDS)
    for name, parser in [("", cli.app_parser(cli.SUBCOMMANDS)), *((f" {n}", p) for n, p in sub.choices.items())]:
        section = page.split(f"\n### mjrig{name}\n", 1)[1].split("\n### ", 1)[0]
        assert f"usage: mjrig{name} " in section
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, (name, option)
    assert "Exit status: 0 on success" in page and "exit 143" in page  # the hand-written part is included
