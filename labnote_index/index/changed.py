"""What changed in a repository since its index was built: by a walk of every
file compared with the index, or, in a git work tree, by asking git.

git already knows every tracked file's state (its index holds their stat data
and blob ids, refreshed by ``git status``, with fsmonitor and the untracked
cache where the user turned them on). A build in a work tree keeps what git
said as it started (``build_info`` 'work_tree': HEAD, and the paths that were
not as HEAD has them, with every file the build found changed while it ran);
the next build asks git again. git's look at a file comes before the build
reads it (a full build asks beside its walk and waits for the answer before
reading): a file read, then put back as HEAD has it before git looked, would be
called clean with its old content kept, its stored times too old to tell (a row
keeps the times of the file read, ``paths.as_read``, not the walk's). A path
that was as HEAD has it then and is now, HEAD being the same commit (or the
path unchanged between the two), holds what it held: only the others are looked
at, exactly as the walk looks at every file. The same paths (``Suspects``)
settle the artifacts, link targets and packet files a build looks at after the
records: a regular file reached with no symlink on the way, which git does not
name, is as it was (a symlink's target, or a file beyond a symlinked directory,
changes where git does not look: those are looked at every time). Where git
cannot answer for every file (not a work tree, a warning, a file git is told to
look away from, a submodule, a registry that is a symlink), nothing is asked of
it and the walk decides.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..read.discover import DiscoveredFile, FoundFiles, discover_named
from ..read.git import WorkTreeState, changed_between, looks_away, work_tree_state
from ..read.parse import CHANGED_AS_READ, same_file
from ..read.paths import Sandbox, displayable, lstat_key
from .index_file import Queryable

if TYPE_CHECKING:
    import sqlite_utils

STATE_KEY = "work_tree"
# A file changed this close before a build started is taken as changed during
# it (file systems keep times to a second or two): it is looked at next time.
_DURING_NS = 2_000_000_000
_STORED = "SELECT path, kind, size, mtime_ns, ctime_ns, inode, sha256 FROM files"
# The files the build found changed since it started, records, artifacts,
# packet files and link targets alike: git's word on them, asked before, may
# be out of date. A file found another when read than when the walk looked
# is one (its row keeps the walk's times, which cannot say so).
_DURING = """
SELECT path FROM files WHERE mtime_ns >= :since OR ctime_ns >= :since OR error = :changed
UNION SELECT path FROM artifacts WHERE mtime_ns >= :since OR ctime_ns >= :since
UNION SELECT CASE packet_dir WHEN '' THEN path ELSE packet_dir || '/' || path END
  FROM handoff_files WHERE mtime_ns >= :since OR ctime_ns >= :since
