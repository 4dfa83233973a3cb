"""Readouts that break lines only between their parts.

Dear PyGui's own wrapping (ImGui's) may break a line after a '.', so a narrow panel showed
"0.⏎001 s". A readout made of parts (``t = 1.234 s``, ``steps 1234``) is instead laid out here:
the parts joined on one line while it fits the given width, a new line between two parts when
not, and the text item itself not wrapped (``wrap=-1``).
"""

from __future__ import annotations

from collections.abc import Sequence

import dearpygui.dearpygui as dpg

__all__ = ["fit_lines", "available_width"]


def fit_lines(parts: Sequence[str], *, width: float, sep: str = "   ") -> str:
    """``parts`` joined by ``sep``, a line break instead of ``sep`` wherever the line would be
    wider than ``width`` (px, in the current font). Before the first frame (no font sizes yet)
    everything goes on one line."""
    lines: list[str] = []
    line = ""
    for part in parts:
        wider = line + sep + part if line else part
        size = dpg.get_text_size(wider) if line else None
        if size is not None and size[0] > width:
            lines.append(line)
            line = part
        else:
            line = wider
    lines.append(line)
    return "\n".join(lines)


def available_width(item: int | str, *, fallback: float = 400.0) -> float:
    """The width (px) of the panel region that holds ``item``: its parent's rectangle, less a
    little padding; ``fallback`` before anything was laid out."""
    parent = dpg.get_item_parent(item)
    width = dpg.get_item_rect_size(parent)[0] if parent else 0
    return float(width - 16) if width and width > 40 else fallback
