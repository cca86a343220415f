"""Files the index takes in besides the records: artifacts and packet files.

Both are refreshed the same way on a full and an incremental build: a file
whose size and modification time are as stored keeps its row; anything else
is read again. Paths are never followed out of the repository: a symlink whose
target lies outside is reported, not read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from .models import SAFE_PATH_RE
from .parallel import run_sharded
from .parse import NotRegularFile, hash_file, read_error
from .paths import Sandbox, displayable, lstat_key, parent_dir
from .resolve import delete_in
from .schema import Inserts

# Artifact bodies above this size are accounted for (size, hash) but not stored.
MAX_ARTIFACT_BODY = 1024 * 1024
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
# An artifact that could not be read, by why.
ARTIFACT_STATUS = {FileNotFoundError: "missing", NotRegularFile: "not_a_file"}


def artifact_row(sandbox: Sandbox, path: str) -> dict[str, Any]:
    row: dict[str, Any] = {"path": path, "status": None, "size": None, "mtime_ns": None}
    row.update(sha256=None, body=None, links=None)
    if not SAFE_PATH_RE.match(path):
        row["status"] = "unsafe"  # never touched on disk
        return row
    full = sandbox.path(path)
    key = lstat_key(full)
    if key is None:
        row["status"] = "missing"
        return row
    row["size"], row["mtime_ns"] = key.size, key.mtime_ns
    if not sandbox.inside(path, key.is_link):
        row["status"] = "escapes"
        return row
    keep = MAX_ARTIFACT_BODY if path.endswith(TEXT_SUFFIXES) else 0
    try:
        hashed = hash_file(full, keep_up_to=keep)
    except OSError as exc:
        row["status"] = ARTIFACT_STATUS.get(type(exc), "unreadable")
        return row
    row["status"] = "ok"
    row["size"], row["sha256"], row["links"] = hashed.size, hashed.sha256, hashed.links
    # A second name may be a file outside the repository (a hard link is not a
    # symlink, and no path tells): its content is hashed, never stored or searchable.
    if hashed.content is not None and hashed.links == 1:
        row["body"] = hashed.content.decode("utf-8", errors="replace")
    return row


def refresh_artifacts(db: sqlite_utils.Database, sandbox: Sandbox, jobs: int = 1) -> None:
    """Make ``artifacts`` hold exactly the paths records name, each as it is on disk now
    (read over up to ``jobs`` processes)."""
    # Tuples, not sqlite-utils' dict rows: these read one row per artifact.
    stored = {
        path: (size, mtime_ns, status)
        for path, size, mtime_ns, status in db.execute(
            "SELECT path, size, mtime_ns, status FROM artifacts"
        ).fetchall()
    }
    named = [
        path
        for (path,) in db.execute(
            "SELECT DISTINCT artifact_path FROM records WHERE artifact_path IS NOT NULL"
        ).fetchall()
    ]
    todo, stale = [], []
    for path in named:
        before = stored.pop(path, None)
        if before is None:
            todo.append(path)
        elif not _unchanged(sandbox, path, *before):
            todo.append(path)
            stale.append(path)
    delete_in(db, "artifacts", "path", list(stored) + stale)  # gone, or to be read again

    run_sharded(db, todo, ArtifactWriter(sandbox).write, ["artifacts"], jobs)


@dataclass
class ArtifactWriter:
    """Reads artifacts and writes their rows (picklable: workers run it too)."""

    sandbox: Sandbox

    def write(self, target: sqlite_utils.Database, paths: Sequence[str], advance: Any) -> None:
        # Bodies are written as they are read, a batch at a time: never all in memory.
        inserts = Inserts(target)
        for start in range(0, len(paths), 500):
            inserts.insert(
                "artifacts",
                [artifact_row(self.sandbox, path) for path in paths[start : start + 500]],
            )


def _unchanged(sandbox: Sandbox, path: str, size: int, mtime_ns: int, status: str) -> bool:
    """Whether a stored artifact row still describes what is on disk (asked of
    every artifact on every incremental build, so one lstat and no more)."""
    if status == "unsafe":
        return True  # decided by the path text alone
    key = lstat_key(sandbox.path(path))
    if key is None:
        return status == "missing" and mtime_ns is None
    if key.is_link:
        return False  # a symlink is resolved again on every build
    return (
        (key.size, key.mtime_ns) == (size, mtime_ns)
        and status == "ok"
        and sandbox.dir_inside(parent_dir(path))
    )


def packet_dirs(db: sqlite_utils.Database) -> list[str]:
    """Directories holding a handoff manifest or a packet lock."""
    paths = db.query("SELECT path FROM files WHERE kind IN ('handoff_manifest', 'packet_lock')")
    return sorted({parent_dir(p["path"]) for p in paths})


def refresh_packet_files(db: sqlite_utils.Database, sandbox: Sandbox) -> None:
    """Make ``handoff_files`` list every file of every packet directory, hashed.

    What cannot be hashed is listed too, with ``error`` saying why: a
    subdirectory that cannot be listed, a symlink (never followed: a lock
    cannot vouch for what it points to), a FIFO or device, a file that
    cannot be read. Directories are walked with a stack, not recursion.
    """
    stored = {
        (r["packet_dir"], r["path"]): (r["size"], r["mtime_ns"])
        for r in db.query(
            "SELECT packet_dir, path, size, mtime_ns FROM handoff_files WHERE error IS NULL"
        )
    }
    present = {
        (r["packet_dir"], r["path"]) for r in db.query("SELECT packet_dir, path FROM handoff_files")
    }
    fresh: list[dict[str, Any]] = []
    keep: set[tuple[str, str]] = set()
    changed = []

    def listed(
        packet_dir: str,
        rel: str,
        error: str | None = None,
        size: int | None = None,
        mtime_ns: int | None = None,
        sha256: str | None = None,
    ) -> None:
        """A file read anew (or that could not be read): its row replaces any stored."""
        key = (packet_dir, displayable(rel))
        keep.add(key)
        if key in present:
            changed.append(key)
        row = {"packet_dir": packet_dir, "path": key[1], "size": size, "mtime_ns": mtime_ns}
        fresh.append(row | {"sha256": sha256, "error": error})

    for packet_dir in packet_dirs(db):
        top = sandbox.path(packet_dir)
        if not (os.path.isdir(top) and sandbox.dir_inside(packet_dir)):
            continue
        pending = [(top, "")]
        while pending:
            directory, rel_top = pending.pop()
            try:
                with os.scandir(directory) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                listed(
                    packet_dir,
                    rel_top.rstrip("/"),
                    "directory could not be listed, so the files in it are not indexed: "
                    "make it readable",
                )
                continue
            for entry in entries:
                rel = f"{rel_top}{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        pending.append((entry.path, rel + "/"))
                    continue
                try:
                    if entry.is_symlink():
                        target = displayable(os.readlink(entry.path))
                        listed(
                            packet_dir,
                            rel,
                            f"a symlink (to {target}): never followed in a packet, which must "
                            "hold its files itself; put the file here",
                        )
                        continue
                    st = entry.stat(follow_symlinks=False)
                    key = (packet_dir, displayable(rel))
                    if stored.get(key) == (st.st_size, st.st_mtime_ns):
                        keep.add(key)  # as stored
                        continue
                    hashed = hash_file(entry.path)
                except OSError as exc:
                    listed(packet_dir, rel, read_error(exc))
                    continue
                listed(packet_dir, rel, None, hashed.size, st.st_mtime_ns, hashed.sha256)
    for packet_dir, rel in [k for k in present if k not in keep] + changed:
        db.execute("DELETE FROM handoff_files WHERE packet_dir = ? AND path = ?", [packet_dir, rel])
    Inserts(db).insert("handoff_files", fresh)
