"""The panel's font: DejaVu Sans (shipped), and a system font when a model brings names in a
script DejaVu lacks (Chinese, Japanese, Korean, Thai, Devanagari...).

Dear PyGui's own font has ASCII only, so mjrig ships DejaVu Sans (arrows, Greek, Cyrillic, maths
signs). DejaVu has no glyphs for many scripts, and Dear PyGui cannot merge two fonts into one, so
a body called 躯干 showed as "??". When the texts the panel is about to show hold characters
DejaVu lacks (its own character map, read once with fontTools), ``PanelFonts.cover`` finds an
installed font that has them *and* Latin (fontconfig's ``fc-list :charset=...``: e.g. WenQuanYi
Micro Hei, Noto Sans CJK, Garuda; a regular face before a bold or italic one) and makes it the
panel's font (Dear PyGui loads glyphs as they are first drawn) while such names are shown: the
next rig without them has DejaVu back. With none installed it says once what to install.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["PanelFonts", "missing_glyphs", "find_font", "matched_size"]

SIZE = 15
"""Font size (px) of the whole panel."""

_WIDE = ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF), (0x20000, 0x2FA1F))
"""CJK radicals, kana, ideographs, Hangul, compatibility and full-width forms: none in DejaVu
(what is known to be missing when DejaVu's own character map cannot be read)."""
_LATIN = "Aa0.·→≥"
"""What the panel's own texts need besides (units, arrows, bounds)."""

_dejavu: frozenset[int] | None = None


def _dejavu_chars() -> frozenset[int]:
    """The code points DejaVu Sans (shipped) has glyphs for; empty when fontTools is missing."""
    global _dejavu
    if _dejavu is None:
        try:
            from fontTools.ttLib import TTFont

            with resources.as_file(resources.files("mjrig.assets").joinpath("DejaVuSans.ttf")) as path:
                _dejavu = frozenset(TTFont(str(path), lazy=True)["cmap"].getBestCmap())
        except Exception:  # noqa: BLE001 - no fontTools, or an unreadable file: the known ranges
            _dejavu = frozenset()
    return _dejavu


def missing_glyphs(texts: Iterable[str]) -> set[str]:
    """The characters of ``texts`` that DejaVu Sans lacks (CJK, kana, Hangul, Thai, Devanagari...)."""
    chars = set("".join(texts))  # one pass in C over thousands of signal names
    if not chars or max(chars) < "\u0250":  # Latin: DejaVu has it all
        return set()
    have = _dejavu_chars()
    if have:
        return {ch for ch in chars if ord(ch) >= 0x250 and ord(ch) not in have and ch.isprintable()}
    return {ch for ch in chars if any(lo <= ord(ch) <= hi for lo, hi in _WIDE)}


def find_font(chars: Iterable[str]) -> str | None:
    """The file of an installed font with every character of ``chars`` and Latin (fontconfig;
    one with the panel's signs too, ``_LATIN``, if there is one), or None (no such font, or no
    fontconfig)."""
    if shutil.which("fc-list") is None:
        return None
    for latin in (_LATIN, "Aa0."):
        charset = " ".join(f"{ord(c):x}" for c in sorted(set(chars) | set(latin)))
        try:
            out = subprocess.run(
                ["fc-list", f":charset={charset}", "file"], capture_output=True, text=True, timeout=10
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        files = sorted(line.split(":")[0].strip() for line in out.splitlines() if line.strip())
        plain = [f for f in files if not any(w in Path(f).stem.lower() for w in ("bold", "italic", "oblique", "light"))]
        if files:
            return (plain or files)[0]
    return None


def _height_per_em(file: str) -> float | None:
    """A font's line height (hhea ascent + descent) per em, which Dear PyGui's size is; None if
    it cannot be read."""
    try:
        from fontTools.ttLib import TTFont

        font = TTFont(file, fontNumber=0, lazy=True)
        return (font["hhea"].ascent - font["hhea"].descent) / font["head"].unitsPerEm
    except Exception:  # noqa: BLE001 - no fontTools, or a font it cannot read: the panel's size
        return None


def matched_size(file: str) -> float:
    """The size (px) at which ``file``'s letters are as large as DejaVu Sans's at ``SIZE``: a font
    with tall line room for its script's marks (Thai's Garuda: 1.9 em) is drawn larger, or its
    letters would come out at two thirds of the panel's."""
    ours = _height_per_em(str(resources.files("mjrig.assets").joinpath("DejaVuSans.ttf")))
    theirs = _height_per_em(file)
    if not ours or not theirs:
        return float(SIZE)
    return float(SIZE) * min(2.0, max(1.0, theirs / ours))


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
        self._wide: tuple[Any, str] | None = None  # the font with the names' glyphs DejaVu lacks

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
        needed = missing_glyphs(texts)
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
                    f"names with characters the panel's font lacks ({''.join(sorted(wanted)[:8])}) need a font "
                    "that has them and Latin: install one (e.g. `sudo apt install fonts-noto-core fonts-noto-cjk`, "
                    "or fonts-wqy-microhei for Chinese) and open the model again"
                )
            self._warned = True
            return
        dpg = self._dpg
        with dpg.font_registry():  # Dear PyGui 2 loads each glyph as it is first drawn
            self._wide = (dpg.add_font(file, matched_size(file)), file)
        self._bind(self._wide)
        self._covered = chars

    def _bind(self, font: tuple[Any, str]) -> None:
        self._dpg.bind_font(font[0])
        self.file = font[1]
