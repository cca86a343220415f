"""Which records lie on a cycle of a relationship, worked out once per build.

A cycle in reply_to, derivative_of or input_packets cannot be found in SQL in
linear time: a recursive query that walks from every record is quadratic in a
long thread (3,000 messages: a minute). Strongly connected components can:
Tarjan's algorithm visits each edge once. It runs here over the resolved
edges that can lie on a cycle (``edges_sql``), iteratively (a chain is as long
as a repository makes it), and writes
``cycle_members``; the cycle checks are plain SELECTs over that table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils

# Each relationship's resolved edges, from a record (or packet) to what it names:
# its table, the source and target columns, and which of the table's rows
# ({t} is the row's alias) are the relationship's.
RELATIONS = {
    "reply_to": ("refs", "source_file", "target_file", "{t}.field = 'reply_to'"),
    "derivative_of": ("refs", "source_file", "target_file", "{t}.field = 'derivative_of'"),
    "input_packets": ("input_packets", "consumer", "upstream", "1"),
}


def edges_sql(table: str, source: str, target: str, which: str) -> str:
    """The SELECT of a relationship's resolved edges that can lie on a cycle. An
    edge can only where an edge of the same relationship leads into its source
    and one leads on from its target. This one round of pruning in SQL, through
    the indexes on both columns, leaves out a thread's first and last replies
    and a lineage's ends, so Tarjan gets a fraction of the edges; what it
    leaves out lies on no cycle, so the cycles are the same."""
    return (
        f"SELECT e.{source}, e.{target} FROM {table} e "
        f"WHERE {which.format(t='e')} AND e.{target} IS NOT NULL "
        f"AND EXISTS (SELECT 1 FROM {table} i "
        f"WHERE i.{target} = e.{source} AND {which.format(t='i')}) "
        f"AND EXISTS (SELECT 1 FROM {table} o "
        f"WHERE o.{source} = e.{target} AND o.{target} IS NOT NULL AND {which.format(t='o')})"
    )


EDGES = {relation: edges_sql(*parts) for relation, parts in RELATIONS.items()}
# The relationships made of references: every edge a build can change is from
# or to a file it read again or removed (a reference resolved again is one into
# such a file, or now names one; resolve.py).
_TOUCHING = {
    relation: f"SELECT e.{source}, e.{target} FROM refs e WHERE {which.format(t='e')} "
    f"AND e.{target} IS NOT NULL AND (e.{source} IN (SELECT value FROM json_each(:files)) "
    f"OR e.{target} IN (SELECT value FROM json_each(:files)))"
    for relation, (table, source, target, which) in RELATIONS.items()
    if table == "refs"
}


def edges_touching(db: sqlite_utils.Database, files: list[str]) -> dict[str, set[tuple[str, str]]]:
    """Each reference relationship's resolved edges from or to one of ``files``.
    Asked before an incremental build forgets the files and after it resolves
    their references again, the same edges mean the same graph (``store_cycles``)."""
    values = {"files": json.dumps(files)}
    return {
        relation: set(db.execute(sql, values).fetchall()) for relation, sql in _TOUCHING.items()
    }


def on_cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The cycles of a directed graph: each strongly connected component with more
    than one node, or one node with an edge to itself (Tarjan, without recursion)."""
    graph: dict[str, list[str]] = {}
    looped: set[str] = set()
    for source, target in edges:
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
        if source == target:
            looped.add(source)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        # Each frame: a node and how many of its edges have been followed.
        frames = [(start, 0)]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while frames:
            node, followed = frames[-1]
            targets = graph[node]
            if followed < len(targets):
                frames[-1] = (node, followed + 1)
                target = targets[followed]
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    frames.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            frames.pop()
            if frames:
                parent = frames[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in looped:
                    found.append(sorted(component))
    return found


def store_cycles(db: sqlite_utils.Database, unchanged: Iterable[str] = ()) -> None:
    """Write ``cycle_members`` anew: one row per node on a cycle of each relationship,
    but those ``unchanged`` (whose graph is the one the index had: its rows stand)."""
    rows = []
    for relation, sql in EDGES.items():
        if relation in unchanged:
            continue
        db.table("cycle_members").delete_where("relation = ?", [relation])
        for number, component in enumerate(on_cycles(db.execute(sql).fetchall()), start=1):
            rows += [{"relation": relation, "node": n, "cycle": number} for n in component]
    db.table("cycle_members").insert_all(rows, batch_size=1000)
