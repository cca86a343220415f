"""The index a hook keeps between runs (check --cache): incremental, never trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

import labnote_index as li
from labnote_index.cli import cli
from labnote_index.index.cache import CACHE_DIR, cache_index

from .helpers import Repo, git

PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"


def check(root: Path, *args: str):
    return CliRunner().invoke(cli, ["check", str(root), "--cache", "--format", "json", *args])


def test_the_cache_is_made_ignored_and_incremental_from_the_second_run(sample_repo: Repo):
    git(sample_repo.root, "init", "-q", "-b", "main")
    git(sample_repo.root, "add", "-A")
    git(sample_repo.root, "commit", "-q", "-m", "sample")
    first = check(sample_repo.root)
    assert first.exit_code == 1, first.output  # the planted defects
    cache = sample_repo.root / CACHE_DIR
    assert (cache / "index.db").is_file() and (cache / "CACHEDIR.TAG").is_file()
    assert git(sample_repo.root, "status", "--porcelain") == ""  # never committed
    sample_repo.edit(PACKET, notes="edited")
    again = li.build(sample_repo.root, cache_index(sample_repo.root))
    assert again.incremental and again.reread == 1
    # The same findings as a build from nothing.
    cached = json.loads(check(sample_repo.root).output)
    fresh = json.loads(
        CliRunner()
        .invoke(cli, ["check", str(sample_repo.root), "--no-db", "--format", "json"])
        .output
    )
    assert cached == fresh


def test_staged_files_limit_the_report_not_the_index(sample_repo: Repo):
    everything = json.loads(check(sample_repo.root).output)
    files = {f["file"] for f in everything}
    assert len(files) > 1
    one = sorted(files)[0]
    only = json.loads(check(sample_repo.root, one).output)
    assert only and {f["file"] for f in only} == {one}


def test_what_took_the_index_place_is_not_trusted(sample_repo: Repo, tmp_path: Path):
    check(sample_repo.root)
    index = sample_repo.root / CACHE_DIR / "index.db"
    index.unlink()
    index.write_text("not an index\n")
    assert check(sample_repo.root).exit_code == 1  # rebuilt, the findings reported
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"precious")
    index.unlink()
    index.symlink_to(outside)
    assert check(sample_repo.root).exit_code == 1
    assert outside.read_bytes() == b"precious" and not index.is_symlink()
    index.write_bytes(index.read_bytes()[:4096])  # damaged: cut short
    result = check(sample_repo.root)
    assert result.exit_code == 1, result.output


def test_a_cache_directory_that_is_not_ours_is_refused(sample_repo: Repo, tmp_path: Path):
    theirs = sample_repo.root / CACHE_DIR
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine\n")
    result = check(sample_repo.root)
    assert result.exit_code == 2 and "not labnote-index's cache" in result.output
    assert os.listdir(theirs) == ["notes.txt"]
    theirs.rename(tmp_path / "elsewhere")
    (sample_repo.root / CACHE_DIR).symlink_to(tmp_path / "elsewhere")
    result = check(sample_repo.root)
    assert result.exit_code == 2
    assert os.listdir(tmp_path / "elsewhere") == ["notes.txt"]


def test_cache_contradicts_db_and_no_db(sample_repo: Repo, tmp_path: Path):
    for extra in (["--no-db"], ["--db", str(tmp_path / "x.db")]):
        result = check(sample_repo.root, *extra)
        assert result.exit_code == 2 and "contradict" in result.output
    result = CliRunner().invoke(cli, ["check", "--cache"])
    assert result.exit_code == 2 and "--cache needs REPO" in result.output


def test_a_cache_that_arrives_with_the_checkout_is_never_trusted(sample_repo: Repo):
    """A pull request can force-add .labnote-index-cache/: an index holding the
    record an orphaned reply names must not hide the orphan. Its rows are those
    of no build here, so it is built again in full."""
    import shutil
    import sqlite3

    late = "registry/messages/open/20260912-gemini-late-reply.json"
    fresh = json.loads(
        CliRunner()
        .invoke(cli, ["check", str(sample_repo.root), "--no-db", "--format", "json"])
        .output
    )
    assert any(f["check"] == "reference_unresolved" and f["file"] == late for f in fresh)
    assert check(sample_repo.root).exit_code == 1
    index = cache_index(sample_repo.root)
    missing = sample_repo.load(late)["reply_to"]
    forged = sample_repo.root / "forged.db"
    shutil.copyfile(index, forged)  # what a checkout writes: a new file
    with sqlite3.connect(forged) as conn:
        conn.execute(
            "INSERT INTO records (file, record_type, record_id, unreadable) "
            "VALUES ('registry/messages/open/ghost.json', 'message', ?, 0)",
            [missing],
        )
        conn.execute(
            "UPDATE refs SET target_file = 'registry/messages/open/ghost.json' WHERE target_id = ?",
            [missing],
        )
        conn.execute("DELETE FROM findings")
    os.replace(forged, index)
    cached = check(sample_repo.root)
    assert cached.exit_code == 1, cached.output
    assert json.loads(cached.output) == fresh
    rebuilt = li.build(sample_repo.root, index)
    assert rebuilt.incremental  # and now it is this machine's own, kept from here on


def test_an_index_copied_from_elsewhere_is_built_in_full(sample_repo: Repo, tmp_path: Path):
    import shutil

    first = tmp_path / "first.db"
    li.build(sample_repo.root, first)
    assert li.build(sample_repo.root, first).incremental
    copy = tmp_path / "copy.db"
    shutil.copyfile(first, copy)
    assert not li.build(sample_repo.root, copy).incremental
    assert li.build(sample_repo.root, copy).incremental


def test_the_hook_asks_git_as_it_starts_and_leaves_nothing_asked(sample_repo: Repo):
    """check --cache in a work tree asks git as it starts (read/git.py,
    status_asked_early): after an edit its findings are a full build's, and no
    question is left behind, answered or not (a configuration it cannot follow
    fails the command after git was asked)."""
    from labnote_index.read import git as read_git

    git(sample_repo.root, "init", "-q", "-b", "main")
    git(sample_repo.root, "add", "-A")
    git(sample_repo.root, "commit", "-q", "-m", "sample")
    check(sample_repo.root)
    sample_repo.edit(PACKET, notes="edited after the cache was made")
    cached = check(sample_repo.root)
    assert read_git._ASKED_EARLY == {}
    fresh = CliRunner().invoke(cli, ["check", str(sample_repo.root), "--no-db", "--format", "json"])
    assert json.loads(cached.output) == json.loads(fresh.output)
    (sample_repo.root / "labnote-index.toml").write_text("no-such-key = 1\n")
    failed = check(sample_repo.root)
    assert failed.exit_code == 2, failed.output
    assert read_git._ASKED_EARLY == {}
