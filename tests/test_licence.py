"""read/licence.py: the licence a repository declares, read as every file is."""

from __future__ import annotations

import os
from pathlib import Path

from labnote_index.read.licence import declared_licence
from labnote_index.read.paths import Sandbox


def test_the_title_is_the_first_line_of_text(tmp_path: Path):
    assert declared_licence(Sandbox(tmp_path)) is None
    (tmp_path / "LICENSE.md").write_text("\n\n# MIT License\n\nCopyright ...\n")
    assert declared_licence(Sandbox(tmp_path)) == {"file": "LICENSE.md", "title": "MIT License"}
    (tmp_path / "LICENSE").write_text("Apache License\nVersion 2.0\n")  # LICENSE comes first
    assert declared_licence(Sandbox(tmp_path)) == {"file": "LICENSE", "title": "Apache License"}
    (tmp_path / "LICENSE").write_text("x" * 500)
    assert declared_licence(Sandbox(tmp_path))["title"] == "x" * 120  # a title, not a text


def test_a_licence_that_may_be_a_file_outside_is_never_read(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.write_text("Secret Licence\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "LICENSE").symlink_to(outside)
    os.link(outside, repo / "COPYING")  # a hard link: a second name
    assert declared_licence(Sandbox(repo)) is None
    (repo / "LICENCE").mkdir()  # a directory is no licence
    assert declared_licence(Sandbox(repo)) is None
    (repo / "LICENSE.txt").write_text("BSD\n")
    assert declared_licence(Sandbox(repo)) == {"file": "LICENSE.txt", "title": "BSD"}
