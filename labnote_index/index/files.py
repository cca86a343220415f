"""Files the index takes in besides the records: artifacts and packet files
(and the rule both share with the targets of Markdown links, link_targets.py).

Both are refreshed the same way on a full and an incremental build: a file
whose size, times and inode are as stored keeps its row (one that changed too
close to being read to tell is compared by content); anything else is read
again. In a git work tree whose changes git named (``changed.Suspects``), a
regular file with no symlink on its way that git does not name keeps its row
without a look (one lstat each, 43,000 at the benchmark's size, was most of a
hook's time). Paths are never followed out of the repository: a symlink whose
target lies outside is reported, not read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..format.rules import SAFE_PATH_RE
from ..read.git import git_ignored, in_git_work_tree
from ..read.parse import NotRegularFile, hash_file, read_error, same_file
from ..read.paths import (
    HIDDEN,
    INSIDE,
    FileStat,
    Sandbox,
    as_read,
    displayable,
    file_stat,
    kept_ctime,
    lstat_key,
)
from ..text import parent_dir
from .index_file import Queryable
from .inserts import Inserts
from .parallel import run_sharded
from .resolve import delete_in

if TYPE_CHECKING:
    import sqlite_utils

    from .changed import Suspects

# Artifact bodies above this size are accounted for (size, hash) but not stored.
MAX_ARTIFACT_BODY = 1024 * 1024
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
# An artifact that could not be read, by why.
ARTIFACT_STATUS = {FileNotFoundError: "missing", NotRegularFile: "not_a_file"}


# What the walk saw of a regular file (size, mtime_ns, ctime_ns as kept, inode).
Walked = tuple[int, int, int | None, int]
# The look of a path the walk saw as a regular file: it is opened without
# following a symlink (one put in its place since is looked at again, _read).
_WALKED = FileStat(0, 0, is_link=False, is_regular=True)


def _looked_at(
    sandbox: Sandbox, path: str, walked: Walked | None = None
) -> tuple[dict[str, Any], FileStat | None]:
    """The ``artifacts`` row of one path a record names, as one lstat finds it
    (its status: unsafe, missing, hidden or escapes, or None while it is still
    to be read by ``_read``), and that stat when it is still to be read. A path
    ``walked`` (a regular file in a directory inside) takes the walk's stat:
    43,000 lstats fewer at the benchmark's size."""
    row: dict[str, Any] = {
        "path": path,
        "dir": parent_dir(path),
        "status": None,
        "size": None,
        "mtime_ns": None,
        "ctime_ns": None,
        "inode": None,
        "sha256": None,
        "body": None,
        "links": None,
        "regular_file": 0,
    }
    if not SAFE_PATH_RE.fullmatch(path):
        row["status"] = "unsafe"  # never touched on disk
        return row, None
    if walked is not None and sandbox.dir_inside(parent_dir(path)):
        row["size"], row["mtime_ns"], row["ctime_ns"], row["inode"] = walked
        return row, _WALKED
    key = lstat_key(sandbox.path(path))
    if key is None:
        row["status"] = "missing"
        return row, None
    row["size"], row["mtime_ns"] = key.size, key.mtime_ns
    row["ctime_ns"], row["inode"] = kept_ctime(key), key.inode
    where = sandbox.place(path, key.is_link)
    if where != INSIDE:
        row["status"] = "hidden" if where == HIDDEN else "escapes"
        return row, None
    return row, key


def _read(sandbox: Sandbox, row: dict[str, Any], key: FileStat, ignored: bool) -> bool:
    """Fill an artifact's row from its content, as ``key`` found it: its status
    (ok, ignored, missing, not_a_file, unreadable), hash, and its body when it
    is text held by one name only. Git-ignored content is not read at all.
    False, the row untouched, when a file the walk saw as a regular file
    cannot be read as one now (a symlink, gone, ...): it is looked at again."""
    if ignored:
        row["status"] = "ignored"
        return True
    path = row["path"]
    keep = MAX_ARTIFACT_BODY if path.endswith(TEXT_SUFFIXES) else 0
    try:
        # A file that was no symlink when looked at is never read through one
        # put in its place since (its target was never checked).
        # A file taken from the walk is read only if it is the one the walk saw
        # (its inode): one replaced since, or reached through a directory
        # swapped for a symlink since, is looked at again.
        inode = row["inode"] if key is _WALKED else None
        hashed = hash_file(sandbox.path(path), keep_up_to=keep, follow=key.is_link, inode=inode)
    except OSError as exc:
        if key is _WALKED:
            return False
        row["status"] = ARTIFACT_STATUS.get(type(exc), "unreadable")
        return True
    row["status"], row["regular_file"] = "ok", int(not key.is_link)
    row["size"], row["sha256"], row["links"] = hashed.size, hashed.sha256, hashed.links
    if not key.is_link:  # a symlink's times stay the link's
        stored = as_read(hashed.size, hashed.st)
        row["size"], row["mtime_ns"], row["ctime_ns"], row["inode"] = stored
    # A second name may be a file outside the repository (a hard link is not a
    # symlink, and no path tells): its content is hashed, never stored or searchable.
    if hashed.content is not None and hashed.links == 1:
        row["body"] = hashed.content.decode("utf-8", errors="replace")
    return True


