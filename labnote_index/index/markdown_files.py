"""Markdown files, read once: as the records are read (by the loader, in the
workers too), each hashed and its links kept; the artifact refresh takes a
record's Markdown artifact from that read (``files.refresh_artifacts``). What
the loader left unread (a file it could not tell git does not ignore, or one
the walk did not see as a regular file in a directory inside) is hashed after
the artifacts, from an artifact's body where one was kept.

A file is read only if it is the one the walk listed (its inode, opened
without following a symlink): never a symlink put in its place, nor a file
reached through a directory swapped for one since. A file with a second name
(which may lie outside) is hashed, its links never read nor its body kept.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..format.rules import SAFE_PATH_RE
from ..read.discover import DiscoveredFile, FoundFiles
from ..read.git import git_ignored, in_git_work_tree
from ..read.markdown import link_rows
from ..read.parse import MAX_TEXT, Hashed, hash_file, read_error
from ..read.paths import Sandbox, as_read, kept, named_outside, storable
from ..text import parent_dir
from .files import MAX_ARTIFACT_BODY
from .inserts import Inserts

if TYPE_CHECKING:
    import sqlite_utils

# Markdown files one after the other (in path order, a directory's) written at
# once from this many: a shorter run is not worth the flush before it.
MARKDOWN_RUN = 64
# Markdown files read before their rows are written: bodies are never all in memory.
MARKDOWN_BATCH = 500
# What the read keeps of each Markdown file it read (``markdown_reads``): a
# record's artifact is taken from here, not read a second time.
MARKDOWN_READ_COLUMNS = ("path", "dir", "inode", "size", "sha256", "links", "body")
MARKDOWN_FILE_COLUMNS = (
    "path",
    "kind",
    "size",
    "mtime_ns",
    "ctime_ns",
    "inode",
    "regular_file",
    "sha256",
    "error",
)


# What reading gave of a file left to be read after the artifacts.
NONE: tuple[Hashed | None, str | None] = (None, None)


class MarkdownReader:
    """The loader's reading of Markdown files (picklable: workers run it too)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        # Of the files being written, the Markdown files read as they are
        # written: those of the runs (``plan``) and those ``alone``, less those
        # git ignores (all of them when git could not tell). Sets of the few:
        # the runs' files are known by their place.
        self.alone: frozenset[str] = frozenset()
        self.ignored: frozenset[str] | None = frozenset()
        self.work_tree: bool | None = None  # asked of git once, where needed

    def plan(self, items: Sequence[DiscoveredFile]) -> dict[int, int]:
        """Choose the Markdown files of ``items`` to read as they are written
        (one question of git for all of them), and return where each run of
        them starts and ends in ``items`` (a FoundFiles: written from its arrays)."""
        paths = items.paths if isinstance(items, FoundFiles) else [item.path for item in items]
        readable = self.readable(items, paths)
        runs, alone = runs_of(readable) if isinstance(items, FoundFiles) else ({}, readable)
        self.alone = frozenset(paths[at] for at in alone)
        self.ignored = self._ignored([paths[at] for at in readable])
        return runs

    def readable(self, items: Sequence[DiscoveredFile], paths: list[str]) -> list[int]:
        """The positions in ``items`` (whose ``paths`` these are) of the Markdown
        files the walk saw as regular files (no symlink) with a storable name,
        in a directory inside."""
        if isinstance(items, FoundFiles):
            seen = items.regular("markdown")  # from its arrays: no DiscoveredFile each
        else:
            seen = [
                at
                for at, item in enumerate(items)
                if item.kind == "markdown"
                and item.stat is not None
                and item.stat.is_regular
                and not item.stat.is_link
            ]
        inside = self.sandbox.dir_inside
        return [
            at
            for at in seen
            if storable(paths[at])
            and not named_outside(paths[at])
            and inside(parent_dir(paths[at]))
        ]

    def _ignored(self, paths: list[str]) -> frozenset[str] | None:
        """Those of ``paths`` (no symlink on the way) git ignores; None when git
        could not tell: a file git may ignore is left to be read after the
        artifacts, which never reads it if it is an artifact."""
        if not paths:
            return frozenset()
        if self.work_tree is None:
            self.work_tree = in_git_work_tree(self.sandbox.root)
        ignored = git_ignored(self.sandbox.root, paths) if self.work_tree else set()
        return None if ignored is None else frozenset(ignored)

    def _planned(self, path: str) -> bool:
        """Whether a file ``plan`` found readable is read now: git does not ignore it."""
        return self.ignored is not None and path not in self.ignored

    def write_run(self, found: FoundFiles, start: int, end: int, inserts: Inserts) -> None:
        """Write the rows of a run of Markdown files (``plan``), a batch at a
        time: the rows the loader makes of each, without a DiscoveredFile, a dict
        and three calls each (44,600 at the benchmark's size)."""
        paths, sizes, mtimes = found.paths, found.sizes, found.mtimes
        ctimes, inodes, now = found.ctimes, found.inodes, time.time_ns()
        for first in range(start, end, MARKDOWN_BATCH):
            files: list[tuple[Any, ...]] = []
            reads: list[tuple[Any, ...]] = []
            links: list[dict[str, Any]] = []
            for at in range(first, min(first + MARKDOWN_BATCH, end)):
                path, inode = paths[at], inodes[at]
                planned = self._planned(path)
                hashed, error = self.read(path, inode, reads, links) if planned else NONE
                if hashed is None:  # as the walk saw it
                    stored = (sizes[at], mtimes[at], kept(mtimes[at], ctimes[at], now), inode)
                else:
                    stored = as_read(hashed.size, hashed.st)
                sha = None if hashed is None else hashed.sha256
                files.append((path, "markdown", *stored, 1, sha, error))
            # stat numbers, paths and hashes: nothing to turn into JSON
            inserts.insert_tuples("files", MARKDOWN_FILE_COLUMNS, files, scalars=True)
            inserts.insert_tuples("markdown_reads", MARKDOWN_READ_COLUMNS, reads, scalars=True)
            if links:
                inserts.insert("markdown_links", links)

    def load(self, path: str, inode: int, file_row: dict[str, Any], rows: Any) -> None:
        """Read one Markdown file the loader takes alone, if ``plan`` chose it,
        into its ``file_row``, and queue its rows on ``rows`` (the loader's Rows)."""
        if path not in self.alone or not self._planned(path):
            return  # left to be read after the artifacts
        reads: list[tuple[Any, ...]] = []
        links: list[dict[str, Any]] = []
        hashed, file_row["error"] = self.read(path, inode, reads, links)
        if hashed is not None:
            file_row["sha256"] = hashed.sha256
            stored = as_read(hashed.size, hashed.st)
            file_row["size"], file_row["mtime_ns"], file_row["ctime_ns"], file_row["inode"] = stored
        for read in reads:
            rows.add("markdown_reads", dict(zip(MARKDOWN_READ_COLUMNS, read, strict=True)))
        for link in links:
            rows.add("markdown_links", link)

    def read(
        self, path: str, inode: int, reads: list[tuple[Any, ...]], links: list[dict[str, Any]]
    ) -> tuple[Hashed | None, str | None]:
        """Read one Markdown file ``plan`` chose (the file the walk listed, with
        ``inode``) into ``reads`` and its links into ``links``: what was read,
        or why it could not be."""
        try:
            full = self.sandbox.path(path)
            hashed = hash_file(full, keep_up_to=MAX_TEXT, follow=False, inode=inode)
        except OSError as exc:
            return None, read_error(exc)
        content, body = hashed.content if hashed.links == 1 else None, None
        if content is not None:
            if b"](" in content or b"]:" in content:  # else no link to parse
                links += link_rows(path, content.decode("utf-8", "replace"))
            if hashed.size <= MAX_ARTIFACT_BODY:
                body = content.decode("utf-8", "replace")
        if SAFE_PATH_RE.fullmatch(path):  # any other is no artifact ("unsafe"): never read as one
            at = (path, parent_dir(path), inode, hashed.size, hashed.sha256, hashed.links, body)
            reads.append(at)
        return hashed, None


