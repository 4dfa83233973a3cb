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
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
DROP_TOOL = Path(__file__).with_name("xdnd_drop.py")

Rect = tuple[int, int, int, int]


def need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")


def _truthy(value) -> bool:
    if value is None or value is False:
        return False
    try:
        return bool(value)
    except (TypeError, ValueError):  # e.g. a DataFrame: having one is enough
        return True


def wait_for(pred, *, timeout: float = 30.0, what: str = "condition", every: float = 0.1):
    end = time.monotonic() + timeout
    while True:
        value = pred()
        if _truthy(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


class Desktop:
    """An Xvfb screen WIDTHxHEIGHT with openbox managing its windows."""

    def __init__(self, width: int, height: int) -> None:
        need("Xvfb", "openbox", "xdotool", "xwininfo", "xprop", "import")
        self.size = (width, height)
        read_fd, write_fd = os.pipe()
        self._xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{width}x{height}x24",
                                       "-nolisten", "tcp"], pass_fds=(write_fd,),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_fd)
        number = b""
        end = time.monotonic() + 15
        while not number.endswith(b"\n") and time.monotonic() < end:
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
        os.close(read_fd)
        self.display = f":{number.decode().strip()}"
        self.env = {**os.environ, "DISPLAY": self.display}
        self.env.pop("MUJOCO_GL", None)
        # openbox now and then comes up slowly or not at all on a busy machine: start it again once.
        for attempt in range(2):
            self._wm = subprocess.Popen(["openbox", "--sm-disable"], env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: "_NET_SUPPORTING_WM_CHECK(WINDOW)" in self.x("xprop", "-root"), what="openbox",
                         timeout=20)
                break
            except AssertionError:
                self._wm.kill()
                self._wm.wait()
                if attempt:
                    raise

    def x(self, *cmd: str, check: bool = False) -> str:
        """Run an X tool on this screen; its stdout."""
        p = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=30)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
        return p.stdout

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
        raw = subprocess.run(["import", "-window", str(wid), "-depth", "8", "rgb:-"], env=self.env,
                             capture_output=True, timeout=30, check=True).stdout
        assert len(raw) == w * h * 3, f"a {w}x{h} window gave {len(raw)} bytes"
        return np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)

    def close(self) -> None:
        for p in (self._wm, self._xvfb):
            p.kill()
            p.wait()


def read_recording(path: Path) -> pl.DataFrame | None:
    """The recording at ``path``, or None while it is not there or still being finished."""
    try:
        return pl.read_parquet(path)
    except Exception:  # noqa: BLE001 - not there yet, or still merging
        return None


