"""The index a hook keeps between runs, in the repository's own cache directory.

``.labnote-index-cache/`` at the repository root, the way ruff and mypy keep
theirs: made with a ``.gitignore`` that ignores everything in it (so it is
never committed) and a ``CACHEDIR.TAG`` (so backup tools skip it). The index in
it is used only when it is a labnote index: anything else there (a foreign
file, a symlink) is removed and the index built again; a damaged index, one of
another repository or of another version is rebuilt in full by the build
itself. A directory of that name that is not ours is refused, never written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import NotAnIndex
from .index_file import is_labnote_index
from .tempfiles import write_new

CACHE_DIR = ".labnote-index-cache"
CACHE_INDEX = "index.db"
# The cache directory tag (https://bford.info/cachedir/): its first line is fixed.
TAG = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by labnote-index.\n"
)
IGNORE_ALL = b"# Made by labnote-index: its cache is never committed.\n*\n"


def cache_index(repo: Path | str) -> Path:
    """The cached index of ``repo`` (its path, which may not exist yet), the cache
    directory made first when there is none. NotAnIndex when a directory of that
    name is there but is not labnote-index's (or is a symlink)."""
    directory = Path(repo) / CACHE_DIR
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        _make(directory)
    else:
        if not stat.S_ISDIR(st.st_mode) or not _ours(directory):
            raise NotAnIndex(
                f"{directory} is not labnote-index's cache directory (it has no "
                "CACHEDIR.TAG of ours, or is not a directory): remove it, or give --db"
            )
    index = directory / CACHE_INDEX
    try:
        st = os.lstat(index)
    except FileNotFoundError:
        return index
    if not stat.S_ISREG(st.st_mode) or not is_labnote_index(index):
        # In our own directory: whatever took the index's place is not trusted.
        if stat.S_ISDIR(st.st_mode):
            raise NotAnIndex(f"{index} is a directory: remove it and run again")
        os.unlink(index)
    return index


def _make(directory: Path) -> None:
    try:
        directory.mkdir()
    except FileExistsError:  # another run made it meanwhile
        if not _ours(directory):
            raise NotAnIndex(f"{directory} appeared and is not ours: run again") from None
        return
    write_new(str(directory / ".gitignore"), IGNORE_ALL)
    write_new(str(directory / "CACHEDIR.TAG"), TAG)


def _ours(directory: Path) -> bool:
    """Whether a directory holds our cache tag (a regular file, not a link)."""
    try:
        fd = os.open(directory / "CACHEDIR.TAG", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with open(fd, "rb") as handle:
        return handle.read(len(TAG) + 1) == TAG
