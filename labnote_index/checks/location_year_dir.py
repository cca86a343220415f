"""location_year_dir's fix: move the record into the directory of its created_at
year, unless the file exists there (never on a date location_id_date disputes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .fixing import Refusal, Repair, renamed

if TYPE_CHECKING:
    import sqlite_utils


def plan(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    """The repairs location_year_dir's findings call for, and the ones it refuses."""
    rows = db.query(
        "SELECT DISTINCT r.file, substr(r.created_at, 1, 4) AS year, "
        "EXISTS (SELECT 1 FROM findings d WHERE d.file = r.file "
        "        AND d.[check] = 'location_id_date') AS disputed "
        "FROM findings f JOIN records r ON r.file = f.file "
        "WHERE f.[check] = 'location_year_dir' ORDER BY r.file"
    )
    for row in rows:
        file, parts = row["file"], row["file"].split("/")
        if row["disputed"]:
            # The year to move to is created_at's, which location_id_date says
            # disagrees with the ID: which of the two is wrong is for a person.
            yield Refusal(
                "location_year_dir",
                file,
                "its created_at disagrees with its ID's date (location_id_date): correct "
                "whichever is wrong first; the record is not moved on a date in dispute",
            )
            continue
        if len(parts) != 4 or parts[0] != "registry":
            yield Refusal("location_year_dir", file, "not in a year directory: move it by hand")
            continue
        final = "/".join([*parts[:2], row["year"], parts[3]])
        yield renamed("location_year_dir", file, final, repo)
