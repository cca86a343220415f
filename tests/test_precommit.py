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


def try_repo(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit try-repo`` of this project's hooks (it installs the package
    into an environment of pre-commit's own, from this checkout)."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    env.pop("VIRTUAL_ENV", None)
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "labnote-index"]
    return subprocess.run(
        [*command, "--all-files"], cwd=repo, env=env, capture_output=True, text=True
    )


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
    assert not (repo / "labnote.db").exists()  # --no-db: nothing left behind
    clean = tmp_path / "clean"
    (clean / "registry").mkdir(parents=True)
    git(clean, "init", "-q")
    (clean / "README.md").write_text("empty registry\n")
    git(clean, "add", "-A")
    git(clean, "commit", "-q", "-m", "clean")
    passing = try_repo(clean, home)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
