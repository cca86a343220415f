"""The generated compatibility views: six CSV registries and registry/INDEX.md.

Made from the canonical records exactly as docs/views.md gives the reference
generator's format, byte for byte, so that a repository whose
views the reference generator made stays current. They are computed from the
JSON as read, like the reference generator, not from the typed columns: a
legacy or invalid record is rendered as it is written. That JSON comes from an
index (``record_json``: ``render_views``) or straight from the repository's
files (``read/records.py``: ``repository_views``, for ``views`` without
``--db``); the tests hold the two equal.
"""

from __future__ import annotations

import csv
import hashlib
import heapq
import io
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RecordsUnreadable, ViewPathError
from ..format.rules import RECORD_TYPES, RecordType
from ..progress import SILENT, Progress
from ..read.discover import discover
from ..read.parse import MAX_TEXT, hash_file, universal_newlines, without_surrogates
from ..read.paths import Sandbox, leads_inside
from ..read.records import registry_records
from ..read.repository import check_repository

if TYPE_CHECKING:  # the views of a repository are made without an index (repository_views)
    import sqlite_utils

_COLUMN_SPECS = {
    "packet": "packet_id date created_at created_by deposited_by content_origin source_note "
    "source_session target_session topic status path response_expected response_packet_id "
    "tags notes",
    "response": "response_id date created_at created_by deposited_by content_origin source_note "
    "responding_session source_packet_id status path accepted_by decision_at tags notes",
    "message": "message_id date created_at from_visitor_id to_visitor_id to_group status path "
    "reply_to reply_expected response_message_id needs_human_relay related_packet "
    "related_response summary tags notes",
    "notification": "notification_id date created_at from_visitor_id to_visitor_id message_id "
    "status path needs_human_action summary notes",
    "visit": "visit_id date created_at visitor_id session_family checked_messages "
    "answered_messages created_messages relay_needed signoff_path notes",
    "visitor": "visitor_id date created_at session_family session_type display_name status "
    "last_seen profile_path notes",
}
# Columns of each CSV registry, in order (VIEWS.md).
COLUMNS: dict[str, list[str]] = {name: spec.split() for name, spec in _COLUMN_SPECS.items()}

INDEX_HEADER = (
    "# Registry Index\n\n"
    "> Generated from canonical JSON records by scripts/generate_registry_views.py; "
    "do not edit manually.\n\n"
)


def cell(value: Any) -> str:
    """A value as the generated CSV views write it (VIEWS.md)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "|".join(cell(item) for item in value)
    return str(value)


# The canonical records of a record type, in the views' order: from an index, or
# from the repository's files read directly (repository_views).
Canonical = Callable[[RecordType], Iterable[str]]


def _canonical(db: sqlite_utils.Database) -> Canonical:
    """The JSON text of the records under registry/<type-dir>/ (any depth) whose
    record_type is the type's, by ID, then file (SQLite's binary order of UTF-8
    is Python's string order), as the index holds them."""

    def of_type(rt: RecordType) -> Iterator[str]:
        prefix = f"registry/{rt.directory}/"
        for row in db.query(
            "SELECT j.json FROM record_json j JOIN records r ON r.file = j.file "
            "WHERE substr(j.file, 1, ?) = ? AND r.record_type = ? ORDER BY r.record_id, r.file",
            [len(prefix), prefix, rt.name],
        ):
            yield row["json"]

    return of_type


def _records(texts: Iterable[str], rt: RecordType) -> Iterator[dict[str, Any]]:
    """The records of these JSON texts that say they are of ``rt``'s type (a
    legacy record without record_type is in no view), as the views read them."""
    for text in texts:
        data = without_surrogates(json.loads(text), text)
        if data.get("record_type") == rt.name:
            yield data