class App:
    """The real app as a person starts it, in its own process, on ``desktop``."""

    def __init__(self, desktop: Desktop, *args: str | os.PathLike, home: Path, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.desktop = desktop
        self.home = home
        self.cwd = cwd or home / "work"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.widget_map = home / "widgets.json"
        self.widget_map.unlink(missing_ok=True)
        self.log = home / "app.log"
        e = {**desktop.env, "XDG_CONFIG_HOME": str(home / "config"), "MJRIG_WIDGET_MAP": str(self.widget_map),
             "PYTHONPATH": str(REPO), "MJRIG_VERBOSE": "1", **(env or {})}
        self._log_file = open(self.log, "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "mjrig", *map(str, args), "--exit-after", "480"],
                                     cwd=self.cwd, env=e, stdout=self._log_file, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.viewer = wait_for(lambda: self._one("^MuJoCo"), what="the 3D viewer window", timeout=60)
        self.panel = wait_for(lambda: self._one("^mjrig$"), what="the panel window", timeout=60)
        wait_for(self.widget_map.exists, what="the panel's widgets", timeout=30)
        self._settle()

    def _settle(self, timeout: float = 15.0) -> None:
        """Until the panel's layout holds still: the same widgets in the same places in two widget
        maps in a row (texts aside: their widths follow their words). A panel still laying itself
        out would take a click elsewhere."""
        def layout():
            try:
                items = json.loads(self.widget_map.read_text())
            except (OSError, ValueError):
                return None
            return [(it["label"], it["type"], it["rect"]) for it in items if it["type"] != "mvText"]
        end = time.monotonic() + timeout
        last = layout()
        while time.monotonic() < end and self.redrawn(timeout=2.0):
            now = layout()
            if now and now == last:
                return
            last = now

    def _one(self, regex: str) -> int | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"the app exited with {self.proc.returncode}:\n{self.output()}")
        found = self.desktop.windows(regex)
        return found[0] if found else None

    def _map_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.widget_map.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def redrawn(self, times: int = 1, *, timeout: float = 5.0) -> bool:
        """Wait until the panel has written its widget map ``times`` times from now (it does
        every 5th frame, ~6 times a second): what it then shows was drawn after this call.
        False (no error) when the panel did not within ``timeout`` s: it is busy or gone."""
        end = time.monotonic() + timeout
        for _ in range(times):
            stamp = self._map_stamp()
            while self._map_stamp() == stamp:
                if time.monotonic() > end or self.proc.poll() is not None:
                    return False
                time.sleep(0.01)
        return True

    def output(self) -> str:
        if not self._log_file.closed:
            self._log_file.flush()
        return self.log.read_text(errors="replace")

    # --- real input -----------------------------------------------------------------------
    def _find(self, label: str, index: int) -> list[int] | None:
        try:
            items = json.loads(self.widget_map.read_text())
        except (OSError, ValueError):
            return None
        hits = [it["rect"] for it in items if it["label"] == label]
        return hits[index] if len(hits) > index else None

    def widget(self, label: str, *, index: int = 0, timeout: float = 60.0) -> Rect:
        """Screen rectangle of the panel's ``index``-th visible widget labelled ``label``; if it
        is not in view, scrolls the controls with the mouse wheel, as a person would: to the top,
        then down step by step."""
        px, py, _, _ = self.desktop.client_rect(self.panel)
        end = time.monotonic() + timeout
        for attempt in range(400):
            found = self._find(label, index)
            if found:
                x, y, w, h = found
                return px + x, py + y, w, h
            if time.monotonic() > end:
                break
            if attempt >= 3:
                self.desktop.x("xdotool", "mousemove", "--sync", str(px + 120), str(py + 120))
                if attempt == 3:
                    self.desktop.x("xdotool", "click", "--repeat", "60", "--delay", "5", "4")
                else:
                    self.desktop.x("xdotool", "click", "--repeat", "3", "--delay", "20", "5")
                self.redrawn(2, timeout=3.0)  # look at the panel as scrolled, however slow its frames
            else:
                time.sleep(0.3)  # a widget just coming (a dialog opening) shows within 3 tries
        raise AssertionError(f"widget '{label}' not found on the panel")

    def click(self, label: str, *, index: int = 0) -> None:
        x, y, w, h = self.widget(label, index=index)
        self.desktop.x("xdotool", "mousemove", "--sync", str(x + w // 2), str(y + h // 2), check=True)
        time.sleep(0.1)  # the pointer rests over the widget for a few panel frames, so ImGui sees the hover
        self.desktop.x("xdotool", "click", "1", check=True)
        time.sleep(0.3)  # input pacing: the window manager's focus change and the panel's callbacks settle

    def double_click(self, label: str, *, index: int = 0) -> None:
        x, y, w, h = self.widget(label, index=index)
        self.desktop.x("xdotool", "mousemove", "--sync", str(x + w // 2), str(y + h // 2), check=True)
        time.sleep(0.1)  # the pointer rests over the widget first (see click)
        self.desktop.x("xdotool", "click", "--repeat", "2", "--delay", "80", "1", check=True)
        time.sleep(0.3)  # input pacing (see click)

    def type_into(self, label: str, text: str, *, enter: bool = False, index: int = 0) -> None:
        """Click the ``index``-th input field known by ``label``, select what is in it, and type
        ``text`` (then Enter)."""
        self.click(label, index=index)
        self.replace_text(text)
        if enter:
            self.desktop.x("xdotool", "key", "Return", check=True)
        time.sleep(0.4)  # the panel takes in typed keys a frame at a time, behind xdotool

    def replace_text(self, text: str) -> None:
        """Select all in the focused input (Ctrl+A) and type ``text`` over it. Ctrl is let go a
        moment before typing, as a hand does: a letter in the very frame of Ctrl's release counts
        as Ctrl+letter (a quick Ctrl+S), so "stop" would open Save."""
        # Held keys, slowly: the panel reads the keyboard once a frame (30 frames/s).
        self.desktop.x("xdotool", "keydown", "ctrl", "sleep", "0.15", "key", "a", "sleep", "0.15", "keyup", "ctrl",
                       check=True)
        time.sleep(0.4)
        self.desktop.x("xdotool", "type", "--delay", "15", text, check=True)

    def pick_first(self, combo: str) -> None:
        """Open a combo box and click its first entry. A combo at the foot of the window opens
        its list upwards, so the controls are scrolled first to give it room below, as a person
        would; where they cannot scroll further, the entry above the combo is clicked."""
        px, py, _, ph = self.desktop.client_rect(self.panel)
        x, y, w, h = self.widget(combo)
        if y + h + 60 > py + ph:
            self.desktop.x("xdotool", "mousemove", "--sync", str(px + 120), str(py + 120))
            self.desktop.x("xdotool", "click", "--repeat", "3", "--delay", "20", "5")
            self.redrawn(timeout=1.0)
            x, y, w, h = self.widget(combo)
        self.click(combo)
        below = y + h + 60 <= py + ph
        self.desktop.x("xdotool", "mousemove", "--sync", str(x + 30), str(y + h + 12 if below else y - 12), check=True)
        self.desktop.x("xdotool", "click", "1", check=True)
        time.sleep(0.4)  # input pacing: the combo closes and its callback runs

    def visible(self, label: str) -> bool:
        """Whether a widget labelled ``label`` is on screen now (no scrolling)."""
        return any(it["label"] == label for it in self.items())

    def reveal(self, node: str, label: str) -> None:
        """Expand tree node ``node`` unless ``label`` (inside it) already shows."""
        if not self.visible(label):
            self.click(node)

    def items(self) -> list[dict]:
        """What the panel shows now: every visible labelled widget (label, type, rect, value),
        from a widget map the panel wrote after this call."""
        self.redrawn(timeout=1.0)
        try:
            return json.loads(self.widget_map.read_text())
        except (OSError, ValueError):
            self.redrawn(timeout=1.0)
            return json.loads(self.widget_map.read_text())

    def text(self, pattern: str) -> dict | None:
        """The first text on screen whose words match ``pattern`` (re.fullmatch), else None."""
        return next((it for it in self.items() if re.fullmatch(pattern, it.get("text", ""), flags=re.S)), None)

    def newest_time(self) -> float:
        """The newest instant the timeline keeps ("0.000 ... 12.345 s (...)", always in view under
        the plots): the simulated time, while the run goes on."""
        found = wait_for(lambda: self.text(r"[0-9.]+ \.\.\. [0-9.]+ s .*"), what="the timeline's range", timeout=10)
        return float(found["text"].split()[2])

    def run_for(self, seconds: float, *, timeout: float = 30.0) -> float:
        """Wait until the simulation has advanced ``seconds`` of simulated time from now (what a
        fixed sleep hoped for, also on a busy machine); the newest time then."""
        t0 = self.newest_time()
        return wait_for(lambda: (lambda t: t if t >= t0 + seconds else None)(self.newest_time()),
                        what=f"the simulation to advance {seconds} s from t = {t0}", timeout=timeout)

    def value(self, label: str, *, index: int = 0) -> str:
        for _ in range(3):  # the layout may move it out of view between the two looks (a rig opening)
            self.widget(label, index=index)
            hits = [it for it in self.items() if it["label"] == label]
            if len(hits) > index:
                return hits[index].get("value", "")
        raise AssertionError(f"widget '{label}' keeps leaving the panel's view")

    def key(self, spec: str, *, window: int | None = None) -> None:
        """Focus the window (default: the viewer) and press ``spec`` (xdotool syntax, e.g. ctrl+t)."""
        wid = str(window or self.viewer)
        self.desktop.x("xdotool", "windowactivate", "--sync", wid)
        time.sleep(0.2)  # GLFW learns of the focus change before the key comes
        self.desktop.x("xdotool", "key", "--clearmodifiers", spec, check=True)
        time.sleep(0.4)  # input pacing: the viewer handles the key on its next frames

    def drop(self, *paths: Path) -> None:
        """Drop files on the 3D viewer as a file manager does."""
        p = subprocess.run([sys.executable, str(DROP_TOOL), str(self.viewer), *map(str, paths)],
                           env=self.desktop.env, capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, f"the drop was refused: {p.stdout}{p.stderr}"

    def quit_discarding(self, *, timeout: float = 30.0) -> int:
        """Close the panel as a person does and, if the app asks about unsaved edits of the rig,
        answer "Quit without saving"; the exit code."""
        if self.proc.poll() is None:
            for attempt in range(2):  # a close the window manager lost (see close) is pressed again
                self.desktop.x("xdotool", "windowactivate", "--sync", str(self.panel))
                self.desktop.x("xdotool", "key", "alt+F4")
                try:
                    wait_for(lambda: self.proc.poll() is not None or self.visible("Quit without saving"),
                             what="the app closing or asking about unsaved edits", timeout=timeout / 2)
                    break
                except AssertionError:
                    if attempt:
                        raise
            if self.proc.poll() is None:
                self.click("Quit without saving")
        return self.proc.wait(timeout)

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
                raise AssertionError(f"the app did not close:\n{self.output()}")
        self._log_file.close()
        return self.proc.returncode
