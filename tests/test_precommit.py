"""The pre-commit hook, run by pre-commit itself in a real git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ROOT, SAMPLE_REPO, git

pytestmark = pytest.mark.packaging


def try_repo(repo: Path, home: Path, *files: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit try-repo`` of this project's hooks (it installs the package
    into an environment of pre-commit's own, from this checkout), on every file
    or on ``files``."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    env.pop("VIRTUAL_ENV", None)
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "labnote-index"]
    which = ["--files", *files] if files else ["--all-files"]
    return subprocess.run([*command, *which], cwd=repo, env=env, capture_output=True, text=True)


def test_the_hook_fails_on_defects_and_passes_once_they_are_gone(tmp_path: Path):
    repo = tmp_path / "labnote"
    shutil.copytree(SAMPLE_REPO, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sample")
    home = tmp_path / "pre-commit-home"
    failing = try_repo(repo, home)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "labnote-index check" in failing.stdout and "Failed" in failing.stdout
    assert "input_packet_unresolved" in failing.stdout
    assert not (repo / "labnote.db").exists()  # the index is kept in the cache only
    assert (repo / ".labnote-index-cache" / "index.db").is_file()
    assert git(repo, "status", "--porcelain") == ""  # which git ignores
    # A commit that touches a clean record: its findings only (none), from the
    # cache, incrementally.
    clean_record = "registry/packets/2026/20260905-claude-retention-followup.json"
    touching = try_repo(repo, home, clean_record)
    assert touching.returncode == 0, touching.stdout + touching.stderr
    defective = "registry/messages/open/20260912-gemini-late-reply.json"
    failing_file = try_repo(repo, home, defective)
    assert failing_file.returncode == 1 and "reply_to" in failing_file.stdout
    clean = tmp_path / "clean"
    (clean / "registry").mkdir(parents=True)
    git(clean, "init", "-q")
    (clean / "README.md").write_text("empty registry\n")
    git(clean, "add", "-A")
    git(clean, "commit", "-q", "-m", "clean")
    passing = try_repo(clean, home)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