def render_csv(
    records: Iterable[dict[str, Any]], columns: list[str], kept: Sequence[list[str]] = ()
) -> tuple[str, int]:
    """The CSV text and the number of rows in it: the records' rows, and ``kept``
    (rows taken as committed, for records that cannot be read) in ID order among them."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    count = 0

    def rows() -> Iterator[list[str]]:
        for data in records:
            created = data.get("created_at")
            yield [
                (str(created)[:10] if created is not None else "")
                if column == "date"
                else cell(data.get(column))
                for column in columns
            ]

    for row in heapq.merge(rows(), sorted(kept), key=lambda r: r[0] if r else ""):
        count += 1
        writer.writerow(row)
    return out.getvalue(), count


def render_index(
    counts: dict[str, int], tags: list[dict[str, Any]], kept: Sequence[str] = ()
) -> str:
    """The generated registry/INDEX.md: record counts and the tags table (with
    ``kept``, committed lines of tags that cannot be read, in slug order among them)."""
    lines = [INDEX_HEADER + "## Record Counts\n", "| Record type | Count |", "| --- | ---: |"]
    lines += [f"| {name} | {counts[name]} |" for name in RECORD_TYPES]
    lines += [
        "",
        "## Tags",
        "",
        "| Tag | Status | Scope | Description |",
        "| --- | --- | --- | --- |",
    ]

    def rows() -> Iterator[str]:
        for tag in tags:
            description = cell(tag.get("description")).replace("|", "\\|")
            yield (
                f"| {cell(tag.get('tag_slug'))} | {cell(tag.get('status'))} | "
                f"{cell(tag.get('scope'))} | {description} |"
            )

    lines += heapq.merge(rows(), sorted(kept, key=_tag_slug), key=_tag_slug)
    return "\n".join(lines) + "\n"


def _tag_slug(line: str) -> str:
    return line[2:].split(" |", 1)[0]


def render_views(db: sqlite_utils.Database, kept: Kept | None = None) -> dict[str, str]:
    """Every view, keyed by its repository path (with ``kept``, the committed rows
    of records that cannot be read)."""
    return _render(_canonical(db), kept or Kept())


def repository_views(
    repo: Path, excluded: Callable[[str], bool] | None = None, progress: Progress | None = None
) -> dict[str, str]:
    """The views the records of ``repo`` make, read from its files with no index
    (the paths ``excluded`` tells left out, as a build leaves them): the same as an
    index of it gives (``current_views``), and RecordsUnreadable alike. ``progress``
    is told of the record files read."""
    check_repository(repo)
    sandbox = Sandbox(repo)
    found = discover(repo, sandbox.entered, excluded)
    read = registry_records(sandbox, found, progress or SILENT)
    if read.unreadable:
        raise RecordsUnreadable(refusal(read.unreadable))

    def of_type(rt: RecordType) -> Iterator[str]:
        for _, _, text in read.of_type(rt.name):
            yield text

    return _render(of_type, Kept())


def _render(canonical: Canonical, kept: Kept) -> dict[str, str]:
    views: dict[str, str] = {}
    counts: dict[str, int] = {}
    tags: list[dict[str, Any]] = []
    for rt in RECORD_TYPES.values():
        if rt.views_file:
            rows = kept.rows.get(rt.name, [])
            records = _records(canonical(rt), rt)
            content, counts[rt.name] = render_csv(records, COLUMNS[rt.name], rows)
            views[f"registry/{rt.views_file}"] = content
        else:
            tags = list(_records(canonical(rt), rt))
            counts[rt.name] = len(tags) + len(kept.tag_lines)
    views["registry/INDEX.md"] = render_index(counts, tags, kept.tag_lines)
    return views


@dataclass
class Kept:
    """The committed views' rows of records that cannot be read: a view is compared
    on every other row, so one broken file hides no second, unrelated defect."""

    rows: dict[str, list[list[str]]] = field(default_factory=dict)  # record type -> CSV rows
    tag_lines: list[str] = field(default_factory=list)  # INDEX.md lines


def kept_rows(db: sqlite_utils.Database, sandbox: Sandbox) -> Kept:
    """The rows the committed views give the records that cannot be read (found by
    their IDs, the names their files give them); a view that cannot be read as
    text keeps nothing, and so stays stale while a row is missing."""
    kept = Kept()
    unreadable: dict[str, set[str]] = {}
    for row in db.query("SELECT record_type, record_id FROM records WHERE unreadable"):
        unreadable.setdefault(row["record_type"], set()).add(row["record_id"])
    for name, ids in unreadable.items():
        rt = RECORD_TYPES[name]
        path = f"registry/{rt.views_file}" if rt.views_file else "registry/INDEX.md"
        text = _committed_text(sandbox, path)
        if text is None:
            continue
        if rt.views_file:
            rows = csv.reader(io.StringIO(text, newline=""))
            kept.rows[name] = [r for r in rows if r and r[0] in ids]
        else:
            lines = text.split("\n")
            kept.tag_lines = [ln for ln in lines if ln.startswith("| ") and _tag_slug(ln) in ids]
    return kept


def _committed_text(sandbox: Sandbox, path: str) -> str | None:
    """A committed view's text (line endings as \\n), read as the loader reads it:
    never through a symlink or a second name."""
    full = sandbox.path(path)
    try:
        if os.path.islink(full):
            return None
        hashed = hash_file(full, keep_up_to=MAX_TEXT)
    except OSError:
        return None
    if hashed.content is None or hashed.links != 1:
        return None
    return universal_newlines(hashed.content).decode("utf-8", errors="replace")


def commits_views(db: sqlite_utils.Database) -> bool:
    """Whether the indexed repository commits its views (any of them): only then
    are they worked out at build time, checked for staleness and fixed."""
    return bool(db.table("files").count_where("kind = 'view'"))


def unreadable_records(db: sqlite_utils.Database) -> list[str]:
    """Record files the index could not read: each would be a row of a view."""
    sql = "SELECT path FROM files WHERE kind = 'record' AND error IS NOT NULL ORDER BY path"
    return [row["path"] for row in db.query(sql)]


def refusal(unreadable: list[str]) -> str:
    """Why no view is made, naming the files (a few, and how many more)."""
    named = ", ".join(unreadable[:5]) + (
        f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else ""
    )
    return (
        f"the views are not made while records they would hold cannot be read ({named}): "
        "a view without them would drop their rows; repair those files first"
    )


def current_views(db: sqlite_utils.Database) -> dict[str, str]:
    """The views as the records say they should be: those the build stored (for a
    repository that commits views), rendered now otherwise. RecordsUnreadable
    while a record file cannot be read."""
    unreadable = unreadable_records(db)
    if unreadable:
        raise RecordsUnreadable(refusal(unreadable))
    stored = {
        r["path"]: r["content"] for r in db.query("SELECT path, content FROM generated_views")
    }
    return stored or render_views(db)


def store_views(db: sqlite_utils.Database, sandbox: Sandbox) -> None:
    """Record the views the repository should have, for the stale-view check. While
    a record cannot be read, its rows are taken as the committed views give them
    (kept_rows): the rest of each view is still compared."""
    kept = kept_rows(db, sandbox) if unreadable_records(db) else None
    db.table("generated_views").insert_all(
        {"path": path, "sha256": hashlib.sha256(content.encode()).hexdigest(), "content": content}
        for path, content in render_views(db, kept).items()
    )


def output_directory(repo: Path, out: Path | None) -> Path:
    """Where the views go: ``out`` as given, or REPO/registry when it is a directory
    inside the repository (a symlink leading outside, or into a dot-directory, is refused)."""
    if out is not None:
        return out
    registry = Path(repo) / "registry"
    if registry.is_symlink() and not leads_inside(registry, repo):
        raise ViewPathError(
            f"{registry} is a symlink leading outside the repository (or into a "
            "dot-directory): views are written only inside it (give --out to choose "
            "a directory)"
        )
    return registry


def _view_file(out: Path, path: str) -> Path:
    """Where a view goes in ``out``, refused when it is anything but a regular file
    of one name (or absent): a symlink or a hard link there could lead anywhere,
    even outside the repository."""
    target = out / path.rsplit("/", 1)[1]
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return target
    if stat.S_ISLNK(st.st_mode):
        raise ViewPathError(
            f"{target} is a symlink: views are never written or read through one; "
            "replace it with a regular file (or remove it) and run again"
        )
    if not stat.S_ISREG(st.st_mode):
        raise ViewPathError(f"{target} is not a regular file: remove it and run again")
    if st.st_nlink > 1:  # its other name may be a file outside the repository
        raise ViewPathError(
            f"{target} is a hard link ({st.st_nlink} names): views are never written or "
            "read through one; replace it with a copy of its own (or remove it) and run again"
        )
    return target


def write_views(views: dict[str, str], out: Path) -> list[Path]:
    """Write each view into ``out`` (the repository's registry/ directory, by
    default), each renamed over the old one once complete (``replace_file``). Nothing is
    written unless every target is a regular file or absent."""
    from .tempfiles import replace_file  # here: views --check writes nothing (3-4 ms)

    out.mkdir(parents=True, exist_ok=True)
    targets = [(_view_file(out, path), content) for path, content in views.items()]
    for target, content in targets:
        replace_file(target, content.encode("utf-8"))
    return [target for target, _ in targets]


def _lines(text: str) -> list[str]:
    """Lines split at newlines only (str.splitlines also splits at form feeds and
    other separators, which would hide them from a diff)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def stale_views(views: dict[str, str], out: Path, context: int = 3) -> list[tuple[str, str]]:
    """(file, short unified diff) for each view in ``out`` that differs from ``views``
    (line endings aside)."""
    stale = []
    for path, content in views.items():
        target = _view_file(out, path)
        raw = target.read_bytes() if target.is_file() else None
        if raw is None:
            stale.append((str(target), "missing"))
            continue
        current = universal_newlines(raw).decode("utf-8", "replace")
        if current == content:
            continue
        import difflib  # here: only a stale view is diffed (2 ms of every views --check)

        diff = difflib.unified_diff(
            _lines(current),
            _lines(content),
            fromfile=f"{target} (committed)",
            tofile=f"{target} (from the records)",
            n=context,
        )
        stale.append((str(target), "".join(list(diff)[:20])))
    return stale
