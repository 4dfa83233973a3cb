"""Sweeps on a Ray cluster (``mjrig sweep --ray auto|ADDRESS``; ``pip install mjrig[ray]``).

Each trial is a Ray task (one CPU) calling ``mjrig.campaign.trial.run_trial``: a Ray worker process
builds the rig on its first task and reuses it for every later one, exactly as a local worker
does, so the rows are the same numbers as a local run's. Rows come back to this process, which
writes them (the results and resume logic are ``mjrig.campaign.sweep``'s). Per-trial recordings are
written by the workers to the same path: on a multi-machine cluster that folder must be shared.
At most ``4 x cluster CPUs`` tasks are in flight. Ray is imported only here, lazily.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from mjrig.campaign.ray_head import EXIT_GRACE_S, LOST_AFTER_S, PROBE_S, answers, lost_text, tell_guard
from mjrig.campaign.trial import SweepJob, Task, run_trial
from mjrig.runtime.errors import OUTPUT_FAILED, ClusterLost, ConfigError, MjrigError

__all__ = ["connect", "run_on_ray"]

CONNECT_TIMEOUT_S = 3.0
"""How long an address may take to answer before ``--ray`` gives up (s)."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray, an optional extra: pip install 'mjrig[ray]'") from None
    return ray


def connect(address: str) -> Any:
    """Join the Ray cluster at ``address`` (``auto``: the one this machine runs); returns ``ray``.

    An address that does not answer within CONNECT_TIMEOUT_S, or a cluster Ray cannot join, is
    a ConfigError of one line."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    if address != "auto":
        hostport = address.removeprefix("ray://")
        host, sep, port = hostport.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ConfigError(f"--ray {address}: expected 'auto' or HOST:PORT (the head's GCS address)")
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise ConfigError(f"--ray {address}: no Ray cluster answers there ({exc.strerror or exc})") from None
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR, configure_logging=False)
    except Exception as exc:  # ConnectionError, RuntimeError...: Ray's reasons are many
        text = " ".join(str(exc).split())[:300]
        raise ConfigError(f"--ray {address}: cannot join the Ray cluster: {text}") from None
    return ray


class HeadWatch(threading.Thread):
    """Knocks at the Ray head's GCS port every ``PROBE_S``; ``lost`` once it has not answered
    for ``LOST_AFTER_S`` (Ray itself would wait 60 s, then end the process with its own log).

    Once lost, this thread says so itself -- mjrig's one line first, then stderr silenced, so
    the lines Ray's client writes as it fails never follow it -- and gives the stepping thread
    ``EXIT_GRACE_S`` to end the command (exit 5 through ``ClusterLost``); when Ray holds that
    thread inside a call that waits on the head, it ends the process itself with exit 5. When Ray
    holds the whole process (the interpreter too), this thread cannot run: the CLI's guard process
    (``mjrig.cli.ray_guard``) ends it then. Everything finished is on disk by then: results parts
    and study storage survive any end."""

    def __init__(self, gcs_address: str, *, message: str) -> None:
        super().__init__(name="mjrig-ray-head-watch", daemon=True)
        host, _, port = gcs_address.rpartition(":")
        self.where = (host, int(port))
        self.lost = False
        self._message = message
        self._stop_event = threading.Event()

    def run(self) -> None:
        since = None
        while not self._stop_event.wait(PROBE_S):
            if answers(self.where):
                since = None
                continue
            since = since if since is not None else time.monotonic()
            if time.monotonic() - since >= LOST_AFTER_S:
                self.lost = True
                _say_and_silence(f"mjrig: {self._message}")
                tell_guard(said=True)
                if not self._stop_event.wait(EXIT_GRACE_S):
                    os._exit(OUTPUT_FAILED)
                return

    def stop(self) -> None:
        self._stop_event.set()


def _say_and_silence(line: str) -> None:
    """Write ``line`` on stderr, then point stderr at the null device: what Ray's client writes
    while it gives up on a lost head is noise after mjrig's line (it came before it, 8 runs in 10)."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in {2, sys.stderr.fileno()}:  # Python's stderr may have a descriptor of its own (``ray_guard``)
            os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError):
        pass


