"""The index written whole or not at all: a temporary file beside it (empty, or
a copy of the index it replaces), renamed over it once complete, and the mark
that says a build here wrote it.

An incremental build copies the index before it writes (never in place: a
server may be reading it). The copy can be started early (``EarlyCopy``), in a
thread, while the build waits for git: the kernel copies without holding
Python's lock, so on a second core it costs nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .. import interrupts
from ..errors import IndexWriteError
from .index_file import APPLICATION_ID, Queryable, as_database
from .tempfiles import remove_abandoned, temp_name

if TYPE_CHECKING:
    import sqlite_utils

_CHUNK = 16 << 20  # bytes a step of a copy: how soon one asked to stop stops


def _new_temporary(db_path: Path) -> Path:
    """A new empty temporary file beside ``db_path``, named for this process (one
    left by a killed build is cleared away by the next), as any new file is made
    (the umask applies)."""
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned(db_path.parent)
        tmp = db_path.parent / temp_name("tmp", db_path.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        os.close(fd)
    except OSError as exc:
        raise IndexWriteError(f"cannot write the index {db_path}: {exc.strerror}") from exc
    return tmp


def _copy(source: Path, target: Path, stop: threading.Event | None = None) -> None:
    """``source``'s bytes into the empty file ``target``, a chunk at a time (the
    kernel's copy where it has one), until done or ``stop`` is set."""
    with open(source, "rb", buffering=0) as src, open(target, "r+b", buffering=0) as dst:
        kernel = hasattr(os, "copy_file_range")
        while stop is None or not stop.is_set():
            if kernel:
                try:
                    if not os.copy_file_range(src.fileno(), dst.fileno(), _CHUNK):
                        return
                    continue
                except OSError:  # not on this system: copied by hand from here on
                    kernel = False
            chunk = memoryview(src.read(_CHUNK) or b"")
            if not chunk:
                return
            while chunk:
                chunk = chunk[dst.write(chunk) or 0 :]


class EarlyCopy:
    """A copy of the index at ``db_path`` into a new temporary file beside it,
    begun now in a thread, for ``atomic_database`` to build on; ``discard`` it
    when the build writes nothing (the index was current)."""

    def __init__(self, db_path: Path) -> None:
        self.source = db_path
        self.path = _new_temporary(db_path)
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="labnote-index copy")
        self._thread.start()

    def _run(self) -> None:
        try:
            _copy(self.source, self.path, self._stop)
        except BaseException as exc:  # raised where the copy is used
            self._error = exc

    def result(self) -> Path:
        """The complete copy (waited for): its error, if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self.path

    def discard(self) -> None:
        """The copy stopped, waited for and deleted."""
        self._stop.set()
        self._thread.join()
        self.path.unlink(missing_ok=True)


@contextmanager
def early_copy(db_path: Path, wanted: bool) -> Iterator[EarlyCopy | None]:
    """An EarlyCopy of the index at ``db_path`` where ``wanted`` (else None), for
    the block to build on; discarded at its end if not taken."""
    copy = EarlyCopy(db_path) if wanted else None
    try:
        yield copy
    finally:
        if copy is not None:
            copy.discard()  # taken: renamed into place, or deleted already


def _file_identity(path: Path) -> str:
    st = os.stat(path)
    return json.dumps([st.st_dev, st.st_ino])


def written_here(db: Queryable, db_path: Path) -> bool:
    """Whether the index at ``db_path`` is the very file a build here wrote: each
    build records its file's device and inode, which a rename keeps and a
    copy, a checkout or a cache restored from elsewhere does not. An index
    that arrived any other way (a committed cache, a file copied in) is not
    trusted with a single row: it is built again in full."""
    row = db.execute("SELECT value FROM build_info WHERE key = 'written'").fetchone()
    return row is not None and row[0] == _file_identity(db_path)


@contextmanager
def atomic_database(
    db_path: Path, start_from: Path | None = None, copied: EarlyCopy | None = None
) -> Iterator[sqlite_utils.Database]:
    """A database in a temporary file (empty, or a copy of ``start_from``, or the
    copy ``copied`` made of it), moved over ``db_path`` on success only. One
    that replaces an index keeps its mode."""
    tmp = copied.path if copied is not None else _new_temporary(db_path)
    try:
        if copied is not None:
            start_from = copied.source
            copied.result()
        elif start_from is not None:
            _copy(start_from, tmp)
        if start_from is not None:
            os.chmod(tmp, stat.S_IMODE(os.stat(start_from).st_mode))
        elif db_path.is_file():
            os.chmod(tmp, stat.S_IMODE(os.stat(db_path).st_mode))
        conn = sqlite3.connect(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        # The rename is what makes the build atomic, so the temporary file
        # needs no journal of its own.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db = as_database(conn)
        yield db
        # Which file this is (the rename keeps it): what proves, next time, that
        # the index is one a build here wrote (written_here).
        row = {"key": "written", "value": _file_identity(tmp)}
        db.table("build_info").insert(row, replace=True)
        conn.commit()
        conn.close()
        with interrupts.whole():  # replaced and said so, or neither
            try:
                os.replace(tmp, db_path)
            except OSError as exc:
                raise IndexWriteError(f"cannot write the index {db_path}: {exc.strerror}") from exc
            interrupts.changed(f"the index {db_path} was replaced by a complete new one")
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
