"""File drops on the 3D view, answered by mjrig's own X connection (X11 only).

GLFW answers a drag (the XDND protocol) from its event loop, which MuJoCo's viewer runs once per
frame it draws: on a model that draws slowly, a file manager's drag waits seconds for each answer,
and when the file manager gives up and closes its window, GLFW's late answer to that window is an
X error that Xlib's default handler makes fatal (the app exits mid-session; measured: a source
that drops and vanishes ends the app by SIGABRT, "BadWindow (invalid Window parameter)" from
X_SendEvent).

``DropTarget`` takes the protocol off GLFW: it opens a connection of its own (python-xlib, so an
error is a Python value, never an exit), puts an input-only window inside the viewer's window that
declares itself a drop target (``XdndAware``), names it the viewer window's proxy (``XdndProxy``,
what a file manager looks for first) and takes ``XdndAware`` off the viewer's window. Its thread
answers every message at once, whatever the viewer is doing, and hands the dropped paths to a
callback; the file is opened afterwards by the simulation thread, as File > Open does. The window
takes no input: a pointer or key event on it goes on to the viewer's window as before.

Threading: made on any thread (the viewer's render thread, as its window opens); its own thread
then owns the connection until ``close()``.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["DropTarget", "uri_list_paths"]

XDND_VERSION = 5
SELECTION_WAIT_S = 2.0
"""How long a drop waits for the source to hand over the file names before it is given up, s."""


def uri_list_paths(text: str) -> list[str]:
    """The local paths of a ``text/uri-list`` (RFC 2483: one URI a line, ``#`` comments): ``file:``
    URIs of this host (none, ``localhost`` or any host name: a file manager may name its own)."""
    paths = []
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        uri = urlsplit(line)
        if uri.scheme == "file" and uri.path:
            paths.append(unquote(uri.path))
    return paths


@dataclass
class _Drag:
    """The drag in progress: its source window, whether it offers file names, the drop's time."""

    source: int
    target: int
    offers_files: bool
    dropped_at: float | None = None


class DropTarget:
    """Answers file drops on the X window ``window_id`` (the viewer's) on a thread of its own;
    ``on_drop(paths)`` gets the local paths of each drop, ``on_problem(text)`` one line when a drop
    could not be taken (its source went away, or offered no files)."""

    def __init__(
        self,
        window_id: int,
        *,
        on_drop: Callable[[list[str]], None],
        on_problem: Callable[[str], None],
    ) -> None:
        from Xlib import X, Xatom, display

        self._X = X
        self.on_drop = on_drop
        self.on_problem = on_problem
        self._d = display.Display()
        self._d.set_error_handler(self._x_error)  # an answer to a window that went: never fatal
        atom = self._d.intern_atom
        self._atoms = {
            name: atom(name)
            for name in (
                "XdndAware",
                "XdndProxy",
                "XdndEnter",
                "XdndPosition",
                "XdndStatus",
                "XdndLeave",
                "XdndDrop",
                "XdndFinished",
                "XdndSelection",
                "XdndActionCopy",
                "XdndTypeList",
                "text/uri-list",
                "MJRIG_DROP",
            )
        }
        self._names = {v: k for k, v in self._atoms.items()}
        viewer = self._d.create_resource_object("window", window_id)
        # input-only, as large as any screen (the viewer's window clips it), no events asked for
        self._win = viewer.create_window(0, 0, 16384, 16384, 0, 0, window_class=X.InputOnly, visual=X.CopyFromParent)
        self._win.change_property(self._atoms["XdndAware"], Xatom.ATOM, 32, [XDND_VERSION])
        self._win.change_property(self._atoms["XdndProxy"], Xatom.WINDOW, 32, [self._win.id])
        viewer.change_property(self._atoms["XdndProxy"], Xatom.WINDOW, 32, [self._win.id])
        viewer.delete_property(self._atoms["XdndAware"])
        self._win.map()
        self._d.sync()
        self.window_id = int(self._win.id)
        self._drag: _Drag | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mjrig-drops", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop answering and close the connection (its window goes with it)."""
        self._stop.set()
        self._thread.join(2.0)

    def _x_error(self, *_: object) -> None:
        """python-xlib's handler of an error that no request waits for: an answer to a source
        window that closed meanwhile. Nothing to do: its drop, if it made one, ends with one line
        when its file names do not come (``_files_arrived``, ``_give_up_late_drop``)."""

    def _run(self) -> None:
        d = self._d
        try:
            while not self._stop.is_set():
                if not d.pending_events():
                    select.select([d.fileno()], [], [], 0.1)
                while not self._stop.is_set() and d.pending_events():
                    self._event(d.next_event())
                self._give_up_late_drop()
        except Exception as exc:  # noqa: BLE001 - the X server went away (the app is closing)
            if not self._stop.is_set():
                self.on_problem(f"file drops on the 3D view stopped: {type(exc).__name__}: {exc}")
        finally:
            try:
                d.close()
            except Exception:  # noqa: BLE001 - already gone
                pass

    def _event(self, ev: Any) -> None:  # python-xlib's events carry no types
        X = self._X
        etype = getattr(ev, "type", None)
        if etype == X.ClientMessage:
            name = self._names.get(ev.client_type)
            data = ev.data[1]
            target = int(ev.window.id)  # the window the source aims at
            if name == "XdndEnter":
                self._drag = _Drag(source=int(data[0]), target=target, offers_files=self._offers_files(data))
            elif name == "XdndPosition":
                self._position(int(data[0]), target)
            elif name == "XdndLeave":
                self._drag = None
            elif name == "XdndDrop":
                self._dropped(int(data[0]), int(data[2]))
        elif etype == X.SelectionNotify and ev.requestor.id == self._win.id:
            self._files_arrived(int(ev.property))

    def _offers_files(self, data: Sequence[int]) -> bool:
        """Whether the source of an XdndEnter offers ``text/uri-list`` (in the message, or in its
        XdndTypeList when it offers more than three types)."""
        uri_list = self._atoms["text/uri-list"]
        types = [int(t) for t in data[2:5]]
        if int(data[1]) & 1:
            try:
                source = self._d.create_resource_object("window", int(data[0]))
                prop = source.get_full_property(self._atoms["XdndTypeList"], self._X.AnyPropertyType)
                types = [int(t) for t in prop.value] if prop is not None else types
            except Exception:  # noqa: BLE001 - the source went away
                return False
        return uri_list in types

    def _exists(self, window: int) -> bool:
        """Whether ``window`` is still there (a source that closed its window after the drop: no
        answer is sent to it)."""
        try:
            self._d.create_resource_object("window", window).get_geometry()
        except Exception:  # noqa: BLE001 - BadWindow, BadDrawable: gone
            return False
        return True

    def _send(self, window: int, message: str, data: list[int]) -> None:
        from Xlib import protocol

        if message == "XdndFinished" and not self._exists(window):
            return  # the drop is over for a source that went: nothing to tell it
        dest = self._d.create_resource_object("window", window)
        ev = protocol.event.ClientMessage(window=dest, client_type=self._atoms[message], data=(32, data))
        dest.send_event(ev, event_mask=0, onerror=self._x_error)
        self._d.flush()

    def _position(self, source: int, target: int) -> None:
        drag = self._drag
        if drag is None or drag.source != source:  # a position without an enter: a new drag
            drag = self._drag = _Drag(source=source, target=target, offers_files=True)
        accept = drag.offers_files
        action = self._atoms["XdndActionCopy"] if accept else 0
        self._send(source, "XdndStatus", [drag.target, 1 if accept else 0, 0, 0, action])

    def _dropped(self, source: int, timestamp: int) -> None:
        drag = self._drag
        if drag is None or drag.source != source or not drag.offers_files:
            self._send(source, "XdndFinished", [drag.target if drag else self.window_id, 0, 0, 0, 0])
            self._drag = None
            if drag is not None and not drag.offers_files:
                self.on_problem("a drop on the 3D view offered no files (only files can be dropped there)")
            return
        drag.dropped_at = time.monotonic()
        self._win.convert_selection(
            self._atoms["XdndSelection"], self._atoms["text/uri-list"], self._atoms["MJRIG_DROP"], timestamp
        )
        self._d.flush()

    def _files_arrived(self, prop: int) -> None:
        drag, self._drag = self._drag, None
        if drag is None:
            return
        text = None
        if prop != self._X.NONE:
            try:
                got = self._win.get_full_property(prop, self._X.AnyPropertyType)
                self._win.delete_property(prop)
                value = got.value if got is not None else b""
                text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            except Exception:  # noqa: BLE001 - a property that went with its owner
                text = None
        paths = uri_list_paths(text) if text else []
        self._send(drag.source, "XdndFinished", [drag.target, 1 if paths else 0, self._atoms["XdndActionCopy"], 0, 0])
        if paths:
            self.on_drop(paths)
        else:
            self.on_problem("a file dropped on the 3D view did not arrive: its source (a file manager) let go of it")

    def _give_up_late_drop(self) -> None:
        """A drop whose source never handed over its file names within SELECTION_WAIT_S: forgotten."""
        drag = self._drag
        if drag is not None and drag.dropped_at is not None and time.monotonic() - drag.dropped_at > SELECTION_WAIT_S:
            self._drag = None
            self._send(drag.source, "XdndFinished", [drag.target, 0, 0, 0, 0])
            self.on_problem("a file dropped on the 3D view did not arrive: its source (a file manager) did not answer")
