"""location_filename's fix: rename the file to <ID>.json, unless that file exists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..text import parent_dir
from .fixing import Refusal, Repair, renamed

if TYPE_CHECKING:
    import sqlite_utils

# A file name an ID may become: no separator, nothing hidden, and short enough
# for every file system (255 bytes, ".json" included).
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,249}$")


def plan(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    """The repairs location_filename's findings call for, and the ones it refuses."""
    rows = db.query(
        "SELECT DISTINCT r.file, r.record_id FROM findings f JOIN records r ON r.file = f.file "
        "WHERE f.[check] = 'location_filename' ORDER BY r.file"
    )
    for row in rows:
        file, record_id = row["file"], row["record_id"]
        if not _FILE_NAME.fullmatch(record_id or ""):
            why = "is too long for" if len(record_id or "") > 250 else "cannot be"
            yield Refusal("location_filename", file, f"{record_id!r} {why} a file name")
            continue
        directory = parent_dir(file)
        final = f"{directory}/{record_id}.json" if directory else f"{record_id}.json"
        yield renamed("location_filename", file, final, repo)
