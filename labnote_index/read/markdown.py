"""Links in Markdown files, as the upstream link check reads them.

A LabNote repository's CI checks that every repository-relative link in a
``.md`` file resolves and none leaves the repository: inline links
``[text](target)`` (not images), with ``http(s):``, ``mailto:``, ``tel:`` and
pure ``#anchor`` targets skipped, ``<...>`` brackets and a ``#fragment``
dropped. The links are found here; whether each target exists is asked of
the disk at every build (``files.refresh_link_targets``) and checked in SQL.
A record's artifact is read once, by the artifact refresh: its links are taken
from the body read there (``files.refresh_markdown_links``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import NamedTuple

# Link text without brackets and a target up to 2,000 characters: a match
# attempt stops at the next bracket or after the bound, so a file of nothing
# but brackets or parentheses is read in linear time.
_LINK = re.compile(r"(?<!!)\[[^\[\]]{0,2000}\]\(([^)]{1,2000})\)")
_SKIPPED = ("http://", "https://", "mailto:", "tel:")
# A target that names no repository path: its normalised form is outside.
OUTSIDE = "outside"


class Link(NamedTuple):
    """One Markdown link of an artifact: where it is and what it names."""

    line: int  # 1-based
    column: int  # 1-based, of the opening bracket
    raw_target: str  # as written between the parentheses
    target: str | None  # repository-relative and normalised; None when it leaves


def links(source: str, text: str) -> Iterator[Link]:
    """The repository-relative links of the Markdown file ``source`` (a
    repository-relative path) holding ``text``, in order."""
    directory = posixpath.dirname(source)
    line, line_start, scanned = 1, 0, 0
    for match in _LINK.finditer(text):
        path = link_path(match.group(1))
        if path is None:
            continue
        start = match.start()
        newlines = text.count("\n", scanned, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", scanned, start) + 1
        scanned = start
        yield Link(line, start - line_start + 1, match.group(1), resolved(directory, path))


def link_rows(source: str, text: str) -> list[dict[str, object]]:
    """The ``markdown_links`` rows of the Markdown file ``source`` holding ``text``."""
    return [{"source_file": source, **link._asdict()} for link in links(source, text)]


def link_path(raw: str) -> str | None:
    """The path part of a link target, or None for a link the check skips."""
    target = raw.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if not target or target.startswith("#") or target.startswith(_SKIPPED):
        return None
    return target.split("#", 1)[0]


def resolved(directory: str, path: str) -> str | None:
    """``path`` from ``directory``, normalised; None when it leaves the repository
    (an absolute path, or more ``..`` than there are directories)."""
    if path.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(directory, path)) if path else directory
    if joined == ".." or joined.startswith("../"):
        return None
    return "" if joined == "." else joined
