"""read/repository.py: whether a directory is a repository's root, and the hint
given when it is not (the repositories above it, or a few below)."""

from __future__ import annotations

from pathlib import Path

import pytest

from labnote_index.errors import NotARepository
from labnote_index.read.repository import BELOW_DEPTH, is_a_repository, repositories_below


def test_a_root_has_registry_or_the_handoff_layout(tmp_path: Path):
    (tmp_path / "a" / "registry").mkdir(parents=True)
    (tmp_path / "b" / "docs" / "workflow").mkdir(parents=True)
    is_a_repository(tmp_path / "a")
    is_a_repository(tmp_path / "b")
    (tmp_path / "c" / "docs").mkdir(parents=True)  # docs/ alone is not the layout
    with pytest.raises(NotARepository, match="no registry/ directory"):
        is_a_repository(tmp_path / "c")


def test_one_level_too_deep_names_the_root_above(tmp_path: Path):
    (tmp_path / "registry" / "packets").mkdir(parents=True)
    with pytest.raises(NotARepository, match=f"did you mean {tmp_path}"):
        is_a_repository(tmp_path / "registry" / "packets")


def test_a_directory_of_repositories_names_a_few(tmp_path: Path):
    for name in ("r1", "r2", "r3", "r4", "r5"):
        (tmp_path / name / "registry").mkdir(parents=True)
    with pytest.raises(NotARepository, match="r1, .*r2, .*r3 and 2 more"):
        is_a_repository(tmp_path)


def test_repositories_below_are_found_breadth_first_within_the_bound(tmp_path: Path):
    deep = tmp_path
    for level in range(BELOW_DEPTH):
        deep = deep / f"d{level}"
    (deep / "registry").mkdir(parents=True)  # as deep as it looks
    deeper = tmp_path / "e0"
    for level in range(1, BELOW_DEPTH + 1):
        deeper = deeper / f"e{level}"
    (deeper / "registry").mkdir(parents=True)  # one level past the bound
    (tmp_path / "near" / "registry").mkdir(parents=True)
    (tmp_path / ".hidden" / "registry").mkdir(parents=True)  # dot-directories are not looked in
    (tmp_path / "near" / "inner" / "registry").mkdir(parents=True)  # inside one: not looked for
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "near")  # a symlink is never followed
    assert repositories_below(tmp_path) == [tmp_path / "near", deep]  # nearest first
