"""index/cycles.py: the strongly connected components that are cycles (Tarjan,
without recursion), on graphs small enough to read: every start of the graph is
walked, every edge of a node is followed, a self-loop is a cycle of one."""

from __future__ import annotations

import pytest
import sqlite_utils
from hypothesis import example, given
from hypothesis import strategies as st

from labnote_index.api import build as build_index
from labnote_index.index.cycles import on_cycles, store_cycles
from labnote_index.index.schema import create_indexes, create_lookup_indexes, create_tables

from .helpers import Repo


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    return sorted(on_cycles(edges))


def test_a_cycle_after_a_part_already_walked_is_found():
    # a's walk reaches b; b is then a start already walked, and c <-> d comes after it.
    assert cycles([("a", "b"), ("c", "d"), ("d", "c")]) == [["c", "d"]]


def test_every_edge_of_a_node_is_followed():
    # Only a's second (then third) edge closes the cycle: a walk that skipped an
    # edge would miss it.
    assert cycles([("a", "x"), ("a", "b"), ("b", "a")]) == [["a", "b"]]
    assert cycles([("a", "x"), ("a", "y"), ("a", "b"), ("b", "a")]) == [["a", "b"]]


@pytest.mark.parametrize(
    "edges, found",
    [
        ([], []),
        ([("a", "b"), ("b", "c")], []),  # a chain
        ([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], []),  # a diamond is no cycle
        ([("a", "a")], [["a"]]),  # a self-loop: a cycle of one
        ([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")], [["a", "b", "c"]]),
        ([("a", "b"), ("b", "c"), ("c", "b")], [["b", "c"]]),  # back to a node below the start
        # c reaches b, whose walk is over (b is a component of its own): not c's cycle.
        ([("a", "b"), ("c", "b"), ("c", "d"), ("d", "c")], [["c", "d"]]),
        ([("a", "b"), ("b", "a"), ("b", "c"), ("c", "d"), ("d", "c")], [["a", "b"], ["c", "d"]]),
    ],
)
def test_cycles_and_what_is_not_one(edges: list[tuple[str, str]], found: list[list[str]]):
    assert cycles(edges) == found


def test_a_long_chain_needs_no_recursion():
    n = 50_000  # far past Python's recursion limit
    edges = [(str(i), str(i + 1)) for i in range(n)] + [(str(n), "0")]
    (component,) = on_cycles(edges)
    assert len(component) == n + 1


def test_an_incremental_build_writes_each_cycle_once(repo: Repo):
    """cycle_members is written anew each build: after an edit elsewhere, a
    derivation cycle's members are listed once, as a full build lists them."""
    first, second, third, fourth = repo.files("registry/packets/*/*.json")[:4]
    a, b = repo.load(first)["packet_id"], repo.load(second)["packet_id"]
    c, d = repo.load(third)["packet_id"], repo.load(fourth)["packet_id"]
    repo.edit(first, derivative_of=[b])
    repo.edit(second, derivative_of=[a])
    repo.edit(third, derivative_of=[d])  # a second cycle: both are kept
    repo.edit(fourth, derivative_of=[c])
    repo.index()
    repo.edit(repo.files("registry/packets/*/*.json")[5], notes="elsewhere")
    result = build_index(repo.root, repo.db_path)
    assert result.incremental and result.rebuilt_because is None  # no second try in full
    members = sqlite_utils.Database(repo.db_path)["cycle_members"].rows
    rows = sorted((r["relation"], r["node"], r["cycle"]) for r in members)
    # Numbered from 1 in each relationship (the cycle column tells two cycles apart).
    (one,) = {r[2] for r in rows if r[1] == first}
    assert sorted((r[0], r[1]) for r in rows) == sorted(
        ("derivative_of", f) for f in (first, second, third, fourth)
    )
    assert {r[2] for r in rows} == {1, 2} and {r[2] for r in rows if r[1] == second} == {one}


# An edge: its source, its target (None: unresolved), and its relationship.
edge = st.tuples(
    st.integers(0, 7), st.one_of(st.none(), st.integers(0, 7)), st.sampled_from(["r", "d", "i"])
)


@given(st.lists(edge, max_size=30))
# Replies and a derivation between them make a cycle of neither relationship,
# though each of those edges has a reply leading in and a reply leading on.
@example([(0, 1, "d"), (1, 2, "r"), (2, 0, "r"), (3, 1, "r"), (0, 4, "r")])
@example([(0, 1, "r"), (1, 0, "r"), (1, None, "r"), (0, 0, "d")])  # and a cycle of each
def test_the_edges_left_out_before_tarjan_lie_on_no_cycle(edges: list[tuple]):
    """store_cycles, which leaves out in SQL the edges that cannot lie on a cycle,
    finds each relationship's cycles as Tarjan finds them over all its resolved
    edges: an unresolved reference, or another relationship's edge, never keeps
    one in."""
    db = sqlite_utils.Database(memory=True)
    create_tables(db)
    create_lookup_indexes(db)
    create_indexes(db, browsable=False)
    name = {"r": "reply_to", "d": "derivative_of", "i": "input_packets"}
    for source, target, kind in edges:
        to = None if target is None else f"n{target}"
        if kind == "i":
            db["input_packets"].insert({"consumer": f"n{source}", "upstream": to})
        else:
            row = {"source_file": f"n{source}", "field": name[kind], "target_file": to}
            db["refs"].insert(row)
    store_cycles(db)
    for kind, relation in name.items():
        resolved = [(f"n{s}", f"n{t}") for s, t, k in edges if k == kind and t is not None]
        expected = {frozenset(c) for c in on_cycles(resolved)}
        stored: dict[int, set[str]] = {}
        for row in db["cycle_members"].rows_where("relation = ?", [relation]):
            stored.setdefault(row["cycle"], set()).add(row["node"])
        assert {frozenset(c) for c in stored.values()} == expected, relation
        assert len(stored) == len(expected)  # each cycle once


def _members(db_path) -> set[tuple[str, str]]:
    rows = sqlite_utils.Database(db_path)["cycle_members"].rows
    return {(r["relation"], r["node"]) for r in rows}


def test_an_incremental_build_finds_the_cycles_an_edit_makes_and_breaks(repo: Repo, tmp_path):
    """Each relationship's cycles are worked out again when an edit changes its
    edges (closing a loop, opening it, a record on it removed, its ID taken by
    a copy that references then resolve to), and kept when it does not, as a
    full build finds them."""
    first, second, third = repo.files("registry/packets/*/*.json")[:3]
    a, b = repo.load(first)["packet_id"], repo.load(second)["packet_id"]
    repo.edit(first, derivative_of=[b])
    repo.index()
    full = tmp_path / "full.db"

    def as_full() -> set[tuple[str, str]]:
        assert build_index(repo.root, repo.db_path).incremental
        build_index(repo.root, full, full=True)
        assert _members(repo.db_path) == _members(full)
        return _members(repo.db_path)

    assert as_full() == set()
    repo.edit(second, derivative_of=[a])  # the loop closed by its other end
    assert as_full() == {("derivative_of", first), ("derivative_of", second)}
    repo.edit(third, notes="an edit elsewhere")  # no edge changed: the cycle stands
    assert as_full() == {("derivative_of", first), ("derivative_of", second)}
    moved = repo.move(second, second.replace(".json", "-moved.json"))  # the same record
    assert as_full() == {("derivative_of", first), ("derivative_of", moved)}
    kept = (repo.root / moved).read_bytes()
    (repo.root / moved).unlink()  # a record on it gone
    assert as_full() == set()
    repo.write(moved, kept)
    assert as_full() == {("derivative_of", first), ("derivative_of", moved)}
    folder, name = first.rsplit("/", 1)  # a copy of a's ID, first in path order
    copy = repo.save_copy(first, f"{folder}/0{name}")
    repo.edit(copy, derivative_of=[])
    assert as_full() == set()  # b's derivative_of now names the copy, which names nothing
    (repo.root / copy).unlink()
    repo.edit(first, derivative_of=[])  # and opened at the first end
    assert as_full() == set()
    replies = repo.files("messages/*/*.json") or repo.files("registry/messages/*/*.json")
    m, n = replies[:2]
    repo.edit(m, reply_to=repo.load(n)["message_id"])
    repo.edit(n, reply_to=repo.load(m)["message_id"])
    assert as_full() == {("reply_to", m), ("reply_to", n)}
