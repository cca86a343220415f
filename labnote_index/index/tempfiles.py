"""Temporary files and directories a build makes, named so that a later build
can tell them apart and clear away those whose owner died (SIGKILL, a power cut).

A name is ``.labnote-<kind>-<pid>-<token>[-<suffix>]``: the owner's process ID
says whether it can still be in use. A name is not proof enough (a repository
may hold a file named so): a file is removed only when it is a labnote index
(its SQLite header says so), a directory only when it holds the marker file
written into it at its creation. Nothing else is ever removed.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .index_file import has_index_header

_OURS = re.compile(r"^\.labnote-(tmp|shards|rev|fix|serve)-(\d+)-[0-9a-f]{8}(-.*)?$")
# In every temporary directory of ours, holding the directory's own name.
MARKER = ".labnote-temporary"


def temp_name(kind: str, suffix: str = "") -> str:
    """A fresh name for a temporary file or directory of this process."""
    # os.urandom is what secrets.token_hex reads, without secrets' imports (hmac).
    name = f".labnote-{kind}-{os.getpid()}-{os.urandom(4).hex()}"
    return f"{name}-{suffix}" if suffix else name


def owner_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (somebody else's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # somebody else's process
    return True


def remove_abandoned(directory: Path | str) -> list[str]:
    """Remove what dead builds left in ``directory``; the names removed."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _OURS.fullmatch(entry.name)
        if not match or owner_alive(int(match.group(2))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if not _marked(Path(entry.path)):
                    continue
                shutil.rmtree(entry.path)
            elif entry.is_file(follow_symlinks=False) and has_index_header(Path(entry.path)):
                os.unlink(entry.path)
            else:
                continue
        except OSError:
            continue  # another build got there first, or it is not ours to remove
        removed.append(entry.name)
    return removed


def _marked(directory: Path) -> bool:
    """Whether a directory holds our marker, naming it (a regular file, not a link)."""
    try:
        fd = os.open(directory / MARKER, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with open(fd, "rb") as handle:
        return handle.read(300) == directory.name.encode() + b"\n"


def new_directory(kind: str, parent: Path | str | None = None) -> Path:
    """A fresh, private directory of this process in ``parent`` (default: the
    system's temporary directory), marked as ours; the caller removes it."""
    parent = Path(parent if parent is not None else tempfile.gettempdir())
    path = parent / temp_name(kind)
    path.mkdir(mode=0o700)
    try:
        fd = os.open(path / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as handle:
            handle.write(path.name.encode() + b"\n")
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path


@contextmanager
def temporary_directory(kind: str, parent: Path | str | None = None) -> Iterator[Path]:
    """A private directory of this process in ``parent`` (default: the system's
    temporary directory), removed afterwards; what dead builds left there first."""
    parent = Path(parent if parent is not None else tempfile.gettempdir())
    remove_abandoned(parent)
    path = new_directory(kind, parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_new(
    name: str, content: bytes, mode: int | None = None, dir_fd: int | None = None
) -> None:
    """Create the file ``name`` (in ``dir_fd``, when given), which must not exist,
    never through a symlink, holding ``content``; ``mode`` when given, else the
    mode any new file gets (the umask applies). Removed again if writing fails."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
    try:
        with open(fd, "wb") as handle:
            handle.write(content)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
    except BaseException:
        os.unlink(name, dir_fd=dir_fd)
        raise


def replace_file(target: Path, content: bytes) -> None:
    """Put ``content`` at ``target`` in one step: written into a private directory
    beside it (named and marked as ours, so that a killed writer's is cleared away
    by the next), then renamed over it. The one way a file of the repository is
    written whole (the generated views; ``fix`` does the same through directory
    descriptors)."""
    remove_abandoned(target.parent)
    private = new_directory("tmp", target.parent)
    try:
        write_new(str(private / target.name), content)
        os.replace(private / target.name, target)
    finally:
        shutil.rmtree(private, ignore_errors=True)


@contextmanager
def new_tree(target: Path) -> Iterator[Path]:
    """A private directory beside ``target`` to fill, renamed to ``target`` (absent
    or an empty directory) once the block ends without error, removed if it
    does not: a directory of files written whole, or not at all."""
    work = new_directory("tmp", target.parent)
    try:
        yield work
        (work / MARKER).unlink()
        work.chmod(0o755)  # as a directory made the usual way
        os.replace(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
