"""The compiled callbacks' machine code, kept by the first process that compiled them, is what
later processes run: loaded with llvmlite's JIT, numba never imported (``_native_object``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np

_LAWS = Path(__file__).resolve().parents[1] / "unit" / "test_compiled_laws.py"

_CHILD = """
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("laws", sys.argv[1])
laws = importlib.util.module_from_spec(spec)
spec.loader.exec_module(laws)
from pathlib import Path
setup = laws._setup(Path(sys.argv[2]), "RK4", compiled=True)
assert setup.runtime.engine.table is not None
np.save(sys.argv[3], laws._trajectory(setup, 300))
print("numba imported" if "numba" in sys.modules else "numba not imported")
"""


def _laws():
    spec = importlib.util.spec_from_file_location("compiled_laws", _LAWS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_process_runs_the_kept_machine_code_without_numba(tmp_path):
    """It moves the rig as the Python path does (to 1e-11, as the compiled laws in-process)."""
    from mjrig.runtime.compiled.native_kernel import cache_folder, kernel

    assert kernel() is not None
    assert list((cache_folder() / "compiled").glob("callbacks_*.json")), "the machine code was not kept"
    out = tmp_path / "traj.npy"
    child = tmp_path / "child"
    child.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(_LAWS), str(child), str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "numba not imported"
    laws = _laws()
    ref = laws._trajectory(laws._setup(tmp_path, "RK4", compiled=False), 300)
    np.testing.assert_allclose(np.load(out), ref, rtol=0, atol=1e-11)
