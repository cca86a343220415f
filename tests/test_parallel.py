"""A build spread over worker processes writes exactly what one process writes."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index import checks, parallel, revisions
from labnote_index.checks import findings
from labnote_index.cli import cli
from labnote_index.importer import build_index
from labnote_index.schema import FTS_COLUMNS, create_tables

from .conftest import Calls, Repo
from .test_incremental import content
from .test_revisions import ILLEGAL, TRANSITION_CHECKS


def rows_in_order(db: sqlite_utils.Database) -> dict[str, list[tuple]]:
    """Every table's rows in row id order, ids included (full-text indexes aside)."""
    return {
        name: db.execute(f"SELECT rowid, * FROM [{name}] ORDER BY rowid").fetchall()
        for name in db.table_names()
        if "_fts" not in name
    }


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    # The generated repository is small: let three processes share even it.
    monkeypatch.setattr(parallel, "MIN_PART", 5)


def test_three_processes_write_what_one_does(repo: Repo, tmp_path: Path, small_parts: None):
    # Bad files too, so that findings and validation errors come from the workers' parts.
    repo.write("registry/packets/2025/20250301-broken.json", "{")
    message = repo.first("registry/messages/*/*.json")
    repo.edit(message, reply_to="MSG-20990101-000000-nowhere")
    repo.edit(repo.files("registry/responses/*/*.json")[-1], status="pending")
    seen: list[int] = []
    one = build_index(repo.root, tmp_path / "one.db", jobs=1)
    three = build_index(repo.root, tmp_path / "three.db", jobs=3, progress=Calls(seen.append))
    assert one.files > 3 * parallel.MIN_PART
    assert sum(seen) == three.files  # the workers' files are reported as they go
    first, spread = (sqlite_utils.Database(tmp_path / n) for n in ("one.db", "three.db"))
    assert rows_in_order(spread) == rows_in_order(first)
    assert spread.execute("SELECT count(*) FROM artifacts_fts").fetchone()[0] > 0
    assert {"file_unreadable", "reference_unresolved"} <= {
        f["check"] for f in spread["findings"].rows
    }
    assert not list(tmp_path.glob(".labnote-*"))  # shards are cleaned up


@pytest.mark.parametrize("edited", [1, 30])  # one file: read here; thirty: shared out
def test_incremental_build_after_a_spread_one(
    repo: Repo, tmp_path: Path, small_parts: None, edited: int
):
    build_index(repo.root, repo.db_path, jobs=3)
    records = repo.files("registry/*/*/*.json")
    for record in records[:edited]:
        repo.edit(record, notes="edited")
    again = build_index(repo.root, repo.db_path, jobs=3)
    assert again.incremental and again.reread == edited
    build_index(repo.root, tmp_path / "full.db", full=True, jobs=1)
    incremental, full = (sqlite_utils.Database(p) for p in (repo.db_path, tmp_path / "full.db"))
    assert content(incremental) == content(full)
    for table in FTS_COLUMNS:  # the full-text indexes took the appended rows in
        incremental.execute(f"INSERT INTO [{table}_fts]([{table}_fts]) VALUES ('integrity-check')")
    hits = incremental.execute("SELECT count(*) FROM packets_fts WHERE packets_fts MATCH 'edited'")
    assert hits.fetchone()[0] == sum(r.startswith("registry/packets/") for r in records[:edited])


def test_a_failed_worker_fails_the_run(tmp_path: Path, small_parts: None):
    # In a build, db is the temporary index, thrown away when run_sharded raises.
    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)

    def write(target: sqlite_utils.Database, items: Sequence[str], progress: object) -> None:
        if "boom" in items:
            raise RuntimeError("a bug in a writer")
        target["build_info"].insert_all({"key": item, "value": os.getpid()} for item in items)

    items = [f"item-{n}" for n in range(20)] + ["boom"]
    with pytest.raises(parallel.WorkerError, match="--jobs 1"):
        parallel.run_sharded(db, items, write, ["build_info"], jobs=3)
    assert not list(tmp_path.glob(".shards-*"))

    db = sqlite_utils.Database(tmp_path / "again.db")
    create_tables(db)
    parallel.run_sharded(db, items[:-1], write, ["build_info"], jobs=3)
    rows = list(db["build_info"].rows)
    assert [r["key"] for r in rows] == items[:-1]  # in order, whoever wrote them
    assert len({r["value"] for r in rows}) == 3  # three processes did


