"""Provenance trees over the ``lineage_edges`` view, for either record family.

Up is where a node came from (derivative_of, its source packet, the message it
replies to, the packets a handoff packet consumed); down is what came from it.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlite_utils

from .errors import LabnoteError
from .index_file import indexed_repository

DIRECTIONS = ("up", "down", "both")
# How much of a lineage is drawn: deep and wide enough for any real provenance,
# bounded for a hostile one (a 1,500-long derivative_of chain).
MAX_DEPTH = 40
MAX_NODES = 400

# Every edge reachable from the start, following child -> parent (up) or
# parent -> child (down). UNION stops at nodes already seen, so cycles end.
_REACHABLE = """
WITH RECURSIVE reach(node) AS (
    SELECT :start
    UNION
    SELECT e.{next} FROM lineage_edges e JOIN reach ON e.{this} = reach.node
)
SELECT e.child, e.parent, e.field
FROM lineage_edges e JOIN reach ON e.{this} = reach.node
"""


class NodeNotFound(LabnoteError):
    pass


def find_node(db: sqlite_utils.Database, key: str) -> str:
    """The node (record file or manifest path) that a record ID, file or packet dir
    names. A path as the shell completes it from outside the repository
    (``sample_repo/registry/...``) is taken relative to the indexed repository."""
    key = key.strip()
    rows = _named(db, key)
    repo = indexed_repository(db)
    if not rows and repo is not None and os.path.exists(key):
        rel = os.path.relpath(os.path.realpath(key), os.path.realpath(repo))
        if not rel.startswith(".."):
            rows = _named(db, Path(rel).as_posix())
    if not rows:
        where = f" in the index of {repo}" if repo else ""
        raise NodeNotFound(
            f"no record ID, record file or handoff packet directory {key!r}{where} "
            "(paths are relative to the repository root)"
        )
    if len(rows) > 1:
        names = ", ".join(sorted(r["node"] for r in rows))
        raise NodeNotFound(f"{key!r} names more than one record ({names}): give the file instead")
    return rows[0]["node"]


def _named(db: sqlite_utils.Database, key: str) -> list[dict[str, Any]]:
    return list(db.query("SELECT DISTINCT node FROM node_names WHERE name = :key", {"key": key}))


def _nodes(db: sqlite_utils.Database) -> dict[str, dict[str, Any]]:
    return {r["node"]: r for r in db.query("SELECT * FROM lineage_nodes")}


def _tree(
    db: sqlite_utils.Database, start: str, direction: str, nodes: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The branches reachable from ``start``, depth first, without recursion: a chain
    is as long as the repository makes it. What lies beyond MAX_DEPTH levels or
    MAX_NODES nodes is not drawn; the branch where it stops counts it in ``more``."""
    this, nxt = ("child", "parent") if direction == "up" else ("parent", "child")
    links: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for edge in db.query(_REACHABLE.format(this=this, next=nxt), {"start": start}):
        links[edge[this]][edge[nxt]].append(edge["field"])
    missing: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in db.query("SELECT * FROM lineage_missing WHERE direction = ?", [direction]):
        missing[row["node"]].append(row)
    shown: set[str] = {start}
    top: list[dict[str, Any]] = _missing_branches(missing[start], 1)
    # Each frame: the links still to follow from a node, where its branches go, their depth.
    frames = [(iter(sorted(links[start].items())), top, 1)]
    while frames:
        pending, out, depth = frames[-1]
        step = next(pending, None)
        if step is None:
            frames.pop()
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
        if depth >= MAX_DEPTH or len(shown) > MAX_NODES:
            branch["more"] = len(links[other])  # not drawn: follow its own lineage
            continue
        children.extend(_missing_branches(missing[other], depth + 1))
        frames.append((iter(sorted(links[other].items())), children, depth + 1))
    return top


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
    nodes = _nodes(db)
    info = nodes[start]
    result: dict[str, Any] = {
        "node": start,
        "kind": info["kind"],
        "label": info["label"],
        "status": info["status"],
    }
    for d in ("up", "down"):
        if direction in (d, "both"):
            result[d] = _tree(db, start, d, nodes)
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
                "SELECT 'input_packets' AS field, c.manifest AS source FROM input_packets i "
                "JOIN handoff_packets c ON c.packet_dir = i.consumer WHERE i.upstream = ?",
                [packet["packet_dir"]],
            )
        )
        info["thread"] = []
    else:
        record = next(db.query("SELECT * FROM records WHERE file = ?", [node]))
        table = next(
            db.query("SELECT table_name FROM record_types WHERE record_type = ?", [tree["kind"]])
        )["table_name"]
        info["fields"] = next(db.query(f"SELECT * FROM [{table}] WHERE file = ?", [node]))
        info["artifact"] = (
            next(
                db.query("SELECT * FROM artifacts WHERE path = ?", [record["artifact_path"]]), None
            )
            if record["artifact_path"]
            else None
        )
        info["cites"] = list(
            db.query(
                "SELECT field, target_id AS target, target_file AS resolved FROM refs "
                "WHERE source_file = ? UNION ALL "
                "SELECT 'tags', tag_slug, tag_file FROM tag_uses WHERE source_file = ? "
                "ORDER BY 1, 2",
                [node, node],
            )
        )
        info["cited_by"] = list(
            db.query(
                "SELECT field, source_file AS source FROM refs WHERE target_file = ? UNION ALL "
                "SELECT 'tags', source_file FROM tag_uses WHERE tag_file = ? ORDER BY 1, 2",
                [node, node],
            )
        )
        info["thread"] = list(
            db.query(
                "SELECT c.depth, c.message_id, c.file FROM reply_chains c "
                "WHERE c.root_file IN (SELECT root_file FROM reply_chains WHERE file = ?) "
                "ORDER BY c.depth, c.message_id",
                [node],
            )
        )
    info["findings"] = list(
        db.query(
            "SELECT severity, [check], field, message, hint FROM findings WHERE file = ? "
            "ORDER BY severity = 'warning', [check]",
            [node],
        )
    )
    return info
