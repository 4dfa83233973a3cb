"""Drop latency: how long a file manager dragging a file over the 3D view waits for an answer.

Starts the app (``python -m mjrig MODEL``, no frame-rate ceiling on the view) on a private Xvfb
screen with openbox (the GUI tests' ``Desktop`` and ``App``) for a 10-body and a 1,000-body model (``mjrig.models.scale.many_bodies``) and, as a drag
source, sends ``XdndEnter`` + ``XdndPosition`` and times the ``XdndStatus`` that answers it, then
``XdndLeave`` (nothing is dropped: the model stays). Two targets on the same app, interleaved:

- mjrig's drop target (``mjrig.desktop.xdnd_target.DropTarget``, what a file manager finds through
  the viewer window's ``XdndAware``/``XdndProxy``), answered on a thread of its own;
- the baseline: GLFW's own XDND handling, reached by sending to the viewer's GLFW window itself,
  which answers from MuJoCo's render loop once per frame the view draws.

Prints, per model, the median and 95th percentile of each in ms, and GLFW / mjrig.

    python benchmarks/drop_latency.py [--drags 20] [--bodies 10 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from Xlib import X, display, protocol

from mjrig.models.scale import many_bodies

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: its GUI test harness
from tests.gui.desktop import App, Desktop  # noqa: E402


def _proxy(d: display.Display, viewer: int) -> int:
    """The window a file manager sends to: the viewer's XdndProxy."""
    win = d.create_resource_object("window", viewer)
    prop = win.get_full_property(d.intern_atom("XdndProxy"), X.AnyPropertyType)
    if prop is None:
        raise SystemExit("the viewer window names no XdndProxy: mjrig's drop target is not there")
    return int(prop.value[0])


def _answer_ms(d: display.Display, source, target: int) -> float:
    """Enter + Position to ``target``, the wait for its Status (ms); then Leave."""
    dest = d.create_resource_object("window", target)

    def send(name: str, data: list[int]) -> None:
        ev = protocol.event.ClientMessage(window=dest, client_type=d.intern_atom(name), data=(32, data))
        dest.send_event(ev, event_mask=0)
        d.flush()

    status = d.intern_atom("XdndStatus")
    t0 = time.perf_counter()
    send("XdndEnter", [source.id, 5 << 24, d.intern_atom("text/uri-list"), 0, 0])
    send("XdndPosition", [source.id, 0, (100 << 16) | 100, X.CurrentTime, d.intern_atom("XdndActionCopy")])
    end = t0 + 30.0
    while time.perf_counter() < end:
        while d.pending_events():
            ev = d.next_event()
            if ev.type == X.ClientMessage and ev.client_type == status:
                took = (time.perf_counter() - t0) * 1e3
                send("XdndLeave", [source.id, 0, 0, 0, 0])
                return took
        time.sleep(0.0005)
    raise SystemExit(f"no XdndStatus from window {target:#x} within 30 s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drags", type=int, default=20)
    ap.add_argument("--bodies", type=int, nargs="+", default=[10, 1000])
    args = ap.parse_args()
    desktop = Desktop(1280, 800)
    try:
        for bodies in args.bodies:
            with tempfile.TemporaryDirectory() as tmp:
                model = Path(tmp) / f"bodies_{bodies}.xml"
                model.write_text(many_bodies(bodies))
                app = App(desktop, model, home=Path(tmp), view_fps=None)
                try:
                    time.sleep(3.0)  # the model running and drawn
                    d = display.Display(desktop.display)
                    source = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
                    proxy = _proxy(d, app.viewer)
                    times: dict[str, list[float]] = {"mjrig": [], "GLFW": []}
                    for _ in range(args.drags):
                        for name, target in (("mjrig", proxy), ("GLFW", app.viewer)):
                            times[name].append(_answer_ms(d, source, target))
                            time.sleep(0.05)
                    d.close()
                finally:
                    app.close()
            row = []
            for name in ("mjrig", "GLFW"):
                t = sorted(times[name])
                row.append(f"{name} median {statistics.median(t):8.1f} ms  p95 {t[int(0.95 * (len(t) - 1))]:8.1f} ms")
            ratio = statistics.median(times["GLFW"]) / statistics.median(times["mjrig"])
            print(f"{bodies:5d} bodies: " + " | ".join(row) + f" | GLFW / mjrig {ratio:6.1f}", flush=True)
    finally:
        desktop.close()


if __name__ == "__main__":
    main()
