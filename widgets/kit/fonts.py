"""The panel's font: DejaVu Sans (shipped), and a system font when a model brings CJK names.

Dear PyGui's own font has ASCII only, so mjrig ships DejaVu Sans (arrows, Greek, maths signs).
DejaVu has no Chinese, Japanese or Korean glyphs, and Dear PyGui cannot merge two fonts into
one, so a body called 躯干 showed as "??". When the texts the panel is about to show hold such
characters, ``PanelFonts.cover`` finds an installed font that has them *and* Latin (fontconfig's
``fc-list :charset=...``: e.g. WenQuanYi Micro Hei, Noto Sans CJK) and makes it the panel's
font (Dear PyGui loads glyphs as they are first drawn) while such names are shown: the next
rig without them has DejaVu back. With none installed it says once what to install.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any

__all__ = ["PanelFonts", "needs_cjk_font", "find_font"]

SIZE = 15
"""Font size (px) of the whole panel."""

_WIDE = ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF), (0x20000, 0x2FA1F))
"""CJK radicals, kana, ideographs, Hangul, compatibility and full-width forms: none in DejaVu."""
_LATIN = "Aa0.·→≥"
"""What the panel's own texts need besides (units, arrows, bounds)."""


def needs_cjk_font(texts: Iterable[str]) -> set[str]:
    """The characters of ``texts`` that DejaVu Sans lacks (CJK, kana, Hangul...)."""
    chars = set("".join(texts))  # one pass in C over thousands of signal names
    if not chars or max(chars) < "\u2e80":
        return set()
    return {ch for ch in chars if any(lo <= ord(ch) <= hi for lo, hi in _WIDE)}


def find_font(chars: Iterable[str]) -> str | None:
    """The file of an installed font with every character of ``chars`` and Latin (fontconfig),
    or None (no such font, or no fontconfig)."""
    if shutil.which("fc-list") is None:
        return None
    charset = " ".join(f"{ord(c):x}" for c in sorted(set(chars) | set(_LATIN)))
    try:
        out = subprocess.run(
            ["fc-list", f":charset={charset}", "file"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = sorted(line.split(":")[0].strip() for line in out.splitlines() if line.strip())
    return files[0] if files else None


class PanelFonts:
    """Chooses and binds the panel's font (main thread, inside a Dear PyGui context)."""

    def __init__(self, dpg: Any, *, warn: Callable[[str], None] | None = None) -> None:
        self._dpg = dpg
        self._warn = warn
        self._covered: set[str] = set()
        self._warned = False
        self.file: str | None = None
        """The font file bound now (None: Dear PyGui's own)."""
        self._latin: tuple[Any, str] | None = None  # DejaVu Sans: (font id, file)
        self._wide: tuple[Any, str] | None = None  # the font with the CJK names' glyphs

    def start(self) -> None:
        """Bind DejaVu Sans; the built-in font stays if it cannot be loaded."""
        path = resources.files("mjrig.assets").joinpath("DejaVuSans.ttf")
        try:
            with resources.as_file(path) as font_file, self._dpg.font_registry():
                self._latin = (self._dpg.add_font(str(font_file), SIZE), str(path))
            self._bind(self._latin)
        except Exception:  # noqa: BLE001 - the built-in font still works, with fewer glyphs
            pass

    def cover(self, texts: Iterable[str]) -> None:
        """Make sure the characters of ``texts`` can be drawn (see the module docstring)."""
        needed = needs_cjk_font(texts)
        if not needed:  # a rig without such names: the panel's own font again
            if self._latin is not None and self.file != self._latin[1]:
                self._bind(self._latin)
            return
        wanted = needed - self._covered
        if not wanted:
            if self._wide is not None:
                self._bind(self._wide)
            return
        chars = self._covered | wanted
        file = find_font(chars)
        if file is None:
            if not self._warned and self._warn is not None:
                self._warn(
                    "names with Chinese, Japanese or Korean characters need a font that has them: install "
                    "one (e.g. `sudo apt install fonts-wqy-microhei` or fonts-noto-cjk) and open the model again"
                )
            self._warned = True
            return
        dpg = self._dpg
        with dpg.font_registry():  # Dear PyGui 2 loads each glyph as it is first drawn
            self._wide = (dpg.add_font(file, SIZE), file)
        self._bind(self._wide)
        self._covered = chars

    def _bind(self, font: tuple[Any, str]) -> None:
        self._dpg.bind_font(font[0])
        self.file = font[1]
