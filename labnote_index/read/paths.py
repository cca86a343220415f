"""Repository paths: what lies inside the repository, what a file's stat says,
and paths as text that can be stored and shown.

At the bottom of the read step: the walk, the loader and the artifact refresh
all ask here, and it asks nothing of them.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import NamedTuple

from ..text import parent_dir


def storable(path: str) -> bool:
    """Whether a path is text SQLite can store: a file name that is not UTF-8
    reaches Python with surrogate escapes in it."""
    if path.isascii():
        return True
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def named_outside(path: str) -> bool:
    """A named path that leaves the repository before any symlink is looked at."""
    # The substring first: asked of every file, and almost never there.
    return path.startswith("/") or (".." in path and ".." in path.split("/"))


def displayable(path: str) -> str:
    """A path as text that can be stored and shown: bytes that are not UTF-8 as \\xNN."""
    return path if storable(path) else os.fsencode(path).decode("utf-8", "backslashreplace")


# Where a path leads, symlinks resolved (Sandbox.place).
INSIDE, OUTSIDE, HIDDEN = "inside", "outside", "hidden"


def real_place(real: str, root: str) -> str:
    """Where a real path (symlinks resolved) lies for the repository whose real
    root is ``root``: INSIDE, OUTSIDE, or HIDDEN (in a dot-directory or a
    dot-file). The one test of containment: the walk, the loader, the views."""
    if real == root:
        return INSIDE
    if not real.startswith(root + os.sep):
        return OUTSIDE
    parts = real[len(root) + 1 :].split(os.sep)
    if parts[0] in VISIBLE_DOT_DIRECTORIES:
        parts = parts[1:]
    return HIDDEN if any(part.startswith(".") for part in parts) else INSIDE


# Dot-directories at the root that are the repository's content as its readers
# see it (GitHub's pull-request and issue templates, read by the upstream link
# check too); every other, .git first, is hidden.
VISIBLE_DOT_DIRECTORIES = (".github",)


def leads_inside(path: Path | str, root: Path | str) -> bool:
    """Whether ``path``, every symlink resolved, is inside the repository at
    ``root`` and outside its dot-directories (``real_place``)."""
    return real_place(os.path.realpath(path), os.path.realpath(root)) == INSIDE


def path_inside(path: Path | str, root: Path | str) -> str | None:
    """``path`` as the repository at ``root`` names it (relative, "/"-separated,
    symlinks resolved) when it leads inside (``leads_inside``); None otherwise."""
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    if real_place(real, real_root) != INSIDE:
        return None
    rel = os.path.relpath(real, real_root)
    return "" if rel == "." else Path(rel).as_posix()


class Sandbox:
    """The repository root, with the real path of each directory looked up once.

    Inside means inside the repository and outside every dot-directory: the
    walk never enters ``.git`` or any other, and a symlink into one (to
    ``.git/config``, which holds a CI checkout's token, or to a dot-file such as
    ``.env``) is no more inside than one to ``/etc``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.prefix = str(self.root) + os.sep
        self._dirs: dict[str, str] = {}  # directory -> its place
        self._real_dirs: dict[str, str] = {}  # directory -> its real path
        self._direct: dict[str, bool] = {"": True}  # directory -> reached with no symlink

    def path(self, rel: str) -> str:
        """The absolute path of a repository-relative path (a string: this is hot)."""
        return self.prefix + rel

    def _real_place(self, real: str) -> str:
        return real_place(real, str(self.root))

    def real_dir(self, rel_dir: str) -> str:
        """The real path of a repository directory, symlinks resolved (looked up once)."""
        if rel_dir not in self._real_dirs:
            self._real_dirs[rel_dir] = os.path.realpath(self.root / rel_dir)
        return self._real_dirs[rel_dir]

    def direct(self, rel_dir: str) -> bool:
        """Whether no directory on the way to ``rel_dir`` (itself included) is a
        symlink: each directory lstat'ed once (an artifact's directory and a
        packet's, 1,600 at the benchmark's size, share most of the way)."""
        pending = []
        while rel_dir not in self._direct:
            pending.append(rel_dir)
            rel_dir = parent_dir(rel_dir)
        direct = self._direct[rel_dir]
        for below in reversed(pending):
            direct = direct and not os.path.islink(self.path(below))
            self._direct[below] = direct
        return direct

    def dir_place(self, rel_dir: str) -> str:
        """Where a repository directory leads, symlinks resolved (asked once each)."""
        if rel_dir not in self._dirs:
            self._dirs[rel_dir] = self._real_place(self.real_dir(rel_dir))
        return self._dirs[rel_dir]

    def real(self, rel: str, is_link: bool | None = None) -> str:
        """The real path of ``rel``: its own symlink resolved, or its directory's
        (``is_link``: whether it is a symlink, when the caller has looked already)."""
        full = self.path(rel)
        if os.path.islink(full) if is_link is None else is_link:
            return os.path.realpath(full)
        return os.path.join(self.real_dir(parent_dir(rel)), rel.rsplit("/", 1)[-1])

    def dir_place_now(self, rel_dir: str) -> str:
        """Where a repository directory leads, resolved now: not the walk's word
        (``entered``) nor an earlier answer, for when that word may be stale."""
        return self._real_place(os.path.realpath(self.root / rel_dir))

    def dir_inside(self, rel_dir: str) -> bool:
        """Whether a repository directory, symlinks resolved, is inside."""
        return self.dir_place(rel_dir) == INSIDE

    def entered(self, rel_dir: str) -> None:
        """A directory the walk entered without following a symlink: inside, with no
        need to resolve it (a realpath costs a stat a path component)."""
        self._dirs[rel_dir] = INSIDE
        self._real_dirs[rel_dir] = self.path(rel_dir) if rel_dir else str(self.root)

    def place(self, rel: str, is_link: bool | None = None) -> str:
        """Where ``rel`` (a repository-relative path) leads, symlinks resolved:
        INSIDE, OUTSIDE, or HIDDEN (into a dot-directory or onto a dot-file).

        ``is_link`` says whether the path itself is a symlink, when the caller
        has looked already. A file that is not a link is where its directory is.
        """
        where = self.dir_place(parent_dir(rel))
        if where != INSIDE:
            return where
        full = self.path(rel)
        if os.path.islink(full) if is_link is None else is_link:
            return self._real_place(os.path.realpath(full))
        return INSIDE

    def inside(self, rel: str, is_link: bool | None = None) -> bool:
        """Whether ``rel``, symlinks resolved, stays inside (see ``place``)."""
        return self.place(rel, is_link) == INSIDE


