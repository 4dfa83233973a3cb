"""The control panel's keys: one table, every key one Dear PyGui knows, and the manual (docs/app.md) shows
exactly the generated table."""

from __future__ import annotations

import pytest

from mjrig.settings.panel_keys import PANEL_KEYS, panel_key, panel_keys_markdown
from tests.unit.unit_util import manual_table


def test_the_manual_shows_the_generated_table():
    assert manual_table("app.md", "panel keys") == panel_keys_markdown()


def test_keys_are_distinct_and_only_escape_acts_in_a_dialog():
    assert len({k.key for k in PANEL_KEYS}) == len(PANEL_KEYS) == len({k.action for k in PANEL_KEYS})
    assert [k.key for k in PANEL_KEYS if k.in_dialogs] == ["Escape"]
    assert panel_key("save").key == "Ctrl+S" and panel_key("save").ctrl and panel_key("save").base == "S"
    with pytest.raises(KeyError, match="one of open, save, undo, redo, quit, close"):
        panel_key("nope")
