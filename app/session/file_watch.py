"""Hot reload: a thread that watches the open model file (and the files it includes) and the
scenario file, and queues a ``Reload`` when one of them changes on disk.

``watchfiles`` watches the files' folders (an editor that saves by writing a new file and
renaming it over the old one still counts) and waits until writing has settled (its debounce)
before it reports; ``FileWatch.follow(paths)`` changes what is watched (another model opened);
``enabled`` switches the reloading off without stopping the thread; ``ready`` is set once the
watch is up (a file written after it is seen). GUI-free.

Threading: the watcher's own thread only calls ``submit`` (the session's thread-safe command
queue) and sets ``ready``; ``follow``, ``enabled`` and ``close`` are for the simulation thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from mjrig import commands as C
from mjrig.runtime.errors import MjrigError
from mjrig.runtime.files.model_files import model_files as read_files

__all__ = ["FileWatch", "model_files", "watching"]


def model_files(model: Path) -> set[Path]:
    """``model`` and every file its MJCF ``<include file=...>`` elements name, recursively
    (``mjrig.runtime.files.model_files``); a binary ``.mjb`` is itself."""
    return {model.resolve()} | {p.resolve() for tag, p in read_files(model) if tag == "include"}


READY_MS = 100
"""How long (ms) the watch waits for a first change before it calls itself up (``FileWatch.ready``)
and looks again: watchfiles has added its watches to the folders by then, so a later write is seen."""


class FileWatch:
    """Queues ``Reload(changed="model")`` or ``Reload(changed="scenario")`` through ``submit``
    when a followed file changes (``debounce_ms`` after the last write)."""

    def __init__(self, submit: Callable[[C.Command], None], *, debounce_ms: int = 300) -> None:
        self.submit = submit
        self.debounce_ms = debounce_ms
        self.enabled = True
        self.ready = threading.Event()
        """Set once the watch of the files followed now is up: a change written after it is
        reported. A new Event with each ``follow`` and ``close``; never set while nothing is
        watched (no files, or none of their folders exists)."""
        self._model: frozenset[Path] = frozenset()
        self._scenario: Path | None = None
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def follow(self, model_paths: Iterable[Path], scenario: Path | None) -> None:
        """Watch these files from now on (the model's, and the scenario file when there is one)."""
        model = frozenset(p.resolve() for p in model_paths)
        scenario = scenario.resolve() if scenario is not None else None
        if (model, scenario) == (self._model, self._scenario) and self._thread is not None:
            return
        self.close()
        self._model, self._scenario = model, scenario
        files = set(model) | ({scenario} if scenario is not None else set())
        if not files:
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(files, self._stop, self.ready), name="mjrig-file-watch", daemon=True
        )
        self._thread.start()

    def _run(self, files: set[Path], stop: threading.Event, ready: threading.Event) -> None:
        import watchfiles

        folders = sorted({str(f.parent) for f in files if f.parent.is_dir()})
        if not folders:
            return
        try:
            for changes in watchfiles.watch(
                *folders,
                stop_event=stop,
                debounce=self.debounce_ms,
                step=50,
                watch_filter=lambda _c, p: Path(p).resolve() in files,
                raise_interrupt=False,
                recursive=False,
                rust_timeout=READY_MS,
                yield_on_timeout=True,
            ):
                # The first return (a change, or READY_MS without one: an empty set) comes from a
                # watcher that added its watches before it began to wait.
                ready.set()
                if not changes or not self.enabled:
                    continue
                paths = {Path(p).resolve() for _, p in changes}
                if self._scenario is not None and self._scenario in paths:
                    self.submit(C.Reload(changed="scenario"))
                elif paths & self._model:
                    self.submit(C.Reload(changed="model"))
        except Exception:  # noqa: BLE001 - a watcher that fails only stops watching
            return

    def close(self) -> None:
        """Stop watching (the thread ends within a moment)."""
        if self._stop is not None:
            self._stop.set()
        self._stop, self._thread = None, None
        self.ready = threading.Event()


def watching(files: FileWatch | None, *, on: bool, log: Callable[[str, str], None]) -> None:
    """Hot reload on or off (``SetHotReload``), said in one line; MjrigError for a session that
    watches no files (a headless one)."""
    if files is None:
        raise MjrigError("this session does not watch its files")
    files.enabled = on
    log(
        "info",
        "the model and scenario files are watched: a change on disk reloads them"
        if on
        else "the model and scenario files are no longer watched (File > Reload reads them)",
    )
