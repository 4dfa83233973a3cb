"""A running rig's rows sent to a Rerun viewer as they come: the app's *Stream to Rerun*.

``LiveRerun(address=...)`` connects to a Rerun viewer (or a ``rerun --serve-grpc`` proxy, or a
``rerun --save FILE`` that writes what it receives) at ``address`` -- ``host:port``, a port alone,
or a ``rerun+http://host:port/proxy`` URL -- or, with no address, starts a viewer
(``rerun.spawn``, port 9876; an open viewer there is used). What it sends is what an exported
``.rrd`` holds (``rrd.stream``), on the same ``sim_time`` timeline:

- each rig opened (``open_rig``): a recording of its own in the viewer, named after the model,
  with the model's geometry (static, ``rrd.scene``) and a blueprint: the 3D view beside the rig's
  ``[plots]`` signals;
- each block of rows (``push``): every column as a scalar series, each body's pose.

A rig reset (simulated time going back) starts a new recording of the same rig, so two runs do not
draw over each other. The loads' arrows of an export are left out: their scale is the largest force
of a whole recording, which a running rig does not know yet.

Cost to the stepping: ``push`` appends the block (already the caller's copy) to a queue under a
lock; converting and sending happen on this module's own thread, which takes what gathered every
``GATHER_S`` and sends it as one block per series (each ``send_columns`` call costs the same for
one row as for thousands). Past ``QUEUE_ROWS`` rows waiting
(a viewer that cannot keep up), the oldest blocks are dropped and counted in ``dropped`` -- the
stream is a view, the recording (Parquet) is the record.

GUI-free (rerun-sdk, pyarrow, numpy; mujoco's model read for the geometry). Threading: ``push``,
``open_rig`` and ``close`` from any one thread (the simulation thread); the rest runs on the
stream's thread; ``rows``, ``dropped`` and ``error`` are read from any thread.
"""

from __future__ import annotations

import collections
import re
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mjrig.runtime.errors import ConfigError

__all__ = ["LiveRerun", "QUEUE_ROWS", "viewer_url"]

QUEUE_ROWS = 200_000
"""Rows waiting to be sent before the oldest blocks are dropped (at 200 rows a simulated second:
1,000 s of a run a viewer has fallen behind by)."""
GATHER_S = 0.5
"""s the stream's thread waits after each round of sends, for rows to gather into the next one."""
FLUSH_S = 5.0
"""s: how long closing waits for a viewer to take what was sent (one that hangs is let go)."""
DEFAULT_PORT = 9876
"""Where a viewer ``rerun.spawn`` starts listens (Rerun's own default)."""

_URL = re.compile(r"^rerun(\+https?)?://(?P<host>[^:/]+):(?P<port>\d+)(/proxy)?/?$")
_HOST_PORT = re.compile(r"^(?:(?P<host>[^:/\s]+):)?(?P<port>\d{1,5})$")


def viewer_url(address: str) -> tuple[str, str, int]:
    """(gRPC URL, host, port) of ``address`` (``host:port``, a port, or a ``rerun+http://`` URL);
    ConfigError (one line) for anything else."""
    text = address.strip()
    m = _URL.match(text) or _HOST_PORT.match(text)
    if m is None:
        raise ConfigError(f"Rerun address '{address}': give host:port, a port, or rerun+http://HOST:PORT/proxy")
    host, port = m.group("host") or "127.0.0.1", int(m.group("port"))
    if not 0 < port < 65536:
        raise ConfigError(f"Rerun address '{address}': port {port} is not 1-65535")
    return f"rerun+http://{host}:{port}/proxy", host, port


@dataclass(frozen=True)
class _Rig:
    model: Any  # mujoco.MjModel: its geometry, read on the stream's thread
    name: str
    plots: tuple[str, ...]


