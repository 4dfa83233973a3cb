"""The one place that reaches into the passive viewer's private simulate object, checked against
the installed MuJoCo (an upgrade that moves these breaks here, not in the app)."""
from __future__ import annotations

import time
from types import SimpleNamespace

import mujoco
import pytest

from app.sim_thread import close_viewer, describe_selection, take_dropped_file


class _FakeViewer:
    def __init__(self, sim):
        self._sim_obj = sim

    def _sim(self):
        return self._sim_obj


def test_take_dropped_file_reads_and_clears_the_request():
    sim = SimpleNamespace(droploadrequest=1, dropfilename="/data/robot.xml")
    viewer = _FakeViewer(sim)
    assert take_dropped_file(viewer) == "/data/robot.xml"
    assert sim.droploadrequest == 0
    assert take_dropped_file(viewer) is None
    assert take_dropped_file(_FakeViewer(None)) is None


def test_the_installed_viewer_exposes_what_the_app_uses(xdisplay):
    import mujoco.viewer

    m = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body name='b'><freejoint/><geom size='.1'/></body>"
                                       "</worldbody></mujoco>")
    d = mujoco.MjData(m)
    viewer = mujoco.viewer.launch_passive(m, d)
    try:
        sim = viewer._sim()
        assert isinstance(sim.dropfilename, str)
        sim.droploadrequest = 0  # settable: the app clears it after taking a drop
        assert take_dropped_file(viewer) is None
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
    m = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body name='b'><geom size='.1'/></body></worldbody></mujoco>")
    pert = mujoco.MjvPerturb()
    pert.select = select
    assert describe_selection(m, mujoco.MjData(m), pert) is None
