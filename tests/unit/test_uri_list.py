"""The file names a file manager hands over in a drop (``text/uri-list``, RFC 2483)."""

from __future__ import annotations

import pytest

from mjrig.desktop.xdnd_target import uri_list_paths

pytestmark = pytest.mark.unit


def test_uri_lists_as_file_managers_write_them():
    text = "# from a file manager\r\nfile:///tmp/a%20b.xml\r\nfile://host/tmp/%E6%A8%A1.toml\r\nhttp://x/y.xml\r\n\r\n"
    assert uri_list_paths(text) == ["/tmp/a b.xml", "/tmp/\u6a21.toml"]
    assert uri_list_paths("") == []
