"""An organisation index: the indexes of many repositories merged into one file.

Each repository is indexed, resolved and checked alone, so its references name
only its own records and its findings are those of a check of it alone; the
merge copies every table of each index, and every view materialised (orphans,
open messages, lineage edges: a view would join one repository's rows to
another's), each row under a ``repository`` column. ``repositories`` lists the
merged indexes; an orphaned reference whose ID a record of another repository
has says so (``orphans.exists_in``), and stays an orphan.

SQLite attaches at most ten databases to one connection, which is where a site
of many repositories served with cross-database queries stopped: the merge
attaches one index at a time, so any number can be merged. It is incremental:
an index unchanged since it was merged (the same file, as its build wrote it)
is not copied again. The merged file replaces the old one only once complete.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NotAnIndex
from .build import INDEX_FORMAT
from .index_file import as_database, check_index_path, read_only_uri, repository_name
from .writing import atomic_database

if TYPE_CHECKING:
    import sqlite_utils

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def index_names(db_paths: Sequence[Path]) -> list[str]:
    """The names the indexes are served under: one index, its file's name (as
    it always was); several, each its repository's (what its build recorded),
    made distinct, so that a site of many repositories says which is which;
    never Datasette's own ``_memory``."""
    names: list[str] = []
    for path in db_paths:
        if len(db_paths) == 1:
            name = Path(path).stem
        else:
            # A directory's name is data: only letters, digits, '.', '_' and '-'
            # are kept (Datasette puts the name in URLs and its cross-database SQL).
            name = _SAFE_NAME.sub("-", repository_name(Path(path)) or "").strip("-.")
            name = name or _SAFE_NAME.sub("-", Path(path).stem).strip("-.") or "index"
        # "_memory" is Datasette's own database: an index of that name would be
        # announced at an address that answers 404; "organisation" is the merge's.
        base, n = name, 2
        while name in names or name in ("_memory", ORGANISATION):
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


# The organisation index's name where several indexes are served together.
ORGANISATION = "organisation"
# Full-text tables are an index's own search, rebuilt from its rows: not merged.
_FTS = "_fts"
REPOSITORIES = "repositories"
# Columns the merge adds to a table of its own (the hint of where an ID exists).
ADDED = {"orphans": {"exists_in"}}


@dataclass
class MergeResult:
    """What a merge did: the repositories copied anew, kept, and dropped."""

    merged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def merge_indexes(sources: Sequence[tuple[str, Path]], org_path: Path) -> MergeResult:
    """Merge the indexes ``sources`` (each a repository name and its index) into
    ``org_path``, incrementally: an index merged before, and unchanged since, is
    kept as it is; a repository no longer named is dropped."""
    names = [name for name, _ in sources]
    if len(set(names)) != len(names):
        raise NotAnIndex("two indexes have one repository name: name each once")
    for _, path in sources:
        check_index_path(Path(path), must_exist=True)
    result = MergeResult()
    org_path = Path(org_path)
    # Never replaced unless it is an organisation index (a repository's own
    # index given as --db by mistake, one of the sources even, is refused).
    start = None
    if check_index_path(org_path):
        made = _organisation_format(org_path)
        if made is None:
            raise NotAnIndex(
                f"{org_path} is a repository's index, not an organisation index: give another --db"
            )
        start = org_path if made == INDEX_FORMAT else None  # another version's: made anew
    with atomic_database(org_path, start_from=start) as org:
        stored = _stored(org)
        for name in [n for n in stored if n not in names]:
            _forget(org, name)
            result.dropped.append(name)
        for name, path in sources:
            identity = _identity(Path(path))
            if stored.get(name) == identity:
                result.kept.append(name)
                continue
            if name in stored:
                _forget(org, name)
            _copy(org, name, Path(path), identity)
            result.merged.append(name)
        _mark_orphans_elsewhere(org)
        org.table("build_info").insert(
            {"key": "organisation", "value": json.dumps({"format": INDEX_FORMAT})}, replace=True
        )
    return result


def _organisation_format(path: Path) -> int | None:
    """The index format of the organisation index at ``path``; None when it is
    none (a repository's index, or a damaged file)."""
    try:
        db = as_database(path, read_only=True)
        row = db.execute("SELECT value FROM build_info WHERE key = 'organisation'").fetchone()
        db.close()
    except Exception:  # not one, or damaged
        return None
    return json.loads(row[0]).get("format") if row else None


def _identity(path: Path) -> str:
    """What tells that an index is the one merged before: the file itself (its
    device and inode, which a build's rename into place changes) and its size
    and time."""
    st = os.stat(path)
    return json.dumps([st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns])


