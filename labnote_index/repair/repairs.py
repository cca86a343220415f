"""Mechanical repairs: plan them from the findings of an index, show them, apply them.

Each repair belongs to one check (its SQL header says ``-- fix: ...``) and is
planned from the index, never guessed: a value that cannot be derived is left
and reported. Planning writes nothing. A repair edits only the JSON tokens it
is about, and the edited file must read back to the same values elsewhere.
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

import difflib
import errno
import json
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from .. import interrupts
from ..format.models import RFC3339_RE
from ..format.rules import HANDOFF_MANIFEST, LEGACY_FIELDS, PACKET_LOCK, RECORD_TYPE_BY_DIRECTORY
from ..index.files import packet_dirs
from ..index.registry_views import commits_views, refusal, unreadable_records
from ..index.tempfiles import remove_abandoned, temp_name, temporary_directory, write_new
from ..read.parse import UTF8_BOM, parse_json_bytes, top_level_members
from ..text import parent_dir, shown

# A file name an ID may become: no separator, nothing hidden, and short enough
# for every file system (255 bytes, ".json" included).
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,249}$")
# Problems that re-writing a record would silently settle (a human decision).
_UNSETTLED = ("duplicate_key", "number_out_of_range", "lone_surrogate")


@dataclass
class Repair:
    """What one fix does to one file: moves, then (maybe) new content at ``final``."""

    check: str
    file: str  # the file the repair is for, repository-relative
    final: str  # where it ends up
    content: bytes | None = None  # its new content (None: unchanged)
    before: bytes | None = None  # its content now (None: no file there yet)
    also: list[tuple[str, str]] = field(default_factory=list)  # other files moved with it
    notes: list[str] = field(default_factory=list)  # what was left, and why
    status: str = "planned"  # planned, applied, failed: <why>

    def paths(self) -> set[str]:
        """Every repository path this repair touches."""
        return {self.file, self.final, *(p for move in self.also for p in move)}

    def describe(self) -> str:
        """``rename a -> b`` lines and a unified diff of the content, as text."""
        lines = [f"rename {shown(a)} -> {shown(b)}" for a, b in self.also]
        if self.final != self.file:
            lines.append(f"rename {shown(self.file)} -> {shown(self.final)}")
        if self.content is not None:
            old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
            new = self.content.decode("utf-8", "replace").splitlines(keepends=True)
            diff = difflib.unified_diff(old, new, f"a/{self.file}", f"b/{self.final}")
            lines += [shown(line.rstrip("\n")) for line in diff]
        lines += [f"left: {shown(note)}" for note in self.notes]
        return "\n".join(lines)


@dataclass
class Refusal:
    """A finding ``fix`` will not repair, and why."""

    check: str
    file: str
    reason: str


@dataclass
class Plan:
    """The repairs ``fix`` would make and the ones it refuses."""

    repairs: list[Repair] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)


Planner = Callable[[sqlite_utils.Database, Path], Iterator[Repair | Refusal]]
PLANNERS: dict[str, Planner] = {}


def planner(check: str) -> Callable[[Planner], Planner]:
    """Register the decorated function as the planner of ``check``'s repairs."""

    def register(func: Planner) -> Planner:
        PLANNERS[check] = func
        return func

    return register


def plan(db: sqlite_utils.Database, repo: Path, checks: set[str] | None = None) -> Plan:
    """Every repair the findings of ``db`` (an index of ``repo``) call for."""
    result = Plan()
    found = {row["check"] for row in db.query("SELECT DISTINCT [check] FROM findings")}
    for check, make in PLANNERS.items():
        # view_stale's planner also says when views cannot be made at all.
        if (check in found or check == "view_stale") and (checks is None or check in checks):
            for item in make(db, repo):
                if isinstance(item, Repair):
                    result.repairs.append(item)
                else:
                    result.refusals.append(item)
    _refuse_unsafe(result, db, repo)
    _refuse_conflicts(result)
    return result


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


def _read(repo: Path, path: str) -> bytes:
    return (repo / path).read_bytes()


def _renamed(check: str, file: str, final: str, repo: Path) -> Repair | Refusal:
    """A move of ``file`` to ``final``, unless something is there already."""
    try:
        os.lstat(repo / final)
    except FileNotFoundError:
        return Repair(check, file, final)
    except OSError as exc:
        return Refusal(check, file, f"{final} cannot be examined ({exc.strerror})")
    return Refusal(check, file, f"{final} exists already")