class LiveRerun:
    """Rows of a running rig sent to a Rerun viewer on a thread of its own (see the module)."""

    def __init__(self, *, address: str = "") -> None:
        try:
            import rerun as rr
        except ImportError:
            raise ConfigError("Stream to Rerun needs rerun-sdk: pip install 'mjrig[rerun]'") from None
        if address.strip():
            self.url, host, port = viewer_url(address)
            try:
                socket.create_connection((host, port), timeout=2.0).close()
            except OSError as exc:
                raise ConfigError(f"no Rerun viewer answers at {host}:{port} ({exc.strerror or exc})") from None
        else:
            self.url = f"rerun+http://127.0.0.1:{DEFAULT_PORT}/proxy"
            try:
                beside = Path(sys.executable).with_name("rerun")  # this environment's viewer, before PATH's
                rr.spawn(
                    port=DEFAULT_PORT,
                    connect=False,
                    executable_path=str(beside) if beside.is_file() else None,
                    recording=rr.RecordingStream("mjrig"),
                )
            except Exception as exc:  # noqa: BLE001 - rerun raises what its launcher met; said in one line
                raise ConfigError(f"could not start a Rerun viewer: {exc}") from None
        self.address = address.strip() or f"a new viewer (port {DEFAULT_PORT})"
        self.rows = 0
        """Rows sent so far."""
        self.dropped = 0
        """Rows dropped because the viewer fell behind (``QUEUE_ROWS``)."""
        self.error = ""
        """One line on what stopped the stream, or ""."""
        self._items: collections.deque[_Rig | tuple[list[str], np.ndarray] | None] = collections.deque()
        self._waiting = 0
        self._abandon = False  # set when closing gave up waiting: the stream's thread stops sending
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="mjrig-rerun-live", daemon=True)
        self._thread.start()

    # --- the caller's thread ---------------------------------------------------------------
    def open_rig(self, *, model: Any, name: str, plots: tuple[str, ...] = ()) -> None:
        """A rig was opened (or streaming began on one): ``model`` (a ``mujoco.MjModel``, not
        changed afterwards by the caller's stepping but by its edits: read at once here), named
        ``name``; ``plots``: its ``[plots]`` signals (names or globs) for the blueprint."""
        self._put(_Rig(model, name, tuple(plots)), 0)

    def push(self, columns: list[str], block: np.ndarray) -> None:
        """A block of rows (``columns`` as its names, the first ``time`` in s), the caller's own
        copy: queued, sent on the stream's thread."""
        self._put((columns, block), len(block))

    def close(self, *, timeout: float = 10.0) -> None:
        """Send what is queued (up to ``timeout`` s; what is left then is dropped), then
        disconnect; safe twice."""
        if self._thread.is_alive():
            self._put(None, 0)
            self._thread.join(timeout)
            self._abandon = True
            self._thread.join(FLUSH_S)

    def _put(self, item: _Rig | tuple[list[str], np.ndarray] | None, rows: int) -> None:
        with self._ready:
            self._items.append(item)
            self._waiting += rows
            while self._waiting > QUEUE_ROWS and len(self._items) > 1 and isinstance(self._items[0], tuple):
                _, old = self._items.popleft()  # type: ignore[misc]
                self._waiting -= len(old)
                self.dropped += len(old)
            self._ready.notify()

    # --- the stream's thread ---------------------------------------------------------------
    def _take(self) -> list[_Rig | tuple[list[str], np.ndarray] | None]:
        """Everything queued (waiting for one item), consecutive blocks of the same columns joined
        into one: a send per column covers them all, however far behind the stream is."""
        with self._ready:
            while not self._items:
                self._ready.wait()
            items, self._waiting = list(self._items), 0
            self._items.clear()
        out: list[_Rig | tuple[list[str], np.ndarray] | None] = []
        for item in items:
            last = out[-1] if out else None
            if isinstance(item, tuple) and isinstance(last, tuple) and last[0] == item[0]:
                out[-1] = (last[0], np.concatenate((last[1], item[1])))
            else:
                out.append(item)
        return out

    def _run(self) -> None:
        sender = _Sender(self.url)
        try:
            while not self._abandon:
                for item in self._take():
                    if item is None or self._abandon:
                        return
                    if isinstance(item, _Rig):
                        sender.rig(item)
                    else:
                        self.rows += sender.rows(*item)
                time.sleep(GATHER_S)  # rows gather meanwhile: fewer, larger sends
        except Exception as exc:  # noqa: BLE001 - the stream stops with one line; the run goes on
            self.error = f"Stream to Rerun stopped: {exc}"
        finally:
            sender.close()


