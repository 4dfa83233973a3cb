"""The panel finds a font for names DejaVu Sans cannot draw (CJK, kana, Hangul, Thai...), from
DejaVu's own character map: Greek, Cyrillic and the panel's signs need none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mjrig.widgets.kit.fonts import find_font, missing_glyphs


def test_a_font_is_found_for_the_characters_dejavu_lacks():
    names = ["Bodies/躯干:x", "Joints/관절:qpos", "ロボット", "N·m → ≥ 0.5", "ข้อต่อ", "Ωμέγα", "шарнир"]
    assert missing_glyphs(names) == set("躯干관절ロボットขอตอ") | {"\u0e49", "\u0e48"}  # Thai marks too
    assert missing_glyphs(["Ωμέγα", "шарнир", "naïve"]) == set()
    if shutil.which("fc-list") is None:
        pytest.skip("no fontconfig")
    found = find_font("躯干")
    assert found is None or found.endswith((".ttf", ".ttc", ".otf", ".otc"))
    thai = find_font("ข้อต่อ")
    if thai is not None:  # a regular face before a bold or italic one
        assert not any(w in Path(thai).stem.lower() for w in ("bold", "italic", "oblique")), thai
    assert find_font("\U0010fffd") is None  # no font has a private-use plane character
