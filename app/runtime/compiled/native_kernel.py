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

Struct offsets of ``mjData``/``mjModel`` fields are found once per MuJoCo build by matching
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
from mjrig.runtime.files.atomic_output import replace_text
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


_PASSIVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def _struct_addresses(m: mujoco.MjModel, d: mujoco.MjData) -> tuple[int, int]:
    """The addresses of ``m``'s mjModel and ``d``'s mjData, as MuJoCo hands them to a callback."""
    got: list[tuple[int, int]] = []
    probe = _PASSIVE(lambda mp, dp: got.append((int(mp), int(dp))))
    previous = mujoco.get_mjcb_passive()
    mujoco.set_mjcb_passive(probe)
    try:
        mujoco.mj_forward(m, d)
    finally:
        mujoco.set_mjcb_passive(previous)
    if not got:
        raise ImportError("MuJoCo did not call the passive-force callback")
    return got[0]


def _field_offsets() -> dict[str, int]:
    """Word offsets of the pointers and numbers the callback reads, in mjData (and mjModel's
    nuserdata), found by matching known values in two differently sized models (ImportError
    when one is not found)."""
    found: dict[str, set[int]] = {}
    for nud, nbody in ((12347, 2), (23459, 5)):
        bodies = "".join(
            f"<body pos='0 0 {i}'><joint name='j{i}' type='slide'/><geom size='.1'/><site name='s{i}'/></body>"
            for i in range(nbody)
        )
        m = mujoco.MjModel.from_xml_string(  # every kind of array non-empty: no two fields share an address
            f"<mujoco><worldbody>{bodies}<site name='w' pos='1 1 1'/><body mocap='true'/></worldbody>"
            "<tendon><spatial><site site='s0'/><site site='w'/></spatial></tendon>"
            "<equality><joint joint1='j0' joint2='j1'/></equality><actuator><motor joint='j0'/></actuator>"
            f"<custom><numeric name='n' size='{nud // 7}'/></custom><size nuserdata='{nud}'/></mujoco>"
        )
        d = mujoco.MjData(m)
        d.time = 1234.5678125 + nud
        m_address, d_address = _struct_addresses(m, d)
        words = np.ctypeslib.as_array((ctypes.c_uint64 * _readable_words(d_address, 60000)).from_address(d_address))
        for name in ("qvel", "qfrc_applied", "ten_length", "ten_velocity", "ten_J", "xpos", "xmat", "userdata"):
            hits = set(np.flatnonzero(words == getattr(d, name).ctypes.data).tolist())
            found[name] = found.get(name, hits) & hits
        dbl = words.view(np.float64)
        hits = set(np.flatnonzero(dbl == d.time).tolist())
        found["time"] = found.get("time", hits) & hits
        mw = np.ctypeslib.as_array((ctypes.c_int64 * _readable_words(m_address, 4000)).from_address(m_address))
        for name, value in (
            ("nuserdata", nud),
            ("nnumericdata", m.nnumericdata),
            ("numeric_data", m.numeric_data.ctypes.data),
        ):
            hits = set(np.flatnonzero(mw == value).tolist())
            found[name] = found.get(name, hits) & hits
    for k in (26, 34):  # contacts: k spheres sunk into the floor, two to a body (no count of bodies is k)
        balls = "".join(
            f"<body pos='{i} 0 0.09'><freejoint/><geom size='.1'/><geom pos='0 .3 0' size='.1'/></body>"
            for i in range(k // 2)
        )
        m = mujoco.MjModel.from_xml_string(
            f"<mujoco><worldbody><geom type='plane' size='50 50 .1'/>{balls}</worldbody></mujoco>"
        )
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        d.qpos[2] += 1.0  # the first body lifted: two contacts fewer than the most seen
        mujoco.mj_forward(m, d)
        k -= 2
        if d.ncon != k:
            raise ImportError("cannot place mjData.ncon in this MuJoCo build")
        m_address, d_address = _struct_addresses(m, d)
        words = np.ctypeslib.as_array((ctypes.c_uint64 * _readable_words(d_address, 60000)).from_address(d_address))
        ints = words.view(np.int32)
        for name, matches in (
            ("ncon", np.flatnonzero(ints == k)),
            ("contact", np.flatnonzero(words == d.contact.dist.ctypes.data)),
        ):
            found[name] = found.get(name, set(matches.tolist())) & set(matches.tolist())
        found["contact_size"] = {int(d.contact.dist.strides[0])}
    out = {"contact_size": found.pop("contact_size").pop()}
    if len(found["ncon"]) != 1:
        raise ImportError("cannot place mjData.ncon in this MuJoCo build")
    contact = sorted(found.pop("contact"))
    if not contact:
        raise ImportError("cannot place mjData.contact in this MuJoCo build")
    out["contact"] = contact[-1]  # contacts start the arena: ``arena``, declared before, points there too
    for name, hits in found.items():
        # An empty array has the address of the next array allocated: the field is the last of
        # a run of neighbouring hits.
        ordered = sorted(hits)
        if not ordered or ordered[-1] - ordered[0] != len(ordered) - 1:
            raise ImportError(f"cannot place mjData.{name} in this MuJoCo build")
        out[name] = ordered[-1]
    return out


def _install(get: Any, set_: Any, pointer: Any) -> None:
    """Set MuJoCo's callback (``get``/``set_``) to ``pointer`` unless it is that already."""
    current = get()
    if current is None or ctypes.cast(current, ctypes.c_void_p).value != ctypes.cast(pointer, ctypes.c_void_p).value:
        set_(pointer)


def cache_folder() -> Path:
    """Where compiled code is kept between runs: ``$XDG_CACHE_HOME/mjrig`` (``~/.cache/mjrig``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mjrig"


def _library() -> Path:
    return next(Path(mujoco.__file__).parent.glob("libmujoco.so*"), Path("libmujoco.so"))


def _readable_words(address: int, most: int) -> int:
    """How many 8-byte words from ``address`` on lie in the memory mapping that holds it, at most
    ``most`` (Linux: ``/proc/self/maps``; elsewhere ``most``). The probe reads past the end of
    mjData and mjModel (their size is not exposed); a page beyond the mapping is a segfault, which
    took the app down now and then when a rig with compiled loads opened."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            for line in maps:
                low, high = (int(part, 16) for part in line.split(None, 1)[0].split("-"))
                if low <= address < high:
                    return max(0, min(most, (high - address) // 8))
    except (OSError, ValueError):
        pass
    return most


def _cached_offsets(folder: Path) -> dict[str, int]:
    """``_field_offsets`` of this MuJoCo build, kept in ``folder`` (probing costs 0.5 s)."""
    lib = _library()
    stat = lib.stat() if lib.is_file() else None
    key = f"{mujoco.__version__}-{stat.st_size if stat else 0}-{int(stat.st_mtime) if stat else 0}"
    path = folder / f"offsets-{key}.json"
    try:
        return {k: int(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError):
        pass
    found = _probe_apart()
    _write_atomic(path, json.dumps(found))
    return found


_PROBE = """import ctypes, json, sys
try:  # glibc: blocks over 128 KiB mapped apart, as in a fresh process (the threshold stops adapting)
    ctypes.CDLL(None).mallopt(-3, 128 * 1024)
except (OSError, AttributeError):
    pass
from mjrig.runtime.compiled.native_kernel import _field_offsets
try:
    print(json.dumps(_field_offsets()))
except ImportError as exc:
    sys.exit(str(exc))
"""


def _probe_apart() -> dict[str, int]:
    """``_field_offsets`` found in a process of its own (about 0.5 s, once per MuJoCo build).

    The probe reads words past an mjData's start, up to the end of the mapping that holds it.
    In a fresh process an mjData (over 128 KiB: its solver statistics) is a mapping of its own;
    in a process that has allocated and freed large blocks, glibc serves it from the heap among
    other objects, where a word that happens to hold the same pointer in both probe models put a
    field in two places (seen: "cannot place mjData.qvel" in one of ~12 probes of a long-running
    test process, which then ran every load in Python)."""
    import subprocess

    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ImportError(f"cannot probe mjData's layout: {exc}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ImportError(f"cannot probe mjData's layout: {last}")
    try:
        return {k: int(v) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}
    except (ValueError, IndexError, AttributeError) as exc:
        raise ImportError(f"cannot probe mjData's layout: {done.stdout[-200:]!r}") from exc


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_text(path, text)
    except OSError:  # a read-only cache: compiled again next time
        pass


def _digest(fields: dict[str, int]) -> str:
    """A digest of the offsets and of the code the callbacks are made of (so nothing stale is
    reused), read from the source files: numba is not imported for it."""
    here = Path(__file__).parent
    return hashlib.sha256(
        json.dumps(fields, sort_keys=True).encode()
        + (here / "_native_code.py").read_bytes()
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
        _write_atomic(path, source)
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
        self.fields = _cached_offsets(folder)
        addresses, self._code = _addresses(folder, self.fields)
        self.pool = np.zeros(POOL_WORDS)
        lib = ctypes.CDLL(str(_library()))
        self.applyft = int(ctypes.cast(lib.mj_applyFT, ctypes.c_void_p).value or 0)
        self._pointer = ctypes.cast(addresses["passive"], _PASSIVE)
        self._control = ctypes.cast(addresses["control"], _PASSIVE)
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
