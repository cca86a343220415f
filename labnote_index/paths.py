"""Repository paths: what lies inside the repository, what a file's stat says,
and paths as text that can be stored and shown.

At the bottom of the read step: the walk, the loader and the artifact refresh
all ask here, and it asks nothing of them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple


def parent_dir(path: str) -> str:
    """The directory of a repository-relative path ("" at the root)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


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


def displayable(path: str) -> str:
    """A path as text that can be stored and shown: bytes that are not UTF-8 as \\xNN."""
    return path if storable(path) else os.fsencode(path).decode("utf-8", "backslashreplace")


class Sandbox:
    """The repository root, with the real path of each directory looked up once."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.prefix = str(self.root) + os.sep
        self._dirs: dict[str, bool] = {}

    def path(self, rel: str) -> str:
        """The absolute path of a repository-relative path (a string: this is hot)."""
        return self.prefix + rel

    def dir_inside(self, rel_dir: str) -> bool:
        """Whether a repository directory, symlinks resolved, is inside (asked once each)."""
        if rel_dir not in self._dirs:
            real = Path(os.path.realpath(self.root / rel_dir))
            self._dirs[rel_dir] = real == self.root or self.root in real.parents
        return self._dirs[rel_dir]

    def entered(self, rel_dir: str) -> None:
        """A directory the walk entered without following a symlink: inside, with no
        need to resolve it (a realpath costs a stat a path component)."""
        self._dirs[rel_dir] = True

    def inside(self, rel: str, is_link: bool | None = None) -> bool:
        """Whether ``rel`` (a repository-relative path), symlinks resolved, stays inside.

        ``is_link`` says whether the path itself is a symlink, when the caller
        has looked already.
        """
        if not self.dir_inside(parent_dir(rel)):
            return False
        full = self.path(rel)
        if os.path.islink(full) if is_link is None else is_link:
            return os.path.realpath(full).startswith(self.prefix)
        return True


class FileStat(NamedTuple):  # a tuple: one is made for every file, every build
    """What a build compares to tell whether a file changed: the path itself, unfollowed."""

    size: int
    mtime_ns: int
    is_link: bool
    is_regular: bool = False  # a regular file itself (not through a symlink)


def lstat_key(path: Path | str) -> FileStat | None:
    """The FileStat of the path itself, or None when nothing is there."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return FileStat(st.st_size, st.st_mtime_ns, stat.S_ISLNK(st.st_mode), stat.S_ISREG(st.st_mode))
