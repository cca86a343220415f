"""view_stale's fix: write the views anew from the records (refused while a
record cannot be read: the views would leave it out)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..index.registry_views import commits_views, refusal, unreadable_records
from .fixing import Refusal, Repair

if TYPE_CHECKING:
    import sqlite_utils


def plan(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    """The repairs view_stale's findings call for, and the ones it refuses."""
    unreadable = unreadable_records(db)
    if unreadable and commits_views(db):
        yield Refusal("view_stale", "registry/", refusal(unreadable))
        return
    rows = db.query(
        "SELECT DISTINCT g.path, g.content FROM findings f "
        "JOIN generated_views g ON g.path = f.file WHERE f.[check] = 'view_stale' ORDER BY g.path"
    )
    for row in rows:
        path = repo / row["path"]
        before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        yield Repair("view_stale", row["path"], row["path"], row["content"].encode(), before)
