"""Spread per-file work over processes: contiguous chunks into shard databases.

Parsing, validating and writing rows is Python work bound to one core. A
build with many files to read cuts them into contiguous chunks, a few more
than there are processes so that none waits long for another: this process
writes the first chunk straight into the index while a pool of workers writes
the others, each into a shard database of its own (the same tables, through
sqlite-utils). The shards are appended to the index in chunk order with
``INSERT ... SELECT``, each as soon as this process has written its own chunk
and the shard is done, so every row, and every row id, is what one process
working through the files in order would have written.

Workers are started by ``forkserver`` where there is one (Linux: forking this
process, which may run threads under Datasette or Jupyter, is unsafe) and by
``spawn`` elsewhere; they are given a module-level function and picklable work,
so every start method works. A worker's exception comes back with its type
and traceback. Rows never cross a process boundary as Python objects (pickling
them back costs more than the parsing it would save): a worker hands back a
file.
"""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..errors import WorkerError
from .index_file import as_database, database_file
from .schema import create_tables
from .tempfiles import owner_alive, temporary_directory

if TYPE_CHECKING:
    from concurrent.futures import Future

    import sqlite_utils

T = TypeVar("T")
Advance = Callable[[int], None]
# write(db, items, advance): write the rows of these items into db. It must be
# picklable (a module-level function, or a method of a picklable object).
Writer = Callable[["sqlite_utils.Database", Sequence[T], Advance | None], None]

# Below this many items a share, starting a worker (which imports the build's
# modules) costs more than it saves (bench/benchmark.py measures one process
# against several at each size: BENCHMARKS.md).
MIN_PART = 5000
MAX_JOBS = 4
CHUNKS_PER_JOB = 3
# Modules the worker server imports once, so that each worker starts ready.
PRELOAD = ["labnote_index.index.rows", "labnote_index.index.files"]


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


def start_method() -> str:
    """forkserver where there is one, spawn elsewhere (never a plain fork)."""
    import multiprocessing  # here and below: a build with no workers never loads it

    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


def start_workers_early() -> None:
    """Start the worker server now, if workers are started by one, so that it has
    imported what workers need by the time there is work for them (a full build
    calls this before it walks the repository)."""
    if start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    forkserver.set_forkserver_preload(PRELOAD)
    forkserver.ensure_running()


