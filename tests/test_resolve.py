"""index/resolve.py: references resolved in SQL, and the chunked delete every
incremental build runs (a bounded number of SQL variables a statement)."""

from __future__ import annotations

import sqlite3

import sqlite_utils

from labnote_index.api import build as build_index
from labnote_index.index.resolve import RESOLVE, delete_in

from .helpers import Repo


def _indexed(conn: sqlite3.Connection, table: str) -> set[tuple[str, ...]]:
    """The column lists of ``table``'s indexes."""
    names = [row[1] for row in conn.execute(f"PRAGMA index_list([{table}])")]
    return {tuple(r[2] for r in conn.execute(f"PRAGMA index_info([{n}])")) for n in names}


def test_a_reference_target_is_read_from_an_index_alone(repo: Repo) -> None:
    # The records' (record_id, record_type, file) index answers a reference's
    # lookup without its row: one search, never a scan, per reference and tag.
    build_index(repo.root, repo.db_path)
    conn = sqlite3.connect(repo.db_path)
    for sql, _ in RESOLVE[:2]:
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
        searches = [step for step in plan if step.split()[:2] in (["SEARCH", "r"], ["SCAN", "r"])]
        assert searches and all("USING COVERING INDEX" in step for step in searches), plan
    conn.close()


def test_a_full_build_indexes_the_columns_the_resolve_fills_and_resolves_them(
    repo: Repo,
) -> None:
    # Indexed after the resolve, once; still there for the checks and pages.
    build_index(repo.root, repo.db_path, full=True)
    conn = sqlite3.connect(repo.db_path)
    assert ("target_file", "field") in _indexed(conn, "refs")
    assert ("tag_file",) in _indexed(conn, "tag_uses")
    assert ("upstream",) in _indexed(conn, "input_packets")
    resolved = conn.execute("SELECT count(*) FROM refs WHERE target_file IS NOT NULL").fetchone()
    tagged = conn.execute("SELECT count(*) FROM tag_uses WHERE tag_file IS NOT NULL").fetchone()
    upstream = conn.execute("SELECT count(*) FROM input_packets WHERE upstream IS NOT NULL")
    assert resolved[0] > 0 and tagged[0] > 0 and upstream.fetchone()[0] > 0
    conn.close()


def test_delete_in_deletes_exactly_the_values_named_however_many():
    db = sqlite_utils.Database(memory=True)
    db["t"].insert_all(({"id": n, "v": f"v{n}"} for n in range(2_400)), pk="id")
    named = [f"v{n}" for n in range(0, 2_400, 2)] + ["absent"]  # 1,201 values: three chunks
    delete_in(db, "t", "v", named)
    left = {r["v"] for r in db["t"].rows}
    assert left == {f"v{n}" for n in range(1, 2_400, 2)}
    delete_in(db, "t", "v", sorted(left))  # 1,200 more, every one of them
    assert db["t"].count == 0
    delete_in(db, "t", "v", [])  # nothing named: nothing asked
