"""Find the files of a LabNote repository that the index accounts for.

Every file under ``registry/`` is seen (records, schemas, READMEs, generated
views, and stray files that should not be there), plus every handoff manifest,
packet lock and Markdown file (for its links) anywhere in the tree.
Dot-directories (``.git``, ``.venv``) are never entered, and directory
symlinks are never followed (but for a ``registry`` that stays inside the
repository).
"""

from __future__ import annotations

import os
import stat
from array import array
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple, overload

from ..format.rules import GENERATED_VIEWS, HANDOFF_MANIFEST, PACKET_LOCK, template_role
from .paths import INSIDE, FileStat, Sandbox, file_stat, real_place, storable_inode
from .paths import VISIBLE_DOT_DIRECTORIES as VISIBLE_DOT

REGISTRY = "registry"
# The kind of a directory that could not be listed.
UNLISTED = "unlisted_directory"
# The kind of a symlink to a directory that is reported, not followed.
SYMLINKED_DIRECTORY = "symlinked_directory"


class DiscoveredFile(NamedTuple):  # a tuple: one is made for every file, every build
    """One file the walk found: its path, its kind, and its stat."""

    path: str  # repository-relative, "/"-separated
    kind: str  # record, schema, readme, view, placeholder, stray, handoff_manifest,
    # packet_lock, handoff_template, markdown (a .md file outside registry/),
    # UNLISTED or SYMLINKED_DIRECTORY
    stat: FileStat | None = None  # of the path itself, when the walk saw it


KINDS = (
    "record",
    "schema",
    "readme",
    "view",
    "placeholder",
    "stray",
    "handoff_manifest",
    "packet_lock",
    "handoff_template",
    "markdown",
    UNLISTED,
    SYMLINKED_DIRECTORY,
)
_KIND_NUMBER = {kind: n for n, kind in enumerate(KINDS)}
_HAS_STAT, _IS_LINK, _IS_REGULAR = 1, 2, 4