def _token_edit(
    raw: bytes,
    *,
    keys: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
    first: dict[str, Any] | None = None,
) -> bytes | str:
    """``raw`` with only the JSON tokens a repair is about changed: the keys named
    in ``keys`` renamed, the values of those in ``values`` written anew, the
    members ``first`` put before all others; every other byte as it was.

    The result is read back and must hold the same values as before everywhere
    else, or the edit is refused: the reason (str) instead of the bytes."""
    keys, values, first = keys or {}, values or {}, first or {}
    bom = raw.startswith(UTF8_BOM)
    text = raw[len(UTF8_BOM) :].decode("utf-8") if bom else raw.decode("utf-8")
    members = top_level_members(text)
    if members is None:
        return "not one JSON object"
    written = Counter(m.key for m in members)
    twice = sorted(k for k in {*keys, *values} if written[k] > 1)
    if twice:
        return f"{', '.join(twice)} is written more than once"
    edits: list[tuple[int, int, str]] = []
    for m in members:
        if m.key in keys:
            edits.append((m.key_start, m.key_end, _token(keys[m.key])))
        if m.key in values:
            edits.append((m.value_start, m.value_end, _token(values[m.key])))
    if first:
        opening = text.index("{") + 1
        gap = text[opening : members[0].key_start] if members else ""
        head = (", " if not gap else "," + gap).join(
            f"{_token(k)}: {_token(v)}" for k, v in first.items()
        )
        at = members[0].key_start if members else opening
        edits.append((at, at, head + ("," + (gap or " ") if members else "")))
    for start, end, token in sorted(edits, reverse=True):
        text = text[:start] + token + text[end:]
    content = (UTF8_BOM if bom else b"") + text.encode("utf-8")
    before, _, _, _ = parse_json_bytes(raw, fast=False)
    after, error, _, _ = parse_json_bytes(content, fast=False)
    expected = {**first, **{keys.get(k, k): values.get(k, v) for k, v in before.items()}}
    if error or after != expected:
        return "the edit would change more than its field"
    return content


