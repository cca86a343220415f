"""The index file itself: recognise a labnote index, refuse anything else, find
what is wrong with a damaged one, and say what repository it describes.

Nothing here builds or queries an index; every command that reads or replaces
``--db`` asks here first.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import NoIndex, NotAnIndex

if TYPE_CHECKING:
    import sqlite_utils

# Written into the SQLite header (PRAGMA application_id): a file is recognised as
# a labnote index from its first 100 bytes, even when a page further on is damaged.
APPLICATION_ID = 0x4C4E4958  # "LNIX"
SQLITE_MAGIC = b"SQLite format 3\x00"


class Queryable(Protocol):
    """What a read of an index needs: a sqlite3 connection, or sqlite-utils'
    Database. The reads that tell whether an index is current take either, so
    that a check of an unchanged repository imports no sqlite-utils (about 0.08 s
    of a small check's start-up)."""

    def execute(self, sql: str, parameters: Any = ..., /) -> sqlite3.Cursor:
        """Run one statement (with its parameters) and return its cursor."""
        ...


def as_database(
    target: Path | str | sqlite3.Connection, *, read_only: bool = False
) -> sqlite_utils.Database:
    """An index opened as sqlite-utils' Database, the one way every module opens one.
    Installed sqlite-utils plugins are not run on it: a plugin's prepare_connection
    could define functions the checks' SQL would then call (and the scan of every
    installed package for plugins is skipped). ``read_only``: a connection that
    cannot write (nor create the file)."""
    if read_only and not isinstance(target, sqlite3.Connection):
        target = read_only_connection(target)
    import sqlite_utils  # here: what only recognises an index file loads none of it

    return sqlite_utils.Database(target, execute_plugins=False)


def database_file(db: sqlite_utils.Database) -> str:
    """The file of a database's main schema ("" for one in memory)."""
    return db.execute("PRAGMA database_list").fetchone()[2]


def read_only_connection(path: Path | str, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection to ``path`` that cannot write, nor create the file."""
    return sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=check_same_thread)


def read_only_uri(path: Path | str) -> str:
    """The SQLite URI that opens ``path`` read-only. Percent-encoded: spliced in as
    it is, a '?' or '#' in a directory's name began the URI's query, mode=ro was
    lost and SQLite opened (and created) the file the name's first part named."""
    return Path(path).absolute().as_uri() + "?mode=ro"


def _header(path: Path) -> bytes:
    """A file's SQLite header (its first 100 bytes; fewer, or none, for a file
    that is not a database), read without following a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return b""
    with open(fd, "rb") as handle:
        header = handle.read(100)
    return header if len(header) == 100 and header.startswith(SQLITE_MAGIC) else b""


def has_index_header(path: Path) -> bool:
    """Whether a file begins with the SQLite header of a labnote index (our
    application_id): from its first 100 bytes, without opening it as a database."""
    header = _header(path)
    return bool(header) and int.from_bytes(header[68:72], "big") == APPLICATION_ID


def is_labnote_index(path: Path) -> bool:
    """Whether a regular file is a labnote index: our application_id in its SQLite
    header, or (an index made before there was one) our build_info table."""
    header = _header(path)
    if not header:
        return False
    if int.from_bytes(header[68:72], "big") == APPLICATION_ID:
        return True
    try:
        row = _read_only(path, "SELECT value FROM build_info WHERE key = 'settings'")
        return row is not None and "format" in json.loads(row[0])
    except (sqlite3.Error, ValueError, TypeError):
        return False


def index_damage(db_path: Path) -> str | None:
    """What SQLite's quick check finds wrong with an index (None: nothing).
    It reads every page once: worth it before serving, not before every query."""
    try:
        row = _read_only(db_path, "PRAGMA quick_check(1)")
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if row and row[0] == "ok" else str(row[0] if row else "unreadable")


def _read_only(path: Path, sql: str) -> tuple | None:
    """The first row of one query, on a connection that cannot write."""
    conn = read_only_connection(path)
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()


def check_index_path(db_path: Path, *, must_exist: bool = False) -> bool:
    """Whether ``db_path`` holds a labnote index (False: nothing, or an empty file).

    Raises NotAnIndex for anything else: a symlink, a FIFO, a device, a
    directory, a file that is not a labnote index. A build never replaces it.
    """
    try:
        st = os.lstat(db_path)
    except (FileNotFoundError, NotADirectoryError):
        if must_exist:
            raise NoIndex(f"no index at {db_path}") from None
        return False
    except OSError as exc:
        raise NotAnIndex(f"{db_path} cannot be examined ({exc.strerror})") from exc
    if stat.S_ISLNK(st.st_mode):
        raise NotAnIndex(f"{db_path} is a symlink: give the index file itself as --db")
    if not stat.S_ISREG(st.st_mode):
        raise NotAnIndex(f"{db_path} is not a regular file: give another --db")
    if st.st_size == 0 and not must_exist:
        return False
    if not is_labnote_index(db_path):
        raise NotAnIndex(
            f"{db_path} is not a labnote index (it could be something of yours): "
            "give another --db, or remove it yourself"
        )
    return True


def indexed_repository(db: sqlite_utils.Database) -> Path | None:
    """The repository an index was built from, as its build recorded it."""
    try:
        row = db.execute("SELECT value FROM build_info WHERE key = 'settings'").fetchone()
        return Path(json.loads(row[0])["repo"]) if row else None
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        return None


def repository_name(db_path: Path) -> str | None:
    """The name of the repository an index was built from (its directory's), as
    its build recorded it; None for a file that does not say."""
    try:
        db = as_database(db_path, read_only=True)
    except sqlite3.Error:
        return None
    try:
        repo = indexed_repository(db)
    finally:
        db.close()
    return repo.name if repo is not None and repo.name else None
