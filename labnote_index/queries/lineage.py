"""Provenance trees over the ``lineage_edges`` view, for either record family.

Up is where a node came from (derivative_of, its source packet, the message it
replies to, the packets a handoff packet consumed); down is what came from it.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..checks.suggest import record_names
from ..choices import DIRECTIONS as DIRECTIONS
from ..errors import NodeNotFound
from ..format.rules import ANSWER_FIELDS, ANSWERING_FIELDS, LINEAGE_DEPTH, REPLY_THREAD_LENGTH
from ..index.index_file import indexed_repository
from ..read.paths import displayable, path_inside, storable

if TYPE_CHECKING:
    import sqlite_utils

# How much of a lineage is drawn: LINEAGE_DEPTH levels, and at most this many nodes.
MAX_NODES = 400

# The edges from a set of nodes, over the one definition of them (the
# lineage_edges view): up follows child -> parent, down parent -> child. The
# nodes are a list of parameters, which SQLite pushes down into each part of
# the view (an index search each); IN (SELECT ...) would scan the whole view.
_EDGES = {
    "up": "SELECT child, parent, field FROM lineage_edges WHERE child IN ({})",
    "down": "SELECT parent, child, field FROM lineage_edges WHERE parent IN ({})",
}
_CHUNK = 500  # nodes per query, well under SQLite's limit on parameters
_IN = "IN (SELECT value FROM json_each(:nodes))"  # for tables, where an index is used


def _reachable(db: sqlite_utils.Database, start: str, direction: str) -> list[tuple[str, str, str]]:
    """(this, next, field) for every edge within a drawing's depth of ``start``, level
    by level: work in proportion to what is reached, whatever the index's size."""
    seen, frontier, edges = {start}, [start], []
    for _ in range(LINEAGE_DEPTH + 1):  # one level past the drawing: to count what is not drawn
        if not frontier:
            break
        level = []
        for at in range(0, len(frontier), _CHUNK):
            nodes = frontier[at : at + _CHUNK]
            sql = _EDGES[direction].format(", ".join("?" * len(nodes)))
            level += [tuple(row) for row in db.execute(sql, nodes).fetchall()]
        edges += level
        frontier = list(dict.fromkeys(n for _, n, _ in level if n not in seen))
        seen.update(frontier)
    return edges


def find_node(db: sqlite_utils.Database, key: str) -> str:
    """The node (record file or manifest path) that a record ID, file or packet dir
    names. A path as the shell completes it from outside the repository
    (``sample_repo/registry/...``) is taken relative to the indexed repository."""
    key = key.strip()
    repo = indexed_repository(db)
    if not storable(key):  # a name that is not UTF-8 (surrogate escapes): nothing has it
        raise NodeNotFound(
            f"no record ID, record file or handoff packet directory {displayable(key)!r}: "
            "it is not valid UTF-8, and every name in the index is"
        )
    rows = _named(db, key)
    if not rows and repo is not None and os.path.exists(key):
        rel = path_inside(key, repo)  # the one containment test
        if rel:
            rows = _named(db, rel)
    if not rows:
        where = f" in the index of {repo}" if repo else ""
        near = record_names(db).nearest(key)
        mean = f"; did you mean {near!r}?" if near else ""
        raise NodeNotFound(
            f"no record ID, record file or handoff packet directory {key!r}{where} "
            f"(paths are relative to the repository root){mean}",
            near,
        )
    if len(rows) > 1:
        names = ", ".join(sorted(r["node"] for r in rows))
        raise NodeNotFound(f"{key!r} names more than one record ({names}): give the file instead")
    return rows[0]["node"]


def _named(db: sqlite_utils.Database, key: str) -> list[dict[str, Any]]:
    return list(db.query("SELECT DISTINCT node FROM node_names WHERE name = :key", {"key": key}))


def _nodes(db: sqlite_utils.Database, wanted: set[str]) -> dict[str, dict[str, Any]]:
    # A list of values (not a subquery) is what SQLite pushes into each branch of
    # the UNION ALL view, so every name is an index search instead of a scan of
    # the whole view.
    found: dict[str, dict[str, Any]] = {}
    names = sorted(wanted)
    for at in range(0, len(names), 500):
        chunk = names[at : at + 500]
        marks = ", ".join("?" * len(chunk))
        for row in db.query(f"SELECT * FROM lineage_nodes WHERE node IN ({marks})", chunk):
            found[row["node"]] = row
    return found


