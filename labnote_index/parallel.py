"""Spread work over processes: per-file work into shards, queries dealt out.

Parsing, validating and writing rows is Python work bound to one core. A
build with many files to read splits them into contiguous parts: this process
writes the first part straight into the index while forked workers write the
others, each into a shard database of its own (the same tables, through
sqlite-utils). The shards are then copied into the index in order with
``INSERT ... SELECT``, so every row, and every row id, is what one process
working through the files in order would have written.

Rows never cross a process boundary as Python objects (pickling them back
costs more than the parsing it would save): a worker hands back a file.
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing
import os
import signal
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from .errors import LabnoteError
from .schema import create_tables
from .tempfiles import temporary_directory

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[int], None]
# write(db, items, progress): write the rows of these items into db.
Writer = Callable[[sqlite_utils.Database, Sequence[T], Progress | None], None]

# Below this many items a part, starting a process costs more than it saves.
MIN_PART = 2000
MAX_JOBS = 4


class WorkerError(LabnoteError):
    """A worker process died before finishing its share of the work."""


def default_jobs() -> int:
    """Processes to use: the cores this process may run on, and no more than a
    container's CPU quota allows (CI runners often have one), at most MAX_JOBS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    quota = cpu_quota()
    if quota is not None:
        cores = min(cores, math.ceil(quota))
    return max(1, min(MAX_JOBS, cores))


def cpu_quota() -> float | None:
    """The CPUs this process's cgroup may use, when a quota is set."""
    try:  # cgroup v2: "max 100000" or "150000 100000"
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:  # cgroup v1: a quota of -1 is none
            quota = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text().strip()
            period = Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    return cpus_allowed(quota, period)


def cpus_allowed(quota: str, period: str) -> float | None:
    """CPUs a cgroup quota and period (microseconds, as the kernel writes them) allow."""
    try:
        allowed = int(quota) / int(period)
    except (ValueError, ZeroDivisionError):  # "max": no quota
        return None
    return allowed if allowed > 0 else None  # v1 writes -1 for none


def _fork_context() -> Any:
    """Forking, on Linux only: elsewhere fork is missing (Windows) or unsafe with
    system libraries (macOS), and the work is done in one process."""
    if not sys.platform.startswith("linux"):
        return None
    return multiprocessing.get_context("fork")


