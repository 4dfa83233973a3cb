"""The rig's load laws as compiled code: one MuJoCo passive-force callback, without the GIL.

MuJoCo calls ``mjcb_passive`` inside ``mj_passive`` (once per ``mj_step``, at every RK4 stage,
and in ``mj_forward``), before it reads ``qfrc_applied``. The callback here is compiled by
numba (``cfunc``) and handed to MuJoCo as a C function pointer, so MuJoCo calls it without
Python: in ``mj_step(nstep=...)`` blocks and in ``mujoco.batch`` rollouts on every thread.

Which laws it evaluates, and with which numbers, is data: a *table* of float64 words (layout
below, filled by ``native_table``) in one pool allocated once per process. Each simulation
names its tables in the last ``USERDATA_WORDS`` words of its ``MjData.userdata``: ``MAGIC``,
where the rig's numeric (the pool's address and size) starts, the laws' table's offset in the
pool (words) and generation, and the same of a recorder table (the ``mjcb_control`` callback
writes telemetry rows while a block of steps runs: ``native_rows``). A simulation without them
(any other model, or a reset one) gets no call's work; a generation that no longer matches
(the table was freed or reused) gets none either, so a stale state restored into a
``MjData`` never reads a stale table. The callback overwrites ``qfrc_applied`` with the
table's loads: what mjrig's Python path writes there.

Struct offsets of ``mjData``/``mjModel`` fields are found once per MuJoCo build (``native_probe``) by matching
the arrays' addresses (``fields``), never hard-coded, and kept in the cache folder.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import math
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjrig.runtime.compiled import passive_route
from mjrig.runtime.compiled.native_layout import MAGIC, POOL_WORDS, USERDATA, USERDATA_WORDS
from mjrig.runtime.compiled.native_probe import PASSIVE, cached_offsets, library, write_cached
from mjrig.runtime.stops_held import stops_held

__all__ = ["kernel", "why_not", "cache_folder", "encode"]

_lock = threading.Lock()
_kernel: Any = None
_why_not = ""
"""Why the callbacks could not be made in this process (empty while they could, or were not tried)."""


def kernel() -> Any:
    """The compiled callbacks (``.pool``, ``.fields``, ``.install()``, ``.install_recorder()``),
    compiled on first use (about a second); None where numba is missing or ``MJRIG_COMPILED=0``
    (``why_not()`` says why)."""
    global _kernel, _why_not
    if os.environ.get("MJRIG_COMPILED", "1") == "0":  # the Python path, everywhere
        return None
    with _lock:
        if _kernel is None:
            try:
                with stops_held():  # a stop inside numba's compilation would segfault at exit
                    _kernel = _Kernel()
            except ImportError as exc:
                _kernel, _why_not = False, f"{type(exc).__name__}: {exc}"
    return _kernel or None


def why_not() -> str:
    """Why ``kernel()`` gave None in this process for a reason other than ``MJRIG_COMPILED=0``
    (numba missing, a MuJoCo build whose fields could not be placed), or ""."""
    return _why_not


def _install(get: Any, set_: Any, pointer: Any) -> None:
    """Set MuJoCo's callback (``get``/``set_``) to ``pointer`` unless it is that already."""
    current = get()
    if current is None or ctypes.cast(current, ctypes.c_void_p).value != ctypes.cast(pointer, ctypes.c_void_p).value:
        set_(pointer)


