"""The key table: defaults never collide with MuJoCo's viewer, user bindings are checked, and the
manual (docs/app.md) shows exactly the generated table."""

from __future__ import annotations

import pytest

from mjrig.settings.keys import BINDINGS, KeyMap, keys_markdown, load_keymap, mujoco_use, parse_key
from tests.unit.unit_util import manual_table


def test_no_default_key_is_one_mujoco_uses():
    for b in BINDINGS:
        assert mujoco_use(*parse_key(b.default)) is None, b


@pytest.mark.parametrize("spec", ["t", "s", "ctrl+p", "ctrl+q", "alt+f", "backspace", "f1", "tab", "3", "shift+2"])
def test_mujocos_own_keys_are_refused(spec):
    km = KeyMap({"screenshot": spec})
    assert km.label("screenshot") == "Ctrl+T" and len(km.warnings) == 1 and "MuJoCo" in km.warnings[0]


def test_a_remapped_key_replaces_the_default(tmp_path):
    (tmp_path / "keys.toml").write_text('[keys]\nscreenshot = "ctrl+y"\nvideo = "F9"\n')
    km = load_keymap(tmp_path / "keys.toml")
    assert km.warnings == []
    assert km.action(*parse_key("ctrl+y")) == "screenshot" and km.action(*parse_key("ctrl+t")) is None
    assert km.action(*parse_key("f9")) == "video"


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("[keys]\nnope = 'ctrl+y'", "unknown action"),
        ("[keys]\nvideo = 'ctrl+space+'", "empty key"),
        ("[keys]\nvideo = 'hyper+x'", "unknown modifier"),
        ("[keys]\nvideo = 'ctrl+t'", "already the key of screenshot"),
        ("keys = [", "not read"),
    ],
)
def test_bad_key_files_give_one_line_and_keep_the_defaults(tmp_path, text, fragment):
    (tmp_path / "keys.toml").write_text(text)
    km = load_keymap(tmp_path / "keys.toml")
    assert len(km.warnings) == 1 and fragment in km.warnings[0], km.warnings
    assert "\n" not in km.warnings[0]
    assert km.label("video") == "Ctrl+V"


def test_the_manual_shows_the_generated_table():
    assert manual_table("app.md", "keys") == keys_markdown()


def test_every_binding_submits_its_own_command():
    """One table: each action's key press makes a fresh command of the action's type, so a binding
    can never lack a command (the viewer's key callback runs on MuJoCo's render thread)."""
    from mjrig import commands as C

    keymap = KeyMap()
    expected = {
        "pause": C.TogglePause,
        "record": C.ToggleRecording,
        "restore": C.RestoreSnapshot,
        "fit_view": C.SetCamera,
        "step_back": C.StepHistory,
    }
    for b in BINDINGS:
        first, second = keymap.command(*parse_key(b.default)), keymap.command(*parse_key(b.default))
        assert isinstance(first, C.Command) and type(first) is type(second), b.action
        if b.action in expected:
            assert type(first) is expected[b.action], b.action
    assert keymap.command(*parse_key("ctrl+f")) == C.SetCamera("fit")
    assert keymap.command(*parse_key("left")) == C.StepHistory(-1)
    assert keymap.command(*parse_key("ctrl+y")) is None
