"""Compare two revisions of a repository: transitions only a comparison can see.

A revision is read from git objects (``git.py``) into a temporary directory
and indexed the usual way; the transition checks (``checks/transitions``) are
SQL over the head index with the base index attached as ``base``, and ``diff``
lists what changed, record by record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..checks import catalogue as checks
from ..index.build import Derived
from ..index.index_file import Queryable, as_database
from ..index.tempfiles import temporary_directory
from ..read.settings import Settings
from .git import revision_tree

if TYPE_CHECKING:
    import sqlite_utils
    from sqlite_utils.db import Table

# Indexes a tree (the working tree, or a revision's) into a database file.
Indexer = Callable[[Path, Path], object]


def build_revision(repo: Path, rev: str | None, db_path: Path, index: Indexer) -> None:
    """Index revision ``rev`` of ``repo`` (None: the working tree) into ``db_path``."""
    with revision_tree(repo, rev) as tree:
        index(tree, db_path)


@contextmanager
def base_index(repo: Path, base: str, index: Indexer) -> Iterator[Path]:
    """A temporary index of the base revision."""
    with temporary_directory("rev") as tmp:
        db_path = tmp / "base.db"
        build_revision(repo, base, db_path, index)
        yield db_path


# Records matched across the two revisions, one pair per record, the one place
# that says how (the diff and every transition check select from it): by type
# and ID where the ID is one file's on each side, and a duplicated ID's copies
# only file by file. Pairing every copy with every other was quadratic (1,000
# copies of one ID did not finish), and its pairs meant nothing: which copy
# became which cannot be told. Copies are duplicate_id errors already.
RECORD_PAIRS = """
CREATE TEMP VIEW record_pairs AS
WITH head_once AS (
    SELECT record_type, record_id FROM main.records WHERE record_id IS NOT NULL
    GROUP BY record_type, record_id HAVING count(*) = 1
), base_once AS (
    SELECT record_type, record_id FROM base.records WHERE record_id IS NOT NULL
    GROUP BY record_type, record_id HAVING count(*) = 1
)
SELECT h.record_type, h.record_id, h.file AS head_file, b.file AS base_file
FROM main.records h
JOIN base.records b ON b.file = h.file AND b.record_type = h.record_type
                   AND b.record_id = h.record_id
WHERE NOT h.unreadable AND NOT b.unreadable
UNION ALL
SELECT h.record_type, h.record_id, h.file, b.file
FROM head_once o
JOIN base_once ob ON ob.record_type = o.record_type AND ob.record_id = o.record_id
JOIN main.records h ON h.record_type = o.record_type AND h.record_id = o.record_id
JOIN base.records b ON b.record_type = o.record_type AND b.record_id = o.record_id
WHERE b.file != h.file AND NOT h.unreadable AND NOT b.unreadable
"""
# A record unreadable on one side is in no pair (nothing of it can be compared),
# and not deleted: its file is there. The diff says it became unreadable.


@contextmanager
def attached(db_path: Path, base_db: Path) -> Iterator[sqlite_utils.Database]:
    """The head index with the base index attached as ``base``, and the pairs of
    their records (``record_pairs``, a temporary view)."""
    db = as_database(db_path)
    db.attach("base", base_db)
    db.execute(RECORD_PAIRS)
    try:
        yield db
    finally:
        db.conn.commit()
        db.execute("DROP VIEW temp.record_pairs")
        db.execute("DETACH DATABASE base")
        db.close()


def check_transitions(db_path: Path, base_db: Path, settings: Settings | None = None) -> int:
    """Add the transition checks' findings to those of a fresh build, the base attached."""
    with attached(db_path, base_db) as db:
        transitions = checks.load_checks("checks/transitions")
        return checks.run_checks(db, transitions, replace=False, settings=settings)


def compare_findings(db_path: Path, base_db: Path) -> None:
    """Mark each finding of the head ``new`` or ``unchanged`` (its ``baseline``
    column), and keep the base's findings the head no longer has in
    ``absent_findings``."""
    # The same finding is the one of the same identity (checks.IDENTITY_SQL):
    # each lookup is a search of the identity index, linear however many.
    with attached(db_path, base_db) as db:
        if "baseline" not in db["findings"].columns_dict:
            db.execute("ALTER TABLE findings ADD COLUMN baseline TEXT")
        at_base = "EXISTS (SELECT 1 FROM base.findings b WHERE b.identity = f.identity)"
        db.execute(
            f"UPDATE findings AS f SET baseline = "
            f"CASE WHEN {at_base} THEN 'unchanged' ELSE 'new' END"
        )
        in_head = "EXISTS (SELECT 1 FROM main.findings h WHERE h.identity = b.identity)"
        keys = ", ".join(f"b.[{k}]" for k in checks.FINDING_KEYS)
        db.execute("DROP TABLE IF EXISTS absent_findings")
        db.execute(
            f"CREATE TABLE absent_findings AS SELECT {keys} FROM base.findings b "
            f"WHERE NOT {in_head}"
        )
        db.conn.commit()


