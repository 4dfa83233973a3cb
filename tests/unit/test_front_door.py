"""The README is a front door (at most 250 lines) whose links into the manual land on a page and,
where one is named, on a heading of it (mkdocs checks the manual's own links; nothing checks the
README's otherwise)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's toc (mkdocs) and GitHub make it."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+?)\s*$", text, flags=re.M)}


def test_the_readme_is_short_and_its_links_land():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    links = re.findall(r"\]\(((?:docs/|ARCHITECTURE|BENCHMARKS)[^)#]*)(?:#([^)]*))?\)", text)
    assert {"docs/app.md", "docs/cli.md", "docs/scenario.md", "docs/index.md"} <= {f for f, _ in links}
    for file, anchor in links:
        assert (REPO / file).is_file(), file
        if anchor:
            assert anchor in _anchors(REPO / file), f"{file}#{anchor}"


def test_the_set_up_commands_are_the_ones_ci_runs():
    """CI runs `bash scripts/test.sh` (.ci/run): the README gives the same two commands."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    setup = text[text.index("## Set-up") :]
    assert "python3 -m pip install -e . && mjrig\n" in setup
    assert "bash scripts/test.sh\n" in setup
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_manual_loads_no_web_fonts():
    """The site mkdocs builds reads offline: its theme is told to load no fonts from the web (the
    system's are used), and no page of docs/ links a font or script from a CDN."""
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["font"] is False, config["theme"]
    for page in (REPO / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "cdn.jsdelivr" not in text, page.name
