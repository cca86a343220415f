"""The SQL views of the index: what checks, canned queries and pages read as
tables (waiting work, lineage edges, reply chains, lock drift), each defined
once, and the columns full-text search covers. ``schema.create_indexes`` makes
them after the bulk load.
"""

from __future__ import annotations

from ..format.rules import (
    ANSWER_FIELDS,
    HANDOFF_CHAIN_STEPS,
    LATER_TIMESTAMPS,
    LINEAGE_DEPTH,
    OPEN_MESSAGE_STATUSES,
    RECORD_TYPES,
    REPLY_THREAD_LENGTH,
)

# The fields a lineage turns round, as an SQL list.
_ANSWERS = "(" + ", ".join(f"'{f}'" for f in ANSWER_FIELDS) + ")"


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
