"""What a check's fix plans, and the helpers its planners share.

A check with a mechanical repair keeps it beside its SQL, in ``checks/<id>.py``:
its ``plan(db, repo)`` yields a Repair (what to do to one file) or a Refusal (a
finding it will not repair, and why) for each of the check's findings. Planning
writes nothing; ``repair/`` refuses what is unsafe and applies the rest.
"""

from __future__ import annotations

import difflib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from ..read.parse import UTF8_BOM, parse_json_bytes, read_regular, top_level_members
from ..text import shown


@dataclass
class Repair:
    """What one fix does to one file: moves, then (maybe) new content at ``final``."""

    check: str
    file: str  # the file the repair is for, repository-relative
    final: str  # where it ends up
    content: bytes | None = None  # its new content (None: unchanged)
    before: bytes | None = None  # its content now (None: no file there yet)
    also: list[tuple[str, str]] = field(default_factory=list)  # other files moved with it
    notes: list[str] = field(default_factory=list)  # what was left, and why
    status: str = "planned"  # planned, applied, failed: <why>

    def paths(self) -> set[str]:
        """Every repository path this repair touches."""
        return {self.file, self.final, *(p for move in self.also for p in move)}

    def describe(self) -> str:
        """``rename a -> b`` lines and a unified diff of the content, as text."""
        lines = [f"rename {shown(a)} -> {shown(b)}" for a, b in self.also]
        if self.final != self.file:
            lines.append(f"rename {shown(self.file)} -> {shown(self.final)}")
        if self.content is not None:
            old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
            new = self.content.decode("utf-8", "replace").splitlines(keepends=True)
            diff = difflib.unified_diff(old, new, f"a/{self.file}", f"b/{self.final}")
            lines += [shown(line.rstrip("\n")) for line in diff]
        lines += [f"left: {shown(note)}" for note in self.notes]
        return "\n".join(lines)


@dataclass
class Refusal:
    """A finding ``fix`` will not repair, and why."""

    check: str
    file: str
    reason: str


# What plans the repairs of one check's findings (a fix module's ``plan``).
Planner = Callable[[sqlite_utils.Database, Path], Iterator[Repair | Refusal]]


def read_file(repo: Path, path: str) -> bytes:
    """A repository file's bytes, as a planner reads them: a regular file, never
    through a symlink in its place (OSError otherwise)."""
    return read_regular(repo / path)


def renamed(check: str, file: str, final: str, repo: Path) -> Repair | Refusal:
    """A move of ``file`` to ``final``, unless something is there already."""
    try:
        os.lstat(repo / final)
    except FileNotFoundError:
        return Repair(check, file, final)
    except OSError as exc:
        return Refusal(check, file, f"{final} cannot be examined ({exc.strerror})")
    return Refusal(check, file, f"{final} exists already")


def token_edit(
    raw: bytes,
    *,
    keys: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
    first: dict[str, Any] | None = None,
) -> bytes | str:
    """``raw`` with only the JSON tokens a repair is about changed: the keys named
    in ``keys`` renamed, the values of those in ``values`` written anew, the
    members ``first`` put before all others; every other byte as it was.

    The result is read back and must hold the same values as before everywhere
    else, and write no key twice that was not, or the edit is refused: the reason
    (str) instead of the bytes."""
    keys, values, first = keys or {}, values or {}, first or {}
    bom = raw.startswith(UTF8_BOM)
    try:  # the file is read again to be fixed: it may no longer be what was indexed
        text = raw[len(UTF8_BOM) :].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    members = top_level_members(text)
    if members is None:
        return "not one JSON object"
    written = Counter(m.key for m in members)
    twice = sorted(k for k in {*keys, *values} if written[k] > 1)
    if twice:
        return f"{', '.join(twice)} is written more than once"
    edits: list[tuple[int, int, str]] = []
    for m in members:
        if m.key in keys:
            edits.append((m.key_start, m.key_end, _token(keys[m.key])))
        if m.key in values:
            edits.append((m.value_start, m.value_end, _token(values[m.key])))
    if first:
        opening = text.index("{") + 1
        gap = text[opening : members[0].key_start] if members else ""
        head = (", " if not gap else "," + gap).join(
            f"{_token(k)}: {_token(v)}" for k, v in first.items()
        )
        at = members[0].key_start if members else opening
        edits.append((at, at, head + ("," + (gap or " ") if members else "")))
    for start, end, token in sorted(edits, reverse=True):
        text = text[:start] + token + text[end:]
    # A key added, or renamed onto one already there, would be read back as the
    # last of the two: the same values, in a file json_strict then reports.
    now = Counter(m.key for m in top_level_members(text) or ())
    clashes = sorted(k for k, n in now.items() if n > max(written[k], 1))
    if clashes:
        return f"{', '.join(clashes)} would be written twice"
    try:
        content = (UTF8_BOM if bom else b"") + text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate a record's own escapes spelt
        return "a value UTF-8 cannot hold"
    before, error, _, _ = parse_json_bytes(raw, fast=False)
    if not isinstance(before, dict):  # one object to our reading, not to JSON's (NaN)
        return error or "not one JSON object"
    after, error, _, _ = parse_json_bytes(content, fast=False)
    expected: dict[Any, Any] = {
        **first,
        **{keys.get(k, k): values.get(k, v) for k, v in before.items()},
    }
    if error or after != expected:
        return "the edit would change more than its field"
    return content


def _token(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