def test_interrupted_spread_build_stops_its_workers(repo: Repo, small_parts: None):
    repo.index().close()
    original = repo.db_path.read_bytes()
    for packet in repo.files("registry/packets/*/*.json"):
        repo.edit(packet, notes="edited")
    done: list[int] = []

    def interrupt_after_some(n: int) -> None:
        done.append(n)
        if len(done) == 3:
            raise KeyboardInterrupt  # as if the operator pressed Ctrl-C

    with pytest.raises(KeyboardInterrupt):
        build_index(
            repo.root, repo.db_path, full=True, jobs=3, progress=Calls(interrupt_after_some)
        )
    assert multiprocessing.active_children() == []
    assert repo.db_path.read_bytes() == original
    assert [p.name for p in repo.db_path.parent.iterdir() if p.name.startswith(".")] == []


def test_jobs_option(repo: Repo, small_parts: None):
    runner = CliRunner()
    built = runner.invoke(cli, ["build", str(repo.root), "--db", str(repo.db_path), "--jobs", "2"])
    assert built.exit_code == 0, built.output
    assert sqlite_utils.Database(repo.db_path)["records"].count > 2 * parallel.MIN_PART
    again = runner.invoke(cli, ["check", "--db", str(repo.db_path), "--jobs", "2"])
    assert again.exit_code == 0, again.output
    zero = runner.invoke(cli, ["check", "--db", str(repo.db_path), "--jobs", "0", str(repo.root)])
    assert zero.exit_code == 2 and "--jobs" in zero.output


@pytest.fixture
def small_index(monkeypatch: pytest.MonkeyPatch) -> None:
    # Test indexes are small: deal the checks out even so.
    monkeypatch.setattr(checks, "DEAL_OUT_FROM", 0)


def test_checks_dealt_out_find_what_one_process_finds(
    sample_repo: Repo, tmp_path: Path, small_index: None
):
    db = sample_repo.index()
    one = checks.run_checks(db, jobs=1)
    alone = findings(db)
    assert checks.run_checks(db, jobs=3) == one > 0
    assert findings(db) == alone


def test_transition_checks_dealt_out_read_the_attached_base(
    history: Repo, tmp_path: Path, small_index: None
):
    for _, change in ILLEGAL[:6]:
        change(history)
    history.index().close()
    found = {}
    with revisions.base_index(history.root, "base") as base_db:
        for jobs in (1, 3):
            copy = tmp_path / f"head-{jobs}.db"
            shutil.copyfile(history.db_path, copy)
            revisions.check_transitions(copy, base_db, jobs=jobs)
            found[jobs] = findings(sqlite_utils.Database(copy))
    transitions = [f for f in found[3] if f["check"] in TRANSITION_CHECKS]
    assert {c for c, _ in ILLEGAL[:6]} <= {f["check"] for f in transitions}
    assert found[3] == found[1]


def test_map_forked_deals_items_out_and_keeps_their_order():
    def where(hand: list[int]) -> list[tuple[int, int]]:
        return [(item * item, os.getpid()) for item in hand]

    answers = parallel.map_forked(where, list(range(10)), jobs=3)
    assert [square for square, _ in answers] == [n * n for n in range(10)]
    pids = [pid for _, pid in answers]
    assert len(set(pids)) == 3 and pids[0] == pids[3] == os.getpid()
    assert parallel.map_forked(where, [7], jobs=3) == [(49, os.getpid())]  # one item: here


@pytest.mark.parametrize(
    "quota, period, cpus",
    [("max", "100000", None), ("150000", "100000", 1.5), ("-1", "100000", None)],
)
def test_cpu_quota_as_the_kernel_writes_it(quota: str, period: str, cpus: float | None):
    assert parallel.cpus_allowed(quota, period) == cpus


def test_default_jobs_within_cores_and_quota():
    jobs = parallel.default_jobs()
    assert 1 <= jobs <= min(parallel.MAX_JOBS, len(os.sched_getaffinity(0)))
    quota = parallel.cpu_quota()
    assert quota is None or jobs <= max(1, -(-quota // 1))
