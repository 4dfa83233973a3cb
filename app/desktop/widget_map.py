"""Where the panel's widgets are on screen, for GUI tests and for scripting the app with xdotool.

Set ``MJRIG_WIDGET_MAP=FILE`` and the panel writes every visible labelled widget's rectangle
(viewport pixels) as JSON to FILE when asked: create ``FILE.want`` and the panel, at the end of
the first frame it begins after that, writes FILE and deletes ``FILE.want`` (so once it is gone,
FILE shows a frame drawn wholly after the asking). With ``MJRIG_WIDGET_MAP_EVERY=N`` it also
writes FILE every N-th frame unasked. ``FILE.frame`` asks for a frame alone: it is deleted at
the end of the first frame begun after it appeared, and no map is written (a test waiting for the
panel to have drawn what it just did, at a third less of the panel's time than a map). Tests
click widgets where a person would and read what the panel shows (a text's words, an input's
value, which windows and menus are open); a map costs
the panel a few milliseconds, so it is written only when someone looks.

A control the panel draws but has scrolled out of its child window's view is listed too, with
``"offscreen": true``, where it would be, and ``"scroll"``: the rectangle of the child window to
turn the mouse wheel over to bring it into view (as a person scrolls straight to what they see
coming), so a test need not search by wheel turns. A widget that runs past its window's right
edge (its label cut off) has ``"clipped": true``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mjrig.runtime.files.atomic_output import replace_text

__all__ = ["MapRequests", "write_widget_map", "WANT_SUFFIX", "FRAME_SUFFIX"]

WANT_SUFFIX = ".want"
"""``FILE`` + this: the file whose presence asks the panel for a map."""
FRAME_SUFFIX = ".frame"
"""``FILE`` + this: the file whose presence asks the panel for one more frame, without a map
(deleted at the end of the first frame begun after it appeared)."""

# Dear ImGui's default style (Dear PyGui's theme keeps its sizes), px: a menu bar's popup is
# placed from these (ImGui::BeginMenu), and Dear PyGui reports a menu item's place in the popup.
_FRAME_PADDING = (4, 3)
_ITEM_SPACING_X = 8
_WINDOW_PADDING = 8


_NEVER_DRAWN = frozenset(
    {
        "mvGroup",  # drawn, but by its items: it has no label of its own
        "mvTheme",
        "mvThemeComponent",
        "mvThemeColor",
        "mvThemeStyle",
        "mvFont",
        "mvFontRegistry",
        "mvFontRangeHint",
        "mvFontRange",
        "mvFontChars",
        "mvCharRemap",
        "mvHandlerRegistry",
        "mvItemHandlerRegistry",
        "mvValueRegistry",
        "mvTextureRegistry",
        "mvLineSeries",
        "mvScatterSeries",
        "mvStairSeries",
        "mvShadeSeries",
        "mvBarSeries",
        "mvStemSeries",
    }
)
"""Dear PyGui items that are never drawn as widgets of their own (styles, fonts, registries, a
plot's series): passed over without asking Dear PyGui for their state."""

_PLACED_BY_MENU = frozenset({"mvWindowAppItem", "mvMenu", "mvMenuItem"})
"""Items placed from their window's or menu's place rather than a rectangle of their own."""

_KINDS: dict[int | str, str] = {}
"""Each item's Dear PyGui type, asked once: an item's type never changes and ids are not reused."""

_PARENTS: dict[int | str, int | str | None] = {}
"""Each item's parent, asked once: the panel never moves an item to another parent."""

_WINDOWS: dict[int | str, int | str | None] = {}
"""The nearest window or child window holding each item's parent (from ``_PARENTS``)."""


def _kind(dpg: Any, item: int | str) -> str:
    """The Dear PyGui type of ``item`` (e.g. "mvAppItemType::mvButton"), remembered."""
    kind = _KINDS.get(item)
    if kind is None:
        kind = _KINDS[item] = dpg.get_item_type(item)
    return kind


def _parent(dpg: Any, item: int | str) -> int | str | None:
    """The item holding ``item`` (None for a window), remembered."""
    if item not in _PARENTS:
        _PARENTS[item] = dpg.get_item_parent(item) or None
    return _PARENTS[item]


class MapRequests:
    """The panel's side of ``MJRIG_WIDGET_MAP=FILE``: at the start of each frame it notes what is
    asked (``FILE.want``: a map; ``FILE.frame``: only a frame), at the end answers it (writes the
    map, deletes the request file), and tells its idle wait whether someone is waiting.
    ``MJRIG_WIDGET_MAP_EVERY=N`` (a whole number from 1) also writes FILE every N-th frame."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        every = os.environ.get("MJRIG_WIDGET_MAP_EVERY", "").strip()
        self.every = max(1, int(every)) if every.isdigit() else None
        self._files = (Path(f"{path}{WANT_SUFFIX}"), Path(f"{path}{FRAME_SUFFIX}")) if path else ()
        """The request files: (a map, a frame); none without a map file."""

    def asked(self) -> tuple[bool, bool]:
        """(a map, a frame) asked for now: call as a frame begins."""
        want, frame = (f.exists() for f in self._files) if self._files else (False, False)
        return want, frame

    def answer(self, dpg: Any, asked: tuple[bool, bool], frame: int) -> None:
        """At the end of frame number ``frame``: write the map if it was asked for (or is due),
        then delete the request files noted at its start."""
        if self.path is None:
            return
        if asked[0] or (self.every is not None and frame % self.every == 0):
            write_widget_map(dpg, self.path)
        for request, was in zip(self._files, asked):
            if was:
                request.unlink(missing_ok=True)

    def waiting(self) -> bool:
        """Whether a map or a frame is asked for (the panel then draws at once)."""
        return any(f.exists() for f in self._files)


def write_widget_map(dpg: Any, path: Path) -> None:
    """Write every visible labelled widget's rectangle (viewport pixels) as JSON to ``path``.

    Shown windows are listed by their title (``"modal": true`` for a dialog), the menu bar's
    menus by their place (``"open": true`` while the menu is down), and an open menu's items and
    submenus by their place in it (not a submenu's own items).
    """
    items = []
    clipped = _Clip(dpg)
    alive = dpg.get_all_items()
    if len(_KINDS) > 2 * len(alive) + 1000:  # forget the items deleted since (rebuilt tables)
        for cache in (_KINDS, _PARENTS, _WINDOWS):
            cache.clear()
    for item in alive:
        try:
            kind = _kind(dpg, item).split("::")[-1]
            if kind in _NEVER_DRAWN:
                continue
            state = dpg.get_item_state(item)
            if kind == "mvAnnotation":  # a label drawn in a plot: what it says, in its plot's place
                if (cfg := dpg.get_item_configuration(item))["show"] and cfg["label"]:
                    plot = dpg.get_item_parent(item)
                    (x, y), (w, h) = dpg.get_item_state(plot)["rect_min"], dpg.get_item_rect_size(plot)
                    items.append(
                        {"label": "", "type": kind, "rect": [int(x), int(y), int(w), int(h)], "text": cfg["label"]}
                    )
                continue
            if "rect_min" not in state and kind not in _PLACED_BY_MENU:
                continue
            if kind not in _PLACED_BY_MENU and not state.get("visible") and not clipped.holders_open(item):
                continue  # under a closed header or tree node (it keeps its last place): not drawn
            cfg = dpg.get_item_configuration(item)
            extra: dict[str, Any] = {}
            if kind == "mvWindowAppItem" and cfg.get("show"):
                state = {"rect_min": dpg.get_item_pos(item), "rect_size": dpg.get_item_rect_size(item)}  # its title
                if cfg.get("modal"):
                    extra["modal"] = True
            elif kind == "mvMenu" and "pos" in state and cfg.get("label") and _in_menu_bar(dpg, item):
                state, extra["open"] = _menu_bar_entry(dpg, item, state, cfg["label"]), _is_open(state)
            elif kind in ("mvMenuItem", "mvMenu") and cfg.get("show"):  # in a menu bar's menu (a submenu too)
                found = _open_menu_item(dpg, item, state, cfg.get("label") or "")
                if found is None:
                    continue
                state = found
                if kind == "mvMenu":
                    extra["open"] = _is_open(dpg.get_item_state(item))
            elif "rect_min" not in state:
                continue
            else:
                cut = clipped.cut_by(item, kind, state)
                if cut is not None or not state.get("visible"):
                    if cut is None or not clipped.drawn(item):
                        continue  # not drawn this frame (a closed header's), or clipped by no child
                    extra["offscreen"], extra["scroll"] = True, cut
                elif clipped.cut_right(item, state):
                    extra["clipped"] = True  # drawn past its window's right edge: cut off
            label = cfg.get("label") or cfg.get("hint") or ""  # an input known by its hint
            (x, y), (w, h) = state["rect_min"], state["rect_size"]
            text = str(dpg.get_value(item)) if kind == "mvText" and not label else None
            if not (label or text) or w <= 0 or h <= 0:
                continue
            entry = {"label": label.split("##")[0], "type": kind, "rect": [int(x), int(y), int(w), int(h)], **extra}
            if text is not None:
                entry["text"] = text  # what a text shows (a status line, a readout)
            if kind in (
                "mvSelectable",
                "mvCombo",
                "mvInputText",
                "mvInputFloat",
                "mvCheckbox",
                "mvTreeNode",
                "mvSliderDouble",
            ):
                entry["value"] = str(dpg.get_value(item))
            if kind == "mvPlot":  # the time span it shows (s; its first axis is time) and its legend
                children = dpg.get_item_children(item, 1)
                axes = [a for a in children if _kind(dpg, a).endswith("mvPlotAxis")]
                if axes:
                    entry["x_range"] = [float(v) for v in dpg.get_axis_limits(axes[0])]
                for legend in (c for c in dpg.get_item_children(item, 0) if _kind(dpg, c).endswith("mvPlotLegend")):
                    shown = dpg.get_item_configuration(legend)
                    entry["legend"] = (
                        ("row" if shown.get("horizontal") else "column") if shown.get("show") else "hidden"
                    )
            items.append(entry)
        except Exception:  # noqa: BLE001 - an item deleted while we looked
            continue
    replace_text(path, json.dumps(items))  # whole: a harness polling FILE never reads half a map


_CONTROLS = frozenset(
    {
        "mvButton",
        "mvCheckbox",
        "mvCombo",
        "mvInputText",
        "mvInputFloat",
        "mvInputDouble",
        "mvInputInt",
        "mvSliderFloat",
        "mvSliderDouble",
        "mvSliderInt",
        "mvSelectable",
        "mvCollapsingHeader",
        "mvTreeNode",
        "mvRadioButton",
    }
)
"""What a person clicks or types into: such a widget is in the map only when it shows whole."""


class _Clip:
    """Whether a control is cut off by a scrolled child window it sits in (ImGui calls a widget
    "visible" when any of it shows): a control must show whole;
    otherwise it is left out of the map, so a test scrolls to it as a person does rather than
    clicking the edge of the panel. A child window's place is relative to the window it is in
    (scrolled with it), so its screen place is summed up its windows, once per map."""

    def __init__(self, dpg: Any) -> None:
        self.dpg = dpg
        self.corners: dict[int | str, tuple[float, float]] = {}
        self.shown: dict[int | str, bool] = {}
        self.sizes: dict[int | str, tuple[float, float]] = {}

    def _window(self, item: int | str) -> int | str | None:
        """The nearest window or child window holding ``item`` (remembered)."""
        parent = _parent(self.dpg, item)
        if parent is None:
            return None
        if parent not in _WINDOWS:
            is_window = _kind(self.dpg, parent).endswith(("mvChildWindow", "mvWindowAppItem"))
            _WINDOWS[parent] = parent if is_window else self._window(parent)
        return _WINDOWS[parent]

    def _corner(self, win: int | str) -> tuple[float, float]:
        """The screen x, y of the top left of window or child window ``win`` (viewport px)."""
        if win not in self.corners:
            x, y = (float(v) for v in self.dpg.get_item_pos(win))
            outer = self._window(win) if _kind(self.dpg, win).endswith("mvChildWindow") else None
            if outer is not None:
                ox, oy = self._corner(outer)
                sx, sy = self.dpg.get_item_state(outer).get("scroll_pos", (0, 0))
                x, y = x + ox - float(sx), y + oy - float(sy)
            self.corners[win] = (x, y)
        return self.corners[win]

    def cut_by(self, item: int | str, kind: str, state: dict) -> list[int] | None:
        """The screen rectangle [x, y, w, h] of the child window that cuts ``item`` off (a
        control: any of it; another widget: all of it), else None."""
        y, h = state["rect_min"][1], state["rect_size"][1]
        whole = kind in _CONTROLS  # texts, plots, tables: what shows of them is theirs to read
        top, bottom = (y, y + h) if whole else (y + h, y)
        win = self._window(item)
        while win is not None and _kind(self.dpg, win).endswith("mvChildWindow"):
            wx, wy = self._corner(win)
            ww, wh = self._size(win)
            if top < wy - 1 or bottom > wy + wh + 1:
                return [int(wx), int(wy), int(ww), int(wh)]
            win = self._window(win)
        return None

    def cut_right(self, item: int | str, state: dict) -> bool:
        """Whether ``item`` runs past the right edge of the window or child window it is in (its
        label or text cut off; a window's scroll bar counts as outside it)."""
        win = self._window(item)
        if win is None:
            return False
        wx, _ = self._corner(win)
        ww = self._size(win)[0]
        return state["rect_min"][0] + state["rect_size"][0] > wx + ww + 1

    def drawn(self, item: int | str) -> bool:
        """Whether the panel drew ``item`` this frame: it and every holder shown, every header
        and tree node above it open (a closed one's items keep their last place)."""
        if not self.dpg.get_item_configuration(item).get("show", True):
            return False  # the item itself may be a closed header: only those above it must be open
        return _kind(self.dpg, item).endswith("mvWindowAppItem") or self._open(_parent(self.dpg, item))

    def holders_open(self, item: int | str) -> bool:
        """Whether every holder of ``item`` is shown and open (``drawn`` less the item's own
        ``show``)."""
        return self._open(_parent(self.dpg, item))

    def _open(self, holder: int | str | None) -> bool:
        """Whether ``holder`` and every holder above it are shown and open (remembered for this map);
        None (above a window) is."""
        if not holder:
            return True
        if holder not in self.shown:
            kind = _kind(self.dpg, holder)
            if not self.dpg.get_item_configuration(holder).get("show", True):
                self.shown[holder] = False
            elif kind.endswith(("mvCollapsingHeader", "mvTreeNode")) and not self.dpg.get_value(holder):
                self.shown[holder] = False
            else:
                self.shown[holder] = kind.endswith("mvWindowAppItem") or self._open(_parent(self.dpg, holder))
        return self.shown[holder]

    def _size(self, win: int | str) -> tuple[float, float]:
        """The width and height of window or child window ``win`` (px, remembered for this map)."""
        if win not in self.sizes:
            w, h = self.dpg.get_item_rect_size(win)
            self.sizes[win] = (float(w), float(h))
        return self.sizes[win]


def _in_menu_bar(dpg: Any, item: int | str) -> bool:
    return _kind(dpg, dpg.get_item_parent(item)).endswith("mvMenuBar")


def _is_open(state: dict) -> bool:
    """Dear PyGui gives a menu the size of its popup while it is down, (0, 0) otherwise."""
    w, h = state.get("rect_size") or (0, 0)
    return w > 0 and h > 0


def _menu_bar_entry(dpg: Any, item: int | str, state: dict, label: str) -> dict:
    """A menu bar's entry: only its place is known; its size is its label's, padded."""
    tw, th = dpg.get_text_size(label) or (0, 0)
    return {"rect_min": state["pos"], "rect_size": (int(tw) + 2 * _ITEM_SPACING_X, int(th) + 2 * _FRAME_PADDING[1])}


def _open_menu_item(dpg: Any, item: int | str, state: dict, label: str) -> dict | None:
    """Screen rectangle of an item of a menu bar's open menu, else None (its menu is closed)."""
    menu = dpg.get_item_parent(item)
    menu_state = dpg.get_item_state(menu)
    if "pos" not in state or not _is_open(menu_state) or not _in_menu_bar(dpg, menu):
        return None
    mx, my = menu_state["pos"]
    th = (dpg.get_text_size(label) or (0, 0))[1]
    # ImGui::BeginMenu in a menu bar: the popup's corner, from the entry's place (under the bar)
    px, py = mx - 1 - _ITEM_SPACING_X // 2, my + th + 2 * _FRAME_PADDING[1]
    x, y = state["pos"]
    return {"rect_min": (px + x, py + y), "rect_size": (menu_state["rect_size"][0] - 2 * _WINDOW_PADDING, int(th))}