# A record is matched across revisions by type and ID; one without an ID (it
# could not be read, or lacks the field) by its file instead.
DIFF_SQL = """
WITH
head AS (SELECT h.*, j.json, CASE WHEN h.record_id IS NULL THEN 'file' ELSE 'id' END AS key_kind,
                coalesce(h.record_id, h.file) AS key
         FROM records h LEFT JOIN record_json j ON j.file = h.file),
old AS (SELECT b.*, j.json, CASE WHEN b.record_id IS NULL THEN 'file' ELSE 'id' END AS key_kind,
               coalesce(b.record_id, b.file) AS key
        FROM base.records b LEFT JOIN base.record_json j ON j.file = b.file),
pairs AS (
    SELECT h.record_type, h.record_id, h.key_kind, h.key, b.file AS base_file, h.file AS head_file,
           b.status AS base_status, h.status AS head_status, b.json AS base_json,
           h.json AS head_json
    FROM record_pairs p JOIN head h ON h.file = p.head_file JOIN old b ON b.file = p.base_file
    UNION ALL  -- a record without an ID is matched by its file
    SELECT h.record_type, h.record_id, h.key_kind, h.key, b.file, h.file, b.status, h.status,
           b.json, h.json
    FROM head h JOIN old b ON b.file = h.file AND b.record_type = h.record_type
    WHERE h.key_kind = 'file' AND b.key_kind = 'file'
)
SELECT 'added' AS change, record_type, record_id, file, NULL AS field, NULL AS before,
       status AS after, NULL AS base_json, NULL AS head_json
FROM head h WHERE NOT EXISTS (SELECT 1 FROM old b WHERE b.record_type = h.record_type
                              AND b.key_kind = h.key_kind AND b.key = h.key)
UNION ALL
SELECT 'removed', record_type, record_id, file, NULL, status, NULL, NULL, NULL
FROM old b WHERE NOT EXISTS (SELECT 1 FROM head h WHERE h.record_type = b.record_type
                             AND h.key_kind = b.key_kind AND h.key = b.key)
UNION ALL
SELECT 'status', record_type, record_id, head_file, 'status', base_status, head_status, NULL, NULL
FROM pairs WHERE base_status IS NOT head_status
UNION ALL
SELECT 'moved', record_type, record_id, head_file, NULL, base_file, head_file, NULL, NULL
FROM pairs WHERE base_file != head_file
UNION ALL
SELECT 'reference added', p.record_type, p.record_id, p.head_file, x.field, NULL, x.target_id,
       NULL, NULL
FROM pairs p JOIN refs x ON x.source_file = p.head_file
WHERE NOT EXISTS (SELECT 1 FROM base.refs y
                  WHERE y.source_file = p.base_file AND y.field = x.field
                    AND y.target_id = x.target_id)
UNION ALL
SELECT 'reference removed', p.record_type, p.record_id, p.head_file, y.field, y.target_id, NULL,
       NULL, NULL
FROM pairs p JOIN base.refs y ON y.source_file = p.base_file
WHERE NOT EXISTS (SELECT 1 FROM refs x
                  WHERE x.source_file = p.head_file AND x.field = y.field
                    AND x.target_id = y.target_id)
UNION ALL
SELECT 'edited', record_type, record_id, head_file, NULL, NULL, NULL, base_json, head_json
FROM pairs WHERE json(head_json) IS NOT json(base_json)
UNION ALL
SELECT 'unreadable', h.record_type, h.record_id, h.file, NULL, NULL, NULL, NULL, NULL
FROM records h
WHERE h.unreadable AND EXISTS (SELECT 1 FROM base.records b WHERE b.record_type = h.record_type
                               AND b.record_id = h.record_id AND NOT b.unreadable)
UNION ALL
SELECT 'handoff added', 'handoff_packet', h.packet_dir, h.manifest, NULL, NULL, h.status,
       NULL, NULL
FROM handoff_packets h
WHERE NOT EXISTS (SELECT 1 FROM base.handoff_packets b WHERE b.packet_dir = h.packet_dir)
UNION ALL
SELECT 'handoff removed', 'handoff_packet', b.packet_dir, b.manifest, NULL, b.status, NULL,
       NULL, NULL
FROM base.handoff_packets b
WHERE NOT EXISTS (SELECT 1 FROM handoff_packets h WHERE h.packet_dir = b.packet_dir)
UNION ALL
SELECT 'handoff status', 'handoff_packet', h.packet_dir, h.manifest, 'status', b.status, h.status,
       NULL, NULL
FROM handoff_packets h JOIN base.handoff_packets b ON b.packet_dir = h.packet_dir
WHERE b.status IS NOT h.status
UNION ALL
-- A file of a packet present in both revisions, added or removed or changed in content.
SELECT 'handoff edited', 'handoff_packet', p.packet_dir,
       CASE p.packet_dir WHEN '' THEN f.path ELSE p.packet_dir || '/' || f.path END,
       f.path, f.before, f.after, NULL, NULL
FROM handoff_packets p JOIN base.handoff_packets b ON b.packet_dir = p.packet_dir
JOIN (
    SELECT h.packet_dir, h.path, o.sha256 AS before, h.sha256 AS after
    FROM handoff_files h LEFT JOIN base.handoff_files o
      ON o.packet_dir = h.packet_dir AND o.path = h.path
    WHERE o.sha256 IS NOT h.sha256
    UNION ALL
    SELECT o.packet_dir, o.path, o.sha256, NULL
    FROM base.handoff_files o
    WHERE NOT EXISTS (SELECT 1 FROM handoff_files h
                      WHERE h.packet_dir = o.packet_dir AND h.path = o.path)
) f ON f.packet_dir = p.packet_dir
ORDER BY record_type, record_id, change, field
"""

