"""A build spread over worker processes writes exactly what one process writes."""

from __future__ import annotations

import multiprocessing
import os
from functools import partial
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index.api import build as build_index
from labnote_index.cli import cli
from labnote_index.index import parallel
from labnote_index.index.schema import create_tables
from labnote_index.index.sql_views import FTS_COLUMNS

from .helpers import Calls, Repo, compared, content, not_when_built, write_keys


def rows_in_order(db: sqlite_utils.Database) -> dict[str, list[tuple]]:
    """Every table's rows in row id order, ids included (full-text indexes aside)."""
    return {
        name: db.execute(
            f"SELECT rowid, {', '.join(f'[{c}]' for c in compared(name, db[name].columns_dict))}"
            f" FROM [{name}]{not_when_built(name)} ORDER BY rowid"
        ).fetchall()
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


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_workers_run_under_spawn_and_forkserver_and_raise_what_they_raise(
    tmp_path: Path, small_parts: None, method: str
):
    # In a build, db is the temporary index, thrown away when run_sharded raises.
    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)
    items = [f"item-{n}" for n in range(40)] + ["boom"]
    with pytest.raises(ValueError, match="a bug in a writer: boom") as raised:
        parallel.run_sharded(db, items, write_keys, ["build_info"], jobs=3, method=method)
    assert "write_keys" in str(raised.value.__cause__)  # the worker's own traceback
    assert not list(tmp_path.glob(".labnote-*"))

    db = sqlite_utils.Database(tmp_path / "again.db")
    create_tables(db)
    parallel.run_sharded(db, items[:-1], write_keys, ["build_info"], jobs=3, method=method)
    rows = list(db["build_info"].rows)
    assert [r["key"] for r in rows] == items[:-1]  # in order, whoever wrote them
    assert len({r["value"] for r in rows}) >= 2  # this process and workers


def test_a_worker_that_dies_fails_the_run(tmp_path: Path, small_parts: None):
    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)
    items = [f"item-{n}" for n in range(40)] + ["die"]
    with pytest.raises(parallel.WorkerError, match="--jobs 1"):
        parallel.run_sharded(db, items, write_keys, ["build_info"], jobs=3)


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


@pytest.mark.parametrize(
    "quota, period, cpus",
    [("max", "100000", None), ("150000", "100000", 1.5), ("-1", "100000", None)],
)
def test_cpu_quota_as_the_kernel_writes_it(quota: str, period: str, cpus: float | None):
    assert parallel.cpus_allowed(quota, period) == cpus


def test_default_jobs_follow_the_cores_a_process_may_run_on():
    """A process pinned to one core (as a CI job often is) uses one; the count is
    the affinity's, not the machine's."""
    import subprocess
    import sys

    code = (
        "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
        "from labnote_index.index.parallel import default_jobs; print(default_jobs())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "1"


def test_shares_are_cut_by_weight_not_by_count():
    from labnote_index.index.parallel import CHUNKS_PER_JOB, _shares

    # Large files first, then many small ones: equal counts would be far from equal work.
    items = [100_000] * 100 + [1_000] * 4_900
    chunks = _shares(items, items, jobs=3)
    assert [w for chunk in chunks for w in chunk] == items  # contiguous, in order, all
    assert len(chunks) == 1 + 2 * CHUNKS_PER_JOB
    total = sum(items)
    assert abs(sum(chunks[0]) - total / 3) <= 100_000  # a third of the work, within one item
    assert len(chunks[0]) < 100  # so few files: a third by count would be 1,667
    rest = [sum(c) for c in chunks[1:]]
    assert max(rest) - min(rest) <= 2 * 100_000  # each boundary within one item


def test_markdown_files_weigh_what_the_loader_does_with_them():
    """Artifacts sort before registry/: weighed as records, the Markdown files
    were this process's whole share and the records all went to the workers.
    Each share now holds about its part of the records."""
    from labnote_index.index.build import _reading_cost
    from labnote_index.index.parallel import _shares
    from labnote_index.read.discover import DiscoveredFile
    from labnote_index.read.paths import FileStat

    def found(path: str, kind: str) -> DiscoveredFile:
        return DiscoveredFile(path, kind, FileStat(900, 0, False, True))

    markdown = [found(f"messages/answered/{n:05}.md", "markdown") for n in range(4_000)]
    records = [found(f"registry/packets/2026/{n:05}.json", "record") for n in range(4_000)]
    assert (
        4 * _reading_cost(markdown[0]) < _reading_cost(records[0]) < 8 * _reading_cost(markdown[0])
    )
    both = markdown + records
    chunks = _shares(both, [_reading_cost(item) for item in both], jobs=2)
    mine = sum(item.kind == "record" for item in chunks[0])
    # About half the records, less the Markdown's share: read in runs, a
    # Markdown file costs about a fifth of a record: 500 of 2,948, so this
    # process's half of the weight holds all 4,000 and 1,660 records (weighed
    # as nothing, it would be 2,000; as a thirtieth, 1,977; as a third, 1,548).
    assert 1_640 < mine < 1_680


def test_the_walks_files_are_weighed_from_its_arrays_as_one_by_one(tmp_path):
    """The weights of a walk's files (read from its arrays) are each file's
    ``_reading_cost``: Markdown, records of each size, a file with no stat."""
    from labnote_index.index.build import MARKDOWN_COST, _reading_cost, _reading_costs
    from labnote_index.read.discover import DiscoveredFile, FoundFiles, discover

    (tmp_path / "registry" / "packets").mkdir(parents=True)
    (tmp_path / "registry" / "packets" / "a.json").write_text("{}")
    (tmp_path / "registry" / "packets" / "b.json").write_text("x" * 5000)
    (tmp_path / "notes.md").write_text("# a note, longer than a record" * 100)
    found = discover(tmp_path)
    found.append(DiscoveredFile("registry/gone.json", "record"))  # no stat: listed, then gone
    costs = _reading_costs(found)
    assert list(costs) == [_reading_cost(item) for item in found]
    assert len(set(costs)) == 4  # Markdown, two sizes of record, none
    assert costs[0] == MARKDOWN_COST  # notes.md sorts first
    listed = list(found)
    assert list(_reading_costs(listed)) == list(costs)  # not a FoundFiles: one by one
    assert isinstance(found, FoundFiles)


def test_each_shard_is_merged_while_the_workers_write_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_parts: None
):
    """The first shard is appended to the index before the last is written: the
    last share waits for a file that this process makes once it has merged one."""
    flag = tmp_path / "merged"
    merge = parallel._merge

    def merging(db: sqlite_utils.Database, shard: str, tables: list[str]) -> None:
        merge(db, shard, tables)
        flag.touch()

    monkeypatch.setattr(parallel, "_merge", merging)
    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)
    items = [f"item-{n}" for n in range(40)] + [f"after:{flag}"]
    parallel.run_sharded(db, items, write_keys, ["build_info"], jobs=2)
    rows = {r["key"]: r["value"] for r in db["build_info"].rows}
    assert rows[f"after:{flag}"] == "after"  # "never": the shards waited for each other
    assert [r["key"] for r in db["build_info"].rows] == items  # and in order