class FileStat(NamedTuple):  # a tuple: one is made for every file, every build
    """What a build compares to tell whether a file changed: the path itself,
    unfollowed. Size and modification time alone miss an edit that keeps both
    (same length, ``touch -r``); the change time and inode catch it, as git's
    and rsync's comparisons do."""

    size: int
    mtime_ns: int
    is_link: bool
    is_regular: bool = False  # a regular file itself (not through a symlink)
    ctime_ns: int = 0
    inode: int = 0


_SIGNED_64 = 2**63 - 1


def file_stat(st: os.stat_result) -> FileStat:
    """The FileStat of an ``os.stat_result`` (of the path itself, unfollowed)."""
    mode = st.st_mode
    return FileStat(
        st.st_size,
        st.st_mtime_ns,
        stat.S_ISLNK(mode),
        stat.S_ISREG(mode),
        st.st_ctime_ns,
        storable_inode(st.st_ino),
    )


def storable_inode(inode: int) -> int:
    """An inode number as an SQLite integer (inode numbers may use all 64 bits)."""
    return inode & _SIGNED_64


def lstat_key(path: Path | str) -> FileStat | None:
    """The FileStat of the path itself, or None when nothing is there."""
    try:
        return file_stat(os.lstat(path))
    except OSError:
        return None


# A file changed this close to the moment it was looked at may change again
# within the file system's timestamp granularity with none of its times showing
# it (git's "racily clean" entries): its change time is not kept, so that the
# next build reads it again.
RACY_NS = 2_000_000_000


def kept_ctime(key: FileStat) -> int | None:
    """The change time to store for a file just looked at (None: read it again next time)."""
    return kept(key.mtime_ns, key.ctime_ns, time.time_ns())


def kept(mtime_ns: int, ctime_ns: int, now_ns: int) -> int | None:
    """The change time to store for a file whose times these are, looked at by
    ``now_ns`` (``kept_ctime`` for many files at once, the clock read once)."""
    return None if now_ns - max(mtime_ns, ctime_ns) < RACY_NS else ctime_ns


def as_read(size: int, st: os.stat_result) -> tuple[int, int, int | None, int]:
    """The size, modification time, change time to store and inode of a file
    read as a regular file: the ``size`` read and the times of the file opened
    (its fstat), not of the walk's look before. A file changed between the two
    is stored as it was read, content and times alike; with the walk's times,
    one put back as HEAD has it after the look would keep them, too old to say
    it changed, and git, calling it clean, would vouch for the row as it is."""
    ctime = kept(st.st_mtime_ns, st.st_ctime_ns, time.time_ns())
    return size, st.st_mtime_ns, ctime, storable_inode(st.st_ino)