def artifacts_named(db: sqlite_utils.Database, files: list[str]) -> set[str]:
    """The artifact paths the records of ``files`` name."""
    rows = db.execute(
        "SELECT artifact_path FROM records WHERE file IN (SELECT value FROM json_each(?)) "
        "AND artifact_path IS NOT NULL",
        [json.dumps(files)],
    )
    return {path for (path,) in rows}


def refresh_artifacts(
    db: sqlite_utils.Database,
    sandbox: Sandbox,
    jobs: int = 1,
    suspects: Suspects | None = None,
    named: set[str] | None = None,
) -> None:
    """Make ``artifacts`` hold exactly the paths records name, each as it is on disk now
    (read over up to ``jobs`` processes; git's word taken where ``suspects``
    are given). Stored rows are compared as they stream by: memory holds what
    changed, not every artifact (435,000 at the largest size benchmarked).
    ``named``: on an incremental build, the paths the records read again or
    removed named, before or now; any other path is named as it was, so only
    these (and the stale) can be wanted anew or gone (None: any)."""
    stale = list(_stale_artifacts(db, sandbox, suspects))
    gone_where = wanted = "1"  # any path
    values: list[str] = []
    if named is not None:  # a stale row is deleted below, and is wanted anew
        gone_where = "path IN (SELECT value FROM json_each(?))"
        wanted = "artifact_path IN (SELECT value FROM json_each(?))"
        values = [json.dumps(sorted(named.union(stale)))]
    gone = [
        path
        for (path,) in db.execute(
            # Each stored path looked up in records' index (NOT IN would first
            # build a list of every path named: twice as slow at 43,000).
            f"SELECT path FROM artifacts a WHERE {gone_where} AND NOT EXISTS "
            "(SELECT 1 FROM records r WHERE r.artifact_path = a.path)",
            values,
        )
    ]
    delete_in(db, "artifacts", "path", gone + stale)  # gone, or to be read again
    # Each directory resolved afresh (once), not taken from the walk: one
    # swapped for a symlink out since the walk is outside now.
    now = Sandbox(sandbox.root)
    _take_read(db, now)
    # What is left to read (new, or stale): in the order records name them,
    # each with the walk's stat where the walk listed a regular file there.
    todo = [
        (path, None if size is None else (size, mtime_ns, ctime_ns, inode))
        for path, size, mtime_ns, ctime_ns, inode in db.execute(
            "SELECT path, size, mtime_ns, ctime_ns, inode FROM (SELECT DISTINCT "
            f"artifact_path AS path FROM records WHERE {wanted} AND artifact_path IS NOT NULL "
            "AND artifact_path NOT IN (SELECT path FROM artifacts)) LEFT JOIN (SELECT "
            "path AS walked, size, mtime_ns, ctime_ns, inode FROM files "
            "WHERE regular_file = 1) ON walked = path",
            values,
        )
    ]
    writer = ArtifactWriter(now, ask_git=bool(todo) and in_git_work_tree(sandbox.root))
    run_sharded(db, todo, writer.write, ["artifacts"], jobs)


