"""Where in its file a finding is: the line and column of the key its field
names, or of a JSON syntax error, for editors, GitHub annotations and SARIF.

Only files with findings are looked at, after the checks ran (off the build's
fast path), and only from the index: a record's text is in ``record_json``, a
syntax error's position in its message. Nothing is read from disk.
"""

from __future__ import annotations

import re
from typing import Any

import sqlite_utils

from .parse import top_level_members

# Where a JSON syntax error is, as parse.py words it ("at line 29 column 1").
_SYNTAX = re.compile(r"\bat line (\d+) column (\d+)\b")
# A finding's field names a top-level key first: "tags[1]", "input_packets[0].manifest".
_TOP_KEY = re.compile(r"[^\[.]+")


def locate(db: sqlite_utils.Database, findings: list[dict[str, Any]]) -> None:
    """Set ``line`` and ``column`` (1-based) on each finding where they are known."""
    wanted = sorted({f["file"] for f in findings if f.get("file") and f.get("field")})
    keys = _key_positions(db, wanted)
    for f in findings:
        f["line"] = f["column"] = None
        syntax = _SYNTAX.search(f.get("message") or "") if f["check"] == "file_unreadable" else None
        if syntax:
            f["line"], f["column"] = int(syntax.group(1)), int(syntax.group(2))
            continue
        top = _TOP_KEY.match(f.get("field") or "")
        at = keys.get(f.get("file") or "", {}).get(top.group(0)) if top else None
        if at:
            f["line"], f["column"] = at


def _key_positions(db: sqlite_utils.Database, files: list[str]) -> dict[str, dict[str, tuple]]:
    """For each record file: where each top-level key is written (its first time)."""
    found: dict[str, dict[str, tuple[int, int]]] = {}
    for at in range(0, len(files), 500):
        chunk = files[at : at + 500]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT file, json FROM record_json WHERE file IN ({marks})"
        for row in db.query(sql, chunk):
            members = top_level_members(row["json"] or "") or []
            text, spots = row["json"], {}
            for m in members:
                if m.key not in spots:
                    line = text.count("\n", 0, m.key_start) + 1
                    column = m.key_start - (text.rfind("\n", 0, m.key_start) + 1) + 1
                    spots[m.key] = (line, column)
            found[row["file"]] = spots
    return found
