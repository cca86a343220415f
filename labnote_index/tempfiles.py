"""Temporary files and directories a build makes, named so that a later build
can tell them apart and clear away those whose owner died (SIGKILL, a power cut).

A name is ``.labnote-<kind>-<pid>-<token>[-<suffix>]``: the owner's process ID
says whether it can still be in use. Nothing else is ever removed.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_OURS = re.compile(r"^\.labnote-(tmp|shards|rev)-(\d+)-[0-9a-f]{8}(-.*)?$")


def temp_name(kind: str, suffix: str = "") -> str:
    """A fresh name for a temporary file or directory of this process."""
    name = f".labnote-{kind}-{os.getpid()}-{secrets.token_hex(4)}"
    return f"{name}-{suffix}" if suffix else name


def owner_alive(pid: int) -> bool:
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
        match = _OURS.match(entry.name)
        if not match or owner_alive(int(match.group(2))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue  # another build got there first, or it is not ours to remove
        removed.append(entry.name)
    return removed


@contextmanager
def temporary_directory(kind: str, parent: Path | str | None = None) -> Iterator[Path]:
    """A private directory of this process in ``parent`` (default: the system's
    temporary directory), removed afterwards; what dead builds left there first."""
    parent = Path(parent if parent is not None else tempfile.gettempdir())
    remove_abandoned(parent)
    path = parent / temp_name(kind)
    path.mkdir(mode=0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