def _tree(
    db: sqlite_utils.Database, start: str, direction: str
) -> tuple[list[dict[str, Any]], int]:
    """The branches reachable from ``start``, depth first, without recursion: a chain
    is as long as the repository makes it; and how many of start's own branches
    are not drawn. What lies beyond LINEAGE_DEPTH levels, or once MAX_NODES nodes are
    drawn (deep or wide: a message with 10,000 replies), is not drawn; the
    branch where it stops counts it in ``more``."""
    links: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for this, other, field in _reachable(db, start, direction):
        links[this][other].append(field)
    reached = {other for targets in links.values() for other in targets}
    nodes = _nodes(db, reached)
    missing = _missing(db, reached | {start}, direction)
    shown: set[str] = {start}
    top: list[dict[str, Any]] = _missing_branches(missing[start], 1)
    not_drawn = 0
    # Each frame: the links still to follow from a node, where its branches go,
    # their depth, and the branch of the node (None for start).
    frames: list[tuple[Iterator[tuple[str, list[str]]], list[dict[str, Any]], int, Any]] = [
        (iter(sorted(links[start].items())), top, 1, None)
    ]
    while frames:
        pending, out, depth, parent = frames[-1]
        step = next(pending, None)
        if step is None:
            frames.pop()
            continue
        if len(shown) > MAX_NODES:  # full: the rest of this level is counted, not drawn
            rest = 1 + sum(1 for _ in pending)
            frames.pop()
            if parent is None:
                not_drawn += rest
            else:
                parent["more"] += rest
            continue
        other, fields = step
        info = nodes.get(other, {})
        children: list[dict[str, Any]] = []
        branch: dict[str, Any] = {
            "node": other,
            "kind": info.get("kind"),
            "label": info.get("label"),
            "status": info.get("status"),
            "via": sorted(set(fields)),
            "depth": depth,
            "repeated": other in shown,
            "more": 0,
            "missing": False,
            "children": children,
        }
        out.append(branch)
        if other in shown:
            continue
        shown.add(other)
        if depth >= LINEAGE_DEPTH or len(shown) > MAX_NODES:
            branch["more"] = len(links[other])  # not drawn: follow its own lineage
            continue
        children.extend(_missing_branches(missing[other], depth + 1))
        frames.append((iter(sorted(links[other].items())), children, depth + 1, branch))
    return top, not_drawn


def _missing(
    db: sqlite_utils.Database, wanted: set[str], direction: str
) -> dict[str, list[dict[str, Any]]]:
    """The references from these nodes that name nothing (only theirs: an index
    may hold 50,000 orphans elsewhere), by node."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    names = sorted(wanted)
    for at in range(0, len(names), 500):
        chunk = names[at : at + 500]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT * FROM lineage_missing WHERE direction = ? AND node IN ({marks})"
        for row in db.query(sql, [direction, *chunk]):
            found[row["node"]].append(row)
    return found


def _missing_branches(rows: list[dict[str, Any]], depth: int) -> list[dict[str, Any]]:
    """A branch for each reference from a node that names nothing in the index:
    what is broken is part of the lineage, not left out of it."""
    return [
        {
            "node": None,
            "kind": "missing",
            "expected": row["expected"] or "record",
            "label": row["missing_id"],
            "status": None,
            "via": [row["field"]],
            "depth": depth,
            "repeated": False,
            "more": 0,
            "missing": True,
            "children": [],
        }
        for row in sorted(rows, key=lambda r: (r["field"], r["missing_id"] or ""))
    ]


def branches_in_order(branches: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every branch of a tree, parents before their children, as drawn (no recursion)."""
    stack = list(reversed(branches))
    while stack:
        branch = stack.pop()
        yield branch
        stack.extend(reversed(branch["children"]))


def lineage(db: sqlite_utils.Database, key: str, direction: str = "both") -> dict[str, Any]:
    """The provenance tree of the node that ``key`` names."""
    start = find_node(db, key)
    info = _nodes(db, {start})[start]
    result: dict[str, Any] = {
        "node": start,
        "kind": info["kind"],
        "label": info["label"],
        "status": info["status"],
    }
    for d in ("up", "down"):
        if direction in (d, "both"):
            result[d], not_drawn = _tree(db, start, d)
            result[f"{d}_more"] = not_drawn  # start's own branches beyond the drawing
    return result