def run_sharded(
    db: sqlite_utils.Database,
    items: Sequence[T],
    write: Writer[T],
    tables: Sequence[str],
    jobs: int,
    advance: Advance | None = None,
    method: str | None = None,
    weights: Sequence[int] | None = None,
) -> None:
    """``write`` every item into ``db``, over up to ``jobs`` processes: this one and
    workers started by ``method`` (default ``start_method()``).

    ``tables`` are those ``write`` fills: they are copied from each shard.
    ``weights`` tell what each item costs (default: all alike); shares are cut by them.
    """
    jobs = max(1, min(jobs, len(items) // MIN_PART))
    if jobs == 1:
        write(db, items, advance)
        return
    # This process writes an equal share straight into the index; the rest is cut
    # into a few chunks per worker, so that a worker that finishes early takes
    # more while a slower one is still at work.
    chunks = _shares(items, array("q", [1]) * len(items) if weights is None else weights, jobs)
    workers = jobs - 1
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(method or start_method())
    if context.get_start_method() == "forkserver":
        start_workers_early()
    # Shards go beside the index: on its disk, not in a memory-backed /tmp.
    # Named for this process: a later build clears them away if this one is killed.
    index_file = database_file(db)
    with temporary_directory("shards", Path(index_file).parent if index_file else None) as tmp:
        shards = [str(tmp / f"shard-{n}.db") for n in range(1, len(chunks))]
        pool = ProcessPoolExecutor(
            workers, mp_context=context, initializer=_worker_started, initargs=(os.getpid(),)
        )
        try:
            futures: list[Future[int]] = [
                pool.submit(_write_shard, shard, chunk, write)
                for shard, chunk in zip(shards, chunks[1:], strict=True)
            ]
            write(db, chunks[0], advance)
            # Each shard is appended as soon as it is written, in chunk order,
            # while the workers write the rest: only the last waits for them all.
            for future, shard in zip(futures, shards, strict=True):
                done = _result(future)
                if advance:  # progress is reported from this thread only
                    advance(done)
                _merge(db, shard, tables)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _shares(items: Sequence[T], weights: Sequence[int], jobs: int) -> list[Sequence[T]]:
    """Contiguous chunks of ``items`` (``weights`` one for each): the first (this
    process's) a ``jobs``-th of the total weight, the rest cut into
    CHUNKS_PER_JOB per worker of equal weight."""
    if len(weights) != len(items):
        raise ValueError(f"{len(weights)} weights for {len(items)} items")
    total = sum(weights)
    first = total / jobs
    rest = (total - first) / ((jobs - 1) * CHUNKS_PER_JOB)
    # A chunk ends where the running total passes its boundary: errors do not add up.
    bounds = iter([first + n * rest for n in range((jobs - 1) * CHUNKS_PER_JOB)])
    bound = next(bounds)
    chunks: list[Sequence[T]] = []
    start, held = 0, 0
    for i, w in enumerate(weights):
        held += w
        if held >= bound and i + 1 < len(items):
            chunks.append(items[start : i + 1])
            start = i + 1
            bound = next(bounds, math.inf)
    chunks.append(items[start:])
    return chunks


def _result(future: Future[int]) -> int:
    """A worker's answer; its own exception (with its traceback) if it raised one."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise WorkerError(
            "a worker process died before finishing its share of the files (killed, or "
            "out of memory); run the build again, with --jobs 1 to use no workers"
        ) from exc


def _worker_started(build: int) -> None:
    """In each worker: leave Ctrl-C to the build (it reaches the whole process
    group; the build stops the pool), and die with the build even when it is
    killed outright. Under forkserver a worker is the server's child, not the
    build's, and holds the server open: a thread watches the build instead."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import ctypes  # a worker's only: the build itself never needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux): dies with its parent
    except (OSError, AttributeError):
        pass
    born = _started_at(build)

    def watch() -> None:
        while _running(build, born):
            time.sleep(0.2)
        os._exit(1)  # the build is gone: nobody will read this worker's shard

    threading.Thread(target=watch, daemon=True, name="watch-build").start()


def _running(pid: int, born: str | None) -> bool:
    """Whether the build is still at work: the same process (not a reused ID), and
    not a zombie. A killed build whose caller reads its output before reaping it
    stays a zombie; taken for alive, its workers kept the caller's pipes (and the
    worker server, which they hold open) until the caller gave up."""
    if born is None:  # no /proc: the process ID is all there is
        return owner_alive(pid)
    fields = _proc_stat(pid)
    return fields is not None and fields[0] not in ("Z", "X") and fields[19] == born


def _started_at(pid: int) -> str | None:
    """When a process started (Linux), so that a reused process ID is not taken
    for the build."""
    fields = _proc_stat(pid)
    return fields[19] if fields is not None else None


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (Linux): its state
    first, its start time 20th. None when there is no such process (or no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def _write_shard(shard: str, chunk: Sequence[T], write: Writer[T]) -> int:
    """In a worker: write one chunk into a fresh shard database; how many items."""
    conn = sqlite3.connect(shard)
    conn.execute("PRAGMA journal_mode = OFF")  # a shard is thrown away on any failure
    conn.execute("PRAGMA synchronous = OFF")
    db = as_database(conn)
    create_tables(db)
    write(db, chunk, None)
    conn.commit()
    conn.close()
    return len(chunk)


def _merge(db: sqlite_utils.Database, shard: str, tables: Sequence[str]) -> None:
    """Append the rows of a shard's tables to the same tables of ``db``, in shard order."""
    if db.conn.in_transaction:
        db.conn.commit()  # ATTACH cannot happen inside a transaction
    db.attach("shard", shard)
    try:
        with db.atomic():
            for table in tables:
                # An integer id is given anew, so ids follow on from the rows already in db.
                renumbered = ["id"] if db.table(table).pks == ["id"] else []
                columns = [c.name for c in db.table(table).columns if c.name not in renumbered]
                names = ", ".join(f"[{c}]" for c in columns)
                db.execute(
                    f"INSERT INTO main.[{table}] ({names}) "
                    f"SELECT {names} FROM shard.[{table}] ORDER BY rowid"
                )
    finally:
        db.execute("DETACH DATABASE shard")
