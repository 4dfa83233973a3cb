"""The panel's side of ``MJRIG_WIDGET_MAP``: ``FILE.want`` is answered with a map written at the
end of the frame that began after it, ``FILE.frame`` with the frame alone (no map), each by
deleting the request; ``MJRIG_WIDGET_MAP_EVERY`` writes a map every N-th frame unasked."""

from __future__ import annotations

import pytest

from mjrig.desktop import widget_map
from mjrig.desktop.widget_map import MapRequests

pytestmark = pytest.mark.unit


@pytest.fixture
def written(monkeypatch):
    maps: list[str] = []
    monkeypatch.setattr(widget_map, "write_widget_map", lambda dpg, path: maps.append(str(path)))
    monkeypatch.delenv("MJRIG_WIDGET_MAP_EVERY", raising=False)
    return maps


def test_a_frame_request_is_answered_without_a_map(tmp_path, written):
    req = MapRequests(str(tmp_path / "m.json"))
    assert req.asked() == (False, False) and not req.waiting()
    (tmp_path / "m.json.frame").touch()
    assert req.waiting()
    asked = req.asked()
    assert asked == (False, True)
    req.answer(None, asked, 1)
    assert written == [] and not (tmp_path / "m.json.frame").exists() and not req.waiting()


def test_a_map_request_writes_the_map_then_deletes_the_request(tmp_path, written):
    req = MapRequests(str(tmp_path / "m.json"))
    (tmp_path / "m.json.want").touch()
    asked = req.asked()
    (tmp_path / "m.json.frame").touch()  # came after the frame began: left for the next one
    req.answer(None, asked, 1)
    assert written == [str(tmp_path / "m.json")]
    assert not (tmp_path / "m.json.want").exists() and (tmp_path / "m.json.frame").exists()


def test_every_nth_frame_and_no_path_no_work(tmp_path, written, monkeypatch):
    monkeypatch.setenv("MJRIG_WIDGET_MAP_EVERY", "3")
    req = MapRequests(str(tmp_path / "m.json"))
    for frame in range(1, 10):
        req.answer(None, req.asked(), frame)
    assert len(written) == 3
    idle = MapRequests(None)
    assert idle.asked() == (False, False) and not idle.waiting()
    idle.answer(None, (True, True), 3)
    assert len(written) == 3