def _take_read(db: sqlite_utils.Database, sandbox: Sandbox) -> None:
    """Write the artifact rows of the records' artifacts this build read already,
    as it read the records (Markdown files: ``markdown_reads``, rows.FileLoader),
    from what was read: each as ``_read`` makes it of the file the walk listed
    (the same inode), not read a second time. The read kept only files with a
    safe path that git did not ignore (asked as they were read); one in a
    directory that is not inside now (resolved afresh by ``sandbox``: one
    swapped for a symlink since) is left to be read as any other. The table,
    the build's own, goes."""
    directories = [d for (d,) in db.execute("SELECT DISTINCT dir FROM markdown_reads")]
    moved = [d for d in directories if not sandbox.dir_inside(d)]
    with db.conn:
        db.conn.execute(
            "INSERT INTO artifacts (path, dir, status, size, mtime_ns, ctime_ns, inode, sha256, "
            "links, body, regular_file) SELECT m.path, m.dir, 'ok', m.size, f.mtime_ns, "
            "f.ctime_ns, f.inode, m.sha256, m.links, m.body, 1 FROM markdown_reads m JOIN files f "
            "ON f.path = m.path AND f.inode = m.inode AND f.regular_file = 1 "
            "WHERE m.path IN (SELECT artifact_path FROM records) "
            "AND m.path NOT IN (SELECT path FROM artifacts) "
            "AND m.dir NOT IN (SELECT value FROM json_each(?)) ORDER BY m.rowid",
            [json.dumps(moved)],
        )
    db.execute("DROP TABLE markdown_reads")  # never part of the index


# Artifacts looked at before git is asked which of them it ignores: one
# question of git for this many (each costs a process), memory for their stat only.
IGNORE_BATCH = 10000
# Artifact rows inserted at once: bodies are written as they are read, never all in memory.
INSERT_BATCH = 500


@dataclass
class ArtifactWriter:
    """Reads artifacts and writes their rows (picklable: workers run it too).
    With ``ask_git`` (a git work tree), git is asked which it ignores: those
    are accounted for, never read."""

    sandbox: Sandbox
    ask_git: bool = False

    def write(
        self,
        target: sqlite_utils.Database,
        paths: Sequence[tuple[str, Walked | None]],
        advance: Any,
    ) -> None:
        """Read ``paths`` (each with what the walk saw of it, if it listed a
        regular file there) and insert their artifact rows into ``target``."""
        inserts = Inserts(target)
        for start in range(0, len(paths), IGNORE_BATCH):
            chunk = paths[start : start + IGNORE_BATCH]
            looked = [_looked_at(self.sandbox, path, walked) for path, walked in chunk]
            ignored = self._ignored(looked)
            for at in range(0, len(looked), INSERT_BATCH):
                batch = looked[at : at + INSERT_BATCH]
                again = [
                    row
                    for row, key in batch
                    if key is not None and not _read(self.sandbox, row, key, row["path"] in ignored)
                ]
                if again:
                    self._look_again(again)
                inserts.insert("artifacts", [row for row, _ in batch])

    def _look_again(self, rows: list[dict[str, Any]]) -> None:
        """Fill the rows of files the walk saw as regular files that could not
        be read as such: looked at, asked of git (once for all) and read as any
        other, their directories resolved afresh (the walk's word on them is
        what failed: one may have become a symlink out since)."""
        looked = [_looked_at(self.sandbox, row["path"]) for row in rows]
        for row, key in looked:
            if key is not None and not key.is_link:  # a symlink was resolved now already
                where = self.sandbox.dir_place_now(parent_dir(row["path"]))
                if where != INSIDE:
                    row["status"] = "hidden" if where == HIDDEN else "escapes"
        looked = [(row, None if row["status"] else key) for row, key in looked]
        ignored = self._ignored(looked)
        for row, (fresh, key) in zip(rows, looked, strict=True):
            if key is not None:
                _read(self.sandbox, fresh, key, fresh["path"] in ignored)
            row.update(fresh)

    def _ignored(self, looked: list[tuple[dict[str, Any], FileStat | None]]) -> set[str]:
        """The paths still to be read whose file (symlinks resolved) git ignores;
        every one of them when git could not tell (its content is then never read)."""
        if not self.ask_git:
            return set()
        sandbox = self.sandbox
        named: dict[str, list[str]] = {}  # the file git is asked about -> paths naming it
        for row, key in looked:
            if key is None:
                continue
            path = row["path"]
            real = sandbox.real(path, key.is_link)  # no second lstat: the look said
            if real.startswith(sandbox.prefix):
                named.setdefault(real[len(sandbox.prefix) :], []).append(path)
        ignored = git_ignored(sandbox.root, list(named))
        if ignored is None:
            return {path for paths in named.values() for path in paths}
        return {path for real in ignored for path in named.get(real, ())}


