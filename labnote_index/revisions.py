"""Compare two revisions of a repository: transitions only a comparison can see.

The base revision is read straight from git objects (``git archive``) into a
temporary directory, never by checking it out, so the working tree and the
repository's index are untouched. Both revisions are indexed the usual way;
the transition checks (``checks/transitions``) are SQL over the head index
with the base index attached as ``base``.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from . import checks
from .importer import build_index
from .report import shown
from .tempfiles import temporary_directory


class RevisionError(Exception):
    """A revision that cannot be read (not a git repository, unknown revision)."""


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, check=False, timeout=300
        )
    except FileNotFoundError as exc:
        raise RevisionError("git is not installed: comparing revisions needs it") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(f"git {' '.join(args)}: {message[-1] if message else 'failed'}")
    return done.stdout


def materialize(repo: Path, rev: str, dest: Path) -> None:
    """Write the files of ``rev`` into ``dest`` from git objects (no checkout)."""
    commit = _git(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}")
    archive = _git(repo, "archive", "--format=tar", commit.decode().strip())
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        # The 'data' filter refuses members that would land outside dest (and
        # links that point there); those are left out, never followed.
        def safe(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
            try:
                return tarfile.data_filter(member, path)
            except tarfile.FilterError:
                return None

        tar.extractall(dest, filter=safe)


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


def build_revision(
    repo: Path, rev: str | None, db_path: Path, full: bool = False, jobs: int | None = None
) -> None:
    with revision_tree(repo, rev) as tree:
        build_index(tree, db_path, full=full, jobs=jobs)


@contextmanager
def base_index(repo: Path, base: str) -> Iterator[Path]:
    """A temporary index of the base revision."""
    with temporary_directory("rev") as tmp:
        db_path = tmp / "base.db"
        build_revision(repo, base, db_path, full=True)
        yield db_path


@contextmanager
def attached(db_path: Path, base_db: Path) -> Iterator[sqlite_utils.Database]:
    db = sqlite_utils.Database(db_path)
    db.execute("ATTACH DATABASE ? AS base", [str(base_db)])
    try:
        yield db
    finally:
        db.conn.commit()
        db.execute("DETACH DATABASE base")
        db.close()


def check_transitions(db_path: Path, base_db: Path, jobs: int = 1) -> int:
    """Add the transition checks' findings to those of a fresh build, the base attached."""
    with attached(db_path, base_db) as db:
        return checks.run_checks(
            db, checks.load_checks("checks/transitions"), replace=False, jobs=jobs
        )


DIFF_SQL = """
WITH
head AS (SELECT h.*, j.json FROM records h LEFT JOIN record_json j ON j.file = h.file),
old AS (SELECT b.*, j.json FROM base.records b LEFT JOIN base.record_json j ON j.file = b.file),
pairs AS (
    SELECT h.record_type, h.record_id, b.file AS base_file, h.file AS head_file,
           b.status AS base_status, h.status AS head_status, b.json AS base_json,
           h.json AS head_json
    FROM head h JOIN old b ON b.record_type = h.record_type AND b.record_id = h.record_id
),
head_refs AS (
    SELECT r.record_type, r.record_id, x.field, x.target_id
    FROM records r JOIN refs x ON x.source_file = r.file
),
base_refs AS (
    SELECT r.record_type, r.record_id, x.field, x.target_id
    FROM base.records r JOIN base.refs x ON x.source_file = r.file
)
SELECT 'added' AS change, record_type, record_id, file, NULL AS field, NULL AS before,
       status AS after
FROM head h WHERE NOT EXISTS (SELECT 1 FROM old b
                              WHERE b.record_type = h.record_type AND b.record_id = h.record_id)
UNION ALL
SELECT 'removed', record_type, record_id, file, NULL, status, NULL
FROM old b WHERE NOT EXISTS (SELECT 1 FROM head h
                             WHERE h.record_type = b.record_type AND h.record_id = b.record_id)
UNION ALL
SELECT 'status', record_type, record_id, head_file, 'status', base_status, head_status
FROM pairs WHERE base_status IS NOT head_status
UNION ALL
SELECT 'moved', record_type, record_id, head_file, NULL, base_file, head_file
FROM pairs WHERE base_file != head_file
UNION ALL
SELECT 'reference added', h.record_type, h.record_id, p.head_file, h.field, NULL, h.target_id
FROM head_refs h JOIN pairs p ON p.record_type = h.record_type AND p.record_id = h.record_id
WHERE NOT EXISTS (SELECT 1 FROM base_refs b
                  WHERE b.record_type = h.record_type AND b.record_id = h.record_id
                    AND b.field = h.field AND b.target_id = h.target_id)
UNION ALL
SELECT 'reference removed', b.record_type, b.record_id, p.head_file, b.field, b.target_id, NULL
FROM base_refs b JOIN pairs p ON p.record_type = b.record_type AND p.record_id = b.record_id
WHERE NOT EXISTS (SELECT 1 FROM head_refs h
                  WHERE h.record_type = b.record_type AND h.record_id = b.record_id
                    AND h.field = b.field AND h.target_id = b.target_id)
UNION ALL
SELECT 'edited', record_type, record_id, head_file, NULL, NULL, NULL
FROM pairs WHERE json(head_json) IS NOT json(base_json) AND base_status IS head_status
UNION ALL
SELECT 'handoff added', 'handoff_packet', h.packet_dir, h.manifest, NULL, NULL, h.status
FROM handoff_packets h
WHERE NOT EXISTS (SELECT 1 FROM base.handoff_packets b WHERE b.packet_dir = h.packet_dir)
UNION ALL
SELECT 'handoff removed', 'handoff_packet', b.packet_dir, b.manifest, NULL, b.status, NULL
FROM base.handoff_packets b
WHERE NOT EXISTS (SELECT 1 FROM handoff_packets h WHERE h.packet_dir = b.packet_dir)
UNION ALL
SELECT 'handoff status', 'handoff_packet', h.packet_dir, h.manifest, 'status', b.status, h.status
FROM handoff_packets h JOIN base.handoff_packets b ON b.packet_dir = h.packet_dir
WHERE b.status IS NOT h.status
ORDER BY record_type, record_id, change, field
"""

DIFF_KEYS = ("change", "record_type", "record_id", "file", "field", "before", "after")


def diff(db_path: Path, base_db: Path) -> list[dict[str, Any]]:
    """What changed from the base to the head index, record by record."""
    with attached(db_path, base_db) as db:
        return [dict(row) for row in db.query(DIFF_SQL)]


def diff_text(rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows:
        what = f"{shown(row['record_type'])} {shown(row['record_id'])}"
        change = row["change"]
        if change in ("status", "handoff status", "moved"):
            detail = f": {shown(row['before'])} -> {shown(row['after'])}"
        elif change.startswith("reference"):
            detail = f": {shown(row['field'])} {shown(row['after'] or row['before'])}"
        else:
            detail = f" ({shown(row['file'])})"
        lines.append(f"{change:18} {what}{detail}")
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["change"]] = counts.get(row["change"], 0) + 1
    summary = ", ".join(f"{n} {change}" for change, n in sorted(counts.items()))
    lines.append(summary or "no changes")
    return "\n".join(lines)
