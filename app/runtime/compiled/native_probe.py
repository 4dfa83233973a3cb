"""Where the compiled callbacks find mjData's fields: word offsets of the pointers and numbers
they read, found once per MuJoCo build by matching the arrays' addresses in probe models (never
hard-coded), in a process of its own, and kept in the cache folder (``cached_offsets``).
"""

from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path

import mujoco
import numpy as np

from mjrig.runtime.files.atomic_output import replace_text

__all__ = ["PASSIVE", "cached_offsets", "field_offsets", "library", "probe_apart", "struct_addresses", "write_cached"]


def library() -> Path:
    """MuJoCo's shared library, as the bindings load it."""
    return next(Path(mujoco.__file__).parent.glob("libmujoco.so*"), Path("libmujoco.so"))


def write_cached(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in the cache folder, whole or not at all; a read-only cache is
    no error (what it would keep is worked out again next time)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_text(path, text)
    except OSError:
        pass


PASSIVE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
"""The C type of MuJoCo's callbacks: ``void (const mjModel*, mjData*)``."""


def struct_addresses(m: mujoco.MjModel, d: mujoco.MjData) -> tuple[int, int]:
    """The addresses of ``m``'s mjModel and ``d``'s mjData, as MuJoCo hands them to a callback."""
    got: list[tuple[int, int]] = []
    probe = PASSIVE(lambda mp, dp: got.append((int(mp), int(dp))))
    previous = mujoco.get_mjcb_passive()
    mujoco.set_mjcb_passive(probe)
    try:
        mujoco.mj_forward(m, d)
    finally:
        mujoco.set_mjcb_passive(previous)
    if not got:
        raise ImportError("MuJoCo did not call the passive-force callback")
    return got[0]


DATA_FIELDS = (
    "qvel",
    "qfrc_applied",
    "ten_length",
    "ten_velocity",
    "ten_J",
    "xpos",
    "xmat",
    "site_xpos",
    "cvel",
    "cdof",
    "subtree_com",
    "userdata",
)
"""The mjData arrays whose pointers the callbacks read."""


def field_offsets() -> dict[str, int]:
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
        m_address, d_address = struct_addresses(m, d)
        words = np.ctypeslib.as_array((ctypes.c_uint64 * _readable_words(d_address, 60000)).from_address(d_address))
        for name in DATA_FIELDS:
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
        m_address, d_address = struct_addresses(m, d)
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


def cached_offsets(folder: Path) -> dict[str, int]:
    """``field_offsets`` of this MuJoCo build, kept in ``folder`` (probing costs 0.5 s)."""
    lib = library()
    stat = lib.stat() if lib.is_file() else None
    key = f"{mujoco.__version__}-{stat.st_size if stat else 0}-{int(stat.st_mtime) if stat else 0}"
    path = folder / f"offsets-{key}.json"
    try:
        kept = {k: int(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
        if all(name in kept for name in DATA_FIELDS):  # else kept by a version reading fewer fields
            return kept
    except (OSError, ValueError):
        pass
    found = probe_apart()
    write_cached(path, json.dumps(found))
    return found


_PROBE = """import ctypes, json, sys
try:  # glibc: blocks over 128 KiB mapped apart, as in a fresh process (the threshold stops adapting)
    ctypes.CDLL(None).mallopt(-3, 128 * 1024)
except (OSError, AttributeError):
    pass
from mjrig.runtime.compiled.native_probe import field_offsets
try:
    print(json.dumps(field_offsets()))
except ImportError as exc:
    sys.exit(str(exc))
"""


def probe_apart() -> dict[str, int]:
    """``field_offsets`` found in a process of its own (about 0.5 s, once per MuJoCo build).

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