def artifacts_unchanged(db: Queryable, sandbox: Sandbox, suspects: Suspects | None = None) -> bool:
    """Whether every stored artifact row still describes what is on disk (the
    records naming them being unchanged too, no other artifact is wanted)."""
    return next(_stale_artifacts(db, sandbox, suspects), None) is None


def _stale_artifacts(db: Queryable, sandbox: Sandbox, suspects: Suspects | None) -> Iterator[str]:
    """The stored artifact rows that no longer describe what is on disk, by path."""
    columns = "path, size, mtime_ns, ctime_ns, inode, status, sha256"
    for path, size, mtime_ns, ctime_ns, inode, status, sha256 in unvouched(
        db, sandbox, suspects, "artifacts", columns
    ):
        if not _unchanged(sandbox, path, (size, mtime_ns, ctime_ns, inode), status, sha256):
            yield path


# The rows git's word never settles: not stored as a regular file (an index of
# their own, schema.PARTIAL_INDEXES: a few among 43,000).
NOT_REGULAR = "regular_file IS NOT 1"


def unvouched(
    db: Queryable, sandbox: Sandbox, suspects: Suspects | None, table: str, columns: str
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``table`` (artifacts or link_targets) that git's word does not
    settle, to be looked at on disk, each once: all of them where git was not
    asked; else those not stored as a regular file, those git names, and those
    below a directory git did not look into or reached through a symlink (git
    never looks beyond one). Chosen in SQL, each part a search of the table's
    key: a hook's one edit leaves 43,000 rows that need no look."""
    if suspects is None:
        yield from db.execute(f"SELECT {columns} FROM {table}")
        return
    directories = [d for (d,) in db.execute(f"SELECT DISTINCT dir FROM {table}")]
    # Each directory as a range of the key: "x/" up to "x0" ("0" follows "/"), "" all.
    ranges = [
        ("path >= ? AND path < ?", [f"{d}/", f"{d}0"]) if d else ("1", [])
        for d in directories
        if suspects.named(f"{d}/" if d else d) or not sandbox.direct(d)
    ]
    parts = [
        (NOT_REGULAR, []),
        ("path IN (SELECT value FROM json_each(?))", [json.dumps(suspects.files)]),
    ]
    seen: set[str] = set()
    for where, values in parts + ranges:
        for row in db.execute(f"SELECT {columns} FROM {table} WHERE {where}", values):
            if row[0] not in seen:
                seen.add(row[0])
                yield row


def _unchanged(
    sandbox: Sandbox, path: str, stored: tuple[Any, ...], status: str, sha256: str | None
) -> bool:
    """Whether a stored artifact row (its size, times and inode) still describes
    what is on disk (asked of every artifact on every incremental build, so one
    lstat and no more)."""
    if status == "unsafe":
        return True  # decided by the path text alone
    full = sandbox.path(path)
    key = lstat_key(full)
    if key is None:
        return status == "missing" and stored[1] is None
    if key.is_link:
        return False  # a symlink is resolved again on every build
    return (
        same_file(full, key, tuple(stored), sha256)
        and status == "ok"
        and sandbox.dir_inside(parent_dir(path))
    )


def packet_dirs(db: Queryable) -> list[str]:
    """Directories holding a handoff manifest or a packet lock."""
    paths = db.execute("SELECT path FROM files WHERE kind IN ('handoff_manifest', 'packet_lock')")
    return sorted({parent_dir(path) for (path,) in paths})


def refresh_packet_files(
    db: sqlite_utils.Database, sandbox: Sandbox, suspects: Suspects | None = None
) -> None:
    """Make ``handoff_files`` list every file of every packet directory, hashed
    (a directory git vouches for keeps its rows: ``_packet_file_changes``).

    What cannot be hashed is listed too, with ``error`` saying why: a
    subdirectory that cannot be listed, a symlink (never followed: a lock
    cannot vouch for what it points to), a FIFO or device, a file that
    cannot be read. Directories are walked with a stack, not recursion.
    """
    fresh: list[dict[str, Any]] = []
    gone: list[tuple[str, str]] = []
    for key, entry in _packet_file_changes(db, sandbox, suspects):
        gone.append(key)  # a row stored for it, if any, is replaced
        if entry is None:
            continue  # no longer there
        row: dict[str, Any] = {"packet_dir": key[0], "path": key[1], "size": None}
        row.update(mtime_ns=None, ctime_ns=None, inode=None, sha256=None)
        row["error"] = entry if isinstance(entry, str) else None
        if not isinstance(entry, str):
            try:
                # The regular file listed, never a symlink put in its place since.
                hashed = hash_file(entry.path, follow=False, inode=entry.key.inode)
                size, mtime_ns, ctime_ns, inode = as_read(hashed.size, hashed.st)
                row.update(size=size, sha256=hashed.sha256, mtime_ns=mtime_ns)
                row.update(ctime_ns=ctime_ns, inode=inode)
            except OSError as exc:
                row["error"] = read_error(exc)
        fresh.append(row)
    for packet_dir, rel in gone:
        db.execute("DELETE FROM handoff_files WHERE packet_dir = ? AND path = ?", [packet_dir, rel])
    Inserts(db).insert("handoff_files", fresh)


def packet_files_unchanged(
    db: Queryable, sandbox: Sandbox, suspects: Suspects | None = None
) -> bool:
    """Whether ``handoff_files`` describes every packet directory as it is now."""
    return next(_packet_file_changes(db, sandbox, suspects), None) is None


class _Found(NamedTuple):
    path: str
    key: FileStat


def _packet_file_changes(
    db: Queryable, sandbox: Sandbox, suspects: Suspects | None
) -> Iterator[tuple[tuple[str, str], _Found | str | None]]:
    """Each packet file whose row must change, keyed (packet_dir, path): a file
    to hash (new, or its size or time changed), why it cannot be hashed (when
    that is not what is stored already), or None when it is no longer there.
    A packet directory is not walked where git vouches for all of it: git
    names nothing at or below it, it is reached with no symlink on the way (the
    walk follows none below it), and none of its rows is an error (a directory
    that cannot be listed can change where git does not look)."""
    stored = {
        (packet_dir, path): (size, mtime_ns, ctime_ns, inode, error, sha256)
        for packet_dir, path, size, mtime_ns, ctime_ns, inode, error, sha256 in db.execute(
            "SELECT packet_dir, path, size, mtime_ns, ctime_ns, inode, error, sha256 "
            "FROM handoff_files"
        )
    }
    seen: set[tuple[str, str]] = set()
    rows_of: dict[str, list[tuple[str, str]]] = {}  # packet_dir -> its rows' keys
    errors = set()  # the packet directories with a row that is an error
    for key, row in stored.items():
        rows_of.setdefault(key[0], []).append(key)
        if row[4] is not None:
            errors.add(key[0])

    def unreadable(key: tuple[str, str], why: str) -> bool:
        seen.add(key)
        return stored.get(key) != (None, None, None, None, why, None)

    for packet_dir in packet_dirs(db):
        if (
            suspects is not None
            and packet_dir in rows_of
            and packet_dir not in errors
            and not suspects.below(packet_dir)
            and sandbox.direct(packet_dir)
        ):
            seen.update(rows_of[packet_dir])  # as it was: git vouches for all of it
            continue
        top = sandbox.path(packet_dir)
        if not (os.path.isdir(top) and sandbox.dir_inside(packet_dir)):
            continue
        pending = [(top, "")]
        while pending:
            directory, rel_top = pending.pop()
            try:
                with os.scandir(directory) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                key = (packet_dir, displayable(rel_top.rstrip("/")))
                why = (
                    "directory could not be listed, so the files in it are not indexed: "
                    "make it readable"
                )
                if unreadable(key, why):
                    yield key, why
                continue
            for entry in entries:
                rel = f"{rel_top}{entry.name}"
                key = (packet_dir, displayable(rel))
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        pending.append((entry.path, rel + "/"))
                    continue
                try:
                    if entry.is_symlink():
                        target = displayable(os.readlink(entry.path))
                        why = (
                            f"a symlink (to {target}): never followed in a packet, which must "
                            "hold its files itself; put the file here"
                        )
                        if unreadable(key, why):
                            yield key, why
                        continue
                    st = file_stat(entry.stat(follow_symlinks=False))
                except OSError as exc:
                    if unreadable(key, read_error(exc)):
                        yield key, read_error(exc)
                    continue
                seen.add(key)
                before = stored.get(key)
                if (
                    before is None
                    or before[4]
                    or not same_file(entry.path, st, before[:4], before[5])
                ):
                    yield key, _Found(entry.path, st)
    for key in stored.keys() - seen:
        yield key, None
