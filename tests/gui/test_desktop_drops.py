"""Files dropped on the 3D view while a 1,000-body model runs, as a person drops them from a file
manager: a drop is answered at once whatever the view is drawing (the drag source gives up after
5 s, as file managers do), a source that gives up and closes its window mid-drop costs one line
in Status and nothing else, and the next drop opens its file.

Slower than most GUI tests (~20 s per screen): the 1,000-body model is generated, stepped and drawn
by software OpenGL with no frame-rate ceiling on the view, at both screen sizes."""

from __future__ import annotations

import re

import pytest

from mjrig.desktop.xdnd_target import DropTarget
from mjrig.models.scale import many_bodies
from tests.gui.desktop import App, Desktop
from tests.gui.xdnd_drop import drop, drop_and_vanish, drop_then_close_window
from tests.waiting import wait_for

GONE = r"warning: a file dropped on the 3D view did not arrive: its source \(a file manager\) (let go of it|did not answer)"


def _says(app: App, pattern: str) -> bool:
    return any(re.search(pattern, it.get("text", "")) for it in app.items(offscreen=True))


@pytest.mark.both_screens
@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["laptop", "desktop"])
def test_drops_on_a_busy_view_are_answered_and_a_vanishing_source_is_one_line(tmp_path, size):
    big = tmp_path / "curtain.xml"
    big.write_text(many_bodies(1000))
    small = tmp_path / "drop me.xml"  # a space in the name: the URI is quoted
    small.write_text(
        '<mujoco model="dropped"><worldbody><light pos="0 0 2"/><geom type="box" size="0.2 0.1 0.05"/></worldbody></mujoco>'
    )
    desktop = Desktop(*size)
    app = App(desktop, big, home=tmp_path, view_fps=None)  # the view draws as often as it can
    try:
        t0 = app.newest_time()
        assert app.run_for(0.5, timeout=30) >= t0 + 0.5, "the 1,000-body model does not run"
        drop_and_vanish(app.viewer, screen=desktop.display)
        try:
            wait_for(
                lambda: re.search(GONE, app.output()), what="the one line about the drop that never came", timeout=15
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the app said:\n{app.output()[-3000:]}") from None
        assert app.proc.poll() is None, f"the app ended after a drop whose source went away:\n{app.output()}"
        assert app.redrawn(3), "the panel stopped drawing after the vanished drop"
        assert "opened" not in app.output().split("curtain.xml", 1)[1], "something was opened by a drop that never came"
        desktop.screenshot(f"drop_vanished_{size[0]}x{size[1]}")
        ok, said = drop(app.viewer, [small], timeout=5.0, screen=desktop.display)  # a file manager's patience
        assert ok, said
        wait_for(lambda: "opened drop me.xml" in app.output(), what="the dropped model opened", timeout=30)
        wait_for(lambda: _says(app, r"^model: .*drop me\.xml$"), what="the panel showing the dropped model", timeout=20)
        desktop.still_view(app.viewer, what="the 3D view showing the dropped model (nothing in it moves)")
        assert len(re.findall(GONE, app.output())) == 1, app.output()
        desktop.screenshot(f"drop_opened_{size[0]}x{size[1]}")
    finally:
        assert app.close() == 0, app.output()
        desktop.close()


def test_the_drop_target_takes_over_a_window_and_answers_for_it(xdisplay, tmp_path):
    """In the test process, on a bare window (no app): the window is no longer the drop target
    itself but names mjrig's as its proxy, a drop there hands over its paths exactly, and a
    source that vanishes mid-drop is one line. Fast (about 3 s)."""
    from Xlib import X, display

    d = display.Display(xdisplay)
    win = d.screen().root.create_window(0, 0, 200, 100, 0, d.screen().root_depth)
    win.change_property(d.intern_atom("XdndAware"), d.intern_atom("ATOM"), 32, [5])  # as GLFW sets it
    win.map()
    d.sync()
    drops: list[list[str]] = []
    problems: list[str] = []
    target = DropTarget(win.id, on_drop=drops.append, on_problem=problems.append)
    try:
        assert win.get_full_property(d.intern_atom("XdndAware"), X.AnyPropertyType) is None
        proxy = win.get_full_property(d.intern_atom("XdndProxy"), X.AnyPropertyType)
        assert proxy is not None and int(proxy.value[0]) == target.window_id
        files = [tmp_path / "a model.xml", tmp_path / "\u6a21\u578b.toml"]
        ok, said = drop(win.id, files)
        assert ok, said
        wait_for(lambda: drops, what="the dropped paths", timeout=5)
        assert drops == [[str(f.resolve()) for f in files]]
        drop_and_vanish(win.id, screen=xdisplay)
        wait_for(lambda: problems, what="the line about the vanished drop", timeout=5)
        assert re.fullmatch(GONE.removeprefix("warning: "), problems[0]), problems
        assert len(drops) == 1
    finally:
        target.close()
        d.close()


@pytest.mark.parametrize("direct", [False, True], ids=["through-the-proxy", "to-glfw-itself"])
def test_a_drop_whose_source_window_closes_after_the_drop_opens_its_file_and_the_app_lives_on(tmp_path, direct):
    """The drag source closes the window it dragged from right after ``XdndDrop`` (another of its
    windows keeps the file on offer): the app fetches and opens the file, and the answer it owes a
    window that is gone (``XdndFinished``) is not sent (mjrig's drop target) or is one line (GLFW's
    own handler, reached directly: ``BadWindow`` from ``X_SendEvent`` once ended the app). About
    10 s each."""
    model = tmp_path / "dropped late.xml"
    model.write_text(
        '<mujoco model="late"><worldbody><light pos="0 0 2"/><geom type="box" size="0.2 0.1 0.05"/></worldbody></mujoco>'
    )
    desktop = Desktop(1280, 800)
    app = App(desktop, home=tmp_path)
    try:
        assert drop_then_close_window(app.viewer, [model], direct=direct, screen=desktop.display), (
            "the file was never asked for"
        )
        wait_for(lambda: "opened dropped late.xml" in app.output(), what=f"the dropped model opened\n{app.output()}")
        wait_for(lambda: desktop.title(app.viewer) == "MuJoCo : late", what="the 3D view showing the dropped model")
        assert app.proc.poll() is None, f"the app ended after the drop:\n{app.output()}"
        assert app.redrawn(3), "the panel stopped drawing after the drop"
        if direct:  # GLFW answered the window that went: one line, nothing more
            wait_for(
                lambda: "ignored an X error: BadWindow from X_SendEvent" in app.output(), what="the X error's line"
            )
    finally:
        assert app.close() == 0, app.output()
        desktop.close()
