"""Where in its file a finding is: the line and column of the key its field
names, or of a JSON syntax error, for editors, GitHub annotations and SARIF.

Only files with findings are looked at, after the checks ran (off the build's
fast path), and only from the index: a record's text is in ``record_json``, a
manifest's or lock's in ``handoff_json``, a syntax error's position in its
message. Nothing is read from disk.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..read.parse import array_entries as entries
from ..read.parse import top_level_members
from ..text import Lines

if TYPE_CHECKING:
    import sqlite_utils

# Where a JSON syntax error is, as parse.py words it ("at line 29 column 1").
_SYNTAX = re.compile(r"\bat line (\d+) column (\d+)\b")
# A finding's field names a top-level key first, and maybe an entry of it:
# "tags[1]", "input_packets[0].manifest".
_FIELD = re.compile(r"([^\[.]+)(?:\[(\d{1,6})\])?")


def locate(db: sqlite_utils.Database, findings: list[dict[str, Any]]) -> None:
    """Set ``line`` and ``column`` (1-based) on each finding where they are known
    (a finding whose check gave its line keeps it: a Markdown link's)."""
    wanted = sorted({f["file"] for f in findings if f.get("file") and f.get("field")})
    keys = _key_positions(db, wanted)
    for f in findings:
        if f.get("line") is not None:
            continue
        f["line"] = f["column"] = None
        syntax = _SYNTAX.search(f.get("message") or "") if f["check"] == "file_unreadable" else None
        if syntax:
            f["line"], f["column"] = int(syntax.group(1)), int(syntax.group(2))
            continue
        top = _FIELD.match(f.get("field") or "")
        spots = keys.get(f.get("file") or "", {})
        at = None
        if top and top.group(2) is not None:  # an entry of an array: where it begins
            at = spots.get((top.group(1), int(top.group(2))))
        if top and at is None:
            at = spots.get(top.group(1))
        if at:
            f["line"], f["column"] = at


def _key_positions(db: sqlite_utils.Database, files: list[str]) -> dict[str, dict[Any, tuple]]:
    """For each record, manifest or lock file: where each top-level key is written
    (its last time: a key written twice has the value of its last, which is the
    one indexed and judged), and, for a key holding an array, where each entry
    begins (keyed (key, index))."""
    found: dict[str, dict[Any, tuple[int, int]]] = {}
    for at in range(0, len(files), 500):
        chunk = files[at : at + 500]
        marks = ", ".join("?" * len(chunk))
        sql = (
            f"SELECT file, json FROM record_json WHERE file IN ({marks}) "
            f"UNION ALL SELECT file, json FROM handoff_json WHERE file IN ({marks})"
        )
        for row in db.query(sql, chunk + chunk):
            text = row["json"] or ""
            place = Lines(text)
            spots: dict[Any, tuple[int, int]] = {}
            last = {m.key: m for m in top_level_members(text) or []}
            for m in last.values():
                spots[m.key] = place(m.key_start)
                for n, start in enumerate(entries(text, m.value_start, m.value_end)):
                    spots[(m.key, n)] = place(start)
            found[row["file"]] = spots
    return found
