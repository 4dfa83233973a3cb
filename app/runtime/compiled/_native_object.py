"""Compiled callbacks kept as machine code, loaded again without numba.

numba's own cache still needs numba in the process: importing it, its registries and the BLAS
check (scipy) cost about 0.7 s per process, paid by every ``mjrig run`` and every sweep worker
that has compiled laws. So the first process that compiles the callbacks also keeps each one's
object code (its final LLVM module, the called helpers linked in, compiled for this host) next
to a JSON of its symbol and the external symbols it needs. Later processes load those with llvmlite's MCJIT (the
JIT numba itself uses; about 0.1 s), binding numba's C helpers from numba's extension modules,
loaded as plain libraries (``_helperlib``, ``_nrt_python``), without importing numba.

The code keeps numba's error handling (the helpers bound above), but the callbacks are compiled
with NumPy's error model and cannot raise. An object that names an external symbol this process
cannot resolve is never handed to the JIT (it would abort the process): ``load`` returns None
and the caller compiles with numba as before.
"""

from __future__ import annotations

import builtins
import glob
import importlib.machinery
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from mjrig.runtime.files.atomic_output import replace_bytes, replace_text

__all__ = ["key", "load", "save"]

_helpers: dict[str, int] | None = None


def key() -> str:
    """What the machine code depends on besides mjrig's source: the host CPU and its features,
    numba's and llvmlite's versions."""
    from importlib.metadata import version

    import llvmlite
    import llvmlite.binding as llvm

    return "|".join(
        (llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten(), version("numba"), llvmlite.__version__)
    )


def _extension(name: str, pattern: str) -> Any:
    """numba's C extension ``pattern`` (relative to numba's folder) as module ``name``, without
    running numba's ``__init__``."""
    spec = importlib.util.find_spec("numba")
    if spec is None or spec.origin is None:
        raise ImportError("numba is not installed")
    paths = [
        p
        for p in sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), pattern)))
        if p.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    ]
    if not paths:
        raise ImportError(f"numba has no {pattern}")
    ext = importlib.util.spec_from_file_location(name, paths[0])
    module = importlib.util.module_from_spec(ext)  # type: ignore[arg-type]
    ext.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _bind_helpers() -> dict[str, int]:
    """numba's C helpers under the names its code calls them by, made known to LLVM (once)."""
    global _helpers
    if _helpers is None:
        import llvmlite.binding as llvm

        helperlib = _extension("_helperlib", "_helperlib.*")
        nrt = _extension("_nrt_python", os.path.join("core", "runtime", "_nrt_python.*"))
        nrt.memsys_use_cpython_allocator()  # what importing numba's runtime does
        named = {f"numba_{k}": v for k, v in helperlib.c_helpers.items()}
        named.update({k if k.startswith("_") else f"NRT_{k}": v for k, v in nrt.c_helpers.items()})
        named.update({k: v for k, v in helperlib.c_helpers.items() if not k.startswith("_")})  # C math, as numba
        # Python's objects by their own address, as numba binds them (not libpython's pointer
        # variables of the same names).
        named["_Py_NoneStruct"] = id(None)
        named.update(
            {
                f"PyExc_{v.__name__}": id(v)
                for v in vars(builtins).values()
                if isinstance(v, type) and issubclass(v, BaseException)
            }
        )
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        for name, address in named.items():
            llvm.add_symbol(name, address)
        _helpers = named
    return _helpers


def save(folder: Path, stem: str, cfuncs: dict[str, Any], tag: str) -> bool:
    """Keep each freshly compiled ``cfuncs[name]`` as ``folder/stem-name.o`` plus ``stem.json``
    (symbols, externals, ``tag``): its final LLVM module (numba's, the helpers it calls linked in)
    compiled to an object for this host, as numba's JIT compiles it. False when numba no longer
    holds the module (the cfunc came from numba's cache) or the folder is not writable."""
    import warnings

    import llvmlite.binding as llvm

    entries: dict[str, Any] = {}
    try:
        _bind_helpers()
        target = llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3, codemodel="jitdefault"
        )
        for name, cf in cfuncs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # "inspection disabled for cached code": nothing to keep
                module = llvm.parse_assembly(cf.inspect_llvm())
            module.verify()
            code = target.emit_object(module)
            externals = sorted(
                {f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")}
                | {g.name for g in module.global_variables if g.is_declaration}
            )
            path = folder / f"{stem}-{name}.o"
            replace_bytes(path, code)
            entries[name] = {"symbol": cf.native_name, "externals": externals, "bytes": len(code)}
        index = folder / f"{stem}.json"
        replace_text(index, json.dumps({"tag": tag, "callbacks": entries}))
    except (UserWarning, RuntimeError, OSError, ImportError):
        return False
    return True


def load(folder: Path, stem: str, tag: str) -> tuple[dict[str, int], list[Any]] | None:
    """({name: address}, the engines to keep alive) of callbacks ``save`` kept under ``stem`` for
    ``tag``; None when there are none, they are for another tag, or an external is missing."""
    try:
        index = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
        if index.get("tag") != tag:
            return None
        entries = index["callbacks"]
        codes = {name: (folder / f"{stem}-{name}.o").read_bytes() for name in entries}
        if any(len(codes[n]) != int(e["bytes"]) for n, e in entries.items()):
            return None
        import llvmlite.binding as llvm

        _bind_helpers()
    except (OSError, ValueError, KeyError, TypeError, ImportError, AttributeError):
        return None
    target = llvm.Target.from_default_triple().create_target_machine(codemodel="jitdefault", jit=True)
    engines = [llvm.create_mcjit_compiler(llvm.parse_assembly(""), target) for _ in entries]
    # (creating an engine makes the process's own symbols, libpython's and libc's, searchable)
    if any(not llvm.address_of_symbol(s) for e in entries.values() for s in e["externals"]):
        return None
    addresses: dict[str, int] = {}
    for engine, (name, entry) in zip(engines, entries.items()):  # one engine each: both carry numba's env globals
        engine.add_object_file(llvm.ObjectFileRef.from_data(codes[name]))
        engine.finalize_object()
        address = engine.get_function_address(entry["symbol"])
        if not address:
            return None
        addresses[name] = int(address)
    return addresses, engines
