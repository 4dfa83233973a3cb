"""The list of recently opened files, kept in the user's config folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mjrig.runtime.files.atomic_output import replace_text

__all__ = ["RecentFiles", "short_names"]


def _config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mjrig"


class RecentFiles:
    """Most recent first, at most ``limit`` existing files; a broken file is simply reset."""

    def __init__(self, path: Path | None = None, *, limit: int = 10) -> None:
        self.path = path or _config_dir() / "recent.json"
        self.limit = limit

    def load(self) -> list[str]:
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [p for p in items if isinstance(p, str) and Path(p).exists()][: self.limit]

    def add(self, path: str | os.PathLike) -> list[str]:
        item = str(Path(path).resolve())
        items = [item] + [p for p in self.load() if p != item]
        items = items[: self.limit]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_text(self.path, json.dumps(items, indent=1))
        except OSError:
            pass  # a read-only home must not stop the app
        return items


def short_names(paths: list[str]) -> list[str]:
    """A short label per path, in order: its file name, with as many parent folders as it takes
    to tell it from the others (``a/spring_mass.toml`` and ``b/spring_mass.toml``).

    A menu or list as wide as a panel shows the end of a path that matters; the full path goes in
    a tooltip.
    """
    parts = [Path(p).parts for p in paths]
    depth = [1] * len(paths)
    while True:
        labels = [str(Path(*ps[-d:])) for ps, d in zip(parts, depth)]
        clashes = {lb for lb in labels if labels.count(lb) > 1}
        grow = [i for i, lb in enumerate(labels) if lb in clashes and depth[i] < len(parts[i])]
        if not grow:
            return labels
        for i in grow:
            depth[i] += 1
