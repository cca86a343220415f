"""The tables of the index, created through sqlite-utils.

Relationship tables (``refs``, ``tag_uses``) keep the target ID exactly as
written and the resolved target row as a real foreign key; a row whose target
did not resolve is an orphan, which the checks find with plain SQL.
"""

from __future__ import annotations

import sqlite_utils

from .formats import RECORD_TYPES, REFERENCE_RULES, STATUS_BUCKETS
from .models import column_types

RECORD_TABLES = [rt.table for rt in RECORD_TYPES.values()]

# Views that name a relationship for people browsing the index.
VIEWS = {
    # Every reference whose target does not exist, with the type it should have had.
    "orphans": """
        SELECT x.field, x.source_type AS record_type, x.source_id AS record_id,
               x.source_file AS file, x.target_id AS missing_id,
               (SELECT group_concat(rule.target_type, ' or ') FROM reference_rules rule
                WHERE rule.source_type = x.source_type AND rule.field = x.field) AS expected_type
        FROM refs x WHERE x.target_file IS NULL
        UNION ALL
        SELECT 'tags', u.source_type, u.source_id, u.source_file, u.tag_slug, 'tag'
        FROM tag_uses u WHERE u.tag_file IS NULL
    """,
    "derivations": """
        SELECT id, source_file, source_type, source_id, position,
               target_id AS derivative_of, target_file
        FROM refs WHERE field = 'derivative_of'
    """,
    # Each message with the root of its reply thread and its depth below it.
    # UNION (not UNION ALL) and the depth bound keep a reply cycle from looping.
    "reply_chains": """
        WITH RECURSIVE chain(file, message_id, parent_file, root_file, depth) AS (
            SELECT r.file, r.record_id, NULL, r.file, 0
            FROM records r
            WHERE r.record_type = 'message'
              AND NOT EXISTS (SELECT 1 FROM refs x
                              WHERE x.source_file = r.file AND x.field = 'reply_to'
                                AND x.target_file IS NOT NULL)
            UNION
            SELECT x.source_file, x.source_id, x.target_file, chain.root_file, chain.depth + 1
            FROM refs x JOIN chain ON x.target_file = chain.file
            WHERE x.field = 'reply_to' AND chain.depth < 1000
        )
        SELECT chain.file, chain.message_id, chain.parent_file,
               chain.root_file, root.record_id AS root_message_id, chain.depth
        FROM chain JOIN records root ON root.file = chain.root_file
    """,
}


def create_tables(db: sqlite_utils.Database) -> None:
    """Create every table of an empty index, with keys, foreign keys and indexes."""
    db["files"].create(
        {
            "path": str,
            "kind": str,
            "size": int,
            "mtime_ns": int,
            "sha256": str,
            "record_type": str,
            "error": str,
        },
        pk="path",
    )
    db["artifacts"].create(
        {"path": str, "status": str, "size": int, "sha256": str, "body": str},
        pk="path",
    )
    db["records"].create(
        {
            "file": str,
            "record_type": str,
            "record_id": str,
            "created_at": str,
            "status": str,
            "artifact_field": str,
            "artifact_path": str,
            "valid": bool,
            "layout_enforced": bool,
            "registry_dir": str,
            "parent_dir": str,
            "stem": str,
        },
        pk="file",
        foreign_keys=[("file", "files", "path"), ("artifact_path", "artifacts", "path")],
    )
    for name, rt in RECORD_TYPES.items():
        columns: dict[str, type] = {"file": str}
        columns.update(column_types(name))
        columns.update({"extra": str, "valid": bool})
        db[rt.table].create(columns, pk="file", foreign_keys=[("file", "records", "file")])
        db[rt.table].create_index([rt.id_field])
    db["refs"].create(
        {
            "id": int,
            "source_file": str,
            "source_type": str,
            "source_id": str,
            "field": str,
            "position": int,
            "target_id": str,
            "target_file": str,
        },
        pk="id",
        foreign_keys=[("source_file", "records", "file"), ("target_file", "records", "file")],
    )
    db["tag_uses"].create(
        {
            "id": int,
            "source_file": str,
            "source_type": str,
            "source_id": str,
            "position": int,
            "tag_slug": str,
            "tag_file": str,
        },
        pk="id",
        foreign_keys=[("source_file", "records", "file"), ("tag_file", "tags", "file")],
    )
    db["source_refs"].create(
        {
            "id": int,
            "source_file": str,
            "source_type": str,
            "source_id": str,
            "position": int,
            "ref": str,
        },
        pk="id",
        foreign_keys=[("source_file", "records", "file")],
    )
    db["validation_errors"].create(
        {
            "id": int,
            "file": str,
            "record_type": str,
            "record_id": str,
            "field": str,
            "error_type": str,
            "message": str,
        },
        pk="id",
        foreign_keys=[("file", "files", "path")],
    )
    db["legacy_fields"].create(
        {
            "id": int,
            "file": str,
            "record_type": str,
            "record_id": str,
            "legacy_field": str,
            "canonical_field": str,
            "note": str,
        },
        pk="id",
        foreign_keys=[("file", "files", "path")],
    )
    _create_format_tables(db)


