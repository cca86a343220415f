"""One repository file -> rows for every table it feeds.

Whatever could be read is kept, and each problem becomes a row naming the
file, the field and what is wrong: one file's problems never stop the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from hashlib import sha256
from typing import TYPE_CHECKING, Any, NamedTuple

from ..format import handoff
from ..format.contract import Contract
from ..format.models import MODELS, validate
from ..format.problem import Problem
from ..format.rules import (
    PROVENANCE_TYPES,
    RECORD_TYPE_BY_DIRECTORY,
    RECORD_TYPES,
    REFERENCE_RULES,
    TAGGED_TYPES,
    RecordType,
    canonical_spelling,
    visit_packet_id,
)
from ..read import markdown
from ..read.discover import DiscoveredFile, FoundFiles
from ..read.parse import (
    MAX_TEXT,
    ParsedFile,
    hash_file,
    read_error,
    read_record_file,
    universal_newlines,
)
from ..read.paths import (
    FileStat,
    Sandbox,
    as_read,
    displayable,
    kept_ctime,
    storable,
)
from ..read.records import seen, why_not_read
from ..text import as_text, parent_dir
from .inserts import Inserts
from .markdown_files import MarkdownReader

if TYPE_CHECKING:
    import sqlite_utils

# Per record type, worked out once: its columns, and its reference fields with
# whether each holds a list of IDs (derivative_of names two target types).
COLUMNS = {name: list(model.model_fields) for name, model in MODELS.items()}
KNOWN_FIELDS = {name: frozenset(columns) for name, columns in COLUMNS.items()}
REFERENCE_FIELDS = {
    name: list(dict.fromkeys((r.field, r.many) for r in REFERENCE_RULES if r.source_type == name))
    for name in RECORD_TYPES
}

# The columns of the rows every record makes, in the order their tuples hold
# them (Rows.add_values; Inserts checks each name against the table created).
TYPE_COLUMNS = {name: ("file", *columns, "extra", "valid") for name, columns in COLUMNS.items()}
REF_COLUMNS = ("source_file", "source_type", "source_id", "field", "position", "target_id")
TAG_USE_COLUMNS = ("source_file", "source_type", "source_id", "position", "tag_slug")
SOURCE_REF_COLUMNS = ("source_file", "source_type", "source_id", "position", "ref")
JSON_COLUMNS = ("file", "json")
# The tables whose rows hold only text, numbers and NULL by construction (IDs
# and fields through as_text, positions): bound as they are, no value looked at
# (0.4 us a row, 280,000 rows at 43,508 records). A type table's row holds the
# record's own values, lists among them.
SCALAR_TABLES = frozenset({"records", "record_json", "refs", "tag_uses", "source_refs"})


class RecordRow(NamedTuple):
    """A ``records`` row (a tuple: one is made for every record, every build)."""

    file: str
    record_type: str
    record_id: str | None
    artifact_field: str | None
    valid: bool
    unreadable: bool
    layout_enforced: bool
    registry_dir: str | None
    parent_dir: str
    sub_dir: str
    stem: str
    created_at: str | None = None
    status: str | None = None
    artifact_path: str | None = None


# Rows held before they are written: enough to keep INSERT calls few,
# few enough that memory does not grow with the repository.
BATCH_SIZE = 5000


@dataclass
class Rows:
    """Rows bound for each table, flushed in batches to bound memory. A table's
    rows are dicts (``add``: a missing key is NULL) or tuples of one column
    list (``add_values``, for the rows every record makes: no dict each)."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    values: dict[str, tuple[Sequence[str], list[tuple[Any, ...]]]] = field(default_factory=dict)
    count: int = 0

    def add(self, table: str, row: dict[str, Any]) -> None:
        """Queue one row for ``table``."""
        self.tables.setdefault(table, []).append(row)
        self.count += 1

    def add_values(self, table: str, columns: Sequence[str], values: tuple[Any, ...]) -> None:
        """Queue one row for ``table``: ``values`` of ``columns`` (always the same
        tuple of names for a table), the others NULL."""
        queued = self.values.get(table)
        if queued is None:
            queued = self.values[table] = (columns, [])
        elif queued[0] is not columns:
            raise ValueError(f"rows of {table} queued with two column lists")  # a mistake here
        queued[1].append(values)
        self.count += 1

    def queued(self, table: str) -> int:
        """How many rows are queued for ``table``."""
        return len(self.tables.get(table, ())) + len(self.values.get(table, ((), ()))[1])

    def flush(self, inserts: Inserts) -> None:
        """Insert every queued row, table by table, and start again empty."""
        for table, (columns, tuples) in self.values.items():
            if table in self.tables:
                raise ValueError(f"rows of {table} queued as dicts and as tuples")  # a mistake
            inserts.insert_tuples(table, columns, tuples, scalars=table in SCALAR_TABLES)
        for table, rows in self.tables.items():
            if rows:
                inserts.insert(table, rows)
        self.tables.clear()
        self.values.clear()
        self.count = 0