class FoundFiles(Sequence[DiscoveredFile]):
    """Files found, held as parallel arrays: a DiscoveredFile each is made when
    asked for. A repository of 435,000 records has 455,000 files, which took
    150 MB as tuples (a path, a kind and a stat each); this holds them in half
    that, and a slice pickles small for a worker."""

    def __init__(self, files: Iterable[DiscoveredFile] = ()) -> None:
        self.paths: list[str] = []
        self.kinds = bytearray()
        self.flags = bytearray()
        self.sizes = array("q")
        self.mtimes = array("q")
        self.ctimes = array("q")
        self.inodes = array("q")
        for found in files:
            self.append(found)

    def append(self, found: DiscoveredFile) -> None:
        """Add one file (kept as compact arrays, not a tuple each)."""
        self.paths.append(found.path)
        self.kinds.append(_KIND_NUMBER[found.kind])
        key = found.stat
        if key is None:
            self.flags.append(0)
            self.sizes.append(0)
            self.mtimes.append(0)
            self.ctimes.append(0)
            self.inodes.append(0)
        else:
            flags = _HAS_STAT | (_IS_LINK if key.is_link else 0)
            self.flags.append(flags | (_IS_REGULAR if key.is_regular else 0))
            self.sizes.append(key.size)
            self.mtimes.append(key.mtime_ns)
            self.ctimes.append(key.ctime_ns)
            self.inodes.append(key.inode)

    def append_stat(self, path: str, kind: str, st: os.stat_result) -> None:
        """Add one file as an lstat found it: what ``append`` keeps of its
        FileStat, without making one (or a DiscoveredFile) for each of the
        90,000 files the walk lists at the benchmark's size."""
        mode = st.st_mode
        self.paths.append(path)
        self.kinds.append(_KIND_NUMBER[kind])
        flags = _HAS_STAT | (_IS_LINK if stat.S_ISLNK(mode) else 0)
        self.flags.append(flags | (_IS_REGULAR if stat.S_ISREG(mode) else 0))
        self.sizes.append(st.st_size)
        self.mtimes.append(st.st_mtime_ns)
        self.ctimes.append(st.st_ctime_ns)
        self.inodes.append(storable_inode(st.st_ino))

    def regular(self, kind: str) -> list[int]:
        """The positions of the files of ``kind`` that were seen as regular
        files, not symlinks, with their stat kept."""
        number, plain = _KIND_NUMBER[kind], _HAS_STAT | _IS_REGULAR
        return [
            at
            for at, (k, flags) in enumerate(zip(self.kinds, self.flags, strict=True))
            if k == number and flags == plain
        ]

    def weighed(self, per_kind: dict[str, int], per_byte_plus: int) -> array[int]:
        """A weight for each file, from the arrays (no DiscoveredFile made for
        each): ``per_kind`` for a file of a kind it names, otherwise its size (0
        where it has no stat) plus ``per_byte_plus``."""
        fixed = {_KIND_NUMBER[kind]: weight for kind, weight in per_kind.items()}
        return array(
            "q",
            [
                fixed.get(kind, size + per_byte_plus)
                for kind, size in zip(self.kinds, self.sizes, strict=True)
            ],
        )

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, index: int) -> DiscoveredFile: ...

    @overload
    def __getitem__(self, index: slice) -> FoundFiles: ...

    def __getitem__(self, index: int | slice) -> DiscoveredFile | FoundFiles:
        if isinstance(index, slice):
            part = FoundFiles()
            part.paths, part.kinds, part.flags = (
                self.paths[index],
                self.kinds[index],
                self.flags[index],
            )
            part.sizes, part.mtimes = self.sizes[index], self.mtimes[index]
            part.ctimes, part.inodes = self.ctimes[index], self.inodes[index]
            return part
        flags = self.flags[index]
        key = None
        if flags & _HAS_STAT:
            key = FileStat(
                self.sizes[index],
                self.mtimes[index],
                bool(flags & _IS_LINK),
                bool(flags & _IS_REGULAR),
                self.ctimes[index],
                self.inodes[index],
            )
        return DiscoveredFile(self.paths[index], KINDS[self.kinds[index]], key)

    def sorted(self) -> FoundFiles:
        """The same files in path order."""
        order = sorted(range(len(self.paths)), key=self.paths.__getitem__)
        ordered = FoundFiles()
        if not order:
            return ordered
        # Each array taken in that order by one call in C (a loop in Python
        # over 90,000 files was a sixth of the walk).
        take = itemgetter(*order) if len(order) > 1 else lambda values: (values[order[0]],)
        ordered.paths = list(take(self.paths))
        ordered.kinds, ordered.flags = bytearray(take(self.kinds)), bytearray(take(self.flags))
        ordered.sizes, ordered.mtimes = array("q", take(self.sizes)), array("q", take(self.mtimes))
        ordered.ctimes, ordered.inodes = (
            array("q", take(self.ctimes)),
            array("q", take(self.inodes)),
        )
        return ordered


def classify(path: str) -> str:
    """The kind of a repository-relative path."""
    name = path.rsplit("/", 1)[-1]
    if name == HANDOFF_MANIFEST:
        return "handoff_manifest" if template_role(path) is None else "handoff_template"
    if name == PACKET_LOCK:
        return "packet_lock"
    if not path.startswith(REGISTRY + "/"):
        if name.endswith(".md"):
            return "markdown"  # its links are checked
        return "record"  # only reached for files named on the command line
    if path in GENERATED_VIEWS:
        return "view"
    if path == f"{REGISTRY}/README.md":
        return "readme"  # only at the registry root: anywhere else, a stray file
    if name == ".gitkeep":
        return "placeholder"
    if path.startswith(f"{REGISTRY}/schemas/") or name.endswith(".schema.json"):
        return "schema"
    if name.endswith(".json"):
        return "record"
    return "stray"  # includes an upper-case .JSON


# Outside registry/, a symlinked directory is reported (never followed) where a
# handoff packet could hide behind it.
_WORKFLOW = "docs/workflow/"


def _reported_link(rel: str, in_registry: bool) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return in_registry or name.startswith("packet-v") or rel.startswith(_WORKFLOW)


