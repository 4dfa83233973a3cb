"""The 3D view's close button: the viewer's render thread only submits ``CloseViewer``; the session
decides on the simulation thread -- quit when nothing is unsaved, else ask first (the panel's quit
question) and keep the window open."""

from __future__ import annotations

from pathlib import Path

import pytest

from mjrig import commands as C
from mjrig.desktop.sim_thread import SimThread
from mjrig.scenario.bundled import MODELS_DIR
from mjrig.session.kernel import Session


@pytest.fixture()
def session(open_session) -> Session:
    s = open_session(MODELS_DIR / "spring_mass.toml")
    yield s
    s.close()


def _edit(s: Session) -> None:
    s.submit(C.SetParam("k", 321.0))
    s.process_commands()
    assert s.document.dirty


def test_closing_the_viewer_with_nothing_unsaved_quits(session: Session) -> None:
    session.submit(C.CloseViewer())
    assert not session.unsaved.quit  # nothing happens before the simulation thread takes the command
    session.process_commands()
    assert session.unsaved.quit and not session.publish().quit_question


def test_closing_the_viewer_with_unsaved_edits_asks_and_keeps_working(session: Session) -> None:
    _edit(session)
    session.submit(C.CloseViewer())
    session.process_commands()
    assert not session.unsaved.quit and session.publish().quit_question
    assert any("unsaved" in text for _, text in session.publish().messages)
    session.submit(C.KeepWorking())
    session.process_commands()
    assert not session.unsaved.quit and not session.publish().quit_question
    session.submit(C.CloseViewer())  # closed again: asked again
    session.process_commands()
    assert not session.unsaved.quit and session.publish().quit_question
    session.submit(C.Quit(confirmed=True))  # "Quit without saving"
    session.process_commands()
    assert session.unsaved.quit


def test_closing_the_viewer_after_saving_quits(session: Session, tmp_path: Path) -> None:
    _edit(session)
    session.submit(C.SaveScenario(str(tmp_path / "saved.toml")))
    session.process_commands()
    assert not session.document.dirty
    session.submit(C.CloseViewer())
    session.process_commands()
    assert session.unsaved.quit and not session.publish().quit_question


def test_the_viewers_close_callback_only_submits_a_command(session: Session) -> None:
    _edit(session)
    sim = SimThread(session, show_viewer=False)
    keep_open = sim._may_close()  # what the render thread calls on the close button
    assert keep_open is False  # the window stays until the session decides
    assert not session.unsaved.quit_question and not session.unsaved.quit  # the session's state is untouched ...
    session.process_commands()  # ... until the simulation thread runs the command
    assert session.unsaved.quit_question and not session.unsaved.quit
