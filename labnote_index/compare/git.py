"""Read a revision of a git repository: its files from git objects, never a checkout.

The working tree and the repository's index are untouched. Files are read with
``git ls-tree`` and ``git cat-file --batch``, not ``git archive``, which would
obey ``export-ignore`` in the revision's own ``.gitattributes``: nothing in a
revision can hide one of its files from a comparison. A revision is always
given after ``--end-of-options``, so it cannot be taken for an option.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import (
    NotAGitRepository,
    RevisionError,
    RevisionNotFound,
    RevisionRefused,
)
from ..index.tempfiles import temporary_directory
from ..read.git import git_environment, run_git
from ..read.settings import symlinked


def _git(repo: Path, *args: str) -> bytes:
    """git's output for ``repo`` and nothing else; what git refused, said plainly."""
    try:
        done = run_git(repo, *args)
    except FileNotFoundError as exc:
        raise RevisionError("git is not installed: comparing revisions needs it") from exc
    if done.returncode != 0:
        raise _refusal(repo, args, done.stderr.decode("utf-8", "replace"))
    return done.stdout


def _refusal(repo: Path, args: tuple[str, ...], stderr: str) -> RevisionError:
    if "dubious ownership" in stderr:
        return RevisionRefused(
            f"git refuses {repo}: dubious ownership (it belongs to another user than the "
            f"one running this); if you trust it: git config --global --add safe.directory "
            f"{os.path.realpath(repo)}"
        )
    if "not a git repository" in stderr:
        return NotAGitRepository(f"{repo} is not a git repository")
    lines = stderr.strip().splitlines()
    return RevisionError(f"git {' '.join(args)}: {lines[-1] if lines else 'failed'}")


def path_prefix(repo: Path, warn: Callable[[str], None] | None = None) -> str:
    """What goes before a repository-relative path for GitHub, which resolves
    annotation and SARIF paths against the top of the git work tree: REPO's place
    in its work tree ("" at the top), or, outside git (or where git refuses the
    repository, which ``warn`` is told), relative to the current directory."""
    try:
        top = _git(Path(repo), "rev-parse", "--show-toplevel").decode().strip()
    except RevisionRefused as exc:
        if warn is not None:
            warn(f"{exc}; paths are given from the current directory")
        top = os.getcwd()
    except RevisionError:
        top = os.getcwd()
    rel = os.path.relpath(os.path.realpath(repo), os.path.realpath(top))
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"


def resolve(repo: Path, rev: str) -> str:
    """The commit a revision names, or RevisionError saying there is none."""
    if not rev.strip():
        raise RevisionNotFound("an empty revision names nothing: give a branch, tag or commit")
    try:
        found = _git(
            repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
        )
    except NotAGitRepository as exc:
        raise RevisionError(f"{repo} is not a git repository: --base needs one") from exc
    except RevisionRefused:
        raise
    except RevisionError as exc:
        raise RevisionNotFound(f"no revision {rev!r} in {repo}") from exc
    return found.decode().strip()


def repository_prefix(repo: Path) -> str:
    """REPO's place in its git work tree ("lab/"; "" at the top): a revision of a
    repository that is a sub-directory is that directory of the revision's
    tree, never the whole work tree."""
    return _git(repo, "rev-parse", "--show-prefix").decode().strip()


def _safe_parts(path: bytes) -> list[str] | None:
    """The components of a path in a tree, or None for one that could leave dest."""
    parts = os.fsdecode(path).split("/")
    if any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        return None
    return parts


def materialize(repo: Path, rev: str, dest: Path) -> None:
    """Write the files of ``rev`` into ``dest`` from git objects (no checkout, no
    attributes: every file of the revision, whatever its .gitattributes say).

    Regular files are written first, symlinks last, each created anew
    (O_EXCL, O_NOFOLLOW), so that nothing is ever written through a link.
    """
    commit, prefix = resolve(repo, rev), repository_prefix(repo)
    if prefix:  # REPO is a sub-directory of the work tree: that directory's files
        try:
            tree = f"{commit}:{prefix.rstrip('/')}"
            listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", tree)
        except RevisionError:  # the directory is not in that revision: no files
            listing = b""
    else:
        listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    files: list[tuple[bytes, list[str], bytes]] = []  # (object id, path parts, mode)
    links: list[tuple[bytes, list[str], bytes]] = []
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) != 3 or fields[1] != b"blob":
            continue  # the empty tail, and submodules (commits, not files)
        parts = _safe_parts(path)
        if parts is not None:
            (links if fields[0] == b"120000" else files).append((fields[2], parts, fields[0]))
    dest.mkdir(parents=True, exist_ok=True)
    wanted = files + links
    cat = subprocess.Popen(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_environment(),
    )
    questions, answers = cat.stdin, cat.stdout
    if questions is None or answers is None:  # not so with PIPE; said for the type checker
        raise RevisionError("git cat-file could not be started")

    def ask() -> None:  # a thread: the answers must be read while the questions go out
        try:
            for oid, _, _ in wanted:
                questions.write(oid + b"\n")
        except BrokenPipeError:
            pass
        finally:
            questions.close()

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    writer = _TreeWriter(dest)
    try:
        for _, parts, mode in wanted:
            header = answers.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise RevisionError(f"git cat-file could not read {'/'.join(parts)}")
            content = answers.read(int(header[2]))
            answers.read(1)  # the newline after each object
            writer.write(parts, mode, content)
    finally:
        writer.close()
        answers.close()
        cat.wait()
        asker.join()


