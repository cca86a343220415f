"""The targets of Markdown links (``link_targets``): each distinct target as it
is now, looked at again on every build (a target can appear or go while the
file linking to it stays as it was), one lstat each, except a regular file git
vouches for (``files.unvouched``). Nothing is read, and no symlink is followed
out of the repository.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..read.paths import OUTSIDE, Sandbox, lstat_key
from ..text import parent_dir
from .files import unvouched
from .index_file import Queryable
from .inserts import Inserts
from .resolve import delete_in

if TYPE_CHECKING:
    import sqlite_utils

    from .changed import Suspects

_TARGETS = "SELECT target FROM markdown_links WHERE target IS NOT NULL"


def link_target_row(sandbox: Sandbox, path: str) -> dict[str, Any]:
    """The ``link_targets`` row of ``path``: what it is now, ``ok`` (a file or
    directory inside), ``missing``, ``escapes`` (a symlink, its own or a
    directory's on the way, that leads outside the repository) or ``git``
    (inside ``.git``, which is git's, never part of the repository as its
    readers see it); and, for a regular file that is not a symlink, its change
    time (a file changed as the build ran is looked at by the next, whatever git
    says). Nothing is read, and no symlink is followed out."""
    row: dict[str, Any] = {
        "path": path,
        "dir": parent_dir(path),
        "status": "missing",
        "regular_file": 0,
        "ctime_ns": None,
    }
    if any(part.lower() == ".git" for part in path.split("/")):
        row["status"] = "git"
        return row
    full = sandbox.path(path)
    try:
        # Its directories resolved, whether it exists or not. A link into a
        # dot-directory (.github/) is fine: a target is looked at, never read.
        if sandbox.place(path) == OUTSIDE:
            row["status"] = "escapes"
            return row
        key = lstat_key(full)
        if key is None or (key.is_link and not os.path.exists(full)):  # a dangling symlink too
            return row
    except (OSError, ValueError):  # a NUL in the name, a name too long
        return row
    row["status"] = "ok"
    if key.is_regular:
        row["regular_file"], row["ctime_ns"] = 1, key.ctime_ns
    return row


def refresh_link_targets(
    db: sqlite_utils.Database, sandbox: Sandbox, suspects: Suspects | None = None
) -> None:
    """Make ``link_targets`` hold each distinct Markdown link target as it is now:
    rows no link names go, the others git does not vouch for are looked at again
    (only those that differ are written)."""
    db.execute(f"DELETE FROM link_targets WHERE path NOT IN ({_TARGETS})")
    rows = []
    for path, status, regular_file, ctime_ns in _targets_to_look_at(db, sandbox, suspects):
        row = link_target_row(sandbox, path)
        if (row["status"], row["regular_file"], row["ctime_ns"]) != (
            status,
            regular_file,
            ctime_ns,
        ):
            rows.append(row)
    delete_in(db, "link_targets", "path", [row["path"] for row in rows])
    Inserts(db).insert("link_targets", rows)


def _targets_to_look_at(
    db: Queryable, sandbox: Sandbox, suspects: Suspects | None
) -> Iterator[tuple[Any, ...]]:
    """Each link target with no row yet (its stored columns None), then each
    stored row git does not vouch for."""
    new = f"SELECT DISTINCT target FROM ({_TARGETS}) "
    new += "WHERE target NOT IN (SELECT path FROM link_targets)"
    for (path,) in db.execute(new).fetchall():
        yield path, None, None, None
    yield from unvouched(
        db, sandbox, suspects, "link_targets", "path, status, regular_file, ctime_ns"
    )


def link_targets_unchanged(
    db: Queryable, sandbox: Sandbox, suspects: Suspects | None = None
) -> bool:
    """Whether ``link_targets`` still says what every link target is."""
    gone = db.execute(f"SELECT 1 FROM link_targets WHERE path NOT IN ({_TARGETS}) LIMIT 1")
    return gone.fetchone() is None and all(
        status is not None and link_target_row(sandbox, path)["status"] == status
        for path, status, _, _ in _targets_to_look_at(db, sandbox, suspects)
    )
