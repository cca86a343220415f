"""serve --watch: build an index again whenever its repository's files change,
a burst of changes at a time, and have the server take each new index up."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .index.build import BuildResult
from .read.paths import leads_inside

# A burst of changes is one rebuild: it ends once no change came for this many
# milliseconds (an editor's save, a git checkout, a storm of edits), or, when
# changes never stop, after the longer wait.
WATCH_QUIET_MS = 400
WATCH_MAX_WAIT_MS = 10_000


def watch_repository(
    build: Callable[[Path, Path], BuildResult],
    repo: Path,
    db: Path,
    told: Callable[[BuildResult | Exception], None],
    rebuilt: Callable[[], None],
    stop: threading.Event,
) -> None:
    """Build ``db`` again (``build(repo, db)``, the façade's) whenever files of
    ``repo`` change, until ``stop``; after each build, ``rebuilt()`` (the server
    takes the new index up) and ``told`` the result, or the error. Files in
    dot-directories the walk never reads (.git, our own temporary files) and the
    index's own files do not count."""
    from watchfiles import watch  # imported only to watch

    own = {str(db.resolve()), *(str(db.resolve()) + s for s in ("-journal", "-wal", "-shm"))}
    root = repo.resolve()

    def counts(_change: Any, path: str) -> bool:
        # Inside as the walk reads the repository (the one containment test).
        return path not in own and leads_inside(path, root)

    # watchfiles yields a set of changes once it stops growing, and the same file
    # saved again and again does not grow it: the burst is settled here. A
    # yield with nothing in it is a quiet spell of WATCH_QUIET_MS.
    burst_began: float | None = None
    for changes in watch(
        repo,
        watch_filter=counts,
        rust_timeout=WATCH_QUIET_MS,
        yield_on_timeout=True,
        stop_event=stop,
    ):
        now = time.monotonic()
        if changes and burst_began is None:
            burst_began = now
        if burst_began is None:
            continue  # quiet, and nothing owed
        if changes and now - burst_began < WATCH_MAX_WAIT_MS / 1000:
            continue  # the burst goes on
        burst_began = None
        try:
            result = build(repo, db)
        except Exception as exc:  # anything: the server goes on with the index it has
            told(exc)
            continue
        rebuilt()
        told(result)