def _scalar(entity: str) -> Any:
    """The record-batch field of a scalar series at ``entity``, tagged as ``send_columns`` tags
    ``Scalars`` (so a viewer draws it as a time series)."""
    import pyarrow as pa

    meta = {
        "rerun:entity_path": entity,
        "rerun:archetype": "rerun.archetypes.Scalars",
        "rerun:component": "Scalars:scalars",
        "rerun:component_type": "rerun.components.Scalar",
        "rerun:kind": "data",
    }
    return pa.field(f"/{entity}:Scalars:scalars", pa.float64(), metadata=meta)


class _Sender:
    """What the stream's thread keeps: the recording in the viewer, its plan of columns."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.rec: Any = None
        self.current: _Rig | None = None
        self.plan: Any = None
        self.columns: list[str] | None = None
        self.last = -np.inf  # the last row's simulated time (s)
        self.scene: Any = None  # the open rig's geometry (``rrd.scene.Scene``)
        # for the columns now: the series' columns, their record batch's schema, the poses' plan
        self.series: list[int] = []
        self.schema: Any = None
        self.poses: Any = None
        self.pose_columns: list[int] = []

    def rig(self, rig: _Rig) -> None:
        from mjrig.exports.rrd.scene import Scene, body_entity_names

        self.scene = Scene(rig.model, body_entity_names(rig.model))
        self._new_recording(rig)

    def _new_recording(self, rig: _Rig) -> None:
        """A recording of its own in the viewer for ``rig`` (opened, or reset), with its geometry."""
        import rerun as rr

        from mjrig.exports.rrd.scene import log_geometry

        self.close()
        self.rec = rr.RecordingStream("mjrig", recording_id=uuid.uuid4(), send_properties=True)
        self.rec.connect_grpc(self.url)
        self.rec.send_recording_name(rig.name)
        log_geometry(self.scene, self.rec)
        self.current, self.plan, self.columns, self.last = rig, None, None, -np.inf  # a blueprint again

    def rows(self, columns: list[str], block: np.ndarray) -> int:
        """Send a block, a new recording where simulated time goes back; the rows sent (0 before
        a rig is open)."""
        if self.current is None or not len(block):
            return 0
        t = block[:, columns.index("time")]
        back = np.flatnonzero(np.diff(np.concatenate(([self.last], t))) < 0)  # resets (in the block too)
        if back.size:
            first = int(back[0])
            sent = self._send(columns, block[:first]) if first else 0
            self._new_recording(self.current)  # the next run gets a recording of its own
            return sent + self.rows(columns, block[first:])
        self.last = float(t[-1])
        return self._send(columns, block)

    def _send(self, columns: list[str], block: np.ndarray) -> int:
        """Every series of the block in one record batch (a column per series, tagged as Rerun's
        ``Scalars``: one call, where a call per series costs ~0.3 ms each), then the poses; a
        rig is open (``rows``)."""
        import pyarrow as pa
        import rerun as rr

        from mjrig.exports.rrd.stream import TIMELINE, SeriesPlan, blueprint, plan_columns, send_batch

        assert self.current is not None
        if columns != self.columns:
            self.plan = plan_columns(columns, dict.fromkeys(columns, pa.float64()))
            self.columns = list(columns)
            view = blueprint(self.plan, list(self.current.plots), spatial=True)
            rr.send_blueprint(view, make_active=True, recording=self.rec)
            at = {c: j for j, c in enumerate(columns)}
            self.series = [at[c] for c, _ in self.plan.series]
            self.schema = pa.schema([pa.field(TIMELINE, pa.duration("ns")), *(_scalar(e) for _, e in self.plan.series)])
            self.poses = SeriesPlan(series=[], poses=self.plan.poses)
            self.pose_columns = sorted(
                {at[c] for cols in self.plan.poses.values() for c in cols.values()} | {at["time"]}
            )
        ns = pa.array(np.round(block[:, columns.index("time")] * 1e9).astype(np.int64)).cast(pa.duration("ns"))
        arrays = [ns, *(pa.array(block[:, j]) for j in self.series)]
        self.rec.send_record_batch(pa.RecordBatch.from_arrays(arrays, schema=self.schema), index=TIMELINE)
        if self.poses.poses:
            names = [columns[j] for j in self.pose_columns]
            send_batch(
                self.rec, self.poses, pa.RecordBatch.from_arrays([block[:, j] for j in self.pose_columns], names=names)
            )
        return len(block)

    def close(self) -> None:
        if self.rec is not None:
            self.rec.flush(timeout_sec=FLUSH_S)
            self.rec.disconnect()
            self.rec = None
