"""The index written whole: the temporary file, its copy made early, the rename.

Tests of: ``index/writing.py``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from labnote_index.api import build as build_index
from labnote_index.index.writing import EarlyCopy, atomic_database

from .helpers import Calls, Repo, content


def beside(db_path: Path) -> list[str]:
    return sorted(p.name for p in db_path.parent.iterdir())


def test_an_early_copy_is_the_index_byte_for_byte_and_builds_on(repo: Repo):
    repo.index().close()
    original, before = repo.db_path.read_bytes(), beside(repo.db_path)
    copy = EarlyCopy(repo.db_path)
    assert copy.path.parent == repo.db_path.parent and copy.path.name.startswith(".labnote-tmp-")
    assert copy.result().read_bytes() == original
    with atomic_database(repo.db_path, copied=copy) as db:
        db.execute("CREATE TABLE added (x)")
    assert "added" in sqlite_utils.Database(repo.db_path).table_names()
    assert beside(repo.db_path) == before  # the copy renamed into place


def test_a_discarded_copy_leaves_nothing(repo: Repo):
    repo.index().close()
    before = beside(repo.db_path)
    copy = EarlyCopy(repo.db_path)
    copy.discard()
    assert beside(repo.db_path) == before
    copy.discard()  # twice: nothing more to do


def test_a_copy_made_by_hand_where_the_kernel_cannot(repo: Repo, monkeypatch: pytest.MonkeyPatch):
    """Where copy_file_range fails (a system without it, a seccomp filter) or is
    not there at all, the bytes are copied by hand, the same."""
    repo.index().close()
    original = repo.db_path.read_bytes()

    def refused(*args: object) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "copy_file_range", refused)
    assert EarlyCopy(repo.db_path).result().read_bytes() == original
    monkeypatch.delattr(os, "copy_file_range")
    assert EarlyCopy(repo.db_path).result().read_bytes() == original
    for left in repo.db_path.parent.glob(".labnote-tmp-*"):
        left.unlink()


def test_a_copy_that_fails_fails_the_build_and_leaves_nothing(tmp_path: Path):
    """The copy's error is raised where the copy is taken, and its file deleted."""
    not_a_file = tmp_path / "index.db"
    not_a_file.mkdir()  # what the copy reads cannot be read as a file
    copy = EarlyCopy(not_a_file)
    with pytest.raises(IsADirectoryError), atomic_database(not_a_file, copied=copy):
        pass
    assert beside(not_a_file) == ["index.db"]


def test_incremental_builds_with_a_copy_made_early_equal_full_ones(repo: Repo, tmp_path: Path):
    """With a core to spare an incremental build copies the index as it waits
    for git or walks: its index is a full build's, and a build that writes
    nothing (no change), one interrupted, and one of a damaged index leave
    no copy behind."""
    build_index(repo.root, repo.db_path, jobs=2)
    repo.edit(repo.first("registry/packets/*/*.json"), notes="edited")
    assert build_index(repo.root, repo.db_path, jobs=2).reread == 1
    full = tmp_path / "elsewhere" / "full.db"
    build_index(repo.root, full, full=True, jobs=1)
    assert content(sqlite_utils.Database(repo.db_path)) == content(sqlite_utils.Database(full))
    files = beside(repo.db_path)
    unchanged = repo.db_path.stat().st_ino
    assert build_index(repo.root, repo.db_path, jobs=2).reread == 0
    assert repo.db_path.stat().st_ino == unchanged and beside(repo.db_path) == files

    def interrupt(n: int) -> None:
        raise KeyboardInterrupt

    repo.edit(repo.first("registry/packets/*/*.json"), notes="edited again")
    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, repo.db_path, jobs=2, progress=Calls(interrupt))
    assert beside(repo.db_path) == files
    conn = sqlite3.connect(repo.db_path)
    conn.execute("DROP TABLE records")  # damaged: built again in full
    conn.commit()
    conn.close()
    result = build_index(repo.root, repo.db_path, jobs=2)
    assert result.rebuilt_because and beside(repo.db_path) == files
    build_index(repo.root, full, full=True, jobs=1)
    assert content(sqlite_utils.Database(repo.db_path)) == content(sqlite_utils.Database(full))
