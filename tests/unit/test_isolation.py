"""The test suite never touches the user's real config: everything goes to a temporary folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mjrig.desktop.windows import _path as windows_file
from mjrig.settings.keys import config_dir
from mjrig.settings.recent import RecentFiles


def test_config_goes_to_a_temporary_folder():
    cfg = Path(os.environ["XDG_CONFIG_HOME"]).resolve()
    assert cfg.is_relative_to(Path(tempfile.gettempdir()).resolve()), cfg
    for path in (RecentFiles().path, config_dir() / "keys.toml", windows_file()):
        assert path.resolve().is_relative_to(cfg), path
