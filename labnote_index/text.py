"""Text for people: record content made safe to print, counts in plain English.

At the bottom of the package: reports, lineage trees and diffs all use it.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

# Control characters in repository text (a newline, an escape sequence, a
# bidirectional override) would let a record write lines of its own into a
# terminal or a CI log, where a line starting "::" is a GitHub Actions command.
# Text for people shows them escaped; JSON escapes them itself.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown(value: Any) -> str:
    """A value as one line of text that cannot act on a terminal: control
    characters written as Python escapes (a newline as \\n)."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 file``, ``2 files`` (``nouns``: a plural not made with an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {nouns or noun + 's'}"


def findings_phrase(errors: int, warnings: int, files: int) -> str:
    """What a set of findings comes to, the same words wherever it is said."""
    if not errors and not warnings:
        return "no findings"
    counts = f"{plural(errors, 'error')} and {plural(warnings, 'warning')}"
    return f"{counts} in {plural(files, 'file')}"


def parent_dir(path: str) -> str:
    """The directory of a repository-relative path ("" at the root)."""
    return path.rpartition("/")[0]


def as_text(value: Any) -> str | None:
    """A value for a text column: strings as they are, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


class Lines:
    """The line and column (1-based) of an offset of ``text``: the line starts are
    found once, and each offset is a binary search (a file of 100,000 findings
    or links is not counted through from its start again for each)."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def __call__(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1
