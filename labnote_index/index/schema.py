"""The tables of the index, created through sqlite-utils.

Relationship tables (``refs``, ``tag_uses``) keep the target ID exactly as
written and the resolved target row as a real foreign key; a row whose target
did not resolve is an orphan, which the checks find with plain SQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

import sqlite_utils

from ..format.rules import (
    ANSWER_FIELDS,
    HANDOFF_CHAIN_STEPS,
    LATER_TIMESTAMPS,
    LINEAGE_DEPTH,
    MANIFEST_STATUS_RANK,
    MANIFEST_STATUSES,
    OPEN_MESSAGE_STATUSES,
    RECORD_TYPES,
    REFERENCE_RULES,
    REPLY_THREAD_LENGTH,
    STATUS_BUCKETS,
    STATUS_TRANSITIONS,
    VALIDATION_CHECKS,
)

RECORD_TABLES = [rt.table for rt in RECORD_TYPES.values()]
# The key metadata.yml uses for the database; a served file may have any name.
METADATA_DATABASE = "labnote"
# The fields a lineage turns round, as an SQL list.
_ANSWERS = "(" + ", ".join(f"'{f}'" for f in ANSWER_FIELDS) + ")"


# Values SQLite binds as they are; a row holding anything else (a list or an
# object from a record) has it written as JSON text, as sqlite-utils does.
_BOUND_AS_IS = {str, int, float, bool, bytes, type(None)}
_CONTAINERS = {dict, list, tuple}
# json.dumps with these options builds an encoder on every call; one will do.
_as_json = json.JSONEncoder(ensure_ascii=False, default=repr).encode


class Inserts:
    """Rows written with one prepared INSERT per table, on the database's own
    connection. The column list comes from the table sqlite-utils created (never
    a second list written here; an integer ``id`` key is left to SQLite), and
    each row is bound as a tuple in that order: the same rows sqlite-utils'
    ``insert_all`` writes, at a third of its cost (it checks every value in
    Python to see whether it needs JSON; this checks a row's types at once)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self._prepared: dict[str, tuple[list[str], str]] = {}

    def _statement(self, table: str) -> tuple[list[str], str]:
        if table not in self._prepared:
            t = self.db.table(table)
            auto = ["id"] if t.pks == ["id"] else []
            columns = [c.name for c in t.columns if c.name not in auto]
            names = ", ".join(f"[{c}]" for c in columns)
            marks = ", ".join("?" * len(columns))
            self._prepared[table] = (columns, f"INSERT INTO [{table}] ({names}) VALUES ({marks})")
        return self._prepared[table]

    def insert(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Append ``rows`` (dicts; a missing key is NULL) to ``table``, committed."""
        with self.db.conn:
            self.append(table, rows)

    def append(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Append ``rows`` to ``table`` within the transaction under way."""
        columns, sql = self._statement(table)
        known = set(columns)
        self.db.conn.executemany(sql, (_bound(row, columns, known) for row in rows))


def _bound(row: dict[str, Any], columns: list[str], known: set[str]) -> tuple[Any, ...]:
    if not row.keys() <= known:  # a key no column has: a mistake here, never data
        raise ValueError(f"no column for {sorted(row.keys() - known)}")
    values = tuple(map(row.get, columns))
    if _BOUND_AS_IS.issuperset(map(type, values)):  # the common case, decided in C
        return values
    return tuple(_as_json(v) if type(v) in _CONTAINERS else v for v in values)


def described_index() -> dict[str, Any]:
    """The packaged metadata.yml: what each table and column is for, and how
    Datasette pages sort and facet them (the ``x-`` keys are notes, left out)."""
    import yaml  # only builds and servers read it

    text = (resources.files("labnote_index") / "metadata.yml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when built
    return {k: v for k, v in yaml.load(text, Loader=loader).items() if not k.startswith("x-")}


def _record_events() -> str:
    return "\nUNION ALL\n".join(
        f"SELECT '{name}' AS record_type, [{RECORD_TYPES[name].id_field}] AS record_id, file, "
        f"'{field}' AS field, [{field}] AS at, created_at FROM [{RECORD_TYPES[name].table}] "
        f"WHERE [{field}] IS NOT NULL"
        for name, fields in LATER_TIMESTAMPS.items()
        for field in fields
    )


def _marks(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)  # the format's constants, never data


# What waits for someone, each set defined once: the dashboard counts a view
# and links to that same view, so a count is always the rows its link shows.
WAITING_VIEWS = {
    "open_messages": f"""
        SELECT * FROM messages WHERE status IN ({_marks(OPEN_MESSAGE_STATUSES)})
    """,
    "packets_awaiting_response": """
        SELECT * FROM packets
        WHERE response_expected AND response_packet_id IS NULL
          AND status NOT IN ('closed', 'archived')
    """,
    "notifications_needing_a_human": """
        SELECT * FROM notifications WHERE status = 'needed'
    """,
    "tags_awaiting_promotion": """
        SELECT * FROM tags WHERE status = 'proposed'
    """,
    "blocked_handoff_packets": """
        SELECT * FROM handoff_packets WHERE status = 'blocked'
    """,
}


# Views that name a relationship for people browsing the index.
VIEWS = {
    **WAITING_VIEWS,
    # Each timestamp of what happened to a record after its creation, beside it.
    "record_events": _record_events(),
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
        UNION ALL
        SELECT 'input_packets', 'handoff_packet', i.consumer, p.manifest, i.manifest,
               'handoff_manifest'
        FROM input_packets i JOIN handoff_packets p ON p.packet_dir = i.consumer
        WHERE i.upstream IS NULL
    """,
    # Each validation problem with the check that reports it (validation_checks).
    "validation_problems": """
        SELECT v.*, coalesce(c.check_id, CASE v.family WHEN 'handoff' THEN 'handoff_schema' END)
                    AS check_id
        FROM (SELECT *, CASE WHEN record_type IN ('handoff_manifest', 'packet_lock',
                                                  'handoff_template')
                             THEN 'handoff' ELSE 'record' END AS family
              FROM validation_errors) v
        LEFT JOIN validation_checks c ON c.error_type = v.error_type AND c.family = v.family
    """,
    # Links between records' artifacts: an artifact that links to another
    # record's artifact makes that record part of its story.
    "record_links": """
        SELECT s.file AS source_file, s.record_type AS source_type, s.record_id AS source_id,
               l.line, l.raw_target, t.file AS target_file, t.record_type AS target_type,
               t.record_id AS target_id
        FROM markdown_links l
        JOIN records s ON s.artifact_path = l.source_file
        JOIN records t ON t.artifact_path = l.target
    """,
    "derivations": """
        SELECT id, source_file, source_type, source_id, position,
               target_id AS derivative_of, target_file
        FROM refs WHERE field = 'derivative_of'
    """,
    # Provenance across both record families as child -> parent edges between
    # files (record files and handoff manifests): a response's parent is its
    # packet, a reply's parent the message it answers, a packet's parent the
    # packets it consumed. response_packet_id and response_message_id point
    # from the parent to the child, so they are turned around.
    "lineage_edges": f"""
        SELECT source_file AS child, target_file AS parent, field FROM refs
        WHERE target_file IS NOT NULL AND field NOT IN {_ANSWERS}
        UNION ALL
        SELECT target_file, source_file, field FROM refs
        WHERE target_file IS NOT NULL AND field IN {_ANSWERS}
        UNION ALL
        SELECT c.manifest, u.manifest, 'input_packets'
        FROM input_packets i
        JOIN handoff_packets c ON c.packet_dir = i.consumer
        JOIN handoff_packets u ON u.packet_dir = i.upstream
    """,
    # The depth every lineage stops at, for SQL that walks one (the canned query).
    "lineage_limits": f"""
        SELECT {LINEAGE_DEPTH} AS max_depth, {HANDOFF_CHAIN_STEPS} AS max_chain_steps,
               {REPLY_THREAD_LENGTH} AS max_thread_length
    """,
    # Every way a locked packet differs from its lock: a locked file changed or
    # gone, or a packet file the lock does not cover. The handoff_lock_drift
    # check reports these rows; the handoff chain calls such a lock drifted.
    "lock_drift": """
        SELECT f.packet_dir, f.lock_file, f.path, f.current_sha256, f.recorded_sha256,
               1 AS locked
        FROM locked_files f
        WHERE f.current_sha256 IS NOT f.recorded_sha256
        UNION ALL
        SELECT l.packet_dir, l.lock_file, h.path, NULL, NULL, 0
        FROM packet_locks l JOIN handoff_files h ON h.packet_dir = l.packet_dir
        WHERE h.path != 'packet.lock.json'
          AND NOT EXISTS (SELECT 1 FROM locked_files f
                          WHERE f.lock_file = l.lock_file AND f.path = h.path)
    """,
    # What a lineage cannot reach: each unresolved reference or input as an edge
    # to a missing node, in the direction it points (response_packet_id and
    # response_message_id name a child, the rest a parent).
    "lineage_missing": f"""
        SELECT x.source_file AS node, x.field, x.target_id AS missing_id,
               CASE WHEN x.field IN {_ANSWERS} THEN 'down' ELSE 'up' END AS direction,
               (SELECT group_concat(rule.target_type, ' or ') FROM reference_rules rule
                WHERE rule.source_type = x.source_type AND rule.field = x.field) AS expected
        FROM refs x WHERE x.target_file IS NULL
        UNION ALL
        SELECT c.manifest, 'input_packets', i.manifest, 'up', 'handoff_packet'
        FROM input_packets i JOIN handoff_packets c ON c.packet_dir = i.consumer
        WHERE i.upstream IS NULL
    """,
    # Every name a person may give a record or handoff packet, and the node it
    # names: the one resolver of the CLI, the lineage page and the canned queries
    # (UNION ALL, so that a WHERE on name reaches each table's index; ask DISTINCT).
    "node_names": """
        SELECT node AS name, node FROM lineage_nodes
        UNION ALL SELECT label, node FROM lineage_nodes WHERE label IS NOT NULL
        UNION ALL SELECT packet_dir, manifest FROM handoff_packets
        UNION ALL SELECT packet_dir || '/', manifest FROM handoff_packets
    """,
    "lineage_nodes": """
        SELECT file AS node, record_type AS kind, record_id AS label, status FROM records
        UNION ALL
        SELECT manifest, 'handoff_packet',
               coalesce(role, '?') || '/' || coalesce(milestone, '?') || '/'
               || coalesce(packet_version, '?'),
               status
        FROM handoff_packets
    """,
    # Each message with the root of its reply thread and its depth below it.
    # UNION (not UNION ALL) and the depth bound keep a reply cycle from looping.
    "reply_chains": f"""
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
            WHERE x.field = 'reply_to' AND chain.depth < {REPLY_THREAD_LENGTH}
        )
        SELECT chain.file, chain.message_id, chain.parent_file,
               chain.root_file, root.record_id AS root_message_id, chain.depth
        FROM chain JOIN records root ON root.file = chain.root_file
    """,
}


FTS_COLUMNS = {
    "artifacts": ["body"],
    "packets": ["topic", "notes"],
    "responses": ["notes"],
    "messages": ["summary", "notes"],
    "notifications": ["summary", "notes"],
    "visits": ["notes"],
    "visitors": ["display_name", "notes"],
    "tags": ["display_name", "description", "notes"],
    "handoff_packets": ["summary"],
}


# What a person reading a record table looks for first, after its file: the ID,
# the status and what it is about; the same on every row (record_type,
# schema_version) comes last.
_FIRST = ("status", "summary", "topic", "display_name", "created_at")
_LAST = ("record_type", "schema_version")


def record_columns(record_type: str, id_field: str) -> dict[str, type]:
    """The columns of a record type's table, in the order people read them."""
    from ..format.models import column_types  # pydantic: only when tables are made

    fields = column_types(record_type)
    first = [id_field, *(f for f in _FIRST if f in fields)]
    rest = [f for f in fields if f not in first and f not in _LAST]
    order = [*first, *rest, *(f for f in _LAST if f in fields)]
    return {"file": str, **{f: fields[f] for f in order}, "extra": str, "valid": bool}


def create_tables(db: sqlite_utils.Database) -> None:
    """Create every table of an empty index, with keys, foreign keys and indexes."""
    db.table("files").create(
        {
            "path": str,
            "kind": str,
            "size": int,
            "mtime_ns": int,
            "ctime_ns": int,
            "inode": int,
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
            "status": str,
            "size": int,
            "mtime_ns": int,
            "ctime_ns": int,
            "inode": int,
            "sha256": str,
            "links": int,
            "body": str,
        },
        pk="path",
    )
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
    # What changed since a base revision, when the index was built by a comparison
    # (check or diff with --base; build_info names the base); empty otherwise.
    db.table("changes").create(
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
        db.table(rt.table).create_index([rt.id_field])
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
    db.table("link_targets").create({"path": str, "status": str}, pk="path")
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


def create_indexes(db: sqlite_utils.Database, browsable: bool = True) -> None:
    """Indexes on every join column; built after the bulk load, which is faster.
    ``browsable``: also what only browsing uses (an index on each column a page
    sorts or facets on, full-text search); an index made for one check, and
    deleted after it, goes without them."""
    db.table("files").create_index(["kind"])
    db.table("files").create_index(["error"])
    db.table("markdown_links").create_index(["source_file"])
    db.table("markdown_links").create_index(["target"])
    db.table("records").create_index(["record_id", "record_type"])
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
    db.table("handoff_packets").create_index(["manifest"])
    # handoff_superseded seeks a newer version of the same role and milestone:
    # with the version in the index, one seek, however many versions there are.
    db.table("handoff_packets").create_index(["role", "milestone", "version_number"])
    db.table("handoff_files").create_index(["packet_dir", "path"])
    db.table("handoff_documents").create_index(["packet_dir"])
    db.table("input_packets").create_index(["consumer"])
    db.table("input_packets").create_index(["upstream"])
    db.table("input_packets").create_index(["manifest"])
    db.table("packet_locks").create_index(["packet_dir"])
    # handoff_lock_drift asks, for each file of a packet, whether its lock lists it.
    db.table("locked_files").create_index(["lock_file", "path"])
    db.table("changes").create_index(["file"])
    db.table("changes").create_index(["record_type", "record_id"])
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
    db.table("validation_checks").insert_all(
        (
            {"error_type": error_type, "family": family, "check_id": check_id}
            for (error_type, family), check_id in VALIDATION_CHECKS.items()
        ),
        pk=("error_type", "family"),
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