def run_sharded(
    db: sqlite_utils.Database,
    items: Sequence[T],
    write: Writer[T],
    tables: Sequence[str],
    jobs: int,
    progress: Progress | None = None,
) -> None:
    """``write`` every item into ``db``, over up to ``jobs`` processes.

    ``tables`` are those ``write`` fills: they are copied from each shard.
    """
    context = _fork_context()
    jobs = max(1, min(jobs, len(items) // MIN_PART))
    if jobs == 1 or context is None:
        write(db, items, progress)
        return
    size = -(-len(items) // jobs)
    parts = [items[start : start + size] for start in range(0, len(items), size)]
    done = context.Array("q", len(parts), lock=False)  # items done by each worker
    # Shards go beside the index: on its disk, not in a memory-backed /tmp.
    index_file = database_file(db)
    work_dir = Path(index_file).parent if index_file else None
    # Named for this process: a later build clears it away if this one is killed.
    with temporary_directory("shards", work_dir) as tmp:
        shards = [tmp / f"shard-{n}.db" for n in range(1, len(parts))]
        workers = [
            context.Process(
                target=_work,
                args=(shard, part, write, done, n, os.getpid()),
                daemon=True,
            )
            for n, (shard, part) in enumerate(zip(shards, parts[1:], strict=True), start=1)
        ]
        reported = [0]

        def report(n: int) -> None:
            # This process reports for the workers too, as it goes.
            if progress:
                others = sum(done[1:])
                progress(n + others - reported[0])
                reported[0] = others

        try:
            for worker in workers:
                worker.start()
            write(db, parts[0], report if progress else None)
            for worker, part in zip(workers, parts[1:], strict=True):
                while worker.is_alive():
                    worker.join(0.1)
                    report(0)
                if worker.exitcode != 0:
                    raise WorkerError(
                        f"a worker process indexing {len(part)} "
                        f"files exited with status {worker.exitcode}; "
                        "run the build again with --jobs 1 to see why"
                    )
            for shard in shards:
                _merge(db, shard, tables)
        finally:
            for worker in workers:
                if worker.pid is None:
                    continue  # never started
                if worker.is_alive():
                    worker.terminate()
                worker.join()


def die_with_parent(parent: int) -> None:
    """Make this worker die when its parent does (even by SIGKILL), on Linux."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def _work(
    shard: Path,
    part: Sequence[T],
    write: Writer[T],
    done: Any,
    n: int,
    parent: int,
) -> None:
    """A worker: write its part into a fresh shard database."""
    die_with_parent(parent)
    # Ctrl-C reaches the whole process group; the parent stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = sqlite3.connect(shard)
    conn.execute("PRAGMA journal_mode = OFF")  # a shard is thrown away on any failure
    conn.execute("PRAGMA synchronous = OFF")
    db = sqlite_utils.Database(conn)
    create_tables(db)

    def count(k: int) -> None:
        done[n] += k

    write(db, part, count)
    conn.commit()
    conn.close()


def _merge(db: sqlite_utils.Database, shard: Path, tables: Sequence[str]) -> None:
    """Append the rows of a shard's tables to the same tables of ``db``, in shard order."""
    if db.conn.in_transaction:
        db.conn.commit()  # ATTACH cannot happen inside a transaction
    db.execute("ATTACH DATABASE ? AS shard", [str(shard)])
    try:
        with db.atomic():
            for table in tables:
                # An integer id is given anew, so ids follow on from the rows already in db.
                renumbered = ["id"] if db[table].pks == ["id"] else []
                columns = [c.name for c in db[table].columns if c.name not in renumbered]
                names = ", ".join(f"[{c}]" for c in columns)
                db.execute(
                    f"INSERT INTO main.[{table}] ({names}) "
                    f"SELECT {names} FROM shard.[{table}] ORDER BY rowid"
                )
    finally:
        db.execute("DETACH DATABASE shard")


def map_forked(func: Callable[[list[T]], list[R]], items: Sequence[T], jobs: int) -> list[R]:
    """``func(items)``, the items dealt out round-robin over up to ``jobs``
    processes, this one included; ``func`` returns one result per item it is
    given. Results come back pickled: they should be small (query answers, not
    tables)."""
    context = _fork_context()
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1 or context is None:
        return func(list(items))
    hands = [list(range(n, len(items), jobs)) for n in range(jobs)]
    results: list[Any] = [None] * len(items)
    workers = []
    try:
        for hand in hands[1:]:
            receive, send = context.Pipe(duplex=False)
            worker = context.Process(
                target=_deal,
                args=(func, [items[i] for i in hand], send, os.getpid()),
                daemon=True,
            )
            worker.start()
            send.close()
            workers.append((hand, receive, worker))
        for i, result in zip(hands[0], func([items[i] for i in hands[0]]), strict=True):
            results[i] = result
        for hand, receive, _ in workers:
            try:
                answers = receive.recv()  # before join: a big answer fills the pipe
            except EOFError:
                raise WorkerError(
                    "a worker process died before answering; run again with --jobs 1 to see why"
                ) from None
            for i, result in zip(hand, answers, strict=True):
                results[i] = result
        return results
    finally:
        for _, receive, worker in workers:
            receive.close()
            if worker.is_alive():
                worker.terminate()
            worker.join()


def _deal(func: Callable[[list[T]], list[R]], hand: list[T], send: Any, parent: int) -> None:
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers
    send.send(func(hand))
    send.close()


def database_file(db: sqlite_utils.Database) -> str:
    """The file of a database's main schema ("" for one in memory)."""
    return db.execute("PRAGMA database_list").fetchone()[2]
