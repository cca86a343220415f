"""Mechanical repairs: plan them from the findings of an index, show them, apply them.

Each repair belongs to one check and is planned beside it (``checks/<id>.py``,
its header saying ``-- fix: ...``), from the index, never guessed: a value that
cannot be derived is left and reported. Planning writes nothing. A repair edits
only the JSON tokens it is about, and the edited file must read back to the same
values elsewhere.
Applying makes each repair one step (signals wait until it is done), checks
every path again as it operates (directories opened without following
symlinks), links new content into place from a private directory (never
replacing anything but the file as planned), and undoes the moves of a repair
that fails half-way, so every file is either as it was or as fixed.

Never: a packet.lock.json, anything in a handoff packet directory, a symlink
(followed or written through), anything outside the repository, a record's
content text (summary, notes, artifact bodies), or a file two repairs want
(both are reported, neither is done).
"""

from __future__ import annotations

import errno
import importlib
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import interrupts
from ..checks.catalogue import load_checks
from ..checks.fixing import Planner, Refusal, Repair
from ..format.rules import HANDOFF_MANIFEST, PACKET_LOCK
from ..index.files import packet_dirs
from ..index.tempfiles import remove_abandoned, temp_name, temporary_directory, write_new
from ..text import parent_dir

if TYPE_CHECKING:
    import sqlite_utils


@dataclass
class Plan:
    """The repairs ``fix`` would make and the ones it refuses."""

    repairs: list[Repair] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)


def plan(db: sqlite_utils.Database, repo: Path, checks: set[str] | None = None) -> Plan:
    """Every repair the findings of ``db`` (an index of ``repo``) call for."""
    result = Plan()
    found = {row["check"] for row in db.query("SELECT DISTINCT [check] FROM findings")}
    for check in load_checks():
        # view_stale's planner also says when views cannot be made at all.
        wanted = check.id in found or check.id == "view_stale"
        if check.fixer and wanted and (checks is None or check.id in checks):
            for item in planner_of(check.fixer)(db, repo):
                if isinstance(item, Repair):
                    result.repairs.append(item)
                else:
                    result.refusals.append(item)
    _refuse_unsafe(result, db, repo)
    _refuse_conflicts(result)
    return result


def planner_of(module: str) -> Planner:
    """The ``plan`` of a check's fix module (``checks/<id>.py``), imported when used."""
    plan_: Planner = importlib.import_module(module).plan
    return plan_


def _refuse_unsafe(result: Plan, db: sqlite_utils.Database, repo: Path) -> None:
    packets = set(packet_dirs(db))
    kept = []
    for repair in result.repairs:
        reason = _unsafe(repair, repo, packets)
        if reason:
            result.refusals.append(Refusal(repair.check, repair.file, reason))
        else:
            kept.append(repair)
    result.repairs = kept


def _unsafe(repair: Repair, repo: Path, packets: set[str]) -> str | None:
    for path in sorted(repair.paths()):
        parts = path.split("/")
        if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
            return f"{path} is not a path inside the repository"
        if parts[-1] == PACKET_LOCK or parts[-1] == HANDOFF_MANIFEST:
            return f"{path} belongs to a handoff packet: never rewritten"
        if any(p == "" or path == p or path.startswith(p + "/") for p in packets):
            return f"{path} lies in a handoff packet directory, which is immutable once handed on"
        current = repo
        for part in parts[:-1]:  # no directory on the way is a symlink
            current = current / part
            if current.is_symlink():
                return f"{current.relative_to(repo).as_posix()} is a symlink: never followed"
        try:
            mode = os.lstat(repo / path).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{path} cannot be examined ({exc.strerror})"
        if not stat.S_ISREG(mode):
            return f"{path} is a symlink or not a regular file: never followed or replaced"
    return None


def _refuse_conflicts(result: Plan) -> None:
    """A file two repairs want is left to a person: neither repair is done."""
    uses = Counter(path for repair in result.repairs for path in repair.paths())
    kept = []
    for repair in result.repairs:
        shared = sorted(p for p in repair.paths() if uses[p] > 1)
        if shared:
            reason = f"{', '.join(shared)} would be changed by more than one fix: fix it by hand"
            result.refusals.append(Refusal(repair.check, repair.file, reason))
        else:
            kept.append(repair)
    result.repairs = kept


