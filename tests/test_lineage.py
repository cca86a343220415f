"""One definition of a lineage: the CLI, the pages and the canned query agree.

Tests of: ``web/graph.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlite_utils

from bench.scaling import SHAPES
from labnote_index.api import build as build_index
from labnote_index.format.rules import ANSWER_FIELDS, LINEAGE_DEPTH
from labnote_index.index.metadata import described_index
from labnote_index.queries import lineage

from .helpers import fetch


def reached(tree_branches: list[dict[str, Any]]) -> dict[str, int]:
    """Each node a lineage draws, at the depth it is drawn first."""
    found: dict[str, int] = {}
    stack = [(b, 1) for b in tree_branches]
    while stack:
        branch, depth = stack.pop()
        if branch.get("node") and not branch.get("missing"):
            found[branch["node"]] = min(depth, found.get(branch["node"], depth))
        stack += [(c, depth + 1) for c in branch["children"]]
    return found


def canned(db_path: Path, node: str) -> list[dict[str, Any]]:
    (response,) = fetch(db_path, f"/i/provenance_lineage.json?_shape=array&node={node}")
    assert response.status_code == 200, response.text
    return response.json()


def test_the_canned_query_stops_where_the_lineage_command_does(tmp_path: Path):
    """A chain longer than the depth limit: the canned query and the lineage of the
    CLI and pages reach the same ancestors, at the same depths (they once stopped
    at 25 and 40)."""
    SHAPES["derivation"](tmp_path / "repo", LINEAGE_DEPTH + 10)
    db_path = tmp_path / "i.db"
    build_index(tmp_path / "repo", db_path)
    last = f"registry/packets/2025/20250301-ops-p{LINEAGE_DEPTH + 9}.json"
    tree = lineage.lineage(sqlite_utils.Database(db_path), last, "up")
    drawn = reached(tree["up"])
    rows = canned(db_path, last)
    walked = {r["node"]: r["depth"] for r in rows if r["direction"] == "ancestor"}
    assert walked == drawn
    assert max(walked.values()) == LINEAGE_DEPTH


def test_the_canned_query_holds_no_depth_of_its_own():
    sql = described_index()["databases"]["labnote"]["queries"]["provenance_lineage"]["sql"]
    assert "lineage_limits" in sql and "lineage_edges" in sql
    assert str(LINEAGE_DEPTH) not in sql


def test_answers_are_turned_round_in_every_lineage(sample_repo):
    """A response names the packet it answers (up) and the packet names its
    response (response_packet_id): both give the same one edge, child to parent."""
    db = sample_repo.index()
    edges = {(e["child"], e["parent"]) for e in db.query("SELECT * FROM lineage_edges")}
    for field in ANSWER_FIELDS:
        for ref in db.query(
            "SELECT * FROM refs WHERE field = ? AND target_file IS NOT NULL", [field]
        ):
            assert (ref["target_file"], ref["source_file"]) in edges
    packet = "registry/packets/2026/20260903-maria-ops-retention-question.json"
    down = reached(lineage.lineage(db, packet, "down")["down"])
    answering = [
        r["source_file"]
        for r in db.query("SELECT source_file FROM refs WHERE target_file = ?", [packet])
    ]
    assert answering and set(answering) <= set(down)


def test_a_long_label_is_cut_in_the_middle_keeping_what_tells_it_apart():
    from labnote_index.web.graph import MAX_CHARS, _cut

    a = "20260905-claude-retention-review-thread-" + "x" * 20 + "-msg-07"
    b = a.replace("msg-07", "msg-08")
    assert (
        len(_cut(a)) == MAX_CHARS and _cut(a).endswith("msg-07") and _cut(a).startswith("20260905")
    )
    assert _cut(a) != _cut(b) and "…" in _cut(a)
    assert _cut("short-id") == "short-id"
    exact = "y" * MAX_CHARS
    assert _cut(exact) == exact and _cut(exact + "z") != exact + "z"
