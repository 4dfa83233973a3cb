"""mjrig's keys in the 3D viewer: one table, remappable in ``~/.config/mjrig/keys.toml``.

MuJoCo's viewer gives almost every plain key a meaning of its own (each letter toggles a
visual flag, digits toggle geom groups, Ctrl+A/C/D/L/M/P/Q, Alt+letters, F1-F7, Tab, Esc,
Backspace...), handled before mjrig sees the key. So mjrig's defaults use keys MuJoCo leaves
idle in a passive viewer (space, right arrow, - and =, which mean the same there) and Ctrl with
letters MuJoCo does not use; a user binding that MuJoCo would also act on is refused with a
one-line warning. The help panel and the manual's table (docs/app.md) are generated from ``BINDINGS``
(``python -m mjrig.settings.keys`` prints it as Markdown).

A key spec is ``[ctrl+][shift+][alt+]KEY``: KEY is a letter, a digit, ``space``, ``right``,
``left``, ``up``, ``down``, ``minus``, ``equal``, ``backspace``, ``delete``, ``insert``,
``home``, ``end``, ``pagedown``, ``enter`` or ``f1`` ... ``f12``.
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError

__all__ = [
    "Binding",
    "BINDINGS",
    "KeyMap",
    "parse_key",
    "format_key",
    "mujoco_use",
    "load_keymap",
    "keys_markdown",
    "config_dir",
    "MOD_SHIFT",
    "MOD_CTRL",
    "MOD_ALT",
]

MOD_SHIFT, MOD_CTRL, MOD_ALT = 1, 2, 4
"""Modifier bits, GLFW's own values (the viewer window reports the keys held in them)."""

_NAMED = {
    "space": 32,
    "minus": 45,
    "equal": 61,
    "right": 262,
    "left": 263,
    "down": 264,
    "up": 265,
    "backspace": 259,
    "delete": 261,
    "insert": 260,
    "home": 268,
    "end": 269,
    "pageup": 266,
    "pagedown": 267,
    "enter": 257,
    "tab": 258,
    "escape": 256,
    **{f"f{i}": 289 + i for i in range(1, 13)},
}
_NAMES = {code: name for name, code in _NAMED.items()}
_NAMES.update({262: "right arrow", 263: "left arrow", 264: "down arrow", 265: "up arrow"})


@dataclass(frozen=True)
class Binding:
    """One mjrig action: its config name, default key spec, what it does (for the help) and the
    command a press submits (``command()`` makes a new one each time)."""

    action: str
    default: str
    help: str
    command: Callable[[], C.Command]


BINDINGS: tuple[Binding, ...] = (
    Binding("pause", "space", "pause / run", C.TogglePause),
    Binding(
        "step",
        "right",
        "one step forward (pauses; through the kept history when scrubbed back)",
        partial(C.StepHistory, +1),
    ),
    Binding("step_back", "left", "one kept instant back in the history (pauses)", partial(C.StepHistory, -1)),
    Binding("slower", "minus", "slower (10x ... 0.1x)", partial(C.ChangeSpeed, -1)),
    Binding("faster", "equal", "faster (0.1x ... 10x, then as fast as possible)", partial(C.ChangeSpeed, +1)),
    Binding("reset", "ctrl+backspace", "reset to the initial state", C.Reset),
    Binding("reload", "ctrl+r", "reload the model from disk, keeping the rig", C.Reload),
    Binding("fit_view", "ctrl+f", "frame the whole model in the view", partial(C.SetCamera, "fit")),
    Binding("camera", "ctrl+k", "next camera: free, tracking, then the model's cameras", partial(C.SetCamera, "next")),
    Binding("record", "ctrl+e", "start / stop recording telemetry", C.ToggleRecording),
    Binding("video", "ctrl+v", "start / stop a video of the view with the rig drawn", C.ToggleVideo),
    Binding("screenshot", "ctrl+t", "save a PNG of the view with the rig drawn", C.Screenshot),
    Binding("snapshot", "ctrl+b", "save the full physics state (a snapshot file next to the scenario)", C.TakeSnapshot),
    Binding("restore", "ctrl+g", "restore the last snapshot", C.RestoreSnapshot),
    Binding("undo", "ctrl+z", "undo the rig's last edit", C.Undo),
    Binding("redo", "ctrl+shift+z", "redo the edit undone last", C.Redo),
)
"""Every action a key can trigger, in help order: the one table the bindings, the help, the
manual and the viewer's dispatch read."""
_COMMANDS = {b.action: b.command for b in BINDINGS}

# MuJoCo's own shortcuts (simulate.cc/simulate.h, engine_vis_init.c): (mods, key) -> meaning.
_MUJOCO_CTRL = {
    "A": "align the view",
    "C": "copy state",
    "D": "print data",
    "L": "reload",
    "M": "print model",
    "P": "screenshot",
    "Q": "quit",
}
_MUJOCO_PLAIN = {
    256: "free camera",
    258: "toggle the left UI",
    259: "reset",
    266: "select parent",
    290: "help",
    291: "info",
    292: "profiler",
    293: "sensors",
    294: "full screen",
    295: "frame display",
    296: "label display",
}