class FileLoader:
    """Turns one repository file into rows for every table it feeds."""

    def __init__(
        self, sandbox: Sandbox, enforce_layout: bool, contract: Contract | None = None
    ) -> None:
        self.sandbox = sandbox
        self.enforce_layout = enforce_layout
        self.contract = contract or Contract()
        self.markdown = MarkdownReader(sandbox)  # reads Markdown files as they are written

    def write(
        self,
        db: sqlite_utils.Database,
        items: Sequence[DiscoveredFile],
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Load these files and write their rows into ``db``, a batch at a time."""
        rows, inserts = Rows(), Inserts(db)
        found = items if isinstance(items, FoundFiles) else FoundFiles()  # runs: none
        runs = self.markdown.plan(items)
        at = 0
        while at < len(items):
            if at in runs:
                rows.flush(inserts)  # what is queued goes first: rows keep the files' order
                self.markdown.write_run(found, at, runs[at], inserts)
                if progress:
                    progress(runs[at] - at)
                at = runs[at]
                continue
            self.load(items[at], rows)
            if rows.count >= BATCH_SIZE:
                rows.flush(inserts)
            if progress:
                progress(1)
            at += 1
        rows.flush(inserts)

    def load(self, found: DiscoveredFile, rows: Rows) -> None:
        """Read one discovered file and queue its rows (a file that cannot be
        read is still a row, and a record file a stub record)."""
        records = rows.queued("records")
        file_row = self._load(found, rows)
        added = rows.queued("records") > records
        if found.kind == "record" and file_row.get("error") and not added:
            self._add_unreadable(found.path, rows)

    def _add_unreadable(self, path: str, rows: Rows) -> None:
        """A record file that cannot be read or parsed is still a record of the
        index, named as its location names it (the file name's stem is the ID by
        rule, the directory the type): references to it resolve to it, so the
        records citing it are not told to create it, and its story is its own."""
        parts = path.split("/")
        rt = RECORD_TYPE_BY_DIRECTORY.get(parts[1]) if len(parts) > 2 else None
        if parts[0] != "registry" or rt is None or not storable(path):
            return
        stem = parts[-1][: -len(".json")] if parts[-1].endswith(".json") else parts[-1]
        row = RecordRow(
            file=path,
            record_type=rt.name,
            record_id=stem,
            artifact_field=rt.artifact_field,
            valid=False,
            unreadable=True,
            layout_enforced=True,
            registry_dir=parts[1],
            parent_dir=parts[-2],
            sub_dir=_sub_dir(parts, rt.directory, True),
            stem=stem,
        )
        rows.add_values("records", RecordRow._fields, row)

    def _load(self, found: DiscoveredFile, rows: Rows) -> dict[str, Any]:
        """Load one file's rows; its files row."""
        path = found.path
        file_row: dict[str, Any] = {"path": path, "kind": found.kind, "record_type": None}
        rows.add("files", file_row)
        if not storable(path):
            file_row["path"] = displayable(path)
            file_row["error"] = (
                "file name is not valid UTF-8 (shown here with \\xNN escapes): "
                "rename it in UTF-8; it was not read"
            )
            return file_row
        full, key = seen(self.sandbox, found)
        if key is not None:
            file_row["size"], file_row["mtime_ns"] = key.size, key.mtime_ns
            file_row["ctime_ns"], file_row["inode"] = kept_ctime(key), key.inode
            file_row["regular_file"] = int(key.is_regular)
        problem = why_not_read(self.sandbox, path, found.kind, full, key)
        if problem:
            file_row["error"] = problem
            return file_row
        # A file the walk saw as a regular file is never read through a symlink
        # put in its place since (no target was checked): a symlink's was.
        follow = key is not None and key.is_link
        try:
            if found.kind == "markdown":
                if key is not None:  # read now if planned, else after the artifacts
                    self.markdown.load(path, key.inode, file_row, rows)
                return file_row
            if found.kind in ("view", "readme"):
                self._load_text(path, full, key, found.kind, file_row, rows)
                return file_row
            if found.kind not in ("record", "handoff_manifest", "packet_lock", "handoff_template"):
                hashed = hash_file(full, follow=follow)
                file_row["sha256"] = hashed.sha256
                _stored_as_read(file_row, key, hashed.size, hashed.st)
                if path in self.contract.problems:  # a committed schema that cannot govern
                    name = path.rsplit("/", 1)[-1].removesuffix(".schema.json")
                    rt_name = name if name in RECORD_TYPES else None
                    self._add_problems(path, rt_name, None, [self.contract.problems[path]], rows)
                return file_row
            parsed = read_record_file(full, follow=follow)
        except OSError as exc:  # gone, or unreadable, since it was listed
            file_row["error"] = read_error(exc)
            return file_row
        file_row["sha256"], file_row["error"] = parsed.sha256, parsed.error
        _stored_as_read(file_row, key, parsed.size, parsed.st)
        if found.kind == "record":
            self._import_record(path, parsed, file_row, rows)
        else:
            self._import_handoff(found.kind, path, parsed, file_row, rows)
        return file_row

    def _load_text(
        self,
        path: str,
        full: str,
        key: FileStat | None,
        kind: str,
        file_row: dict[str, Any],
        rows: Rows,
    ) -> None:
        """A generated view (compared with the records' as text, line endings
        aside) or the registry's README (its links kept, as INDEX.md's). A file
        that is a symlink or has a second name (which may lie outside) is
        hashed, its links never read."""
        is_link = key is not None and key.is_link
        hashed = hash_file(full, keep_up_to=MAX_TEXT, follow=is_link)
        file_row["sha256"] = hashed.sha256
        _stored_as_read(file_row, key, hashed.size, hashed.st)
        if hashed.content is None:
            return
        if kind == "view":
            text = universal_newlines(hashed.content)
            same = text is hashed.content
            file_row["text_sha256"] = hashed.sha256 if same else sha256(text).hexdigest()
        if path.endswith(".md") and not is_link and hashed.links == 1:
            content = hashed.content.decode("utf-8", errors="replace")
            for row in markdown.link_rows(path, content):
                rows.add("markdown_links", row)

    def _import_handoff(
        self, kind: str, path: str, parsed: ParsedFile, file_row: dict[str, Any], rows: Rows
    ) -> None:
        file_row["record_type"] = kind
        packet_dir = parent_dir(path)
        problems = list(parsed.problems)
        if parsed.text is not None:
            rows.add("handoff_json", {"file": path, "json": parsed.text})
        if parsed.data is not None:
            problems += handoff.validate_handoff(kind, parsed.data)
            if kind == "handoff_manifest":
                tables = handoff.manifest_rows(path, parsed.data, valid=not problems)
            elif kind == "handoff_template":
                tables = handoff.template_rows(path, parsed.data, valid=not problems)
            else:
                tables = handoff.lock_rows(path, parsed.data)
            for table, table_rows in tables.items():
                for row in table_rows:
                    rows.add(table, row)
        self._add_problems(path, kind, packet_dir, problems, rows)

    def _import_record(
        self, path: str, parsed: ParsedFile, file_row: dict[str, Any], rows: Rows
    ) -> None:
        problems = list(parsed.problems)
        data = parsed.data
        if parsed.text is not None:
            rows.add_values("record_json", JSON_COLUMNS, (path, parsed.text))
        rt: RecordType | None = None
        legacy: list[dict[str, Any]] = []
        record_id = None
        if data is not None:
            rt, raw_type = self._record_type(path, data, legacy)
            file_row["record_type"] = rt.name if rt else as_text(raw_type)
            if rt is None:
                problems.append(
                    Problem(
                        "record_type",
                        "unknown_record_type",
                        f"unknown or unsupported record_type {raw_type!r}: expected one of "
                        + ", ".join(RECORD_TYPES),
                    )
                )
            else:
                data = canonical_spelling(rt, data, legacy)
                data.setdefault("record_type", rt.name)  # inferred for a legacy record
                record_id = as_text(data.get(rt.id_field))
                committed = self.contract.validate(rt.name, data)
                problems.extend(validate(rt.name, data) if committed is None else committed)
        self._add_problems(
            path, rt.name if rt else file_row["record_type"], record_id, problems, rows
        )
        if rt is None or data is None:
            return
        for row in legacy:
            rows.add("legacy_fields", {"file": path, "record_id": record_id, **row})
        valid = not problems
        self._add_record(path, rt, data, record_id, valid, rows)

    @staticmethod
    def _add_problems(
        path: str,
        record_type: str | None,
        record_id: str | None,
        problems: list[Problem],
        rows: Rows,
    ) -> None:
        for field_name, error_type, message in problems:
            rows.add(
                "validation_errors",
                {
                    "file": path,
                    "record_type": record_type,
                    "record_id": record_id,
                    "field": field_name,
                    "error_type": error_type,
                    "message": message,
                },
            )

    def _record_type(
        self, path: str, data: dict[str, Any], legacy: list[dict[str, Any]]
    ) -> tuple[RecordType | None, Any]:
        raw = data.get("record_type")
        if "record_type" in data:
            return (RECORD_TYPES.get(raw) if isinstance(raw, str) else None), raw
        # Legacy records carry no record_type: infer it from the directory or
        # from the ID field present, and say so.
        parts = path.split("/")
        rt = (
            RECORD_TYPE_BY_DIRECTORY.get(parts[1])
            if parts[0] == "registry" and len(parts) > 2
            else None
        )
        if rt is None:
            rt = next((t for t in RECORD_TYPES.values() if t.id_field in data), None)
        if rt is not None:
            legacy.append(
                {
                    "record_type": rt.name,
                    "legacy_field": "(no record_type)",
                    "canonical_field": "record_type",
                    "note": f"record has no record_type; indexed as a {rt.name}",
                }
            )
        return rt, raw

    def _add_record(
        self,
        path: str,
        rt: RecordType,
        data: dict[str, Any],
        record_id: str | None,
        valid: bool,
        rows: Rows,
    ) -> None:
        parts = path.split("/")
        in_registry = parts[0] == "registry"
        artifact_path = as_text(data.get(rt.artifact_field)) if rt.artifact_field else None
        row = RecordRow(
            file=path,
            record_type=rt.name,
            record_id=record_id,
            created_at=as_text(data.get("created_at")),
            status=as_text(data.get("status")),
            artifact_field=rt.artifact_field,
            artifact_path=artifact_path,
            valid=valid,
            unreadable=False,
            layout_enforced=in_registry or self.enforce_layout,
            # "" for a record lying loose in registry/ itself
            registry_dir=(parts[1] if len(parts) > 2 else "") if in_registry else None,
            parent_dir=parts[-2] if len(parts) > 1 else "",
            sub_dir=_sub_dir(parts, rt.directory, in_registry),
            stem=parts[-1][: -len(".json")] if parts[-1].endswith(".json") else parts[-1],
        )
        rows.add_values("records", RecordRow._fields, row)
        columns, known = COLUMNS[rt.name], KNOWN_FIELDS[rt.name]
        # Fields no column holds are kept whole as JSON (most records have none).
        extra = None if data.keys() <= known else {k: v for k, v in data.items() if k not in known}
        rows.add_values(
            rt.table,
            TYPE_COLUMNS[rt.name],
            (
                path,
                *map(data.get, columns),
                json.dumps(extra, ensure_ascii=False) if extra else None,
                valid,
            ),
        )
        source = (path, rt.name, record_id)
        for field_name, many in REFERENCE_FIELDS[rt.name]:
            value = data.get(field_name)
            if field_name == "visit_id":
                value = visit_packet_id(value) if isinstance(value, str) else None
            targets = (value if isinstance(value, list) else []) if many else [value]
            for position, target in enumerate(targets):
                if isinstance(target, str) and target:
                    rows.add_values("refs", REF_COLUMNS, (*source, field_name, position, target))
        if rt.name in TAGGED_TYPES and isinstance(data.get("tags"), list):
            for position, slug in enumerate(data["tags"]):
                if isinstance(slug, str):
                    rows.add_values("tag_uses", TAG_USE_COLUMNS, (*source, position, slug))
        if rt.name in PROVENANCE_TYPES and isinstance(data.get("source_refs"), list):
            for position, ref in enumerate(data["source_refs"]):
                cited = (*source, position, as_text(ref))
                rows.add_values("source_refs", SOURCE_REF_COLUMNS, cited)


def _stored_as_read(
    row: dict[str, Any], key: FileStat | None, size: int, st: os.stat_result
) -> None:
    """The ``size`` read into a file's row and, where the walk saw a regular file,
    the times and inode of the file read (``as_read``; a symlink's stay the link's)."""
    row["size"] = size
    if key is not None and key.is_regular:
        row["size"], row["mtime_ns"], row["ctime_ns"], row["inode"] = as_read(size, st)


def _sub_dir(parts: list[str], directory: str, in_registry: bool) -> str:
    """The directory a record is filed under inside its type directory (its
    bucket, status or year; "" when it lies directly in the type directory):
    a record may sit deeper, under it. Outside registry/ (the layout enforced),
    the type directory is the nearest one of that name; with none, the parent."""
    dirs = parts[:-1]
    if in_registry:
        top = 1 if len(dirs) > 1 and dirs[1] == directory else None
    else:
        top = next((i for i in range(len(dirs) - 1, -1, -1) if dirs[i] == directory), None)
    if top is None:
        return dirs[-1] if dirs else ""
    return dirs[top + 1] if top + 1 < len(dirs) else ""
