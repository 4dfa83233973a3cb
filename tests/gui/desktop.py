"""A person's desktop for the GUI tests: Xvfb + the openbox window manager, and the real app.

``Desktop`` starts a screen of a given size with openbox; ``App`` starts ``python -m mjrig`` on
it as a separate process (its own config folder and working folder) and drives it only with
real input: xdotool clicks at widgets' on-screen positions, xdotool keys sent to the focused
viewer, and XDND drops (``xdnd_drop.py``, as a file manager drops files). Checks read what a
person sees: window titles and frames, files written, screenshots.

Widget positions come from the app's ``MJRIG_WIDGET_MAP`` file (each labelled widget's
rectangle in the panel window); the test adds the panel window's position as X reports it.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mjrig.desktop.widget_map import FRAME_SUFFIX, WANT_SUFFIX
from tests.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
DROP_TOOL = Path(__file__).with_name("xdnd_drop.py")

Rect = tuple[int, int, int, int]


def need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


_GLFW_KEYS = {
    "space": 32,
    "Escape": 256,
    "Return": 257,
    "Tab": 258,
    "BackSpace": 259,
    "Delete": 261,
    "Right": 262,
    "Left": 263,
    "Down": 264,
    "Up": 265,
    "Page_Up": 266,
    "Page_Down": 267,
    "Home": 268,
    "End": 269,
    **{f"F{n}": 289 + n for n in range(1, 13)},
}


_WM_KEYS = frozenset({"alt+F4"})
"""Keys the window manager takes (closing the window): the app sees the close, not the key."""


def _glfw_code(name: str) -> int | None:
    """GLFW's key code of an xdotool key name (a letter or digit, or a named key), else None."""
    if len(name) == 1 and name.isalnum():
        return ord(name.upper())
    return _GLFW_KEYS.get(name)


