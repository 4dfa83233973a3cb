"""mkdocs hooks (mkdocs.yml ``hooks:``) that make the manual's Markdown read the same on the site as on GitHub.

In a table cell GitHub needs a pipe inside a code span escaped (`` `csv\\|mat` ``) and shows it as ``|``;
Python-Markdown keeps code spans whole when it splits a row and would print the backslash. So the site
is given the pipes unescaped.
"""

from __future__ import annotations

import re
from typing import Any

_CODE = re.compile(r"`[^`\n]*`")


def _unescape_code_pipes(line: str) -> str:
    return _CODE.sub(lambda m: m.group(0).replace("\\|", "|"), line)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Table rows (lines that start with ``|``) with their code spans' ``\\|`` turned into ``|``."""
    return "\n".join(
        _unescape_code_pipes(line) if line.lstrip().startswith("|") else line for line in markdown.split("\n")
    )