def discover(
    repo: Path,
    entered: Callable[[str], None] | None = None,
    excluded: Callable[[str], bool] | None = None,
    when_many: tuple[int, Callable[[], object]] | None = None,
) -> FoundFiles:
    """Every file of the repository that the index accounts for, in path order.

    ``entered`` is told each directory walked into (repository-relative, ""
    for the root): reached without following a symlink, each lies inside.
    ``registry`` itself may be a symlink to a directory inside the repository
    (it is followed); one that leads outside is reported, never read.
    Directories are walked with a stack, not recursion: nesting is the
    repository's to choose. A path ``excluded`` says yes to (a file, or a
    directory and all it holds) is left out, as if it were not there.
    ``when_many`` (a count, a call) is called once, as soon as the walk has found
    that many files (a full build starts its workers' server then, so that the
    server has its imports done when the read begins).
    """
    found = FoundFiles()
    root = os.path.realpath(repo)
    _walk(found, [(str(repo), "", False)], root, entered, excluded, when_many)
    return found.sorted()  # by path: no two files share one


def discover_named(
    repo: Path,
    files: Iterable[str],
    directories: Iterable[str] = (),
    excluded: Callable[[str], bool] | None = None,
) -> FoundFiles:
    """What ``discover`` would find of these paths alone (repository-relative):
    each of ``files`` as the walk would list it, or nothing where the walk would
    not (gone, a directory, inside a dot-directory, excluded), and everything
    below each of ``directories`` ("x/"), walked. In path order."""
    found, sandbox = FoundFiles(), Sandbox(repo)
    root = str(sandbox.root)
    start: list[tuple[str, str, bool]] = []
    walked: list[str] = []  # each directory once, and what is below it by its walk only
    for rel_dir in sorted(d.rstrip("/") + "/" for d in directories):
        if not (walked and rel_dir.startswith(walked[-1])):
            walked.append(rel_dir)
    for rel_dir in (d[:-1] for d in walked):
        try:  # one gone since (or no longer a directory) is not walked: it is not there
            if not stat.S_ISDIR(os.lstat(os.path.join(repo, rel_dir)).st_mode):
                continue
        except OSError:
            continue
        if _reachable(rel_dir, excluded, is_dir=True) and sandbox.direct(rel_dir):
            start.append((os.path.join(repo, rel_dir), rel_dir + "/", _in_registry(rel_dir)))
    _walk(found, start, root, None, excluded)
    below = tuple(walked)
    for rel in set(files):
        if rel.startswith(below) or not _reachable(rel, excluded, is_dir=False):
            continue
        if not sandbox.direct(rel.rpartition("/")[0]):
            continue  # beyond a symlinked directory, which the walk never follows
        full = os.path.join(repo, rel)
        try:
            st = os.lstat(full)
        except OSError:
            continue  # gone: the comparison with the index says so
        if stat.S_ISDIR(st.st_mode):
            continue
        rel_top, _, name = rel.rpartition("/")
        named = _Named(full, name, st)
        _entry(found, named, rel_top + "/" if rel_top else "", _in_registry(rel_top), root, None)
    return found.sorted()


def _in_registry(rel_dir: str) -> bool:
    """Whether a directory is the registry or lies in it (as the walk marks it)."""
    return rel_dir == REGISTRY or rel_dir.startswith(REGISTRY + "/")


def _reachable(rel: str, excluded: Callable[[str], bool] | None, is_dir: bool) -> bool:
    """Whether the walk would reach ``rel``: no dot-directory on the way (but those
    the root keeps visible), nothing on the way excluded."""
    parts = rel.split("/")
    directories = parts if is_dir else parts[:-1]
    for n, part in enumerate(directories):
        if part.startswith(".") and not (n == 0 and part in VISIBLE_DOT):
            return False
    return excluded is None or not any(
        excluded("/".join(parts[: n + 1])) for n in range(len(parts))
    )


class _Named:
    """A path named, looked at as the walk's os.DirEntry is (lstat'ed once)."""

    def __init__(self, path: str, name: str, st: os.stat_result) -> None:
        self.path, self.name, self._st = path, name, st

    def is_dir(self, follow_symlinks: bool = True) -> bool:
        return stat.S_ISDIR(self._st.st_mode)

    def is_symlink(self) -> bool:
        return stat.S_ISLNK(self._st.st_mode)

    def stat(self, follow_symlinks: bool = True) -> os.stat_result:
        return self._st