class Desktop:
    """An Xvfb screen WIDTHxHEIGHT with openbox managing its windows."""

    def __init__(self, width: int, height: int) -> None:
        need("Xvfb", "openbox", "xdotool", "xwininfo", "xprop", "import")
        self.size = (width, height)
        # On a busy machine a screen or its window manager now and then comes up slowly or not at
        # all: both are started again, up to three times, and a last failure says what each printed.
        problems: list[str] = []
        for _attempt in range(3):
            problem = self._start(width, height)
            if problem is None:
                return
            problems.append(problem)
            self.close()
        raise AssertionError("the test screen did not come up: " + " | ".join(problems))

    def _start(self, width: int, height: int) -> str | None:
        """Start Xvfb and openbox on it; None when both run, else what went wrong."""
        read_fd, write_fd = os.pipe()
        self._xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
            pass_fds=(write_fd,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wm: subprocess.Popen[bytes] | None = None
        os.close(write_fd)
        number = b""
        end = time.monotonic() + 30
        while not number.endswith(b"\n") and time.monotonic() < end:
            ready, _, _ = select.select([read_fd], [], [], 0.5)
            if not ready:
                continue
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
        os.close(read_fd)
        if not number.strip().isdigit():
            return f"Xvfb gave no display number in 30 s (exit code {self._xvfb.poll()})"
        self.display = f":{number.decode().strip()}"
        self.env = {**os.environ, "DISPLAY": self.display}
        self.env.pop("MUJOCO_GL", None)
        self._wm = subprocess.Popen(
            ["openbox", "--sm-disable"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_for(lambda: "_NET_SUPPORTING_WM_CHECK(WINDOW)" in self.x("xprop", "-root"), what="openbox", timeout=20)
        except AssertionError:
            code = self._wm.poll()
            return f"openbox not up on {self.display} in 20 s (exit code {code})"
        return None

    def x(self, *cmd: str, check: bool = False) -> str:
        """Run an X tool on this screen; its stdout. ``xdotool mousemove --sync X Y`` goes no
        further than the screen's edge (as a mouse stops there), and to where the pointer already
        is moves nothing, so it is not waited for (xdotool would wait 15 s for a movement that
        never comes)."""
        if cmd[:3] == ("xdotool", "mousemove", "--sync") and len(cmd) >= 5:
            x, y = (str(min(max(int(v), 0), edge - 1)) for v, edge in zip(cmd[3:5], self.size, strict=True))
            cmd = (*cmd[:3], x, y, *cmd[5:])
            if self.pointer() == (x, y):
                cmd = cmd[:2] + cmd[3:]
        p = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=30)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
        return p.stdout

    def active(self) -> int | None:
        """The window the window manager has given the keyboard to."""
        out = self.x("xdotool", "getactivewindow").strip()
        return int(out) if out.isdigit() else None

    def pointer(self) -> tuple[str, str]:
        """Where the pointer is: (x, y) as xdotool writes them."""
        out = subprocess.run(
            ["xdotool", "getmouselocation", "--shell"], env=self.env, capture_output=True, text=True, timeout=30
        ).stdout
        found = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return found.get("X", ""), found.get("Y", "")

    def windows(self, name_regex: str) -> list[int]:
        out = self.x("xdotool", "search", "--onlyvisible", "--name", name_regex)
        return [int(w) for w in out.split()]

    def title(self, wid: int) -> str:
        return self.x("xdotool", "getwindowname", str(wid)).strip()

    def client_rect(self, wid: int) -> Rect:
        info = self.x("xwininfo", "-id", str(wid))
        get = lambda key: int(re.search(rf"{key}:\s+(-?\d+)", info).group(1))  # noqa: E731
        return get("Absolute upper-left X"), get("Absolute upper-left Y"), get("Width"), get("Height")

    def frame_rect(self, wid: int) -> Rect:
        """The window with its title bar and borders, as the window manager drew it."""
        x, y, w, h = self.client_rect(wid)
        m = re.search(r"=\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)", self.x("xprop", "-id", str(wid), "_NET_FRAME_EXTENTS"))
        left, right, top, bottom = (int(v) for v in m.groups()) if m else (0, 0, 0, 0)
        return x - left, y - top, w + left + right, h + top + bottom

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        out = ARTIFACTS / f"{name}.png"
        self.x("import", "-window", "root", str(out), check=True)
        return out

    def grab(self, wid: int) -> np.ndarray:
        """The window's pixels now (H, W, 3) uint8."""
        x, y, w, h = self.client_rect(wid)
        raw = subprocess.run(
            ["import", "-window", str(wid), "-depth", "8", "rgb:-"],
            env=self.env,
            capture_output=True,
            timeout=30,
            check=True,
        ).stdout
        assert len(raw) == w * h * 3, f"a {w}x{h} window gave {len(raw)} bytes"
        return np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)

    def still_view(self, wid: int, ok=lambda rgb: True, *, what: str, still_s: float = 1.5) -> np.ndarray:
        """The window's pixels once every grab over ``still_s`` seconds (one each 0.25 s) is the
        same and ``ok`` holds for them: the view has stopped changing (the run is paused, the
        camera has got there). A software-rendered viewer on a busy machine may draw only a frame
        or two a second: two equal grabs a moment apart, or a panel that already says t = 0, do
        not yet mean the view shows it."""
        seen: list[tuple[float, np.ndarray]] = []
        longest = [0.0]  # the longest the view stayed the same, s (said when it never settles)

        def still():
            now, rgb = time.monotonic(), self.grab(wid)
            if seen and not np.array_equal(seen[-1][1], rgb):
                seen.clear()
            seen.append((now, rgb))
            longest[0] = max(longest[0], now - seen[0][0])
            return now - seen[0][0] >= still_s and ok(rgb)

        try:
            wait_for(still, what=what, every=0.25, timeout=60)
        except AssertionError:
            shot = self.screenshot(f"timeout_{re.sub(r'[^a-z0-9]+', '_', what.lower())}")
            held = "the view held still but did not show it" if longest[0] >= still_s else "the view kept changing"
            raise AssertionError(
                f"timed out waiting for {what}: {held} (still at most {longest[0]:.2f} s); the screen: {shot}"
            ) from None
        return seen[-1][1]

    def close(self) -> None:
        for p in (self._wm, self._xvfb):
            if p is not None:
                p.kill()
                p.wait()


def read_recording(path: Path) -> pl.DataFrame | None:
    """The recording at ``path``, or None while it is not there or still being finished."""
    try:
        return pl.read_parquet(path)
    except Exception:  # noqa: BLE001 - not there yet, or still merging
        return None


VIEW_FPS = 10.0
"""The 3D view's frame-rate ceiling (``--view-fps``) of the apps the tests start: Xvfb has no vsync,
so an unlimited view draws as often as Mesa's software renderer can and takes about a core (robot
arm, 1280x800: the app 1.66 cores unlimited, 0.81 at 10 frames/s); the tests read the view from
still screenshots. ``view_fps=None`` starts an app as a person does by default."""


class App:
    """The real app as a person starts it, in its own process, on ``desktop``."""

    def __init__(
        self,
        desktop: Desktop,
        *args: str | os.PathLike,
        home: Path,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        view_fps: float | None = VIEW_FPS,
    ) -> None:
        self.desktop = desktop
        self.home = home
        self.cwd = cwd or home / "work"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.widget_map = home / "widgets.json"
        self.widget_map.unlink(missing_ok=True)
        self.log = home / "app.log"
        e = {
            **desktop.env,
            "XDG_CONFIG_HOME": str(home / "config"),
            "MJRIG_WIDGET_MAP": str(self.widget_map),
            "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
            "MJRIG_VERBOSE": "1",
            **(env or {}),
        }
        self._config = e["XDG_CONFIG_HOME"]
        self._log_file = open(self.log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mjrig", *map(str, args), "--exit-after", "480"]
            + (["--view-fps", str(view_fps)] if view_fps else []),
            cwd=self.cwd,
            env=e,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.viewer = wait_for(lambda: self._one("^MuJoCo"), what="the 3D viewer window", timeout=60)
        self.panel = wait_for(lambda: self._one("^mjrig$"), what="the panel window", timeout=60)
        wait_for(lambda: self.redrawn(timeout=1.0), what="the panel's widgets", timeout=30)
        self._settle()
        self._placed()

    def _placed(self, timeout: float = 30.0) -> None:
        """Until the 3D view has the size the app plans for it on this screen (``plan_layout``:
        the tiled or the saved placement): MuJoCo opens its window at a size of its own, and the
        app resizes it once the viewer is up, on a busy machine seconds later. A view grabbed
        before that is a view the next moment no longer shows."""
        from unittest import mock

        from mjrig.desktop.windows import plan_layout

        with mock.patch.dict(os.environ, {"XDG_CONFIG_HOME": self._config}):
            want = plan_layout((0, 0, *self.desktop.size)).viewer[2:]
        wait_for(
            lambda: self.desktop.client_rect(self.viewer)[2:] == want,
            what=f"the 3D view to be placed at its planned size {want[0]}x{want[1]}",
            every=0.2,
            timeout=timeout,
        )

    def _settle(self, timeout: float = 15.0) -> None:
        """Until the panel's layout holds still: the same widgets in the same places in six widget
        maps in a row, ten frames or more (texts aside: their widths follow their words). A panel
        still laying itself out would take a click elsewhere."""

        def layout():
            items = self._map()
            return (
                None
                if items is None
                else [(it["label"], it["type"], it["rect"]) for it in items if it["type"] != "mvText"]
            )

        end = time.monotonic() + timeout
        last, still = layout(), 0
        while time.monotonic() < end and self.redrawn(timeout=2.0):
            now = layout()
            still = still + 1 if now and now == last else 0
            if still >= 5:
                return
            last = now

    def _one(self, regex: str) -> int | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"the app exited with {self.proc.returncode}:\n{self.output()}")
        found = self.desktop.windows(regex)
        return found[0] if found else None

    def redrawn(self, times: int = 1, *, timeout: float = 5.0, map: bool = False) -> bool:
        """Ask the panel for a frame ``times`` times in turn and wait for each: each is a frame
        the panel began after it was asked (``mjrig.desktop.widget_map``: ``FILE.frame``; with
        ``map``, ``FILE.want``, and the panel writes its widget map at the end of it), so what it
        shows was drawn after this call. False (no error) when the panel did not answer within
        ``timeout`` s: it is busy or gone."""
        ask = Path(str(self.widget_map) + (WANT_SUFFIX if map else FRAME_SUFFIX))
        end = time.monotonic() + timeout
        for _ in range(times):
            ask.touch()
            while ask.exists():
                if time.monotonic() > end or self.proc.poll() is not None:
                    return False
                time.sleep(0.005)
        return True

    def output(self) -> str:
        if not self._log_file.closed:
            self._log_file.flush()
        return self.log.read_text(errors="replace")

    # --- real input -----------------------------------------------------------------------
    def _map(self) -> list[dict] | None:
        """A widget map of a frame drawn after this call: what the panel shows, on screen or
        scrolled out of view (the last map the panel wrote, if it does not answer within 2 s)."""
        self.redrawn(timeout=2.0, map=True)
        try:
            return json.loads(self.widget_map.read_text())
        except (OSError, ValueError):
            return None

    @staticmethod
    def _hits(items: list[dict], label: str, kind: str | None = None) -> list[dict]:
        """The drawn widgets labelled ``label`` (of Dear PyGui type ``kind``, e.g. "mvButton"), in
        view or scrolled out of it, in the order the panel made them."""
        return [it for it in items if it["label"] == label and kind in (None, it["type"])]

    def widget(self, label: str, *, index: int = 0, kind: str | None = None, timeout: float = 60.0) -> Rect:
        """Screen rectangle of the panel's ``index``-th widget labelled ``label`` (in the order the
        panel made them); if it is scrolled out of view, turns the mouse wheel over its scrolled
        area straight towards it, as a person who sees where it is does. A widget not drawn yet (a dialog
        opening) is waited for; one still missing is searched for by wheel turns from the top."""
        px, py, _, _ = self.desktop.client_rect(self.panel)
        end = time.monotonic() + timeout
        missing_since = time.monotonic()
        searched = 0
        while True:
            items = self._map()
            hits = self._hits(items or [], label, kind)
            if len(hits) > index:
                missing_since = time.monotonic()
                hit = hits[index]
                if not hit.get("offscreen"):
                    x, y, w, h = hit["rect"]
                    return px + x, py + y, w, h
                self._scroll_towards(hit, px, py)
            elif time.monotonic() - missing_since > 2.0:
                # Not drawn for a while: search as a person would, from the top down.
                self.desktop.x("xdotool", "mousemove", "--sync", str(px + 120), str(py + 120))
                turns = (
                    ("--repeat", "60", "--delay", "5", "4")
                    if searched == 0
                    else ("--repeat", "3", "--delay", "20", "5")
                )
                self.desktop.x("xdotool", "click", *turns)
                searched = (searched + 1) % 40
                self.redrawn(2, timeout=3.0)
            else:
                self.redrawn(timeout=1.0)  # a widget just coming shows within a few frames
            if time.monotonic() > end:
                raise AssertionError(f"widget '{label}' not found on the panel")

    _wheel_step = 65.0
    """How far one wheel turn scrolls (px): Dear ImGui's five lines of text; learnt from each turn."""

    def _scroll_towards(self, hit: dict, px: int, py: int) -> None:
        """Turn the wheel over ``hit``'s scrolled area (at its left edge, clear of its widgets) by
        as many turns as bring ``hit`` to the area's middle, then look again."""
        sx, sy, sw, sh = hit["scroll"]
        x, y, w, h = hit["rect"]
        delta = (y + h / 2) - (sy + sh / 2)
        turns = max(1, min(60, round(abs(delta) / self._wheel_step)))
        self.desktop.x("xdotool", "mousemove", "--sync", str(px + sx + 3), str(py + sy + sh // 2))
        self.desktop.x("xdotool", "click", "--repeat", str(turns), "--delay", "10", "5" if delta > 0 else "4")
        self.redrawn(2, timeout=3.0)  # look at the panel as scrolled, however slow its frames
        after = next(
            (
                it
                for it in self._hits(self._map() or [], hit["label"])
                if it["rect"][0] == x and it["type"] == hit["type"]
            ),
            None,
        )
        if after is not None:
            moved = abs(after["rect"][1] - y)
            if moved >= 0.9 * turns * self._wheel_step:  # less would be the area's end stopping it
                self._wheel_step = moved / turns
            elif moved == 0:  # a step learnt from a jump of the layout: start again from five lines
                self._wheel_step = 65.0

    def screenshot_clear(self, name: str) -> Path:
        """A screenshot of the whole screen with the pointer moved off the panel first (no tooltip
        or hover over the picture) and the panel drawn again."""
        self.desktop.x("xdotool", "mousemove", "5", "700")
        self.redrawn()
        return self.desktop.screenshot(name)

    def rest(self) -> None:
        """Let the panel draw two frames begun with the pointer where it is now: a widget or plot
        under it counts as hovered before a press."""
        self.redrawn(2, timeout=3.0)

    def _press(self, x: int, y: int, *, clicks: int = 1) -> None:
        """Move the pointer to (x, y), let the panel draw it hovering there (ImGui acts on a
        hovered widget), click, and wait for the panel to draw the frames that take the click in."""
        self.desktop.x("xdotool", "mousemove", "--sync", str(x), str(y), check=True)
        self.rest()
        repeat = ("--repeat", str(clicks), "--delay", "80") if clicks > 1 else ()
        self.desktop.x("xdotool", "click", *repeat, "1", check=True)
        # a click into another window moves the keyboard there (the window manager's doing): keys
        # typed next must not go to the window that had it
        wait_for(
            lambda: self.desktop.active() == self.panel, what="the panel to take the keyboard", timeout=10, every=0.02
        )
        self.redrawn(2, timeout=3.0)  # Dear ImGui takes a press and its release a frame each

    def click_at(self, x: int, y: int) -> None:
        """Click the screen point (x, y) on the panel (a slider's end, a plot's corner)."""
        self._press(x, y)

    def click(self, label: str, *, index: int = 0) -> None:
        x, y, w, h = self.widget(label, index=index)
        self._press(x + w // 2, y + h // 2)

    def double_click(self, label: str, *, index: int = 0) -> None:
        x, y, w, h = self.widget(label, index=index)
        self._press(x + w // 2, y + h // 2, clicks=2)

    def type_into(self, label: str, text: str, *, enter: bool = False, index: int = 0) -> None:
        """Click the ``index``-th input field known by ``label``, select what is in it, and type
        ``text`` (then Enter)."""
        self.click(label, index=index)
        self.replace_text(text)
        if enter:
            self.desktop.x("xdotool", "key", "Return", check=True)
        self.redrawn(3, timeout=3.0)  # the panel takes in typed keys a frame at a time, behind xdotool

    def replace_text(self, text: str) -> None:
        """Select all in the focused input (Ctrl+A) and type ``text`` over it. Ctrl is let go a
        moment before typing, as a hand does: a letter in the very frame of Ctrl's release counts
        as Ctrl+letter (a quick Ctrl+S), so "stop" would open Save."""
        # Held keys, slowly: the panel reads the keyboard once a frame (30 frames/s).
        self.desktop.x(
            "xdotool", "keydown", "ctrl", "sleep", "0.15", "key", "a", "sleep", "0.15", "keyup", "ctrl", check=True
        )
        self.redrawn(2, timeout=3.0)  # frames drawn after Ctrl's release: the letters come alone
        self.desktop.x("xdotool", "type", "--delay", "15", text, check=True)

    def pick_first(self, combo: str) -> None:
        """Open a combo box and click its first entry (``pick``)."""
        self.pick(combo, 0)

    def pick(self, combo: str, index: int) -> None:
        """Open a combo box and click its entry ``index`` (0: the first; one line of the list is
        the combo's height less 2 px: its text with ImGui's item spacing). A combo at the foot of
        the window opens its list upwards, so the controls are scrolled first to give it room
        below, as a person would; where they cannot scroll further, the entry above the combo is
        clicked (the first only)."""
        px, py, _, ph = self.desktop.client_rect(self.panel)
        x, y, w, h = self.widget(combo)
        room = 60 + index * (h - 2)
        if y + h + room > py + ph:
            self.desktop.x("xdotool", "mousemove", "--sync", str(px + 120), str(py + 120))
            self.desktop.x("xdotool", "click", "--repeat", "3", "--delay", "20", "5")
            self.redrawn(2, timeout=3.0)
            x, y, w, h = self.widget(combo)
        self.click(combo)
        below = y + h + room <= py + ph
        assert below or index == 0, f"the list of {combo} opens upwards: only its first entry can be picked"
        self._press(x + 30, y + h + 12 + index * (h - 2) if below else y - 12)  # the combo closes, its callback runs

    def visible(self, label: str) -> bool:
        """Whether a widget labelled ``label`` is on screen now (no scrolling)."""
        return any(it["label"] == label for it in self.items())

    def reveal(self, node: str, label: str) -> None:
        """Expand tree node ``node`` unless ``label`` (inside it) is drawn already, in view or
        scrolled out of it (``widget`` scrolls to it)."""
        if any(it["label"] == label for it in self.items(offscreen=True)):
            return
        self.click(node)
        try:
            wait_for(  # a busy panel draws the opened node a few frames later
                lambda: any(it["label"] == label for it in self.items(offscreen=True)),
                what=f"{label} under {node}",
                timeout=15,
            )
        except AssertionError:  # a click on a panel busy laying itself out again can miss: once more
            self.desktop.screenshot(f"reveal_missed_{re.sub(r'[^a-z0-9]+', '_', label.lower())}")
            self.click(node)
            wait_for(
                lambda: any(it["label"] == label for it in self.items(offscreen=True)),
                what=f"{label} under {node} (clicked twice)",
                timeout=15,
            )

    def tick(self, node: str, label: str) -> None:
        """Make sure the plots' checkbox ``label`` under tree node ``node`` is ticked, as a person
        does: open the node if the box is not drawn, scroll to it, click it unless it is ticked
        already (a rig's ``[plots]`` ticks some when it opens)."""
        self.reveal(node, label)
        if self.value(label) != "True":
            self.click(label)
        wait_for(lambda: self.value(label) == "True", what=f"{label} under {node} ticked")

    def items(self, *, offscreen: bool = False) -> list[dict]:
        """What the panel shows now: every visible labelled widget (label, type, rect, value),
        from a widget map the panel wrote after this call; with ``offscreen``, also the widgets it
        drew scrolled out of view."""
        self.redrawn(timeout=1.0)
        items = self._map()
        if items is None:
            self.redrawn(timeout=1.0)
            items = json.loads(self.widget_map.read_text())
        return items if offscreen else [it for it in items if not it.get("offscreen")]

    def text(self, pattern: str, *, offscreen: bool = False) -> dict | None:
        """The first text on screen whose words match ``pattern`` (re.fullmatch), else None;
        ``offscreen``: also one scrolled out of view (a readout a person would scroll to)."""
        return next(
            (it for it in self.items(offscreen=offscreen) if re.fullmatch(pattern, it.get("text", ""), flags=re.S)),
            None,
        )

    def see_text(self, pattern: str, *, timeout: float = 30.0) -> dict:
        """The first text matching ``pattern`` (as ``text``), scrolled into view by wheel turns
        straight towards it, as a person who knows it is further down does."""
        px, py, _, _ = self.desktop.client_rect(self.panel)
        end = time.monotonic() + timeout
        while True:
            hit = self.text(pattern, offscreen=True)
            if hit is not None and not hit.get("offscreen"):
                return hit
            if time.monotonic() > end:
                raise AssertionError(f"no text like {pattern!r} came into view in {timeout:g} s")
            if hit is not None:
                self._scroll_towards(hit, px, py)

    def newest_time(self) -> float:
        """The newest instant the timeline keeps ("0.000 ... 12.345 s (...)", always in view under
        the plots): the simulated time, while the run goes on."""
        found = wait_for(lambda: self.text(r"[0-9.]+ \.\.\. [0-9.]+ s .*"), what="the timeline's range", timeout=10)
        return float(found["text"].split()[2])

    def run_for(self, seconds: float, *, timeout: float = 30.0) -> float:
        """Wait until the simulation has advanced ``seconds`` of simulated time from now (what a
        fixed sleep hoped for, also on a busy machine); the newest time then."""
        t0 = self.newest_time()
        return wait_for(
            lambda: (lambda t: t if t >= t0 + seconds else None)(self.newest_time()),
            what=f"the simulation to advance {seconds} s from t = {t0}",
            timeout=timeout,
        )

    def value(self, label: str, *, index: int = 0) -> str:
        """The value the ``index``-th widget labelled ``label`` shows (scrolled into view)."""
        for _ in range(3):  # the layout may move it out of view between the two looks (a rig opening)
            self.widget(label, index=index)
            hits = self._hits(self.items(offscreen=True), label)
            if len(hits) > index and not hits[index].get("offscreen"):
                return hits[index].get("value", "")
        raise AssertionError(f"widget '{label}' keeps leaving the panel's view")

    def _viewer_keys(self) -> list[int]:
        """The GLFW key codes the viewer has passed on to mjrig (a line each in the app's log)."""
        return [int(m) for m in re.findall(r"^mjrig: viewer key (\d+)$", self.output(), flags=re.M)]

    def key(self, spec: str, *, window: int | None = None) -> None:
        """Focus the window (default: the viewer) and press ``spec`` (xdotool syntax, e.g. ctrl+t);
        returns once the viewer has passed the key on to mjrig (or, for the panel, once it has
        drawn the frames after it). A key the viewer keeps for itself is waited for 3 s."""
        wid = window or self.viewer
        self.desktop.x("xdotool", "windowactivate", "--sync", str(wid))
        if wid != self.viewer or spec in _WM_KEYS:
            self.desktop.x("xdotool", "key", "--clearmodifiers", spec, check=True)
            self.redrawn(2, timeout=3.0)
            return
        before = len(self._viewer_keys())
        self.desktop.x("xdotool", "key", "--clearmodifiers", spec, check=True)
        code = _glfw_code(spec.split("+")[-1])
        try:
            wait_for(
                lambda: (lambda new: code in new if code else new)(self._viewer_keys()[before:]),
                what=f"the viewer to take {spec}",
                timeout=3.0,
                every=0.02,
            )
        except AssertionError:
            pass  # one of the viewer's own keys: nothing to wait for

    def drop(self, *paths: Path) -> None:
        """Drop files on the 3D viewer as a file manager does."""
        p = subprocess.run(
            [sys.executable, str(DROP_TOOL), str(self.viewer), *map(str, paths)],
            env=self.desktop.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert p.returncode == 0, f"the drop was refused: {p.stdout}{p.stderr}"

    def quit_discarding(self, *, timeout: float = 30.0) -> int:
        """Close the panel as a person does and, if the app asks about unsaved edits of the rig,
        answer "Quit without saving"; the exit code."""
        if self.proc.poll() is None:
            self.press_close(timeout=timeout)
            if self.proc.poll() is None:
                self.click("Quit without saving")
        return self.proc.wait(timeout)

    def press_close(self, *, window: int | None = None, timeout: float = 30.0) -> None:
        """Close the panel (or ``window``: the 3D view) as a person does (alt+F4, the window
        manager's close) until the app exits or asks about unsaved edits or a job under way: a
        close the window manager lost (see ``close``) is pressed again."""
        for attempt in range(2):
            self.desktop.x("xdotool", "windowactivate", "--sync", str(window or self.panel))
            self.desktop.x("xdotool", "key", "alt+F4")
            try:
                wait_for(
                    lambda: (
                        self.proc.poll() is not None
                        or self.visible("Quit without saving")
                        or self.visible("Stop it and quit")
                    ),
                    what="the app closing or asking about unsaved edits or a job under way",
                    timeout=timeout / 2,
                )
                return
            except AssertionError:
                if attempt:
                    raise

    def close(self, *, timeout: float = 30.0) -> int:
        """Close the panel window as a person does (the window manager's close), wait for exit."""
        if self.proc.poll() is None:
            self.desktop.x("xdotool", "windowactivate", "--sync", str(self.panel))
            self.desktop.x("xdotool", "key", "alt+F4")
            try:
                try:
                    self.proc.wait(timeout / 3)
                except subprocess.TimeoutExpired:
                    # A close pressed while the window manager was still busy with the window can
                    # be lost (seldom, on a loaded machine); a person presses again.
                    if self.desktop.windows("^mjrig$"):
                        self.desktop.x("xdotool", "windowactivate", "--sync", str(self.panel))
                        self.desktop.x("xdotool", "key", "alt+F4")
                    self.proc.wait(timeout * 2 / 3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"the app did not close:\n{self.output()}") from None
        self._log_file.close()
        return self.proc.returncode
