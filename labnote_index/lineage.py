"""Provenance trees over the ``lineage_edges`` view, for either record family.

Up is where a node came from (derivative_of, its source packet, the message it
replies to, the packets a handoff packet consumed); down is what came from it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import sqlite_utils

from .report import shown

DIRECTIONS = ("up", "down", "both")

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


class NodeNotFound(Exception):
    pass


def find_node(db: sqlite_utils.Database, key: str) -> str:
    """The node (record file or manifest path) that a record ID, file or packet dir names."""
    key = key.strip()
    stripped = key.rstrip("/")
    rows = list(
        db.query(
            "SELECT node FROM lineage_nodes WHERE node = :key OR label = :key "
            "UNION SELECT manifest FROM handoff_packets WHERE packet_dir = :dir",
            {"key": key, "dir": stripped},
        )
    )
    if not rows:
        raise NodeNotFound(f"no record ID, record file or handoff packet directory {key!r}")
    if len(rows) > 1:
        names = ", ".join(sorted(r["node"] for r in rows))
        raise NodeNotFound(f"{key!r} names more than one record ({names}): give the file instead")
    return rows[0]["node"]


def _nodes(db: sqlite_utils.Database) -> dict[str, dict[str, Any]]:
    return {r["node"]: r for r in db.query("SELECT * FROM lineage_nodes")}


def _tree(
    db: sqlite_utils.Database, start: str, direction: str, nodes: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    this, nxt = ("child", "parent") if direction == "up" else ("parent", "child")
    links: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for edge in db.query(_REACHABLE.format(this=this, next=nxt), {"start": start}):
        links[edge[this]][edge[nxt]].append(edge["field"])
    shown: set[str] = {start}

    def grow(node: str, depth: int) -> list[dict[str, Any]]:
        branches = []
        for other, fields in sorted(links[node].items()):
            info = nodes.get(other, {})
            branch = {
                "node": other,
                "kind": info.get("kind"),
                "label": info.get("label"),
                "status": info.get("status"),
                "via": sorted(set(fields)),
                "depth": depth,
                "repeated": other in shown,
                "children": [],
            }
            if other not in shown:
                shown.add(other)
                branch["children"] = grow(other, depth + 1)
            branches.append(branch)
        return branches

    return grow(start, 1)


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


def lineage_text(tree: dict[str, Any]) -> str:
    def describe(node: dict[str, Any]) -> str:
        status = f" [{shown(node['status'])}]" if node["status"] is not None else ""
        return f"{shown(node['kind'])} {shown(node['label'])}{status} {shown(node['node'])}"

    lines = [describe(tree)]

    def walk(branches: list[dict[str, Any]], indent: str) -> None:
        for b in branches:
            seen = " (shown above)" if b["repeated"] else ""
            lines.append(f"{indent}{shown(', '.join(b['via']))}: {describe(b)}{seen}")
            walk(b["children"], indent + "  ")

    for d in ("up", "down"):
        if d in tree:
            lines.append(f"{d}:" if tree[d] else f"{d}: (nothing)")
            walk(tree[d], "  ")
    return "\n".join(lines)
