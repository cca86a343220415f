"""Resolve relationships in SQL: each raw target ID to the row it names.

Relationship tables keep the target exactly as written and a resolved target
column; a row left unresolved is an orphan, which the checks find with plain
SQL. On an incremental build only the rows that may resolve differently are
looked up again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils


# Each relationship's resolution, and (second) which of its rows an incremental
# build looks up again; :changed is the JSON list of files read again or removed.
RESOLVE = [
    # A reference resolves to a record of an allowed type with that ID; of
    # duplicates, the first file in path order (duplicates are their own finding).
    (
        """
        UPDATE refs SET target_file = (
            SELECT min(r.file) FROM records r
            JOIN reference_rules rule ON rule.target_type = r.record_type
            WHERE rule.source_type = refs.source_type AND rule.field = refs.field
              AND r.record_id = refs.target_id
        )
        """,
        """
        target_file IS NULL OR target_file IN (SELECT value FROM json_each(:changed))
        OR target_id IN (SELECT r.record_id FROM records r
                         WHERE r.file IN (SELECT value FROM json_each(:changed)))
        """,
    ),
    (
        """
        UPDATE tag_uses SET tag_file = (
            SELECT min(r.file) FROM records r
            WHERE r.record_type = 'tag' AND r.record_id = tag_uses.tag_slug
        )
        """,
        """
        tag_file IS NULL OR tag_file IN (SELECT value FROM json_each(:changed))
        OR tag_slug IN (SELECT r.record_id FROM records r
                        WHERE r.file IN (SELECT value FROM json_each(:changed)))
        """,
    ),
    # An input_packets entry names its upstream by manifest path. Handoff
    # tables are small: they are resolved in full every time.
    (
        """
        UPDATE input_packets SET upstream = (
            SELECT p.packet_dir FROM handoff_packets p WHERE p.manifest = input_packets.manifest
        )
        """,
        None,
    ),
    (
        """
        UPDATE handoff_documents SET ([exists], sha256) = (
            SELECT count(f.id) > 0, min(f.sha256) FROM handoff_files f
            WHERE f.packet_dir = handoff_documents.packet_dir AND f.path = handoff_documents.path
        )
        """,
        None,
    ),
    (
        """
        UPDATE locked_files SET current_sha256 = (
            SELECT f.sha256 FROM handoff_files f
            WHERE f.packet_dir = locked_files.packet_dir AND f.path = locked_files.path
        )
        """,
        None,
    ),
]


# The records linked to any of :files: by a reference, either way, or by
# sharing a record ID (a copy of it, which a reference may resolve to instead).
# Each row is looked at once (the IDs first: N changed copies of one ID would
# make a join N * N rows).
_LINKED = """
SELECT source_file FROM refs WHERE target_file IN (SELECT value FROM json_each(:files))
UNION SELECT target_file FROM refs
  WHERE source_file IN (SELECT value FROM json_each(:files)) AND target_file IS NOT NULL
UNION SELECT file FROM records WHERE record_id IN
  (SELECT record_id FROM records WHERE file IN (SELECT value FROM json_each(:files)))
"""


def linked_files(db: sqlite_utils.Database, files: list[str]) -> set[str]:
    """The record files linked to ``files`` as the index is now: by a resolved
    reference from or to one of them, or by sharing a record ID with one.
    Asked before an incremental build forgets the files and after it resolves
    their references again, it is every file whose links the build can change."""
    return {path for (path,) in db.execute(_LINKED, {"files": json.dumps(files)})}


def delete_in(db: sqlite_utils.Database, table: str, column: str, values: list[Any]) -> None:
    """DELETE the rows whose column holds one of values, a bounded chunk at a time."""
    for start in range(0, len(values), 500):
        chunk = values[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        db.execute(f"DELETE FROM [{table}] WHERE [{column}] IN ({marks})", chunk)


def resolve_references(db: sqlite_utils.Database, changed: list[str] | None = None) -> None:
    """Fill in the resolved target of every relationship row.

    After an incremental load, ``changed`` names the files read again or
    removed: only references that may resolve differently are looked up again
    (unresolved ones, ones into a changed file, ones naming an ID a changed
    file now holds). The rest cannot have moved.
    """
    for sql, again in RESOLVE:
        if changed is None or again is None:
            db.execute(sql)
        else:
            db.execute(f"{sql} WHERE {again}", {"changed": json.dumps(changed)})