def runs_of(readable: list[int]) -> tuple[dict[int, int], list[int]]:
    """Where each run of at least MARKDOWN_RUN of the ``readable`` positions (in
    order), one after the other, starts and ends (past its last); and the
    positions in no run."""
    runs: dict[int, int] = {}
    alone: list[int] = []
    start = 0
    for n, at in enumerate(readable):
        if n + 1 == len(readable) or readable[n + 1] != at + 1:  # a run ends here
            first = readable[start]
            if n + 1 - start >= MARKDOWN_RUN:
                runs[first] = at + 1
            else:
                alone += readable[start : n + 1]
            start = n + 1
    return runs, alone


# The Markdown files of ``files`` (as f) this build lists anew that the loader
# left unread (it reads the walk's regular files git does not ignore): their
# hash is left for the refresh below.
_NEW_MARKDOWN = "f.kind = 'markdown' AND f.sha256 IS NULL AND f.error IS NULL"
# Its artifact (as a) read whole: the body is the file's text (a body is kept only
# for a file of one name, so links are never read from a second name's; nor
# from a symlink's target, when one took the file's place after the walk).
_BODY_HELD = "a.status = 'ok' AND a.regular_file = 1 AND a.body IS NOT NULL"


# Each a search of the few files this build left unhashed (idx_files_unhashed),
# not a look at every Markdown row: those to read from disk (no artifact, or one
# not read, unsafe, missing, ..., or whose body was not kept: too big, or a
# second name, hashed only) ...
UNHASHED_TO_READ = (
    "SELECT f.path, f.inode, a.status IS 'ok' FROM files f LEFT JOIN artifacts a "
    f"ON a.path = f.path WHERE {_NEW_MARKDOWN} AND a.status IS NOT 'ignored' "
    f"AND NOT ({_BODY_HELD})"
)
# ... those whose artifact body holds a link (the files first: CROSS JOIN keeps
# that order, not every body looked at) ...
UNHASHED_READ_ALREADY = (
    "SELECT f.path, a.body FROM files f CROSS JOIN artifacts a ON a.path = f.path "
    f"WHERE {_NEW_MARKDOWN} AND {_BODY_HELD} AND (instr(a.body, '](') OR instr(a.body, ']:'))"
)
# ... and every one read already, as an artifact: its read, its times too (a
# regular file's are its read's).
UNHASHED_HASHED_ALREADY = (
    "UPDATE files AS f SET (sha256, size, mtime_ns, ctime_ns, inode) = "
    "(a.sha256, a.size, a.mtime_ns, a.ctime_ns, a.inode) FROM artifacts a "
    f"WHERE a.path = f.path AND {_NEW_MARKDOWN} AND {_BODY_HELD}"
)


