"""The one place that reaches into the passive viewer's private simulate object, checked against
the installed MuJoCo (an upgrade that moves these breaks here, not in the app)."""

from __future__ import annotations

import shutil
import time

import mujoco
import pytest

from mjrig.desktop.viewer_adapter import ViewerWindow, close_viewer, describe_selection, launch


def test_the_installed_viewer_exposes_what_the_app_uses(xdisplay):
    import mujoco.viewer

    assert hasattr(mujoco.viewer, "_Simulate") and hasattr(mujoco.viewer._Simulate, "MAX_GEOM")
    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body name='b'><freejoint/><geom size='.1'/></body></worldbody></mujoco>"
    )
    d = mujoco.MjData(m)
    viewer, window = launch(m, d, geometry=(10, 40, 640, 480))
    try:
        # The wrapped constructor found the GLFW window on the render thread and placed it.
        assert window.handle is not None, "the viewer's GLFW window was not found"
        assert window.geometry is not None and window.geometry[2:] == (640, 480), window.geometry
        assert window.take_drop() is None and window.modifiers() == 0
        assert mujoco.viewer._Simulate.__name__ != "_Hooked"  # restored after the launch
        # The window's OpenGL renderer was read on its thread; Xvfb has no graphics driver.
        assert window.renderer, "GL_RENDERER of the viewer's window was not read"
        if shutil.which("Xvfb"):
            assert window.software, window.renderer
        sim = viewer._sim()
        assert callable(sim.load)
        del sim  # the app holds no strong reference either: close_viewer waits for it to die
        with viewer.lock():
            viewer.perturb.select = 1
            viewer.perturb.localpos[:] = [0.5, 0.0, -0.25]
        assert describe_selection(m, d, viewer.perturb) == "body:b@0.5,0,-0.25"
    finally:
        close_viewer(viewer)
    assert viewer._sim() is None, "the viewer thread did not finish"
    time.sleep(0.1)


@pytest.mark.parametrize("select", [0, -1, 99])
def test_no_selection_gives_none(select):
    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body name='b'><geom size='.1'/></body></worldbody></mujoco>"
    )
    pert = mujoco.MjvPerturb()
    pert.select = select
    assert describe_selection(m, mujoco.MjData(m), pert) is None


@pytest.mark.parametrize(
    ("renderer", "software"),
    [
        ("llvmpipe (LLVM 15.0.6, 256 bits)", True),
        ("softpipe", True),
        ("SwiftShader Device (Subzero) (0x0000C0DE)", True),
        ("GDI Generic", True),
        ("AMD Radeon Graphics (radeonsi, renoir, LLVM 15.0.7, DRM 3.49, 6.1.0)", False),
        ("Mesa Intel(R) UHD Graphics 620 (KBL GT2)", False),
        ("NVIDIA GeForce RTX 3080/PCIe/SSE2", False),
        ("Apple M2", False),
        ("", False),
    ],
)
def test_a_view_drawn_on_the_cpu_is_told_by_its_renderer(renderer, software):
    """Which renderers draw on the CPU (the view then opens without shadows and reflections)."""
    assert ViewerWindow(renderer=renderer).software is software