def test_a_full_build_starts_its_workers_server_while_it_walks(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The worker server imports what workers need during the walk, once the walk
    has found enough files for workers; a build of fewer files starts none."""
    import inspect

    from labnote_index.index import build

    started: list[bool] = []  # for each start: whether the walk called it

    def start() -> None:
        started.append(any(frame.function == "_walk" for frame in inspect.stack()))

    monkeypatch.setattr(build, "start_workers_early", start)
    monkeypatch.setattr(build, "MIN_PART", 5)
    build_index(repo.root, tmp_path / "two.db", jobs=2)
    assert started == [True]
    started.clear()
    repo.edit(repo.first("registry/packets/*/*.json"), notes="edited")
    again = build_index(repo.root, tmp_path / "two.db", jobs=2)  # walked, a file read
    assert again.incremental and again.reread == 1
    build_index(repo.root, tmp_path / "one.db", jobs=1)
    monkeypatch.setattr(build, "MIN_PART", 10_000)
    build_index(repo.root, tmp_path / "few.db", jobs=2)
    assert started == []


def test_the_walk_says_once_when_it_has_found_that_many_files(tmp_path: Path):
    from labnote_index.read.discover import discover

    for rel in ["registry/packets/a.json", "registry/packets/b.json", "docs/c.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    total = len(discover(tmp_path))
    assert total == 3
    for many, told in [(1, 1), (total, 1), (total + 1, 0)]:  # the last file counts
        calls: list[int] = []
        discover(tmp_path, when_many=(many, partial(calls.append, 1)))
        assert len(calls) == told, many
    entered: list[str] = []
    seen: list[int] = []  # directories entered when told: before the walk's end
    discover(tmp_path, entered.append, when_many=(1, lambda: seen.append(len(entered))))
    assert seen and seen[0] < len(entered)


def test_shares_need_a_weight_for_each_item():
    from labnote_index.index.parallel import _shares

    with pytest.raises(ValueError, match="2 weights for 3 items"):
        _shares(["a", "b", "c"], [1, 1], jobs=2)


KILLED_BUILD = """
import sys
from pathlib import Path
import sqlite_utils
from labnote_index.index import parallel
from labnote_index.index.schema import create_tables
from tests.helpers import write_keys
parallel.MIN_PART = 5
db = sqlite_utils.Database(Path(sys.argv[1]))
create_tables(db)
items = [f"item-{n}" for n in range(40)] + ["wait"]
print("started", flush=True)
parallel.run_sharded(db, items, write_keys, ["build_info"], jobs=3)
"""


@pytest.mark.parametrize(
    "method", [m for m in ("forkserver", "spawn") if m in multiprocessing.get_all_start_methods()]
)
def test_a_killed_build_closes_its_callers_pipes_within_seconds(tmp_path: Path, method: str):
    """A caller that reads the build's output before reaping it (what
    subprocess.run(capture_output=True) does) keeps the killed build a zombie:
    its workers and their server must still exit and close the pipes."""
    import signal
    import subprocess
    import sys
    import time

    script = KILLED_BUILD.replace("jobs=3)", f"jobs=3, method={method!r})")
    build = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "index.db")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert build.stdout is not None and build.stdout.readline() == b"started\n"
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".labnote-shards-*/shard-*.db")):  # workers at work
        assert time.monotonic() < deadline and build.poll() is None, build.stderr
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(build.pid, signal.SIGKILL)
    started = time.monotonic()
    try:
        build.communicate(timeout=15)  # reads to EOF first, reaps after
    except subprocess.TimeoutExpired:
        build.stdout.close()
        pytest.fail("the killed build's workers still hold its caller's pipes after 15 s")
    assert time.monotonic() - started < 15
