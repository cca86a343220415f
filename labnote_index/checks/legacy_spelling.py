"""legacy_spelling's fix: rename legacy fields to their canonical names, and add
record_type and schema_version where the directory says which; what cannot be
derived is left and reported."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.models import RFC3339_RE
from ..format.rules import LEGACY_FIELDS, RECORD_TYPE_BY_DIRECTORY
from ..read.parse import parse_json_bytes
from .fixing import Refusal, Repair, read_file, token_edit

if TYPE_CHECKING:
    import sqlite_utils

# Problems that re-writing a record would silently settle (a human decision).
_UNSETTLED = ("duplicate_key", "number_out_of_range", "lone_surrogate")


def plan(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    """The repairs legacy_spelling's findings call for, and the ones it refuses."""
    files = [r["file"] for r in db.query("SELECT DISTINCT file FROM legacy_fields ORDER BY file")]
    for file in files:
        raw = read_file(repo, file)
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
        content = token_edit(raw, keys=keys, first=first)
        if isinstance(content, str):
            yield Refusal("legacy_spelling", file, f"cannot be rewritten safely ({content})")
            continue
        yield Repair("legacy_spelling", file, file, content, raw, notes=notes)