def create_indexes(db: sqlite_utils.Database) -> None:
    """Indexes on every join column; built after the bulk load, which is faster."""
    db["records"].create_index(["record_id", "record_type"])
    db["records"].create_index(["record_type", "status"])
    db["records"].create_index(["artifact_path"])
    db["refs"].create_index(["source_file"])
    db["refs"].create_index(["target_id"])
    db["refs"].create_index(["target_file"])
    db["refs"].create_index(["field"])
    db["tag_uses"].create_index(["source_file"])
    db["tag_uses"].create_index(["tag_slug"])
    db["source_refs"].create_index(["source_file"])
    db["validation_errors"].create_index(["file"])
    db["validation_errors"].create_index(["error_type"])
    db["legacy_fields"].create_index(["file"])
    for name, sql in VIEWS.items():
        db.create_view(name, sql, replace=True)


def _create_format_tables(db: sqlite_utils.Database) -> None:
    """The rules of FORMAT.md as tables, so checks join them instead of repeating them."""
    db["record_types"].insert_all(
        (
            {
                "record_type": rt.name,
                "table_name": rt.table,
                "id_field": rt.id_field,
                "id_grammar": rt.id_grammar,
                "directory": rt.directory,
                "sub_directory": rt.sub_directory,
                "artifact_field": rt.artifact_field,
                "artifact_prefix": rt.artifact_prefix,
            }
            for rt in RECORD_TYPES.values()
        ),
        pk="record_type",
    )
    db["status_buckets"].insert_all(
        (
            {"record_type": record_type, "status": status, "bucket": bucket}
            for record_type, buckets in STATUS_BUCKETS.items()
            for status, bucket in buckets.items()
        ),
        pk=("record_type", "status"),
    )
    db["reference_rules"].insert_all(
        (
            {
                "source_type": rule.source_type,
                "field": rule.field,
                "target_type": rule.target_type,
                "many": rule.many,
            }
            for rule in REFERENCE_RULES
        ),
        pk=("source_type", "field", "target_type"),
    )


RESOLVE_SQL = [
    # A reference resolves to a record of an allowed type with that ID; of
    # duplicates, the first file in path order (duplicates are their own finding).
    """
    UPDATE refs SET target_file = (
        SELECT min(r.file) FROM records r
        JOIN reference_rules rule ON rule.target_type = r.record_type
        WHERE rule.source_type = refs.source_type AND rule.field = refs.field
          AND r.record_id = refs.target_id
    )
    """,
    """
    UPDATE tag_uses SET tag_file = (
        SELECT min(r.file) FROM records r
        WHERE r.record_type = 'tag' AND r.record_id = tag_uses.tag_slug
    )
    """,
]


def resolve_references(db: sqlite_utils.Database) -> None:
    """Fill in the resolved target of every relationship row."""
    for sql in RESOLVE_SQL:
        db.execute(sql)