def root_file_reader(repo: Path, rev: str) -> Callable[[str], bytes | None]:
    """Reads a file at the top of REPO in ``rev`` (the tree a comparison indexes,
    REPO's directory of the revision when REPO is a sub-directory of the work
    tree): its bytes, or None when the revision has no regular file of that
    name (a symlink is not read: it could name anything)."""
    commit, prefix = resolve(repo, rev), repository_prefix(repo)

    def read(name: str) -> bytes | None:
        listing = _git(repo, "ls-tree", "-z", "--full-tree", commit, "--", prefix + name)
        meta, _, _ = listing.partition(b"\t")
        fields = meta.split(b" ")
        if fields[0] == b"120000":
            raise symlinked(name)
        if len(fields) != 3 or fields[1] != b"blob" or fields[0] not in (b"100644", b"100755"):
            return None
        return _git(repo, "cat-file", "blob", fields[2].decode("ascii"))

    return read


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _TreeWriter:
    """Writes the files (and symlinks) of a tree under ``dest``, a directory of
    this process's own; never through a link, never over a file. A name the tree
    holds twice keeps the first (a file, or a directory, whichever came first);
    any other failure (a full disk) is a RevisionError: a revision read in part
    would give invented findings.

    A file is created by its bare name in its directory, opened once for all the
    files that follow it there (git lists a tree depth first), not by a path
    made and resolved again for each file: writing a revision of 90,108 files
    on a tmpfs took 2.1 s that way, and takes 1.06 s."""

    def __init__(self, dest: Path) -> None:
        self.dest = os.fsdecode(dest)
        self.made = {""}  # the directories made, repository-relative ("" is dest)
        self.current: tuple[str, int | None] | None = None  # a directory, and its fd

    def write(self, parts: list[str], mode: bytes, content: bytes) -> None:
        """Write one entry (``parts``: its path's components, never "..")."""
        try:
            fd = self._directory("/".join(parts[:-1]), parts)
            if fd is None:
                return  # a file or link holds a name on the way: the first one stands
            try:
                if mode == b"120000":
                    os.symlink(os.fsdecode(content), parts[-1], dir_fd=fd)
                    return
                perms = 0o755 if mode == b"100755" else 0o644
                new = os.open(parts[-1], _NEW_FILE, perms, dir_fd=fd)
            except (FileExistsError, NotADirectoryError):
                return  # a path the tree names twice: the first one stands
            with open(new, "wb") as handle:
                handle.write(content)
        except OSError as exc:
            raise RevisionError(
                f"cannot write the revision's files into {self.dest} "
                f"({exc.strerror or exc}): free space there, or point TMPDIR at a "
                "directory with room"
            ) from exc

    def _directory(self, path: str, parts: list[str]) -> int | None:
        """An fd of the directory ``path`` (the first len(parts) - 1 of
        ``parts``), every directory on the way made here (a real one, not a
        link); None when a file or link holds one of their names."""
        if self.current is not None and self.current[0] == path:
            return self.current[1]
        if path not in self.made:
            # Made from the top down, each once; a name that is not one made
            # here and exists is a file's or a link's, which came first.
            here = ""
            for part in parts[:-1]:
                here = f"{here}/{part}" if here else part
                if here in self.made:
                    continue
                try:
                    os.mkdir(f"{self.dest}/{here}")
                except FileExistsError:
                    return self._now(path, None)
                self.made.add(here)
        return self._now(path, os.open(f"{self.dest}/{path}", _DIRECTORY))

    def _now(self, path: str, fd: int | None) -> int | None:
        """``path`` (its fd, or None) the directory written into now; the one
        before closed (one directory open at a time, however deep the tree)."""
        self.close()
        self.current = (path, fd)
        return fd

    def close(self) -> None:
        """Close the directory written into last."""
        if self.current is not None and self.current[1] is not None:
            os.close(self.current[1])
        self.current = None


@contextmanager
def revision_tree(repo: Path, rev: str | None) -> Iterator[Path]:
    """The tree of ``rev`` (None: the working tree itself)."""
    if rev is None:
        yield Path(repo)
        return
    with temporary_directory("rev") as tmp:
        tree = tmp / "tree"
        materialize(Path(repo), rev, tree)
        yield tree