def story(db: sqlite_utils.Database, key: str) -> dict[str, Any]:
    """Everything the index knows of one record or handoff packet: its fields, its
    artifact, the findings on it, what it cites and what cites it (resolved or
    missing), its reply thread, and its lineage."""
    node = find_node(db, key)
    tree = lineage(db, node, "both")
    info: dict[str, Any] = {"node": node, "tree": tree, "kind": tree["kind"]}
    if tree["kind"] == "handoff_packet":
        packet = next(db.query("SELECT * FROM handoff_packets WHERE manifest = ?", [node]))
        info["fields"] = packet
        key = packet["packet_dir"]
        info["artifact"] = None
        info["cites"] = list(
            db.query(
                "SELECT 'input_packets' AS field, i.manifest AS target, "
                "CASE WHEN i.upstream IS NULL THEN NULL ELSE i.manifest END AS resolved "
                "FROM input_packets i WHERE i.consumer = ? ORDER BY i.position",
                [packet["packet_dir"]],
            )
        )
        info["cited_by"] = list(
            db.query(
                "SELECT 'input_packets' AS field, c.manifest AS source, c.packet_dir AS label, "
                "'handoff_packet' AS type FROM input_packets i "
                "JOIN handoff_packets c ON c.packet_dir = i.consumer WHERE i.upstream = ?",
                [packet["packet_dir"]],
            )
        )
        info["answered_by"] = []
        info["thread"] = []
    else:
        record = next(db.query("SELECT * FROM records WHERE file = ?", [node]))
        key = record["record_id"]
        table = next(
            db.query("SELECT table_name FROM record_types WHERE record_type = ?", [tree["kind"]])
        )["table_name"]
        # An unreadable record has no row of its type: what its location says is all.
        info["fields"] = next(db.query(f"SELECT * FROM [{table}] WHERE file = ?", [node]), record)
        info["artifact"] = (
            next(
                db.query("SELECT * FROM artifacts WHERE path = ?", [record["artifact_path"]]), None
            )
            if record["artifact_path"]
            else None
        )
        # What answered it (a response to a packet, a reply to a message) is named
        # once, as such, whichever side names the other; the rest of what it
        # cites and what cites it, by ID, each linked to its story.
        answers = "(" + ", ".join(f"'{f}'" for f in (*ANSWER_FIELDS, *ANSWERING_FIELDS)) + ")"
        info["answered_by"] = list(
            db.query(
                "SELECT DISTINCT r.file AS source, r.record_id AS label, r.record_type AS type, "
                "r.status FROM ("
                f"SELECT target_file AS file FROM refs WHERE source_file = ? AND field IN "
                f"{answers} AND target_file IS NOT NULL UNION "
                f"SELECT source_file FROM refs WHERE target_file = ? AND field IN {answers}"
                ") a JOIN records r ON r.file = a.file ORDER BY r.created_at, r.file",
                [node, node],
            )
        )
        answering = {a["source"] for a in info["answered_by"]}
        info["cites"] = [
            c
            for c in db.query(
                "SELECT field, target_id AS target, target_file AS resolved FROM refs "
                "WHERE source_file = ? UNION ALL "
                "SELECT 'tags', tag_slug, tag_file FROM tag_uses WHERE source_file = ? "
                "ORDER BY 1, 2",
                [node, node],
            )
            if c["resolved"] not in answering or c["resolved"] is None
        ]
        info["cited_by"] = [
            c
            for c in db.query(
                "SELECT field, source_file AS source, source_id AS label, source_type AS type "
                "FROM refs WHERE target_file = ? UNION ALL "
                "SELECT 'tags', source_file, source_id, source_type FROM tag_uses "
                "WHERE tag_file = ? ORDER BY 1, 3",
                [node, node],
            )
            if c["source"] not in answering
        ]
        info["thread"] = _thread(db, node) if tree["kind"] == "message" else []
    info["findings"] = list(
        db.query(
            "SELECT severity, [check], field, message, hint FROM findings WHERE file = ? "
            "ORDER BY severity = 'warning', [check]",
            [node],
        )
    )
    info["base"], info["history"] = _history(db, node, tree["kind"], key)
    return info


def _history(
    db: sqlite_utils.Database, node: str, kind: str, key: str | None
) -> tuple[str | None, list[dict[str, Any]]]:
    """The base revision the index was compared with, if any, and what changed in
    this record or packet since then (matched by file, or by type and ID: a
    status change moves a record's file)."""
    base = next(db.query("SELECT value FROM build_info WHERE key = 'base'"), None)
    if base is None or not db.table("changes").exists():
        return None, []
    rows = db.query(
        "SELECT change, field, before, after, file FROM changes WHERE file = :node "
        "OR (record_type = :kind AND record_id = :key) ORDER BY id",
        {"node": node, "kind": kind, "key": key},
    )
    return base["value"], list(rows)


def _thread(db: sqlite_utils.Database, node: str) -> list[dict[str, Any]]:
    """The reply thread a message belongs to, from its first message down, each
    step an index search (a thread is walked, not the whole reply_chains view)."""
    root, seen = node, {node}
    while len(seen) < REPLY_THREAD_LENGTH:  # up to the first message (a cycle stops it)
        row = db.execute(
            "SELECT target_file FROM refs WHERE source_file = ? AND field = 'reply_to' "
            "AND target_file IS NOT NULL",
            [root],
        ).fetchone()
        if row is None or row[0] in seen:
            break
        root = row[0]
        seen.add(root)
    found, frontier, placed = [(0, root)], [root], {root}
    while frontier and len(found) < REPLY_THREAD_LENGTH:
        depth = found[-1][0] + 1
        replies = [
            r[0]
            for r in db.execute(
                f"SELECT source_file FROM refs WHERE field = 'reply_to' AND target_file {_IN}",
                {"nodes": json.dumps(frontier)},
            ).fetchall()
            if r[0] not in placed
        ]
        placed.update(replies)
        found += [(depth, reply) for reply in sorted(replies)]
        frontier = replies
    ids = dict(
        db.execute(
            f"SELECT file, record_id FROM records WHERE file {_IN}",
            {"nodes": json.dumps([f for _, f in found])},
        ).fetchall()
    )
    return [
        {"depth": d, "message_id": ids.get(f), "file": f} for d, f in found[:REPLY_THREAD_LENGTH]
    ]
