"""The app's *Stream to Rerun*: the live rows of the rig sent to a Rerun viewer while it runs.

A feature of the session. ``StreamToRerun(on=True, address=...)`` starts a ``LiveRerun``
(``mjrig.exports.rrd.live``: a viewer at ``address``, or a new one) and hands it the open rig
(its model, named after the model file, and the signals plotted now for its blueprint);
``StreamToRerun(on=False)`` stops it. While it streams, every block of rows the live plots get
(``Session.push_rows``: every signal, at the plots' rate) goes to it too, another rig opened or the
model read again starts a recording of its own in the viewer, and closing the session sends what is
queued and disconnects. What cannot start is one error line in the status log; the rig runs on.

Threading: the simulation thread (the session's), like every feature; the sending is the
``LiveRerun``'s own thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjrig import commands as C
from mjrig.runtime.errors import ConfigError
from mjrig.session.context import RigContext
from mjrig.session.feature import Feature, Handler

__all__ = ["RerunStream"]


class RerunStream(Feature):
    """The stream to Rerun, if one runs (see the module)."""

    def __init__(self, ctx: RigContext) -> None:
        self.ctx = ctx
        self.live: Any = None  # a LiveRerun while streaming (rerun-sdk imported only then)

    def handlers(self) -> dict[type[C.Command], Handler]:
        return {C.StreamToRerun: self.stream}

    def stream(self, cmd: C.StreamToRerun) -> None:
        """``StreamToRerun``: start (again, to ``cmd.address``) or stop."""
        self.close()
        if not cmd.on:
            return
        from mjrig.exports.rrd.live import LiveRerun

        try:
            self.live = LiveRerun(address=cmd.address)
        except ConfigError as exc:
            self.ctx.log("error", str(exc))
            return
        self._rig()
        self.ctx.log("info", f"streaming to Rerun: {self.live.address}")

    def _rig(self) -> None:
        rig, path = self.ctx.rig(), self.ctx.document.model_path
        if self.live is not None and rig is not None:
            name = path.stem if path is not None else "mjrig"
            self.live.open_rig(model=rig.model, name=name, plots=self.ctx.plotted())

    def push(self, columns: list[str], block: np.ndarray) -> None:
        """A block of the live plots' rows (the caller's copy): sent on when streaming."""
        if self.live is not None:
            self.live.push(columns, block)

    def rig_opened(self) -> None:
        self._rig()

    def model_changed(self) -> None:
        self._rig()

    def publish(self) -> C.RerunPart:
        live = self.live
        if live is None:
            return C.RerunPart()
        return C.RerunPart(address=live.address, rows=live.rows, dropped=live.dropped, error=live.error)

    def close(self) -> None:
        if self.live is not None:
            live, self.live = self.live, None
            live.close()
            self.ctx.log("info", f"Rerun stream closed: {live.rows} rows sent to {live.address}")