_GCS: dict[str, str] = {}
"""The GCS address (HOST:PORT) of the head each ``--ray`` address joined, in this process."""


def _lost(address: str) -> ClusterLost:
    return ClusterLost(lost_text(address))


def run_on_ray(
    job: SweepJob,
    todo: Collection[Task],
    keep: Callable[[dict[str, Any]], None],
    *,
    address: str,
    again: bool = False,
    stay: bool = False,
) -> None:
    """Run trials ``todo`` of ``job`` as Ray tasks on the cluster at ``address``; ``keep(row)``
    gets each row as it finishes. Disconnects at the end. OutputError (one line) when the head
    stops answering: the rows kept so far stay, the command run again resumes. ``again``: the
    same command ran trials there before (a study's next batch), so a head that no longer
    answers was lost, not mistyped. ``stay``: stay connected for more calls (a fit's batches;
    the caller disconnects, ``ray.shutdown()``)."""
    # The head's GCS address once known (a study's or a fit's next batch): the watch starts
    # before any call to Ray, which would wait on a head lost between two batches.
    gcs = _GCS.get(address)
    watch = HeadWatch(gcs, message=lost_text(address)) if gcs is not None else None
    if watch is not None:
        watch.start()
    try:
        ray = connect(address)
    except ConfigError:
        if watch is not None:
            watch.stop()
        if not again:
            raise
        raise _lost(address) from None
    if watch is None:
        gcs = _GCS[address] = ray.get_runtime_context().gcs_address
        tell_guard(gcs=gcs)  # the guard process knocks at it too (``mjrig.cli.ray_guard``)
        watch = HeadWatch(gcs, message=lost_text(address))
        watch.start()
    try:
        _run_tasks(ray, job, todo, keep, watch, address)
    except BaseException:
        _leave(ray, watch, stay=stay)
        raise
    if not _leave(ray, watch, stay=stay):
        raise _lost(address)


def _run_tasks(
    ray: Any,
    job: SweepJob,
    todo: Collection[Task],
    keep: Callable[[dict[str, Any]], None],
    watch: HeadWatch,
    address: str,
) -> None:
    """The trials as Ray tasks, at most 4 x the cluster's CPUs in flight; ClusterLost when the
    head stops answering."""
    if not todo:
        return
    task = ray.remote(num_cpus=1, max_retries=2)(run_trial)
    job_ref = ray.put(job)
    window = 4 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    queue = iter(todo)
    pending = [task.remote(job_ref, i) for _, i in zip(range(window), queue)]
    while pending:
        finished, pending = ray.wait(pending, num_returns=1, timeout=PROBE_S)
        if watch.lost:
            raise _lost(address)
        for ref in finished:
            try:
                keep(ray.get(ref))
            except ray.exceptions.RayError as exc:
                raise MjrigError(
                    f"a Ray task failed: {' '.join(str(exc).split())[:300]}; run the same command again to resume"
                ) from None
            nxt = next(queue, None)
            if nxt is not None:
                pending.append(task.remote(job_ref, nxt))


def _leave(ray: Any, watch: HeadWatch, *, stay: bool) -> bool:
    """Stop watching and, unless ``stay``, disconnect; False (and no disconnecting: Ray's own
    would wait 60 s for the head, then end the process) when the head no longer answers, as
    when it was killed just as the last trials came back, before the watch could tell."""
    watch.stop()
    if not ray.is_initialized():
        return not watch.lost
    if watch.lost or (not stay and not answers(watch.where)):
        atexit.unregister(ray.shutdown)  # it would wait for the head that is gone
        return False
    if not stay:
        ray.shutdown()
    return True


def disconnect(address: str) -> None:
    """Leave the Ray cluster at ``address`` that ``run_on_ray(stay=True)`` stayed joined to
    (nothing when not joined). A head that no longer answers is not waited for: Ray's own
    disconnecting would wait 60 s for it, then end the process."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    gcs = _GCS.get(address)
    host, _, port = (gcs or "").rpartition(":")
    if host and port.isdigit() and not answers((host, int(port))):
        atexit.unregister(ray.shutdown)
        return
    ray.shutdown()


os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never phone home from a sweep
