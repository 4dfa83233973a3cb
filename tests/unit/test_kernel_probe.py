"""Where the compiled callbacks read mjData's fields is found by probing, in a process of its own:
in a test process that has allocated and freed large blocks, probing in place put ``qvel`` or
``ncon`` in two places now and then, and every load then ran in Python for the rest of it."""

from __future__ import annotations

import ctypes

import mujoco
import numpy as np

from mjrig.runtime.compiled import native_kernel, native_probe


def test_the_probed_offsets_name_this_processs_arrays_after_large_blocks_were_freed() -> None:
    for size in (1, 3, 5, 2, 4):  # glibc's mapping threshold rises past each block freed
        block = np.ones(size * 1_000_000)
        del block
    found = native_probe.probe_apart()
    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><joint type='slide'/><geom size='.1'/><site name='s'/></body>"
        "<site name='w' pos='1 0 0'/></worldbody><tendon><spatial><site site='s'/><site site='w'/></spatial>"
        "</tendon><size nuserdata='7'/></mujoco>"
    )
    d = mujoco.MjData(m)
    d.time = 2.5
    _, address = native_probe.struct_addresses(m, d)
    words = (ctypes.c_uint64 * (max(found.values()) + 1)).from_address(address)
    for name in ("qvel", "qfrc_applied", "ten_length", "ten_velocity", "ten_J", "xpos", "xmat", "userdata"):
        assert words[found[name]] == getattr(d, name).ctypes.data, name
    assert ctypes.c_double.from_address(address + 8 * found["time"]).value == 2.5
    assert native_kernel.why_not() == ""
