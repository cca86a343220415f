"""lifecycle_bucket's fix: move the record, and its artifact (updating the path
field), into the bucket of its status."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .fixing import Refusal, Repair, read_file, token_edit

if TYPE_CHECKING:
    import sqlite_utils


def plan(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    """The repairs lifecycle_bucket's findings call for, and the ones it refuses."""
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
                raw = read_file(repo, file)
                content = token_edit(raw, values={row["artifact_field"]: moved})
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
