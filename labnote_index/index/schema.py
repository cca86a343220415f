"""The tables of the index, defined through sqlite-utils (and made from the
script of what it makes of them, ``schema.sql``).

Relationship tables (``refs``, ``tag_uses``) keep the target ID exactly as
written and the resolved target row as a real foreign key; a row whose target
did not resolve is an orphan, which the checks find with plain SQL.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from ..format.rules import (
    MANIFEST_STATUS_RANK,
    MANIFEST_STATUSES,
    RECORD_TYPES,
    REFERENCE_RULES,
    STATUS_BUCKETS,
    STATUS_TRANSITIONS,
)
from .index_file import as_database
from .metadata import METADATA_DATABASE, described_index
from .sql_views import FTS_COLUMNS, VIEWS

if TYPE_CHECKING:
    import sqlite_utils

RECORD_TABLES = [rt.table for rt in RECORD_TYPES.values()]


# What a person reading a record table looks for first, after its file: the ID,
# the status and what it is about; the same on every row (record_type,
# schema_version) comes last.
_FIRST = ("status", "summary", "topic", "display_name", "created_at")
_LAST = ("record_type", "schema_version")


def record_columns(record_type: str, id_field: str) -> dict[str, type]:
    """The columns of a record type's table, in the order people read them."""
    from ..format.models import column_types  # pydantic: only when tables are defined

    fields = column_types(record_type)
    first = [id_field, *(f for f in _FIRST if f in fields)]
    rest = [f for f in fields if f not in first and f not in _LAST]
    order = [*first, *rest, *(f for f in _LAST if f in fields)]
    return {"file": str, **{f: fields[f] for f in order}, "extra": str, "valid": bool}


def create_markdown_reads(db: sqlite_utils.Database) -> None:
    """The build's own table of what it read of each Markdown file as the files
    were read (in the workers too): the artifact refresh takes a record's
    artifact from here rather than read it a second time, and drops the table
    (an index never holds it)."""
    db.table("markdown_reads").create(
        {
            "path": str,
            "dir": str,
            "inode": int,
            "size": int,
            "sha256": str,
            "links": int,
            "body": str,
        },
        if_not_exists=True,
    )


# What define_tables makes, as one script (schema_script): run in one call, it
# takes 2-3.5 ms where sqlite-utils' look at each table it refers to takes
# 9-17 ms, which every full build and every worker's shard pays.
# `make schema` writes it; a test holds it equal to what sqlite-utils makes now.
SCHEMA_SCRIPT = Path(__file__).with_name("schema.sql")
SCRIPT_HEADER = "-- Written by `make schema` from index/schema.py (define_tables); never by hand."


def create_tables(db: sqlite_utils.Database) -> None:
    """Create every table of an empty index, with keys, foreign keys and indexes
    (``define_tables``' statements, from ``schema.sql``)."""
    db.conn.executescript(SCHEMA_SCRIPT.read_text(encoding="utf-8"))


def schema_script() -> str:
    """The statements ``define_tables`` makes through sqlite-utils, in the order
    it makes them, then the rows of the format tables, as one SQL script."""
    db = as_database(sqlite3.connect(":memory:"))
    define_tables(db)
    made = db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
    rows = (s for s in db.conn.iterdump() if s.startswith("INSERT INTO "))
    statements = "".join(f"{sql.rstrip(';')};\n" for sql in [*(sql for (sql,) in made), *rows])
    return f"{SCRIPT_HEADER}\n{statements}"


