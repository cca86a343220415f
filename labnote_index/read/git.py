"""git, asked about the work tree being read: its HEAD commit, whether a path is
ignored. The one runner of git (compare/git.py asks it about revisions): never
with the GIT_DIR a hook may have set, always for the repository named.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git_environment() -> dict[str, str]:
    """This process's environment without GIT_DIR and its kin (git sets them for
    hooks): with them, git would answer for another repository than the one named."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def run_git(
    root: Path, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run git for ``root`` and nothing else. FileNotFoundError without git."""
    return subprocess.run(
        ["git", "-C", str(root), *args],
        input=stdin,
        capture_output=True,
        env=git_environment(),
        timeout=300,
        check=False,
    )


def head_commit(root: Path) -> str | None:
    """The commit HEAD names in the git repository holding ``root``, or None
    (not in git, no commit yet, no git)."""
    try:
        done = run_git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode().strip() or None


def in_git_work_tree(root: Path) -> bool:
    """Whether ``root`` lies in a git work tree (where files can be ignored)."""
    try:
        return run_git(root, "rev-parse", "--is-inside-work-tree").stdout.strip() == b"true"
    except (OSError, subprocess.TimeoutExpired):
        return False


def git_ignored(root: Path, paths: list[str]) -> set[str] | None:
    """Which of ``paths`` (relative to ``root``, no symlink on the way) git
    ignores: their content is no part of the repository (a ``.env``, a
    build's secrets) and is never stored. The empty set where ``root`` is not in
    a git work tree or git is not installed; None when git could not tell."""
    if not paths:
        return set()
    # Asked twice: first of the ignore rules alone (--no-index), then, of the
    # paths those match only, with the index, which takes back the tracked ones
    # (a tracked file is never ignored). The answer is the same as one question
    # with the index; but git looks each path up in the index at a cost that
    # grows with it (2 ms a path at 47,000 tracked artifacts: 94 s), and few
    # paths are ever ignored.
    matched = _check_ignore(root, paths, "--no-index")
    if not matched:
        return matched  # none, or git could not tell (None)
    return _check_ignore(root, sorted(matched))


def _check_ignore(root: Path, paths: list[str], *options: str) -> set[str] | None:
    """``git check-ignore`` of ``paths``: those it names, or None when it could not tell."""
    try:
        stdin = "\0".join(paths).encode("utf-8", "surrogateescape")
        done = run_git(root, "check-ignore", *options, "--stdin", "-z", stdin=stdin)
    except FileNotFoundError:
        return set()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode in (0, 1):  # some ignored, or none
        found = done.stdout.decode("utf-8", "surrogateescape").split("\0")
        return {path for path in found if path}
    if b"not a git repository" in done.stderr:
        return set()
    return None