def apply(result: Plan, repo: Path) -> None:
    """Carry out every planned repair; each ends ``applied`` or ``failed: <why>``.

    A repair (its moves and its new content) is one step: Ctrl-C or SIGTERM
    take effect between repairs, never inside one. New content is written
    first into a private directory of this process at the repository's root
    (named and marked as a build's temporary files are, so a killed fix's is
    cleared away by the next), then linked into place."""
    remove_abandoned(repo)  # what a killed fix (or build) of REPO left at its root
    with ExitStack() as stack, _Tree(repo) as tree:
        made: list[str] = []

        def private() -> str:  # made when first needed: most repairs only move files
            if not made:
                made.append(stack.enter_context(temporary_directory("fix", repo)).name)
            return made[0]

        for repair in result.repairs:
            with interrupts.whole():
                try:
                    _apply(repair, tree, private)
                    repair.status = "applied"
                    interrupts.changed(f"repaired {repair.file} [{repair.check}]")
                except OSError as exc:
                    repair.status = f"failed: {exc.strerror or exc} (its files are as they were)"


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Tree:
    """The repository's files, reached through directory descriptors opened one
    path component at a time, never following a symlink: a directory that
    becomes a symlink while fix runs is refused at the moment of the operation
    (the plan's checks are not trusted to still hold)."""

    def __init__(self, root: Path) -> None:
        self.root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def __enter__(self) -> _Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.root)

    @contextmanager
    def directory(self, path: str, create: bool = False) -> Iterator[int]:
        """A descriptor of the directory ``path`` (repository-relative, "" the root)."""
        opened: list[int] = []
        current = self.root
        try:
            walked = []
            for part in path.split("/") if path else []:
                walked.append(part)
                try:
                    current = os.open(part, _DIRECTORY, dir_fd=current)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=current)
                    current = os.open(part, _DIRECTORY, dir_fd=current)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        where = "/".join(walked)
                        why = f"{where} is a symlink or not a directory: never followed"
                        raise OSError(exc.errno, why) from exc
                    raise
                opened.append(current)
            yield current
        finally:
            for fd in opened:
                os.close(fd)

    @contextmanager
    def entry(self, path: str, create: bool = False) -> Iterator[tuple[int, str]]:
        """The descriptor of ``path``'s directory (see ``directory``), and its name there."""
        with self.directory(parent_dir(path), create) as parent:
            yield parent, path.rsplit("/", 1)[-1]

    def move(self, source: str, target: str) -> None:
        """Rename ``source`` to ``target`` without ever replacing what is there."""
        if source == target:
            return
        with self.entry(source) as (src, name), self.entry(target, create=True) as (dst, new):
            if not stat.S_ISREG(os.stat(name, dir_fd=src, follow_symlinks=False).st_mode):
                raise OSError(errno.EINVAL, f"{source} is no longer a regular file")
            # A link fails, rather than replace, if something is there.
            os.link(name, new, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
            os.unlink(name, dir_fd=src)

    def read(self, path: str) -> tuple[bytes, int]:
        """A file's content and permission bits (of the one file opened, never a link)."""
        with self.entry(path) as (parent, name):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=parent)
            with open(fd, "rb") as handle:
                return handle.read(), stat.S_IMODE(os.fstat(fd).st_mode)


def _apply(repair: Repair, tree: _Tree, private: Callable[[], str]) -> None:
    done: list[tuple[str, str]] = []
    try:
        for moved_from, moved_to in repair.also:
            tree.move(moved_from, moved_to)
            done.append((moved_from, moved_to))
        if repair.content is None:
            tree.move(repair.file, repair.final)
            return
        _write(repair, tree, private)
    except OSError:
        for back_to, moved in reversed(done):  # back as it was
            tree.move(moved, back_to)
        raise


def _write(repair: Repair, tree: _Tree, private: Callable[[], str]) -> None:
    """Put the repair's content at ``final`` (in place of ``file``), through a
    temporary file in the private directory; refused if ``file`` changed since
    the plan was made."""
    assert repair.content is not None
    exists = repair.before is not None  # None: no file there when planned
    if exists:
        current, mode = tree.read(repair.file)
        if current != repair.before:
            raise OSError(errno.EAGAIN, f"{repair.file} changed since the fix was planned")
    name = temp_name("fix")
    with tree.directory(private()) as temp_dir:
        # A new file gets the mode any new file gets; a replaced one keeps its own.
        write_new(name, repair.content, mode if exists else None, dir_fd=temp_dir)
        try:
            with tree.entry(repair.final, create=True) as (final_dir, final):
                if exists and repair.final == repair.file:  # the file it was checked to be
                    os.replace(name, final, src_dir_fd=temp_dir, dst_dir_fd=final_dir)
                else:  # a link fails, rather than replace, if something is there
                    os.link(name, final, src_dir_fd=temp_dir, dst_dir_fd=final_dir)
                    if exists:
                        with tree.entry(repair.file) as (src, source):
                            os.unlink(source, dir_fd=src)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(name, dir_fd=temp_dir)