def _token(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---- the fixes, one per check


@planner("json_strict")
def _strip_bom(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    for row in db.query(
        "SELECT DISTINCT file FROM validation_errors WHERE error_type = 'encoding_bom'"
    ):
        raw = _read(repo, row["file"])
        if raw.startswith(UTF8_BOM):
            content = raw[len(UTF8_BOM) :]
            yield Repair("json_strict", row["file"], row["file"], content, raw)


@planner("legacy_spelling")
def _canonical_names(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    files = [r["file"] for r in db.query("SELECT DISTINCT file FROM legacy_fields ORDER BY file")]
    for file in files:
        raw = _read(repo, file)
        data, error, problems, _ = parse_json_bytes(raw)
        unsettled = [p.error_type for p in problems if p.error_type in _UNSETTLED]
        if error or not isinstance(data, dict) or unsettled:
            why = error or ", ".join(unsettled) or "not one JSON object"
            yield Refusal("legacy_spelling", file, f"cannot be rewritten safely ({why})")
            continue
        parts = file.split("/")
        directory = RECORD_TYPE_BY_DIRECTORY.get(parts[1]) if len(parts) > 2 else None
        record_type = data.get("record_type")
        rt = directory if record_type is None else None
        name = record_type if isinstance(record_type, str) else (rt.name if rt else None)
        keys: dict[str, str] = {}
        first: dict[str, Any] = {}
        notes = []
        if "record_type" not in data:
            if rt is None:
                notes.append("record_type: the directory does not say which; add it by hand")
            else:
                first["record_type"] = rt.name
                if "schema_version" not in data:
                    first["schema_version"] = 1
        for key, value in data.items():
            legacy = LEGACY_FIELDS.get(key)
            if legacy is None or name not in legacy[0] or key in first:
                continue
            canonical = legacy[1]
            if canonical in data or canonical in first:
                notes.append(
                    f"{key}: {canonical} is there too; which one stands is a person's call"
                )
            elif canonical == "created_at" and not (
                isinstance(value, str) and RFC3339_RE.fullmatch(value)
            ):
                notes.append(f"{key}: {value!r} is not an RFC 3339 timestamp for {canonical}")
            else:
                keys[key] = canonical
        if not keys and not first:
            yield Refusal("legacy_spelling", file, "; ".join(notes) or "nothing to derive")
            continue
        content = _token_edit(raw, keys=keys, first=first)
        if isinstance(content, str):
            yield Refusal("legacy_spelling", file, f"cannot be rewritten safely ({content})")
            continue
        yield Repair("legacy_spelling", file, file, content, raw, notes=notes)


@planner("lifecycle_bucket")
def _into_bucket(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    rows = db.query(
        """
        SELECT DISTINCT r.file, r.record_type, b.bucket, t.directory, t.artifact_prefix,
               t.artifact_field, r.artifact_path
        FROM findings f
        JOIN records r ON r.file = f.file
        JOIN record_types t ON t.record_type = r.record_type
        JOIN status_buckets b ON b.record_type = r.record_type AND b.status = r.status
        WHERE f.[check] = 'lifecycle_bucket'
        ORDER BY r.file
        """
    )
    for row in rows:
        file, bucket = row["file"], row["bucket"]
        parts = file.split("/")
        if len(parts) != 4 or parts[:2] != ["registry", row["directory"]]:
            reason = f"not in a bucket directory of registry/{row['directory']}/: move it by hand"
            yield Refusal("lifecycle_bucket", file, reason)
            continue
        final = f"registry/{row['directory']}/{bucket}/{parts[3]}"
        repair = Repair("lifecycle_bucket", file, final)
        artifact, prefix = row["artifact_path"], row["artifact_prefix"] or ""
        if artifact and "{bucket}" in prefix:
            head = prefix.split("{bucket}")[0]
            rest = artifact[len(head) :].split("/", 1)
            moved = f"{head}{bucket}/{rest[1]}" if len(rest) == 2 else None
            if moved and (repo / moved).exists() and moved != artifact:
                yield Refusal("lifecycle_bucket", file, f"{moved} exists already")
                continue
            if (
                artifact.startswith(head)
                and moved
                and moved != artifact
                and (repo / artifact).is_file()
            ):
                raw = _read(repo, file)
                content = _token_edit(raw, values={row["artifact_field"]: moved})
                if isinstance(content, str):
                    reason = f"{row['artifact_field']}: {content}; fix it by hand"
                    yield Refusal("lifecycle_bucket", file, reason)
                    continue
                repair.also.append((artifact, moved))
                repair.content, repair.before = content, raw
        if repair.final == file and not repair.also:
            reason = f"its artifact {artifact} is not in a bucket directory that can be moved"
            yield Refusal("lifecycle_bucket", file, reason)
            continue
        if (repo / repair.final).exists() and repair.final != file:
            yield Refusal("lifecycle_bucket", file, f"{repair.final} exists already")
            continue
        yield repair


@planner("location_filename")
def _name_after_id(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    rows = db.query(
        "SELECT DISTINCT r.file, r.record_id FROM findings f JOIN records r ON r.file = f.file "
        "WHERE f.[check] = 'location_filename' ORDER BY r.file"
    )
    for row in rows:
        file, record_id = row["file"], row["record_id"]
        if not _FILE_NAME.fullmatch(record_id or ""):
            why = "is too long for" if len(record_id or "") > 250 else "cannot be"
            yield Refusal("location_filename", file, f"{record_id!r} {why} a file name")
            continue
        directory = parent_dir(file)
        final = f"{directory}/{record_id}.json" if directory else f"{record_id}.json"
        yield _renamed("location_filename", file, final, repo)


@planner("location_year_dir")
def _into_year(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    rows = db.query(
        "SELECT DISTINCT r.file, substr(r.created_at, 1, 4) AS year, "
        "EXISTS (SELECT 1 FROM findings d WHERE d.file = r.file "
        "        AND d.[check] = 'location_id_date') AS disputed "
        "FROM findings f JOIN records r ON r.file = f.file "
        "WHERE f.[check] = 'location_year_dir' ORDER BY r.file"
    )
    for row in rows:
        file, parts = row["file"], row["file"].split("/")
        if row["disputed"]:
            # The year to move to is created_at's, which location_id_date says
            # disagrees with the ID: which of the two is wrong is for a person.
            yield Refusal(
                "location_year_dir",
                file,
                "its created_at disagrees with its ID's date (location_id_date): correct "
                "whichever is wrong first; the record is not moved on a date in dispute",
            )
            continue
        if len(parts) != 4 or parts[0] != "registry":
            yield Refusal("location_year_dir", file, "not in a year directory: move it by hand")
            continue
        final = "/".join([*parts[:2], row["year"], parts[3]])
        yield _renamed("location_year_dir", file, final, repo)


@planner("view_stale")
def _regenerate_views(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    unreadable = unreadable_records(db)
    if unreadable and commits_views(db):
        yield Refusal("view_stale", "registry/", refusal(unreadable))
        return
    rows = db.query(
        "SELECT g.path, g.content FROM findings f JOIN generated_views g ON g.path = f.file "
        "WHERE f.[check] = 'view_stale' ORDER BY g.path"
    )
    for row in rows:
        path = repo / row["path"]
        before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        yield Repair("view_stale", row["path"], row["path"], row["content"].encode(), before)
