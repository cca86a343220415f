"""Links in Markdown files, as CommonMark reads them.

A LabNote repository's CI checks that every repository-relative link in a
``.md`` file resolves and none leaves the repository. The links are taken
from a real CommonMark parser's tokens (markdown-it-py, linear on hostile
input), not from a pattern: inline links (a title, balanced parentheses,
``<...>`` brackets and percent-escapes as CommonMark reads them; images are
not links, and are passed over as the upstream check passes them over), and
reference definitions (``[spec]: file.md``, reported once, at the
definition, however many links use it; one that no link uses makes no link
and is not reported); nothing in a code block or a code span is a
link. Targets with a URI scheme (``https:``, ``mailto:``, ...) and pure
``#anchor`` targets are skipped, a ``#fragment`` is dropped. Whether each
target exists is asked of the disk at every build
(``link_targets.refresh_link_targets``) and checked in SQL. A record's artifact is
read once: as the records are read, with its links (``rows.FileLoader``), its
artifact row then taken from that read (``files.refresh_artifacts``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

from ..text import Lines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

# A target that names no repository path: its normalised form is outside.
OUTSIDE = "outside"
# A URI scheme (RFC 3986): such a target is no repository path.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,31}:")
# Where an inline link's or image's destination begins: after "](" and blanks.
_DESTINATION = re.compile(r"\]\([ \t]*(?:\n[ \t]*)?")


class Link(NamedTuple):
    """One Markdown link of a file: where it is and what it names."""

    line: int  # 1-based
    column: int  # 1-based, of the link text's opening "[" (or of a definition's)
    raw_target: str  # the destination as CommonMark reads it (percent-escapes decoded)
    target: str | None  # repository-relative and normalised; None when it leaves


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # imported only when a file has something to parse

    return MarkdownIt("commonmark")


def links(source: str, text: str) -> Iterator[Link]:
    """The repository-relative links of the Markdown file ``source`` (a
    repository-relative path) holding ``text``, in order of their lines."""
    if "](" not in text and "]:" not in text:
        return  # no inline link, image or definition: nothing to parse
    directory = posixpath.dirname(source)
    env: dict[str, Any] = {}
    tokens = _parser().parse(text, env)
    # The lines as the parser counts them (CommonMark's line endings only).
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found: list[Link] = []
    referenced: set[str] = set()  # the destinations of links made from a definition
    for block in tokens:
        if block.type != "inline" or not block.children or block.map is None:
            continue
        if any(child.type == "link_open" for child in block.children):
            found += _inline_links(directory, block, lines, referenced)
    # A definition no link uses makes no link (CommonMark renders nothing for it).
    for definition in env.get("references", {}).values():
        if definition["href"] not in referenced:
            continue
        start = definition["map"][0]
        column = lines[start].find("[") + 1 if start < len(lines) else 1
        found += _link(directory, definition["href"], start + 1, max(column, 1))
    found.sort(key=lambda link: (link.line, link.column))
    yield from found


def _inline_links(directory: str, block: Any, lines: list[str], referenced: set[str]) -> list[Link]:
    """The inline links of one block, each found where it is written: a link the
    parser made from a reference has no destination of its own here (its
    definition is reported instead, its destination added to ``referenced``)."""
    first, last = block.map
    source = "\n".join(lines[first:last])
    place = Lines(source)
    written: dict[str, list[int]] = {}  # destination as the parser reads it -> offsets
    for match in _DESTINATION.finditer(source):
        destination = _destination(source, match.end())
        if destination is not None:
            written.setdefault(destination, []).append(match.start())
    taken: dict[str, int] = {}
    found: list[Link] = []
    for child in block.children:
        href = child.attrs.get("href")
        if child.type != "link_open" or not isinstance(href, str):
            continue
        offsets, n = written.get(href, []), taken.get(href, 0)
        if n >= len(offsets):
            referenced.add(href)  # from a reference: its definition is the link
            continue
        taken[href] = n + 1
        line, column = place(_opening_bracket(source, offsets[n]))
        found += _link(directory, href, first + line, column)
    return found


# How far back the opening bracket of a link's text is looked for: a bound, so
# that a file of many links is read in linear time (past it, the "](" stands).
_TEXT_BOUND = 1000


def _opening_bracket(source: str, close: int) -> int:
    """Where the link text that ends at ``close`` (its "]") begins: its "[",
    brackets nested inside counted; ``close`` itself when none is near."""
    depth = 0
    for at in range(close - 1, max(close - _TEXT_BOUND, 0) - 1, -1):
        char = source[at]
        if char == "]":
            depth += 1
        elif char == "[":
            if depth == 0:
                return at
            depth -= 1
    return close


def _destination(source: str, at: int) -> str | None:
    """The destination written at ``at`` (after "]("), normalised as the parser
    normalises its href, or None when none is written there."""
    from markdown_it.common.utils import unescapeAll
    from markdown_it.helpers import parseLinkDestination

    parsed = parseLinkDestination(source, at, len(source))
    if not parsed.ok:
        return None
    return _parser().normalizeLink(unescapeAll(parsed.str))


def _link(directory: str, href: str, line: int, column: int) -> list[Link]:
    raw = unquote(href)
    path = link_path(raw)
    if path is None:
        return []
    return [Link(line, column, raw, resolved(directory, path))]


def link_rows(source: str, text: str) -> list[dict[str, object]]:
    """The ``markdown_links`` rows of the Markdown file ``source`` holding ``text``."""
    return [{"source_file": source, **link._asdict()} for link in links(source, text)]


def link_path(raw: str) -> str | None:
    """The path part of a link target, or None for a link the check skips (an
    anchor in the same file, a target with a URI scheme)."""
    target = raw.strip()
    if not target or target.startswith("#") or _SCHEME.match(target):
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
