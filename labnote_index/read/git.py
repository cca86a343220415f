"""git, asked about the work tree being read: its HEAD commit, whether a path is
ignored. The one runner of git (compare/git.py asks it about revisions): never
with the GIT_DIR a hook may have set, always for the repository named.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path


def git_environment() -> dict[str, str]:
    """This process's environment without GIT_DIR and its kin (git sets them for
    hooks): with them, git would answer for another repository than the one named."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


_TIMEOUT = 300  # seconds: a git that hangs (a lock, a network file system) is given up


def run_git(
    root: Path, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run git for ``root`` and nothing else. FileNotFoundError without git."""
    return subprocess.run(
        ["git", "-C", str(root), *args],
        input=stdin,
        capture_output=True,
        env=git_environment(),
        timeout=_TIMEOUT,
        check=False,
    )


def _start_git(root: Path, *args: str) -> subprocess.Popen[bytes]:
    """git for ``root`` started, its answer read later (``_answer``)."""
    return subprocess.Popen(
        ["git", "-C", str(root), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_environment(),
    )


def _answer(started: subprocess.Popen[bytes]) -> subprocess.CompletedProcess[bytes]:
    """What a started git answered (TimeoutExpired, the git stopped, past _TIMEOUT)."""
    try:
        out, err = started.communicate(timeout=_TIMEOUT)
    except subprocess.TimeoutExpired:
        _stop(started)
        raise
    return subprocess.CompletedProcess(started.args, started.returncode, out, err)


def _stop(started: subprocess.Popen[bytes]) -> None:
    """A started git stopped (if not answered yet) and waited for: never left
    behind. SIGTERM, which git catches to remove the lock files it holds (a
    SIGKILL would leave them, and every later git command in the repository
    would fail on them); SIGKILL only for one that is still there a minute on."""
    if started.returncode is None:
        started.terminate()  # nothing where it has ended
        try:
            started.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            started.kill()
            started.communicate()


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
    a git work tree or git is not installed; None when git could not tell
    (what the ignore rules match when only git's index could not be read)."""
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
    tracked_aside = _check_ignore(root, sorted(matched))
    # Where the index cannot be read, what the rules match is the safe answer:
    # tracking only ever takes a path back.
    return matched if tracked_aside is None else tracked_aside


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


@dataclass(frozen=True)
class WorkTreeState:
    """What git says of the files of a work tree below ``root``: the commit HEAD
    names, the paths that are not as HEAD has them (changed, staged, untracked
    or ignored: everything git can say is not HEAD's), relative to ``root`` (a
    directory git does not look into, a nested repository or an ignored one,
    ends with "/"), and the stat of git's index file (where git keeps the flags
    that make it look away: a changed index file is looked at again)."""

    head: str
    dirty: tuple[str, ...]
    index_stat: tuple[int, int, int]
    # When git was asked (time.time_ns; 0 unknown): a file changed after it may
    # have been read changed and called clean (changed.record_state). Not kept.
    asked_ns: int = field(default=0, compare=False)

    def as_json(self) -> str:
        """The state as build_info keeps it."""
        return json.dumps([self.head, list(self.dirty), list(self.index_stat)])

    @staticmethod
    def from_json(text: str) -> WorkTreeState | None:
        """A state build_info kept (None for anything else)."""
        try:
            head, dirty, index_stat = json.loads(text)
            return WorkTreeState(str(head), tuple(map(str, dirty)), tuple(index_stat))
        except (ValueError, TypeError):
            return None


# What work_tree_state asks: every path not as HEAD has it, untracked and
# ignored ones included (a new record is untracked; an ignored one is left out).
# Without the optional lock: status never writes git's index (its refreshed stat
# data), the user's own git commands do; one of theirs running beside it would
# otherwise fail on the index.lock it holds.
_WHERE = ("rev-parse", "--show-prefix", "--git-path", "index", "HEAD")
_STATUS = (
    "--no-optional-locks",
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--ignored=matching",
    "--no-renames",
    "--",
    ".",
)


@dataclass
class _Asked:
    """work_tree_state's two questions, started at ``at_ns`` and not yet answered."""

    at_ns: int
    where: subprocess.Popen[bytes]
    status: subprocess.Popen[bytes]

    @staticmethod
    def start(root: Path) -> _Asked:
        at_ns = time.time_ns()
        where = _start_git(root, *_WHERE)
        try:
            return _Asked(at_ns, where, _start_git(root, *_STATUS))
        except BaseException:
            _stop(where)
            raise

    def stop(self) -> None:
        _stop(self.where)
        _stop(self.status)


# Asked by status_asked_early, for the first work_tree_state of the same root.
_ASKED_EARLY: dict[str, _Asked] = {}


@contextmanager
def status_asked_early(root: Path) -> Iterator[None]:
    """git asked now what work_tree_state will ask of ``root``, so that a command
    imports its library and reads its settings while git looks at every file
    (on a second core, most of a hook's start-up). The first work_tree_state of
    ``root`` in the block takes git's answer, and asked_ns says when git was
    asked; one the block's work did not take is stopped at its end, never
    answered to a later question."""
    key = os.path.realpath(root)
    with suppress(OSError):  # no git: work_tree_state finds so itself
        _ASKED_EARLY[key] = _Asked.start(Path(key))
    try:
        yield
    finally:
        left = _ASKED_EARLY.pop(key, None)
        if left is not None:
            left.stop()


def work_tree_state(
    root: Path, meanwhile: AbstractContextManager[object] | None = None
) -> WorkTreeState | None:
    """What git says of ``root``'s files (see WorkTreeState), or None where it
    cannot say it for every file: not a work tree, no commit, no git, a warning
    (a directory it cannot read), or a file it is told to look away from
    (sparse checkout's skip-worktree, assume-unchanged) or a submodule (whose
    files are another repository's). ``meanwhile`` is entered while ``git
    status`` runs (in a work tree only, and only if it has not exited already),
    for work to do as this process waits.
    Both questions are asked at once (asked already, by status_asked_early)."""
    try:
        asked = _ASKED_EARLY.pop(os.path.realpath(root), None) or _Asked.start(root)
    except OSError:
        return None
    try:
        where = _answer(asked.where)
        if where.returncode != 0:
            return None
        prefix, index_path, head = where.stdout.decode("utf-8", "surrogateescape").split("\n")[:3]
        index_file = Path(root, index_path)
        # Work for the wait only where there is a wait: a small repository's
        # status, asked early, has answered by now (poll), and imports started
        # then would only take the GIL from what follows.
        waiting = meanwhile if meanwhile is not None and asked.status.poll() is None else None
        with waiting or nullcontext():
            status = _answer(asked.status)
        if status.returncode != 0 or status.stderr.strip():
            return None
        st = os.stat(index_file)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    finally:
        asked.stop()  # a question not answered (an error) is not left running
    dirty = []
    for entry in status.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) > 3 and entry.startswith(prefix, 3):
            dirty.append(entry[3 + len(prefix) :])
    index_stat = (st.st_ino, st.st_size, st.st_mtime_ns)
    return WorkTreeState(head, tuple(sorted(dirty)), index_stat, asked.at_ns)


def looks_away(root: Path) -> bool | None:
    """Whether git is told to look away from a file below ``root`` (a
    skip-worktree or assume-unchanged flag), or a file is a submodule; None
    when git could not tell. Asked again only when git's index file changed."""
    try:
        listed = run_git(root, "ls-files", "-z", "-v", "-s", "--", ".")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        return None
    # Each entry: "<tag> <mode> <blob> <stage>\t<path>"; a lower-case tag is
    # assume-unchanged, S skip-worktree; mode 160000 a submodule.
    for entry in listed.stdout.split(b"\0"):
        if entry and (entry[:1].islower() or entry[:1] == b"S" or entry[2:8] == b"160000"):
            return True
    return False


def changed_between(root: Path, old: str, new: str) -> list[str] | None:
    """The paths below ``root`` (relative to it) that differ between two commits,
    or None when git cannot tell (a commit it no longer has)."""
    try:
        done = run_git(root, "diff", "--name-only", "-z", "--no-renames", "--relative", old, new)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