def define_tables(db: sqlite_utils.Database) -> None:
    """Every table of an empty index, with keys, foreign keys and indexes, as
    sqlite-utils makes them: what ``schema.sql`` is made from."""
    db.table("files").create(
        {
            "path": str,
            "kind": str,
            "size": int,
            "mtime_ns": int,
            "ctime_ns": int,
            "inode": int,
            # 1 when the walk found a regular file itself (no symlink): the
            # artifact refresh takes its stat from here, not from a second look.
            "regular_file": int,
            "sha256": str,
            # A generated view's text with CRLF read as LF (compared with the view).
            "text_sha256": str,
            "record_type": str,
            "error": str,
        },
        pk="path",
    )
    db.table("artifacts").create(
        {
            "path": str,
            "dir": str,  # its directory ("" the top): git's word is taken by directory
            "status": str,
            "size": int,
            "mtime_ns": int,
            "ctime_ns": int,
            "inode": int,
            "sha256": str,
            "links": int,
            "body": str,
            "regular_file": int,
        },
        pk="path",
        not_null={"dir"},
    )
    create_markdown_reads(db)
    db.table("build_info").create({"key": str, "value": str}, pk="key")
    # Each record file's JSON exactly as read: the views are made from it,
    # as the reference generator makes them from the parsed files.
    db.table("record_json").create(
        {"file": str, "json": str}, pk="file", foreign_keys=[("file", "files", "path")]
    )
    # Each handoff manifest's, template's and lock's JSON as read: where in it a
    # finding is (positions.py) is found from it, never by reading the file again.
    db.table("handoff_json").create(
        {"file": str, "json": str}, pk="file", foreign_keys=[("file", "files", "path")]
    )
    db.table("generated_views").create({"path": str, "sha256": str, "content": str}, pk="path")
    db.table("records").create(
        {
            "file": str,
            "record_type": str,
            "record_id": str,
            "created_at": str,
            "status": str,
            "artifact_field": str,
            "artifact_path": str,
            "valid": bool,
            # A record file that could not be read or parsed: only what its
            # location says (type, ID from the file name) is known.
            "unreadable": bool,
            "layout_enforced": bool,
            "registry_dir": str,
            "parent_dir": str,
            "sub_dir": str,
            "stem": str,
        },
        pk="file",
        foreign_keys=[("file", "files", "path"), ("artifact_path", "artifacts", "path")],
    )
    for name, rt in RECORD_TYPES.items():
        db.table(rt.table).create(
            record_columns(name, rt.id_field),
            pk="file",
            foreign_keys=[("file", "records", "file")],
        )
    db.table("refs").create(
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
    db.table("tag_uses").create(
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
    db.table("source_refs").create(
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
    db.table("validation_errors").create(
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
    db.table("legacy_fields").create(
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
    # Every repository-relative link of a Markdown file (a record's artifact or
    # any other .md): the target as written, and normalised (None: it leaves
    # the repository); link_targets says what each target is on disk.
    db.table("markdown_links").create(
        {
            "id": int,
            "source_file": str,
            "line": int,
            "column": int,
            "raw_target": str,
            "target": str,
        },
        pk="id",
        foreign_keys=[("source_file", "files", "path")],
    )
    db.table("link_targets").create(
        {"path": str, "dir": str, "status": str, "regular_file": int, "ctime_ns": int},
        pk="path",
        not_null={"dir"},
    )
    # Records and packets on a cycle of reply_to, derivative_of or input_packets
    # (cycles.py works them out; the cycle checks read them).
    db.table("cycle_members").create(
        {"relation": str, "node": str, "cycle": int}, pk=("relation", "node")
    )
    _create_handoff_tables(db)
    _create_format_tables(db)


def _create_handoff_tables(db: sqlite_utils.Database) -> None:
    """Handoff packets keyed by their directory; files and documents relative to it."""
    db.table("handoff_packets").create(
        {
            "packet_dir": str,
            "manifest": str,
            "dir_role": str,
            "dir_milestone": str,
            "dir_packet_version": str,
            "role": str,
            "milestone": str,
            "packet_version": str,
            "status": str,
            "created_at": str,
            "updated_at": str,
            "summary": str,
            "version_number": int,
            "schema_version": str,
            "blocked": bool,
            "handoff_to": str,
            "return_to": str,
            "source_scopes": str,
            "open_questions": str,
            "required_confirmations": str,
            "extra": str,
            "valid": bool,
        },
        pk="packet_dir",
        foreign_keys=[("manifest", "files", "path")],
    )
    # Packet templates: checked as manifests, never packets (no lineage, no inputs).
    db.table("handoff_templates").create(
        {
            "manifest": str,
            "dir_role": str,
            "role": str,
            "milestone": str,
            "packet_version": str,
            "status": str,
            "summary": str,
            "schema_version": str,
            "documents": str,
            "handoff_to": str,
            "return_to": str,
            "extra": str,
            "valid": bool,
        },
        pk="manifest",
        foreign_keys=[("manifest", "files", "path")],
    )
    db.table("handoff_files").create(
        {
            "id": int,
            "packet_dir": str,
            "path": str,
            "size": int,
            "mtime_ns": int,
            "ctime_ns": int,
            "inode": int,
            "sha256": str,
            "error": str,
        },
        pk="id",
        foreign_keys=[("packet_dir", "handoff_packets", "packet_dir")],
    )
    db.table("handoff_documents").create(
        {
            "id": int,
            "packet_dir": str,
            "position": int,
            "path": str,
            "type": str,
            "required": bool,
            "description": str,
            "exists": bool,
            "sha256": str,
        },
        pk="id",
        foreign_keys=[("packet_dir", "handoff_packets", "packet_dir")],
    )
    db.table("input_packets").create(
        {
            "id": int,
            "consumer": str,
            "position": int,
            "role": str,
            "milestone": str,
            "packet_version": str,
            "manifest": str,
            "status_at_consumption": str,
            "consumption_status": str,
            "extra": str,
            "upstream": str,
        },
        pk="id",
        foreign_keys=[
            ("consumer", "handoff_packets", "packet_dir"),
            ("upstream", "handoff_packets", "packet_dir"),
        ],
    )
    db.table("packet_locks").create(
        {
            "lock_file": str,
            "packet_dir": str,
            "role": str,
            "milestone": str,
            "packet_version": str,
            "status": str,
            "schema_version": str,
            "extra": str,
        },
        pk="lock_file",
        foreign_keys=[
            ("lock_file", "files", "path"),
            ("packet_dir", "handoff_packets", "packet_dir"),
        ],
    )
    db.table("locked_files").create(
        {
            "id": int,
            "lock_file": str,
            "packet_dir": str,
            "path": str,
            "recorded_sha256": str,
            "current_sha256": str,
        },
        pk="id",
        foreign_keys=[("lock_file", "packet_locks", "lock_file")],
    )


def create_lookup_indexes(db: sqlite_utils.Database) -> None:
    """The indexes the resolve searches (resolve.py), made before it; the
    columns it fills are indexed after it (``create_indexes``): an index kept
    up row by row costs an UPDATE more than one built once from its result."""
    # With the file in the index, a reference's target is read from the index
    # alone, not from each record's row.
    db.table("records").create_index(["record_id", "record_type", "file"])
    db.table("handoff_packets").create_index(["manifest"])
    db.table("handoff_files").create_index(["packet_dir", "path"])


# Indexes of the few rows a check or a refresh looks for among every row, on
# every build (a file that cannot be read, one left unhashed, an artifact with
# a second name): a search of a handful of rows, where a plain index's planner,
# blind to how few they are, scans the table. Each query's WHERE implies the
# index's, which is what lets SQLite use it.
PARTIAL_INDEXES = {
    # file_unreadable; the files found changed as read (changed.record_state)
    "idx_files_error": "files (error) WHERE error IS NOT NULL",
    # the Markdown files the loader left for markdown_files.refresh_markdown_links
    "idx_files_unhashed": "files (kind) WHERE sha256 IS NULL",
    "idx_handoff_files_error": "handoff_files (packet_dir) WHERE error IS NOT NULL",
    "idx_records_unreadable": "records (file) WHERE unreadable",  # reference_unreadable
    "idx_artifacts_links": "artifacts (path) WHERE links > 1",  # artifact_hard_link
    # what git's word never settles (files.unvouched)
    "idx_artifacts_irregular": "artifacts (path) WHERE regular_file IS NOT 1",
    "idx_link_targets_irregular": "link_targets (path) WHERE regular_file IS NOT 1",
}


def create_indexes(db: sqlite_utils.Database, browsable: bool = True) -> None:
    """Indexes on every other join column (after ``create_lookup_indexes``);
    built after the bulk load, which is faster. ``browsable``: also what only
    browsing uses (an index on each column a page sorts or facets on, full-text
    search); an index made for one check, and deleted after it, goes without them."""
    for rt in RECORD_TYPES.values():
        db.table(rt.table).create_index([rt.id_field])
    db.table("files").create_index(["kind"])
    # A table's directories, each a seek of these (files.unvouched), not a look at every path.
    db.table("artifacts").create_index(["dir"])
    db.table("link_targets").create_index(["dir"])
    for name, on in PARTIAL_INDEXES.items():  # by hand: sqlite-utils makes no partial index
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")
    db.table("markdown_links").create_index(["source_file"])
    db.table("markdown_links").create_index(["target"])
    db.table("records").create_index(["record_type", "status"])
    db.table("records").create_index(["artifact_path"])
    # (file, field) pairs: checks look up "the reply_to of this message" and
    # "the responses whose source_packet_id is this packet".
    db.table("refs").create_index(["source_file", "field"])
    db.table("refs").create_index(["target_file", "field"])
    db.table("refs").create_index(["target_id"])
    db.table("refs").create_index(["field"])
    db.table("tag_uses").create_index(["source_file"])
    db.table("tag_uses").create_index(["tag_slug"])
    db.table("tag_uses").create_index(["tag_file"])
    db.table("source_refs").create_index(["source_file"])
    db.table("validation_errors").create_index(["file"])
    db.table("validation_errors").create_index(["error_type"])
    db.table("legacy_fields").create_index(["file"])
    # handoff_superseded seeks a newer version of the same role and milestone:
    # with the version in the index, one seek, however many versions there are.
    db.table("handoff_packets").create_index(["role", "milestone", "version_number"])
    db.table("handoff_documents").create_index(["packet_dir"])
    db.table("input_packets").create_index(["consumer"])
    db.table("input_packets").create_index(["upstream"])
    db.table("input_packets").create_index(["manifest"])
    db.table("packet_locks").create_index(["packet_dir"])
    # handoff_lock_drift asks, for each file of a packet, whether its lock lists it.
    db.table("locked_files").create_index(["lock_file", "path"])
    if browsable:
        _index_browsed_columns(db)
    for name, sql in VIEWS.items():
        db.create_view(name, sql, replace=True)
    # Full-text search for Datasette's search box; the triggers keep it in
    # step when an incremental build deletes and re-inserts rows.
    for table, columns in FTS_COLUMNS.items() if browsable else ():
        db.table(table).enable_fts(columns, create_triggers=True, replace=True)


def _index_browsed_columns(db: sqlite_utils.Database) -> None:
    """An index on each column a table page sorts or facets on (metadata.yml), so
    that a page of a 17,500-row table is index searches, not a sort and a scan."""
    tables = described_index()["databases"][METADATA_DATABASE]["tables"]
    existing = set(db.table_names())  # not views, nor tables later steps create
    for name, described in tables.items():
        if name not in existing:
            continue
        table = db.table(name)
        wanted = [*described.get("facets", [])]
        wanted += [described[key] for key in ("sort", "sort_desc") if key in described]
        leading = set(table.pks) | {index.columns[0] for index in table.indexes}
        for column in dict.fromkeys(wanted):
            if column not in leading:
                table.create_index([column])


def _create_format_tables(db: sqlite_utils.Database) -> None:
    """The rules of FORMAT.md as tables, so checks join them instead of repeating them."""
    db.table("record_types").insert_all(
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
    db.table("status_buckets").insert_all(
        (
            {"record_type": record_type, "status": status, "bucket": bucket}
            for record_type, buckets in STATUS_BUCKETS.items()
            for status, bucket in buckets.items()
        ),
        pk=("record_type", "status"),
    )
    db.table("handoff_statuses").insert_all(
        ({"status": status, "rank": MANIFEST_STATUS_RANK[status]} for status in MANIFEST_STATUSES),
        pk="status",
    )
    db.table("status_transitions").insert_all(
        (
            {"record_type": record_type, "from_status": before, "to_status": after}
            for record_type, pairs in STATUS_TRANSITIONS.items()
            for before, after in pairs
        ),
        pk=("record_type", "from_status", "to_status"),
    )
    # Filled by the check catalogue (each check declares the kinds it reports).
    db.table("validation_checks").create(
        {"error_type": str, "family": str, "check_id": str}, pk=("error_type", "family")
    )
    db.table("reference_rules").insert_all(
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