def _walk(
    found: FoundFiles,
    pending: list[tuple[str, str, bool]],
    root: str,
    entered: Callable[[str], None] | None,
    excluded: Callable[[str], bool] | None,
    when_many: tuple[int, Callable[[], object]] | None = None,
) -> None:
    """Walk the directories ``pending`` (each: its path, its repository-relative
    name with a "/", whether it is in the registry) and all below them."""
    while pending:
        when_many = _tell_many(found, when_many)
        directory, rel_top, in_registry = pending.pop()
        if entered:
            entered(rel_top[:-1])
        try:
            entries = os.scandir(directory)
        except OSError:
            if not rel_top:
                raise  # the repository itself
            # Whatever it holds is unseen: the directory itself is reported.
            found.append(DiscoveredFile(rel_top[:-1], UNLISTED))
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if excluded is not None and excluded(rel_top + name):
                    continue
                # The common case, a regular file, decided here (as _entry would):
                # no call, no tuple made, for each of the walk's 90,000 files.
                if not entry.is_file(follow_symlinks=False):
                    _entry(found, entry, rel_top, in_registry, root, pending)
                elif _listed(name, in_registry, is_link=False):
                    rel = rel_top + name
                    try:
                        found.append_stat(rel, classify(rel), entry.stat(follow_symlinks=False))
                    except OSError:  # gone since the listing: the loader says so
                        found.append(DiscoveredFile(rel, classify(rel)))
    _tell_many(found, when_many)


def _tell_many(
    found: FoundFiles, when_many: tuple[int, Callable[[], object]] | None
) -> tuple[int, Callable[[], object]] | None:
    """Call ``when_many``'s call if the walk has found that many files; what is
    still to be told (None once told)."""
    if when_many is not None and len(found) >= when_many[0]:
        when_many[1]()
        return None
    return when_many


def _listed(name: str, in_registry: bool, is_link: bool) -> bool:
    """Whether a file (not a directory) of this name is listed: all of the
    registry, and anywhere a handoff manifest, a packet lock, or a Markdown
    file, whose links are read from the file itself (through a symlink they
    would be another file's, so a symlink is not listed)."""
    return (
        in_registry
        or name in (HANDOFF_MANIFEST, PACKET_LOCK)
        or (name.endswith(".md") and not is_link)
    )


def _entry(
    found: FoundFiles,
    entry: Any,
    rel_top: str,
    in_registry: bool,
    root: str,
    pending: list[tuple[str, str, bool]] | None,
) -> None:
    """One entry of a directory, as the index accounts for it: a directory to walk
    (into ``pending``; None: not walked), or a file listed with its kind and stat."""
    name = entry.name
    rel = rel_top + name
    if entry.is_dir(follow_symlinks=False):
        if pending is not None and (
            not name.startswith(".") or (not rel_top and name in VISIBLE_DOT)
        ):
            pending.append((entry.path, rel + "/", in_registry or rel == REGISTRY))
        return
    is_link = entry.is_symlink()
    if is_link and rel == REGISTRY and _inside_dir(entry.path, root):
        if pending is not None:
            pending.append((entry.path, rel + "/", True))  # followed: it stays inside
        return
    linked_dir = is_link and _is_dir(entry.path)
    listed = _listed(name, in_registry, is_link)
    if linked_dir and (rel == REGISTRY or _reported_link(rel, False)):
        listed = True  # a registry or packet behind a link: reported
    if listed:
        try:
            key = file_stat(entry.stat(follow_symlinks=False))
        except OSError:  # gone since the listing: the loader says so
            key = None
        kind = SYMLINKED_DIRECTORY if linked_dir else classify(rel)
        found.append(DiscoveredFile(rel, kind, key))


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except OSError:
        return False


def _inside_dir(link: str, root: str) -> bool:
    """Whether a symlink leads to a directory strictly inside the repository."""
    real = os.path.realpath(link)
    return real != root and _is_dir(real) and real_place(real, root) == INSIDE


def named_files(paths: list[str]) -> list[DiscoveredFile]:
    """The files named on the command line, relative to the repository root."""
    seen: dict[str, DiscoveredFile] = {}
    for raw in paths:
        rel = Path(raw).as_posix()  # Path drops a leading "./"
        seen.setdefault(rel, DiscoveredFile(rel, classify(rel)))
    return list(seen.values())
