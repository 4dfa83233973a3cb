"""The panel finds a font for names DejaVu Sans cannot draw (CJK, kana, Hangul)."""

from __future__ import annotations

import shutil

import pytest

from mjrig.widgets.kit.fonts import find_font, needs_cjk_font


def test_the_cjk_font_is_found_for_the_characters_dejavu_lacks():
    assert needs_cjk_font(["Bodies/躯干:x", "Joints/관절:qpos", "ロボット", "N·m → ≥ 0.5"]) == set("躯干관절ロボット")
    if shutil.which("fc-list") is None:
        pytest.skip("no fontconfig")
    found = find_font("躯干")
    assert found is None or found.endswith((".ttf", ".ttc", ".otf", ".otc"))
    assert find_font("\U0010fffd") is None  # no font has a private-use plane character