def _stored(org: sqlite_utils.Database) -> dict[str, str]:
    if not org.table(REPOSITORIES).exists():
        return {}
    return {r["repository"]: r["identity"] for r in org.table(REPOSITORIES).rows}


def _forget(org: sqlite_utils.Database, name: str) -> None:
    for table in org.table_names():
        if table != "build_info" and "repository" in org.table(table).columns_dict:
            org.execute(f"DELETE FROM [{table}] WHERE repository = ?", [name])


@contextmanager
def _attached(org: sqlite_utils.Database, path: Path) -> Iterator[None]:
    # One at a time: SQLite attaches at most ten.
    org.execute("ATTACH DATABASE ? AS source", [read_only_uri(path)])
    try:
        yield
    finally:
        org.conn.commit()
        org.execute("DETACH DATABASE source")


def _copy(org: sqlite_utils.Database, name: str, path: Path, identity: str) -> None:
    """Every table and view of the index at ``path``, under repository ``name``."""
    with _attached(org, path):
        row = org.execute("SELECT value FROM source.build_info WHERE key = 'settings'").fetchone()
        settings = json.loads(row[0]) if row else {}
        if org.execute("SELECT 1 FROM source.build_info WHERE key = 'organisation'").fetchone():
            raise NotAnIndex(f"{path}: an organisation index, not a repository's: merge those")
        if settings.get("format") != INDEX_FORMAT:
            raise NotAnIndex(f"{path}: built by another version of labnote-index: build it again")
        objects = org.execute(
            "SELECT name, type FROM source.sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' AND name != 'build_info' ORDER BY name"
        ).fetchall()
        for table, _kind in objects:
            if _FTS in table:
                continue
            columns = [
                (c[1], c[2] or "TEXT")
                for c in org.execute(f"PRAGMA source.table_info([{table}])").fetchall()
            ]
            _ensure_table(org, table, columns, path)
            names = ", ".join(f"[{c}]" for c, _ in columns)
            org.execute(
                f"INSERT INTO main.[{table}] (repository, {names}) "
                f"SELECT ?, {names} FROM source.[{table}]",
                [name],
            )
        counts = dict(
            org.execute("SELECT severity, count(*) FROM source.findings GROUP BY severity")
        )
        records = org.execute("SELECT count(*) FROM source.records").fetchone()[0]
        built = org.execute("SELECT value FROM source.build_info WHERE key = 'built'").fetchone()
    org.table(REPOSITORIES).insert(
        {
            "repository": name,
            "records": records,
            "errors": counts.get("error", 0),
            "warnings": counts.get("warning", 0),
            "built_at": json.loads(built[0]).get("at") if built else None,
            "commit": json.loads(built[0]).get("commit") if built else None,
            "identity": identity,
        },
        pk="repository",
        replace=True,
    )


def _ensure_table(
    org: sqlite_utils.Database, table: str, columns: list[tuple[str, str]], path: Path
) -> None:
    """The merged table: the index's columns after ``repository``, indexed by it."""
    wanted = {"repository": "TEXT", **dict(columns)}
    existing = org.table(table)
    if existing.exists():
        have = {c.name for c in existing.columns} - ADDED.get(table, set())
        if have != set(wanted):
            raise NotAnIndex(
                f"{path}: its {table} table is not the others' (built by another "
                f"version of labnote-index?): build every index again"
            )
        return
    body = ", ".join(f"[{c}] {t}" for c, t in wanted.items())
    org.execute(f"CREATE TABLE [{table}] ({body})")
    org.execute(f"CREATE INDEX [idx_{table}_repository] ON [{table}] (repository)")


def _mark_orphans_elsewhere(org: sqlite_utils.Database) -> None:
    """Each orphaned reference whose ID a record of another repository has: it
    stays an orphan (a repository's references are its own), with the hint."""
    if not org.table("orphans").exists() or not org.table("records").exists():
        return
    if "exists_in" not in org.table("orphans").columns_dict:
        org.execute("ALTER TABLE orphans ADD COLUMN exists_in TEXT")
    org.execute("CREATE INDEX IF NOT EXISTS idx_records_record_id ON records (record_id)")
    org.execute(
        "UPDATE orphans SET exists_in = (SELECT group_concat(repository, ', ') FROM "
        "(SELECT DISTINCT r.repository FROM records r WHERE r.record_id = orphans.missing_id "
        "AND r.repository != orphans.repository ORDER BY r.repository))"
    )