DIFF_KEYS = ("change", "record_type", "record_id", "file", "field", "before", "after")


def diff(db_path: Path, base_db: Path) -> list[dict[str, Any]]:
    """What changed from the base to the head index, record by record; an edited
    record as one row per changed field (before and after as JSON text)."""
    rows: list[dict[str, Any]] = []
    with attached(db_path, base_db) as db:
        for row in db.query(DIFF_SQL):
            base_json, head_json = row.pop("base_json"), row.pop("head_json")
            if row["change"] == "edited":
                rows += _edited_fields(row, base_json, head_json)
            else:
                rows.append(row)
    return rows


def record_changes(db_path: Path, base_db: Path, base: str) -> list[dict[str, Any]]:
    """What changed since ``base`` (as ``diff``), kept in the head index's
    ``changes`` table, so that a record's story can tell its history."""
    rows = diff(db_path, base_db)
    db = as_database(db_path)
    with db.conn:
        _changes_table(db).delete_where()
        db.table("changes").insert_all(rows)
        db.table("build_info").insert({"key": "base", "value": base}, replace=True)
    db.close()
    return rows


def _edited_fields(row: dict[str, Any], base_json: str | None, head_json: str | None) -> list:
    """One 'edited' row per top-level field whose value changed (status has a row of
    its own)."""
    before, after = _object(base_json), _object(head_json)
    changed = []
    for field in sorted(set(before) | set(after)):
        if field == "status" or before.get(field, _ABSENT) == after.get(field, _ABSENT):
            continue
        changed.append(
            row
            | {
                "field": field,
                "before": _shown_json(before, field),
                "after": _shown_json(after, field),
            }
        )
    return changed  # none: only the status, or only the formatting, changed


_ABSENT = object()


def _object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _shown_json(data: dict[str, Any], field: str) -> str | None:
    return json.dumps(data[field], ensure_ascii=False) if field in data else None


def _changes_table(db: sqlite_utils.Database) -> Table:
    """The head index's ``changes``: what changed since the base, one row a record
    (a field, for an edit), made by the first comparison of the index."""
    table = db.table("changes")
    if not table.exists():
        table.create(
            {
                "id": int,
                "change": str,
                "record_type": str,
                "record_id": str,
                "file": str,
                "field": str,
                "before": str,
                "after": str,
            },
            pk="id",
        )
        table.create_index(["file"])
        table.create_index(["record_type", "record_id"])
        table.create_index(["change"])  # a facet of its page (metadata.yml)
    return table


def _held(db: Queryable) -> bool:
    return db.execute("SELECT 1 FROM build_info WHERE key = 'base'").fetchone() is not None


def _forget(db: sqlite_utils.Database) -> None:
    db.table("changes").drop(ignore=True)
    db.table("build_info").delete_where("key = 'base'")
    db.table("absent_findings").drop(ignore=True)
    if "baseline" in db.table("findings").columns_dict:
        db.execute("UPDATE findings SET baseline = NULL")


# What a comparison writes into the head index (its changes, the base it was made
# against, its findings' baseline states and the base's findings the head lost): a
# build forgets it, as it describes the index it was made with, not the new one.
COMPARISON = Derived(held=_held, forget=_forget)