def _not_ignored(sandbox: Sandbox, rows: list[tuple[str, int, bool]]) -> list[tuple[str, int]]:
    """The (path, inode) of ``rows`` (path, inode, read as an artifact) that git
    does not ignore. An artifact read was asked of git by the artifact refresh;
    the others (the loader leaves a file git ignores unread, and every file
    when git could not tell) are asked here, all at once: none is read when
    git cannot tell again."""
    unasked = [path for path, _, asked in rows if not asked]
    ignored = git_ignored(sandbox.root, unasked) if unasked else set()
    return [
        (path, inode)
        for path, inode, asked in rows
        if asked or (ignored is not None and path not in ignored)
    ]


def refresh_markdown_links(db: sqlite_utils.Database, sandbox: Sandbox) -> None:
    """Hash the Markdown files this build lists anew that the loader left unread
    (none the walk saw as a regular file, in a directory inside, that git does
    not ignore) and keep their links. A record's artifact whose body the
    artifact refresh just kept is not read a second time: its hash is taken
    from there in SQL, and only a body that could hold a link ("](" or "]:")
    is handed to the parser. A file with a second name (which may lie
    outside), or an artifact git ignores, has its links never read; a file
    git ignores (or may: git could not tell) is never read."""
    to_read = _not_ignored(sandbox, db.execute(UNHASHED_TO_READ).fetchall())
    bodies = db.execute(UNHASHED_READ_ALREADY)
    links: list[dict[str, Any]] = []
    for path, body in bodies:
        links += link_rows(path, body)
    hashes: list[tuple[Any, ...]] = []  # (sha256, size, mtime, ctime, inode, path): as read
    errors: list[tuple[str, str]] = []  # (why, path)
    for path, inode in to_read:
        try:
            # The file the walk listed (a regular file, no symlink), or nothing:
            # never a symlink put in its place, nor a file reached through a
            # directory swapped for one since (another inode).
            hashed = hash_file(sandbox.path(path), keep_up_to=MAX_TEXT, follow=False, inode=inode)
        except OSError as exc:
            errors.append((read_error(exc), path))
            continue
        hashes.append((hashed.sha256, *as_read(hashed.size, hashed.st), path))
        if hashed.content is not None and hashed.links == 1:
            links += link_rows(path, hashed.content.decode("utf-8", "replace"))
    with db.conn:
        db.conn.execute(UNHASHED_HASHED_ALREADY)
        db.conn.executemany(
            "UPDATE files SET (sha256, size, mtime_ns, ctime_ns, inode) = (?, ?, ?, ?, ?) "
            "WHERE path = ?",
            hashes,
        )
        db.conn.executemany("UPDATE files SET error = ? WHERE path = ?", errors)
    Inserts(db).insert("markdown_links", links)