def cache_folder() -> Path:
    """Where compiled code is kept between runs: ``$XDG_CACHE_HOME/mjrig`` (``~/.cache/mjrig``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mjrig"


def _digest(fields: dict[str, int]) -> str:
    """A digest of the offsets and of the code the callbacks are made of (so nothing stale is
    reused), read from the source files: numba is not imported for it."""
    here = Path(__file__).parent
    return hashlib.sha256(
        json.dumps(fields, sort_keys=True).encode()
        + b"".join(path.read_bytes() for path in sorted(here.glob("_native_*.py")))
        + (here / "native_layout.py").read_bytes()
        + Path(__file__).read_bytes()
        + mujoco.__version__.encode()
    ).hexdigest()[:16]


def _callbacks(folder: Path, fields: dict[str, int], digest: str) -> Any:
    """The module of the two cfuncs for these offsets, written into ``folder`` and imported
    (compiled by numba: its helpers come from numba's cache, the cfuncs are compiled afresh so
    that ``_native_object`` can keep their machine code)."""
    from mjrig.runtime.compiled import _native_code  # imports numba (ImportError without it)

    path = folder / f"callbacks_{digest}.py"
    source = _native_code.CALLBACKS.format(**fields)
    if not path.is_file() or path.read_text(encoding="utf-8") != source:
        write_cached(path, source)
    if not path.is_file():
        path = Path(tempfile.mkdtemp(prefix="mjrig-callbacks-")) / path.name
        path.write_text(source, encoding="utf-8")
    name = f"mjrig_callbacks_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module  # numba's cache finds a function's module by its name
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _addresses(folder: Path, fields: dict[str, int]) -> tuple[dict[str, int], Any]:
    """({"passive": address, "control": address}, what keeps the code alive): the machine code
    ``_native_object`` kept, else compiled by numba now (and kept for the next process)."""
    from mjrig.runtime.compiled import _native_object

    digest = _digest(fields)
    stem = f"callbacks_{digest}"
    try:
        tag = _native_object.key()
    except ImportError:
        tag = ""
    loaded = _native_object.load(folder, stem, tag) if tag else None
    if loaded is not None:
        return loaded
    os.environ.setdefault("NUMBA_CACHE_DIR", str(folder / "numba"))  # read when numba is imported
    module = _callbacks(folder, fields, digest)
    cfuncs = {"passive": module.passive, "control": module.control}
    if tag:
        _native_object.save(folder, stem, cfuncs, tag)
    return {k: int(cf.address) for k, cf in cfuncs.items()}, cfuncs


class _Kernel:
    def __init__(self) -> None:
        folder = cache_folder() / "compiled"
        self.fields = cached_offsets(folder)
        addresses, self._code = _addresses(folder, self.fields)
        self.pool = np.zeros(POOL_WORDS)
        lib = ctypes.CDLL(str(library()))
        self.applyft = int(ctypes.cast(lib.mj_applyFT, ctypes.c_void_p).value or 0)
        self._pointer = ctypes.cast(addresses["passive"], PASSIVE)
        self._control = ctypes.cast(addresses["control"], PASSIVE)
        libc = ctypes.CDLL(None)
        self.clock_gettime = int(ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value or 0)
        self.free: list[tuple[int, int]] = [(0, POOL_WORDS)]
        self.generation = 0

    def install(self) -> None:
        """Make the laws' callback MuJoCo's ``mjcb_passive`` (process-wide; a no-op for data
        that names no table)."""
        _install(passive_route.installed, passive_route.install, self._pointer)  # beside routed Python steps

    def install_recorder(self) -> None:
        """Make the row callback MuJoCo's ``mjcb_control`` (process-wide; it records only into a
        recorder table a simulation names and that is armed)."""
        _install(mujoco.get_mjcb_control, mujoco.set_mjcb_control, self._control)

    def name_pool(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Write the pool's address and size into the rig's numeric of ``model`` and where it is
        into ``data``'s userdata (with MAGIC): what the callbacks check before reading a table."""
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, USERDATA)
        adr = int(model.numeric_adr[i])
        model.numeric_data[adr + 1], model.numeric_data[adr + 2] = float(self.pool.ctypes.data), float(POOL_WORDS)
        ud = data.userdata
        ud[-USERDATA_WORDS], ud[1 - USERDATA_WORDS] = MAGIC, float(adr)

    def allocate(self, words: int) -> tuple[int, int] | None:
        """(offset, generation) of a fresh table of ``words`` in the pool, or None when full."""
        with _lock:
            for i, (start, size) in enumerate(self.free):
                if size >= words:
                    self.free[i] = (start + words, size - words)
                    self.generation += 1
                    self.pool[start : start + words] = 0.0
                    self.pool.view(np.int64)[start] = self.generation
                    return start, self.generation
        return None

    def release(self, start: int, words: int) -> None:
        """Give a table's words back; its generation is cleared so no state names it any more."""
        with _lock:
            self.pool.view(np.int64)[start] = 0
            self.free.append((start, words))
            self.free.sort()
            merged: list[tuple[int, int]] = []
            for s, n in self.free:
                if merged and merged[-1][0] + merged[-1][1] == s:
                    merged[-1] = (merged[-1][0], merged[-1][1] + n)
                else:
                    merged.append((s, n))
            self.free = merged


def encode(x: Any, t_words: list[float], base: int) -> list[float] | None:
    """The ``NUM`` words of a numeric field (a number, a param or a profile), appending a
    table profile's points to ``t_words``, which start ``base`` words into the table; None for
    a field the callback cannot evaluate (a Python callable) or a non-finite number."""
    from mjrig.runtime.values import Chirp, Constant, NamedValue, Ramp, Sine, Step, Table

    if isinstance(x, NamedValue):
        x = x.value
    if isinstance(x, Constant):
        x = x.value
    if isinstance(x, (int, float)):
        return [0.0, float(x), 0.0, 0.0, 0.0, 0.0] if math.isfinite(float(x)) else None
    if isinstance(x, Step):
        words = [1.0, x.time, x.before, x.after, 0.0, 0.0]
    elif isinstance(x, Ramp):
        words = [2.0, x.start, x.end, x.from_, x.to, 0.0]
    elif isinstance(x, Sine):
        words = [3.0, x.amplitude, x.frequency, x.phase, x.offset, 0.0]
    elif isinstance(x, Chirp):
        words = [5.0, x.amplitude, x.f0, x.f1, x.duration, 0.0]
    elif isinstance(x, Table) and len(x.time) >= 1:
        words = [4.0, float(base + len(t_words)), float(len(x.time)), 0.0, 0.0, 0.0]
        t_words.extend(float(v) for v in x.time)
        t_words.extend(float(v) for v in x.value)
    else:
        return None
    return [float(w) for w in words] if all(math.isfinite(w) for w in words) else None