def mujoco_use(mods: int, key: int) -> str | None:
    """What MuJoCo's viewer does with this key itself, or None when it leaves it alone."""
    if mods & MOD_ALT:
        return "opens a section of MuJoCo's panel"
    if mods == 0:
        if 65 <= key <= 90 or 48 <= key <= 57 or (key < 128 and chr(key) in "[];'`\\,/"):
            return "toggles a visual flag or group"
        return _MUJOCO_PLAIN.get(key)
    if mods == MOD_SHIFT and (48 <= key <= 57 or key == 258):
        return "toggles a site group / the right UI"
    if mods == MOD_CTRL and 65 <= key <= 90:
        return _MUJOCO_CTRL.get(chr(key))
    return None


def parse_key(spec: str) -> tuple[int, int]:
    """(modifier bits, GLFW key code) of a key spec such as ``ctrl+t``; ConfigError if unknown."""
    parts = [p.strip().lower() for p in str(spec).split("+")]
    if not parts or not parts[-1]:
        raise ConfigError(f"key '{spec}': empty key")
    mods = 0
    for p in parts[:-1]:
        bit = {"ctrl": MOD_CTRL, "control": MOD_CTRL, "shift": MOD_SHIFT, "alt": MOD_ALT}.get(p)
        if bit is None:
            raise ConfigError(f"key '{spec}': unknown modifier '{p}' (ctrl, shift, alt)")
        mods |= bit
    name = parts[-1]
    if len(name) == 1 and (name.isascii() and name.isalnum()):
        return mods, ord(name.upper())
    if name in _NAMED:
        return mods, _NAMED[name]
    raise ConfigError(
        f"key '{spec}': unknown key '{name}' (a letter, a digit, space, arrows, minus, equal, backspace, f1..f12, ...)"
    )


def format_key(mods: int, key: int) -> str:
    """The human spelling of a key (``Ctrl+T``, ``Space``)."""
    name = _NAMES.get(key) or chr(key)
    name = {"minus": "-", "equal": "="}.get(name, name)
    name = name.upper() if len(name) == 1 or (name[0] == "f" and name[1:].isdigit()) else name.capitalize()
    prefix = "".join(p for bit, p in ((MOD_CTRL, "Ctrl+"), (MOD_SHIFT, "Shift+"), (MOD_ALT, "Alt+")) if mods & bit)
    return prefix + name


def config_dir() -> Path:
    """mjrig's folder in the user's config (``$XDG_CONFIG_HOME/mjrig``, else ``~/.config/mjrig``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mjrig"


class KeyMap:
    """(mods, key) -> action, built from the defaults and the user's keys.toml.

    ``warnings`` lists one line per refused user binding (unknown action or key, a key MuJoCo
    uses itself, a key bound twice); the default stays in force for those.
    """

    def __init__(self, overrides: dict[str, str] | None = None) -> None:
        self.warnings: list[str] = []
        self.keys: dict[str, tuple[int, int]] = {b.action: parse_key(b.default) for b in BINDINGS}
        for action, spec in (overrides or {}).items():
            if action not in self.keys:
                self.warnings.append(f"keys.toml: unknown action '{action}' (one of {', '.join(self.keys)})")
                continue
            try:
                mods, key = parse_key(spec)
            except ConfigError as exc:
                self.warnings.append(f"keys.toml: {action}: {exc}")
                continue
            clash = mujoco_use(mods, key)
            if clash:
                self.warnings.append(
                    f"keys.toml: {action} = '{spec}': MuJoCo's viewer uses that key ({clash}); "
                    f"keeping {format_key(*self.keys[action])}"
                )
                continue
            other = next((a for a, k in self.keys.items() if k == (mods, key) and a != action), None)
            if other is not None:
                self.warnings.append(f"keys.toml: {action} = '{spec}' is already the key of {other}")
                continue
            self.keys[action] = (mods, key)
        self._by_key = {k: a for a, k in self.keys.items()}

    def action(self, mods: int, key: int) -> str | None:
        """The action bound to this key press, or None."""
        return self._by_key.get((mods, key))

    def command(self, mods: int, key: int) -> C.Command | None:
        """A new command for this key press (the binding's own), or None when nothing is bound."""
        action = self._by_key.get((mods, key))
        return None if action is None else _COMMANDS[action]()

    def label(self, action: str) -> str:
        return format_key(*self.keys[action])

    def rows(self) -> list[tuple[str, str]]:
        """(key label, help) in help order, as the panel and the manual show them."""
        return [(self.label(b.action), b.help) for b in BINDINGS]


def load_keymap(path: Path | None = None) -> KeyMap:
    """The key map with the user's ``keys.toml`` applied (a ``[keys]`` table of action = "spec").

    A missing file gives the defaults; an unreadable one gives the defaults and one warning.
    """
    path = path or config_dir() / "keys.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return KeyMap()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        km = KeyMap()
        km.warnings.append(f"{path}: not read ({exc}); default keys in use")
        return km
    table = doc.get("keys", {})
    if not isinstance(table, dict):
        km = KeyMap()
        km.warnings.append(f'{path}: [keys] must be a table of action = "key"')
        return km
    return KeyMap({str(k): str(v) for k, v in table.items()})


EXTRA_HELP = (
    ("double-click", "select a point on a body; Attach here uses it"),
    ("drop a file", "open an .xml, .urdf, .mjb or .toml dropped on the 3D view"),
)
"""Mouse actions shown with the keys."""


def keys_markdown(keymap: KeyMap | None = None) -> str:
    """The keys table as Markdown (docs/app.md's copy is checked against this)."""
    rows = (keymap or KeyMap()).rows() + list(EXTRA_HELP)
    lines = ["| key | does |", "| --- | --- |"] + [f"| {k} | {h} |" for k, h in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(keys_markdown() + "\n")
