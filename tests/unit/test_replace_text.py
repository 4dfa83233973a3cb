"""A small settings file written whole (``replace_text``): the old text until the new is all
there, no part file left beside it, a failed write leaves the old file as it was."""

from __future__ import annotations

import os

import pytest

from mjrig.runtime.files.atomic_output import replace_text


def test_the_new_text_replaces_the_old_whole_and_leaves_no_part_file(tmp_path):
    path = tmp_path / "recent.json"
    replace_text(path, "[1]")
    replace_text(path, '["a", "b"]')
    assert path.read_text(encoding="utf-8") == '["a", "b"]'
    assert os.listdir(tmp_path) == ["recent.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "layout.json"
    replace_text(path, "old")
    with pytest.raises(UnicodeEncodeError):
        replace_text(path, "\udcff")  # a lone surrogate: UTF-8 cannot write it
    assert path.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["layout.json"]
