"""Whether a discovered file may be read, and the registry's records read as the
generated views need them, with no index: ``views`` without ``--db`` renders
from these (neither sqlite-utils nor pydantic is imported for it). The index
reads its files through the same ``why_not_read`` and ``read_record_file``, so a
record file this cannot read is one the index marks unreadable too."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..format.rules import RECORD_TYPES, RecordType, canonical_spelling
from ..progress import SILENT, Progress
from ..text import as_text
from .discover import SYMLINKED_DIRECTORY, UNLISTED, DiscoveredFile
from .parse import read_error, read_record_file
from .paths import FileStat, Sandbox, displayable, lstat_key, named_outside, storable

# Progress is told of the record files read in batches of this many.
PROGRESS_EVERY = 1000


def seen(sandbox: Sandbox, found: DiscoveredFile) -> tuple[str, FileStat | None]:
    """Where a discovered file is, and what the walk saw there (looked at now
    when the walk did not say); no stat at all for a path named outside."""
    full = sandbox.path(found.path)
    return full, None if named_outside(found.path) else found.stat or lstat_key(full)


def why_not_read(
    sandbox: Sandbox, path: str, kind: str, full: str, key: FileStat | None
) -> str | None:
    """Why a discovered path must not be read, if it must not."""
    if named_outside(path):
        return "path is outside the repository: name files relative to the repository root"
    if key is None:
        return "file does not exist"
    if kind == SYMLINKED_DIRECTORY:
        target = displayable(os.readlink(full))
        if path == "registry":
            return (
                f"registry/ is a symlink to {target}, which is not a directory inside the "
                "repository: none of its records were read; keep the registry inside"
            )
        return (
            f"a symlink to a directory (to {target}): not followed, so nothing in it is "
            "indexed; put the directory itself here"
        )
    if not sandbox.inside(path, key.is_link):
        target = os.readlink(full) if key.is_link else "a directory outside"
        return f"symlink points outside the repository (to {target}); it was not read"
    if not key.is_regular and not os.path.isfile(full):  # a link is followed here
        if kind == UNLISTED:
            return (
                "directory could not be listed, so the files in it are not indexed: "
                "make it readable"
            )
        if os.path.isdir(full):
            return "a directory, not a file: name the files in it"
        if not os.path.lexists(full):  # gone since it was listed
            return read_error(FileNotFoundError())
        return (
            "dangling symlink" if key.is_link and not os.path.exists(full) else "not a regular file"
        )
    return None


@dataclass
class RegistryRecords:
    """The record files of a repository as the views take them: each record (a
    JSON object) filed under its own type's directory, with its file, type and
    ID, and the record files that could not be read (as the index names them:
    its ``files`` rows with an error)."""

    records: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def of_type(self, record_type: str) -> list[tuple[str, str | None, str]]:
        """(file, ID, JSON text) of the records of ``record_type``, in the index's
        order (by ID, then file; no ID first)."""
        chosen = [
            (file, record_id, text)
            for file, rt, record_id, text in self.records
            if rt == record_type
        ]
        chosen.sort(key=lambda r: (r[1] is not None, r[1] or "", r[0]))
        return chosen


def registry_records(
    sandbox: Sandbox, found: Iterable[DiscoveredFile], progress: Progress = SILENT
) -> RegistryRecords:
    """Read every record file of ``found`` as the index's loader does (the same
    refusals, the same parse), keeping what the views are made of; ``progress``
    is told how many record files there are, and as each batch is read."""
    read = RegistryRecords()
    records = [item for item in found if item.kind == "record"]
    progress.start(len(records))
    try:
        for n, item in enumerate(records, 1):
            if n % PROGRESS_EVERY == 0:
                progress.advance(PROGRESS_EVERY)
            path = item.path
            if not storable(path):
                read.unreadable.append(displayable(path))
                continue
            full, key = seen(sandbox, item)
            if why_not_read(sandbox, path, item.kind, full, key) is not None:
                read.unreadable.append(path)
                continue
            try:
                parsed = read_record_file(full, follow=key is not None and key.is_link)
            except OSError:
                read.unreadable.append(path)
                continue
            if parsed.error:
                read.unreadable.append(path)
            elif parsed.data is not None and parsed.text is not None:
                typed = _typed(parsed.data)
                # Kept only where a view can take it: under its own type's directory.
                # Its text, not the parsed object (a quarter of the memory): the
                # views parse it again, as they parse an index's.
                if typed is not None and path.startswith(f"registry/{typed[0].directory}/"):
                    read.records.append((path, typed[0].name, typed[1], parsed.text))
        progress.advance(len(records) % PROGRESS_EVERY)
    finally:
        progress.finish()
    read.unreadable.sort()
    return read


def _typed(data: dict[str, Any]) -> tuple[RecordType, str | None] | None:
    """A record's type and ID as the index's records row has them, for a record
    that names its type (a legacy record without one is in no view)."""
    raw = data.get("record_type")
    rt = RECORD_TYPES.get(raw) if isinstance(raw, str) else None
    if rt is None:
        return None
    return rt, as_text(canonical_spelling(rt, data, []).get(rt.id_field))