UNION SELECT path FROM link_targets WHERE ctime_ns >= :since
"""

Changes = tuple[Sequence[DiscoveredFile], list[str]]


class Suspects:
    """The paths git cannot vouch for since the index was built (named by
    ``git status`` then or now, or different between the two HEADs): files,
    and directories ("x/") git did not look into. Any other path of the work
    tree is as it was when the index was built."""

    def __init__(self, files: Iterable[str], directories: Iterable[str] = ()) -> None:
        # Each as git spells it and as the index stores it (bytes not UTF-8 as \xNN).
        self.files = sorted({form for f in files for form in (f, displayable(f))})
        spelt = {form for d in directories for form in (d, displayable(d))}
        self.directories = tuple(sorted(spelt))
        self._named = frozenset(self.files)

    def named(self, path: str) -> bool:
        """Whether git cannot vouch for the file at ``path``: named itself, or below a
        directory it did not look into."""
        return path in self._named or path.startswith(self.directories)

    def below(self, rel_dir: str) -> bool:
        """Whether git cannot vouch for something at or below directory ``rel_dir``
        ("" the top): the directory itself, a file below it, or a directory it
        did not look into that holds it or is below it."""
        prefix = rel_dir + "/" if rel_dir else ""
        at = bisect_left(self.files, prefix)
        if rel_dir in self._named or (at < len(self.files) and self.files[at].startswith(prefix)):
            return True
        return any(d.startswith(prefix) or prefix.startswith(d) for d in self.directories)


def changes_by_walk(db: Queryable, sandbox: Sandbox, found: Sequence[DiscoveredFile]) -> Changes:
    """Files to read again (new; size, times or inode changed; or changed too close
    to the last build to tell) and paths no longer there, of everything the
    walk ``found``, against every file of the index."""
    return _compared(found, db.execute(_STORED + " ORDER BY path"), sandbox)


def _compared(found: Sequence[DiscoveredFile], stored: Iterable[Any], sandbox: Sandbox) -> Changes:
    """``found`` against the index's rows of the same paths, both in path order
    (the walk sorts what it found; the files table's key orders its rows, UTF-8
    bytes and code points alike), compared in one pass, a row at a time."""
    to_read, removed = FoundFiles(), []
    rows = iter(stored)
    row = next(rows, None)
    for item in found:
        while row is not None and row[0] < item.path:
            removed.append(row[0])  # stored, and no longer found
            row = next(rows, None)
        before = None
        if row is not None and row[0] == item.path:
            before, row = row[1:], next(rows, None)
        full = sandbox.prefix + item.path  # a str: a Path a file cost a third of the walk
        key = item.stat or lstat_key(full)
        if (
            key is None
            or key.is_link
            or before is None
            or before[0] != item.kind
            or not same_file(full, key, before[1:5], before[5])
        ):
            to_read.append(item)  # new (nothing stored), changed, gone, or a symlink
    while row is not None:
        removed.append(row[0])
        row = next(rows, None)
    return to_read, removed


def git_state(
    sandbox: Sandbox, meanwhile: AbstractContextManager[object] | None = None
) -> WorkTreeState | None:
    """What git says of the repository now, where it can say it for every file
    (``meanwhile``: entered while git works it out, see work_tree_state)."""
    if os.path.islink(sandbox.path("registry")):
        return None  # git tracks the link, not what the walk reads behind it
    return work_tree_state(sandbox.root, meanwhile)


def changes_by_git(
    db: Queryable,
    sandbox: Sandbox,
    now: WorkTreeState,
    excluded: Callable[[str], bool] | None,
) -> tuple[Changes, Suspects] | None:
    """What changed since the index, from git: the paths git says are not as HEAD
    has them, now or when the index was built, and those that differ between
    the two HEADs (the suspects), each looked at as the walk would; None where
    git's word does not cover every file (the walk decides)."""
    row = db.execute("SELECT value FROM build_info WHERE key = ?", [STATE_KEY]).fetchone()
    then = WorkTreeState.from_json(row[0]) if row else None
    if then is None:
        return None
    if then.index_stat != now.index_stat and looks_away(sandbox.root) is not False:
        return None
    candidates = set(then.dirty) | set(now.dirty)
    if then.head != now.head:
        between = changed_between(sandbox.root, then.head, now.head)
        if between is None:
            return None
        candidates.update(between)
    files = sorted(c for c in candidates if not c.endswith("/"))
    directories = sorted(c for c in candidates if c.endswith("/"))
    found = discover_named(sandbox.root, files, directories, excluded)
    changes = _compared(found, _stored_rows(db, files, directories), sandbox)
    return changes, Suspects(files, directories)


def _stored_rows(db: Queryable, files: list[str], directories: list[str]) -> list[Any]:
    """The index's rows of these files and of everything below these directories,
    in path order (each a search of the files table's key)."""
    rows: dict[str, Any] = {}
    for start in range(0, len(files), 500):
        chunk = files[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows.update((r[0], r) for r in db.execute(f"{_STORED} WHERE path IN ({marks})", chunk))
    for directory in directories:
        # Everything after "x/" and before "x0" ("0" follows "/"): below x/.
        above = directory[:-1] + "0"
        found = db.execute(f"{_STORED} WHERE path >= ? AND path < ?", [directory, above])
        rows.update((r[0], r) for r in found)
    return [rows[path] for path in sorted(rows)]


def record_state(db: sqlite_utils.Database, state: WorkTreeState | None, started_ns: int) -> None:
    """Keep what git said as the build started, with every file the build found
    changed since (it may have been read in either state), for the next build;
    nothing where git could not say it."""
    if state is None:
        db.table("build_info").delete_where("key = ?", [STATE_KEY])
        return
    # Since git was asked, where that was before the build started (asked early).
    since = min(started_ns, state.asked_ns or started_ns) - _DURING_NS
    during = [path for (path,) in db.execute(_DURING, {"since": since, "changed": CHANGED_AS_READ})]
    dirty = tuple(sorted({*state.dirty, *during}))
    kept = WorkTreeState(state.head, dirty, state.index_stat)
    db.table("build_info").insert({"key": STATE_KEY, "value": kept.as_json()}, replace=True)
