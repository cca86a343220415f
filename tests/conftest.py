"""Shared fixtures: real repositories on disk, real SQLite indexes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from bench.generate import generate

from .helpers import (
    NOBODY,
    ROOT,
    SAMPLE_REPO,
    Repo,
    git,
)

# Every property test, whichever files are collected: no deadline (a loaded CI
# machine makes an example slow, not wrong), LABNOTE_HYPOTHESIS=long for many
# more examples.
settings.register_profile(
    "default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("long" if os.environ.get("LABNOTE_HYPOTHESIS") == "long" else "default")


@pytest.fixture(autouse=True)
def _mutant_stays_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under mutmut (`make python-mutants`), only this process runs the mutant.

    A CLI run in a child process is started from the test's own directory, where mutmut's
    trampoline cannot find its configuration: the child runs the original code, and the
    mutant is judged by the tests that call the library in this process.
    """
    active = os.environ.get("MUTANT_UNDER_TEST")
    if active is None:
        return
    from mutmut.mutation.trampoline import set_mutant_under_test

    set_mutant_under_test(active)
    monkeypatch.delenv("MUTANT_UNDER_TEST")


@pytest.fixture(scope="session")
def generated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "repo"
    generate(root, packets=12)
    return root


@pytest.fixture
def repo(tmp_path: Path, generated_template: Path) -> Repo:
    """A fresh copy of a small, clean generated repository."""
    root = tmp_path / "repo"
    shutil.copytree(generated_template, root)
    return Repo(root, tmp_path / "index.db")


@pytest.fixture
def sample_repo(tmp_path: Path) -> Repo:
    """A fresh copy of sample_repo/, safe to damage."""
    root = tmp_path / "sample_repo"
    shutil.copytree(SAMPLE_REPO, root, symlinks=True)
    return Repo(root, tmp_path / "sample.db")


@pytest.fixture
def history(tmp_path: Path) -> Repo:
    """sample_repo committed as the base revision of a fresh git repository."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "base")
    return Repo(root, tmp_path / "head.db")


@pytest.fixture
def unprivileged() -> Iterator[tuple[Path, list[str]]]:
    """A world-writable work directory and the prefix that runs a command without
    privileges: permissions (chmod 000) do not bind root, so as root the command
    runs as nobody (setpriv); otherwise as this user."""
    as_root = os.geteuid() == 0
    prefix = NOBODY if as_root else []
    if as_root:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv to drop privileges")
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", "import labnote_index"], cwd=ROOT, capture_output=True
        )
        if probe.returncode != 0:
            pytest.skip(f"nobody cannot read the project at {ROOT} to run it")
    work = Path(tempfile.mkdtemp(dir="/tmp"))
    work.chmod(0o777)  # the unprivileged user writes the index here
    try:
        yield work, prefix
    finally:
        for path in [work, *work.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)  # so that it can be removed
        shutil.rmtree(work)
