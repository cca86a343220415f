"""Build (or refresh) the SQLite index of a LabNote repository.

repository files -> discover -> load (parse, validate, rows) -> sqlite-utils
-> resolve references -> checks -> findings.

The database is written to a temporary file beside the target and moved into
place only when complete. On an existing index of the same repository the
build is incremental: only files whose size, times or inode changed are
read again, rows of deleted files are dropped, and everything derived
(references, artifacts, packet files, views, findings) is worked out again, so
the result equals a full rebuild.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.contract import Contract
from ..format.rules import RECORD_TYPES
from ..lazy import imported_meanwhile
from ..progress import SILENT, Progress
from ..read.discover import DiscoveredFile, FoundFiles, classify, discover, named_files
from ..read.git import WorkTreeState, head_commit
from ..read.licence import declared_licence
from ..read.paths import Sandbox, displayable
from ..read.repository import is_a_repository, readable_directory
from ..read.schemas import read_contract
from ..text import findings_phrase, parent_dir, plural
from .changed import Suspects, changes_by_git, changes_by_walk, git_state, record_state
from .cycles import edges_touching, store_cycles
from .files import (
    artifacts_named,
    artifacts_unchanged,
    packet_files_unchanged,
    refresh_artifacts,
    refresh_packet_files,
)
from .index_file import Queryable, check_index_path, read_only_connection
from .link_targets import link_targets_unchanged, refresh_link_targets
from .markdown_files import refresh_markdown_links
from .parallel import MIN_PART, default_jobs, run_sharded, start_workers_early
from .resolve import delete_in, linked_files, resolve_references
from .schema import create_indexes, create_lookup_indexes, create_markdown_reads, create_tables
from .writing import EarlyCopy, atomic_database, early_copy, written_here

if TYPE_CHECKING:
    from concurrent.futures import Future

    import sqlite_utils

# What a build that reads a file imports first (pydantic and the record models:
# 0.09 s, about a tenth of the pre-commit hook's run after one edit), and
# sqlite-utils, which writing the index needs (0.04 s; a build that finds
# nothing changed reads the index without it).
_READING = ("labnote_index.index.rows", "labnote_index.index.registry_views", "sqlite_utils")


# Bump when the tables change: an index of another format is rebuilt in full.
INDEX_FORMAT = 13


# Tables holding rows made from one file, and the column naming that file
# (handoff rows are keyed by the packet directory the manifest sits in).
PER_FILE = [
    ("files", "path"),
    ("record_json", "file"),
    ("handoff_json", "file"),
    ("records", "file"),
    *[(rt.table, "file") for rt in RECORD_TYPES.values()],
    ("refs", "source_file"),
    ("tag_uses", "source_file"),
    ("source_refs", "source_file"),
    ("validation_errors", "file"),
    ("legacy_fields", "file"),
    ("handoff_packets", "manifest"),
    ("handoff_templates", "manifest"),
    ("packet_locks", "lock_file"),
    ("locked_files", "lock_file"),
    ("markdown_links", "source_file"),
]
PER_MANIFEST_DIR = [("handoff_documents", "packet_dir"), ("input_packets", "consumer")]


@dataclass
class BuildResult:
    """What a build did: the files and records indexed, the findings, whether
    it was incremental and how many files it read again or removed."""

    db_path: Path
    files: int = 0
    records: Counter[str] = field(default_factory=Counter)
    files_with_findings: int = 0
    findings: Counter[str] = field(default_factory=Counter)
    incremental: bool = False
    reread: int = 0
    removed: int = 0
    # Why an incremental build became a full one (a damaged index), if it did.
    rebuilt_because: str | None = None
    # How an incremental build found what changed: "git" (a work tree's status,
    # index/changed.py) or "walk" (every file stat'ed and compared).
    changes_from: str | None = None

    def summary(self) -> str:
        """One line for people: records by type, then findings."""
        by_type = ", ".join(
            plural(self.records.get(rt.name, 0), rt.name, rt.table) for rt in RECORD_TYPES.values()
        )
        findings = findings_phrase(
            self.findings["error"], self.findings["warning"], self.files_with_findings
        )
        how = (
            f" (incremental: {plural(self.reread, 'file')} read again, {self.removed} removed)"
            if self.incremental
            else ""
        )
        return (
            f"Indexed {plural(self.files, 'file')} into {self.db_path}{how}: {by_type}; {findings}"
        )


def build_index(
    repo: Path,
    db_path: Path,
    files: list[str] | None = None,
    enforce_layout: bool = False,
    full: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
    check: Callable[..., object] | None = None,
    check_fingerprint: str | None = None,
    exclude: Callable[[str], bool] | None = None,
    exclude_patterns: Sequence[str] = (),
    config: dict[str, Any] | None = None,
    browsable: bool = True,
    derived: Derived | None = None,
) -> BuildResult:
    """Index ``repo`` into ``db_path``, replacing it only once the new index is complete.

    ``files`` restricts the import to those repository-relative paths (always
    a full build). ``full`` forces a full build of an existing index.
    ``progress`` is told how many files will be read and how many are done
    (silent by default). ``jobs`` is the most processes to read with (default:
    the cores available, up to four), and the most threads ``check`` may
    query with. ``check`` runs over the new index before
    it replaces the old one: the façade passes the check catalogue, so that an
    index is never without its findings (the build itself knows no checks),
    and ``check_fingerprint``, which changes when the checks do: an index of an
    unchanged repository, checked by the same checks, is left as it is.
    ``exclude`` tells the paths (files and directories) the walk leaves out,
    by ``exclude_patterns``; ``config`` is the configuration the index was
    built under, kept in build_info (JSON) for checks and comparisons.
    ``browsable=False`` leaves out what only browsing uses (``create_indexes``),
    for an index made for one check and deleted after it. ``derived`` is what
    other layers wrote into the index it replaces, and the new one forgets.
    """
    repo = Path(repo)
    jobs = default_jobs() if jobs is None else jobs
    readable_directory(repo)
    db_path = Path(db_path)
    exists = check_index_path(db_path)
    sandbox = Sandbox(repo)
    contract = read_contract(sandbox)
    settings = {
        "format": INDEX_FORMAT,
        "repo": str(sandbox.root),
        "enforce_layout": enforce_layout,
        "files": sorted(files) if files else None,
        "exclude": list(exclude_patterns),
        # The committed schemas read (their hashes): another contract, another index.
        "schemas": contract.fingerprint,
        # The licence its LICENSE file declares: what a published site says of the data.
        "licence": declared_licence(sandbox),
    }
    PHASES.reset()
    if not files:
        is_a_repository(repo)
    incremental = exists and not full and not files and _same_settings(db_path, settings)
    # An incremental build's copy of the index, made as it waits for git (or walks).
    with early_copy(db_path, incremental and jobs > 1) as copied:
        # What git says of the work tree as the build starts (kept for the next one;
        # an index made for one check is never built on again, so it asks nothing).
        started_ns = time.time_ns()
        asked: Future[WorkTreeState | None] | None = None
        work_tree = None
        if browsable and not files:
            if incremental:  # what changed is asked of git first
                # With a core to spare, what reading imports is imported as git works
                # (where git is still working: read/git.work_tree_state).
                work_tree = git_state(sandbox, imported_meanwhile(_READING) if jobs > 1 else None)
            else:  # only kept for the next build: asked while this one walks
                from concurrent.futures import ThreadPoolExecutor  # here: 5 ms of a no-op

                asked = ThreadPoolExecutor(1).submit(git_state, sandbox)
        changes, suspects = None, None
        if incremental and work_tree is not None:
            try:
                with closing(read_only_connection(db_path)) as conn:
                    said = changes_by_git(conn, sandbox, work_tree, exclude)
                if said is not None:
                    changes, suspects = said
            except sqlite3.DatabaseError:
                pass  # a damaged index: the build finds it so, and rebuilds it
        if files:
            found: Sequence[DiscoveredFile] = named_files(files)
        elif changes is not None:
            found = FoundFiles()  # git said what changed: no walk
        else:
            # Enough files for workers: their server is started as soon as the walk
            # has found that many, so that it imports what they need meanwhile.
            many = (2 * MIN_PART, start_workers_early) if jobs > 1 and not incremental else None
            found = discover(repo, sandbox.entered, exclude, many)
        PHASES.mark("walk")
        if files and jobs > 1 and len(found) >= 2 * MIN_PART:  # named, not walked
            start_workers_early()  # it imports what they need while this process starts
        checks = check_fingerprint if check is not None else None
        build = _Build(
            sandbox, found, settings, jobs, progress or SILENT, check, checks, config, contract
        )
        build.browsable, build.derived = browsable, derived
        build.changes, build.work_tree, build.started_ns = changes, work_tree, started_ns
        build.suspects = suspects
        build.asked, build.copied = asked, copied
        del found  # the build holds it, and lets it go once the files are read
        try:
            if incremental:
                try:
                    current = _unchanged_index(db_path, build)
                    how = "git" if changes is not None else "walk"
                    if current is not None:
                        current.changes_from = how
                        # Left as it is (never written in place: a server may read
                        # it); what git said is kept by the next build that writes.
                        return current
                    result = build.run(db_path, incremental=True)
                    result.changes_from = how
                    return result
                except sqlite3.DatabaseError as exc:  # a damaged index: start again
                    build.found, build.changes = discover(repo, sandbox.entered, exclude), None
                    build.suspects = None
                    result = build.run(db_path, incremental=False)
                    damaged = f"the index was damaged ({exc}); it was rebuilt in full"
                    result.rebuilt_because = damaged
                    return result
            return build.run(db_path, incremental=False)
        finally:
            build.progress.finish()
            PHASES.mark("finish")
            PHASES.write()


@dataclass(frozen=True)
class Derived:
    """What another layer writes into an index from outside a build (the comparison
    of ``check --base``): it describes the index it was made with, so a new index
    does not keep it. ``held`` tells whether an index holds some (read-only);
    ``forget`` clears it from the index being built."""

    held: Callable[[Queryable], bool]
    forget: Callable[[sqlite_utils.Database], None]


@dataclass
class _Build:
    """One build's inputs, run once (or, over a damaged index, a second time in full)."""

    sandbox: Sandbox
    found: Sequence[DiscoveredFile]
    settings: dict[str, Any]
    jobs: int
    progress: Progress
    check: Callable[..., object] | None
    check_fingerprint: str | None
    config: dict[str, Any] | None = None
    contract: Contract = field(default_factory=Contract)
    browsable: bool = True
    derived: Derived | None = None
    work_tree: WorkTreeState | None = None  # what git said as the build started
    asked: Future[WorkTreeState | None] | None = None  # or will say, asked then
    copied: EarlyCopy | None = None  # the index copied early, for an incremental build
    started_ns: int = 0
    # (to read again, removed) against the index, when already compared
    changes: tuple[Sequence[DiscoveredFile], list[str]] | None = None
    # What git cannot vouch for since the index, when git said what changed.
    suspects: Suspects | None = None

    def run(self, db_path: Path, incremental: bool) -> BuildResult:
        # Imported here: a build that finds nothing changed needs neither
        # pydantic nor the views (their imports are most of a no-op build).
        from . import registry_views as views
        from .rows import FileLoader

        sandbox, files = self.sandbox, self.settings["files"]
        PHASES.mark("compare")  # what changed since the index (incremental)
        copied = self.copied if incremental else None
        with atomic_database(db_path, db_path if incremental else None, copied) as db:
            PHASES.mark("copy")
            changed = None  # the files read again or removed, on an incremental build
            checked_by = None  # the checks the findings in the index were made by
            named = None  # the artifacts the files read again or removed name
            linked: set[str] = set()  # and the records linked to them (both, before)
            edges: dict[str, set[tuple[str, str]]] = {}  # and the references' edges
            if incremental:
                row = db.execute("SELECT value FROM build_info WHERE key = 'checks'").fetchone()
                checked_by = row[0] if row else None
                to_read, removed = self.changes or changes_by_walk(db, sandbox, self.found)
                changed = [displayable(f.path) for f in to_read] + removed
                named = artifacts_named(db, changed)  # as the index has them
                linked = linked_files(db, changed)
                edges = edges_touching(db, changed)
                _forget(db, changed)
                create_markdown_reads(db)  # the build's own: dropped once the artifacts are in
            else:
                create_tables(db)
                to_read, removed = self.found, []
            if self.asked is not None:  # git's look at each file comes before its read
                self.work_tree, self.asked = self.asked.result(), None  # (changed.py)
            self.progress.start(len(to_read))
            loader = FileLoader(sandbox, self.settings["enforce_layout"], self.contract)
            tables = [table for table, _ in PER_FILE + PER_MANIFEST_DIR] + ["markdown_reads"]
            run_sharded(
                db,
                to_read,
                loader.write,
                tables,
                self.jobs,
                self.progress.advance,
                weights=_reading_costs(to_read),
            )
            # Read: what was found is let go before the artifacts are listed
            # (at 435,000 records, 50 MB the listing can use instead).
            reread = len(to_read)
            records_changed = not incremental or any(f.kind == "record" for f in to_read)
            records_changed |= any(classify(path) == "record" for path in removed)
            del to_read
            self.found, self.changes = FoundFiles(), None
            PHASES.mark("read")
            # git's word, where it was asked, settles the files it does not name.
            suspects = self.suspects if incremental else None
            if named is not None and changed is not None:  # and as they name them now
                named |= artifacts_named(db, changed)
            refresh_artifacts(db, sandbox, self.jobs, suspects, named)
            PHASES.mark("artifacts")
            refresh_markdown_links(db, sandbox)  # after the artifacts: it reads their bodies
            PHASES.mark("markdown links")
            refresh_packet_files(db, sandbox, suspects)
            refresh_link_targets(db, sandbox, suspects)
            PHASES.mark("packet files and link targets")
            if not incremental:
                create_lookup_indexes(db)
            resolve_references(db, changed)
            PHASES.mark("resolve")
            if not incremental:  # the columns the resolve filled, indexed once
                create_indexes(db, self.browsable)
            PHASES.mark("indexes")
            if changed is not None:  # a graph whose edges are as they were has its cycles
                after = edges_touching(db, changed)
                store_cycles(
                    db, [relation for relation in edges if edges[relation] == after[relation]]
                )
            else:
                store_cycles(db)
            PHASES.mark("cycles")
            if self.derived is not None:
                self.derived.forget(db)
            # Views describe the whole registry, not a chosen few files; they are
            # worked out only for a repository that commits them (to find stale
            # ones), and again only when a record changed: they are made of records.
            committed = not files and views.commits_views(db)
            if not committed or records_changed or not db.table("generated_views").count:
                db.table("generated_views").delete_where()
                if committed:
                    views.store_views(db, sandbox)
            if self.check is not None:
                # Findings made by these same checks can be kept where nothing
                # they depend on changed (record-scoped checks, unchanged files).
                kept = incremental and checked_by == self.check_fingerprint
                PHASES.mark("views")
                changed_kept = changed if kept else None
                self.check(db, changed=changed_kept, threads=self.jobs, linked=linked)
                PHASES.mark("checks")
            row = {"key": "settings", "value": json.dumps(self.settings)}
            db.table("build_info").insert(row, replace=True)
            row = {"key": "config", "value": json.dumps(self.config or {})}
            db.table("build_info").insert(row, replace=True)
            # Which schemas governed each record type (a committed file, or the packaged).
            governed = {"governing": self.contract.governing()}
            row = {"key": "contract", "value": json.dumps(governed)}
            db.table("build_info").insert(row, replace=True)
            # When, and from what: what a served page says of the index it shows.
            head = self.work_tree.head if self.work_tree else head_commit(self.sandbox.root)
            built = {"at": _now(), "commit": head}
            db.table("build_info").insert(
                {"key": "built", "value": json.dumps(built)}, replace=True
            )
            db.table("build_info").delete_where("key = 'checks'")
            if self.check is not None and self.check_fingerprint is not None:
                row = {"key": "checks", "value": self.check_fingerprint}
                db.table("build_info").insert(row, replace=True)
            record_state(db, self.work_tree, self.started_ns)
            result = _result(db, db_path)
            result.incremental = incremental
            result.reread, result.removed = reread, len(removed)
        PHASES.mark("write")  # committed, and renamed into place
        return result


class _Phases:
    """Where a build's time goes, phase by phase, written as JSON to the file
    LABNOTE_INDEX_PHASES names (bench/benchmark.py shows an incremental build's);
    nothing at all without it."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start counting (a build's first step)."""
        self.file = os.environ.get("LABNOTE_INDEX_PHASES")
        self.seconds: dict[str, float] = {}
        self.last = time.perf_counter()

    def mark(self, phase: str) -> None:
        """The time since the last mark was spent in ``phase``."""
        if self.file:
            now = time.perf_counter()
            self.seconds[phase] = self.seconds.get(phase, 0.0) + now - self.last
            self.last = now

    def write(self) -> None:
        """Write the phases' seconds out, when asked to."""
        if self.file:
            Path(self.file).write_text(json.dumps(self.seconds))


PHASES = _Phases()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# What reading a file costs, in bytes of record: its size, and as much again as
# a small record's for opening, validating and writing it.
PER_FILE_BYTES = 2048
# A Markdown file costs the loader a read and a hash, its links and its files
# row, with the others of its run, from the walk's arrays: 25-29 us against
# 142-162 us for a small record at 43,508 records, measured, so about a fifth
# of a record's weight. Weighed as a record, the thousands of artifacts that
# sort before registry/ made this process's share nearly all Markdown, and left
# the records to one worker; weighed as nothing, this process had them all.
MARKDOWN_COST = 500


def _reading_cost(item: DiscoveredFile) -> int:
    if item.kind == "markdown":
        return MARKDOWN_COST
    return (item.stat.size if item.stat else 0) + PER_FILE_BYTES


def _reading_costs(items: Sequence[DiscoveredFile]) -> Sequence[int]:
    """``_reading_cost`` of each file; of the walk's files, read from its arrays
    (a DiscoveredFile made for each of 90,108 files took 0.14-0.25 s of a full
    build's serial start, before a worker had work)."""
    if isinstance(items, FoundFiles):
        return items.weighed({"markdown": MARKDOWN_COST}, PER_FILE_BYTES)
    return [_reading_cost(item) for item in items]


def _unchanged_index(db_path: Path, build: _Build) -> BuildResult | None:
    """The result of the index as it stands, when building it again would write
    the same rows: no file, artifact or packet file changed since, and it was
    checked by the same checks. None when it must be built (again, incrementally).
    Read without writing: the comparison that finds a change is not repeated,
    ``build.changes`` carries it to the build."""
    # A plain connection: an unchanged repository's check loads no sqlite-utils.
    db = read_only_connection(db_path)
    try:
        checked = db.execute("SELECT value FROM build_info WHERE key = 'checks'").fetchone()
        if build.check_fingerprint is None or checked != (build.check_fingerprint,):
            return None  # checked by other checks (or to be built without)
        if build.changes is None:
            build.changes = changes_by_walk(db, build.sandbox, build.found)
        if any(build.changes) or (build.derived is not None and build.derived.held(db)):
            return None
        if not (
            artifacts_unchanged(db, build.sandbox, build.suspects)
            and packet_files_unchanged(db, build.sandbox, build.suspects)
            and link_targets_unchanged(db, build.sandbox, build.suspects)
        ):
            return None
        result = _result(db, db_path)
        result.incremental = True
        return result
    finally:
        db.close()


def _same_settings(db_path: Path, settings: dict[str, Any]) -> bool:
    """Whether an existing index was built from the same repository, the same way,
    by a build on this machine (written_here): only then are its rows kept."""
    if not db_path.is_file():
        return False
    try:
        db = read_only_connection(db_path)
    except sqlite3.Error:
        return False
    try:
        row = db.execute("SELECT value FROM build_info WHERE key = 'settings'").fetchone()
        return row is not None and json.loads(row[0]) == settings and written_here(db, db_path)
    except Exception:  # not an index, or a damaged one: build it again in full
        return False
    finally:
        db.close()


def _forget(db: sqlite_utils.Database, paths: list[str]) -> None:
    """Delete every row made from these files."""
    dirs = [parent_dir(p) for p in paths if classify(p) == "handoff_manifest"]
    for values, tables in ((paths, PER_FILE), (dirs, PER_MANIFEST_DIR)):
        for table, column in tables:
            delete_in(db, table, column, values)


def _result(db: Queryable, db_path: Path) -> BuildResult:
    result = BuildResult(db_path=db_path)
    result.files = db.execute("SELECT count(*) FROM files").fetchone()[0]
    counted = "SELECT record_type, count(*) FROM records WHERE NOT unreadable GROUP BY 1"
    for record_type, n in db.execute(counted):
        result.records[record_type] = n
    has_findings = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'findings'"
    if db.execute(has_findings).fetchone() is None:
        return result  # built without checks
    # Counted as the check report counts them: files with findings.
    result.files_with_findings = db.execute(
        "SELECT count(DISTINCT coalesce(file, '')) FROM findings"
    ).fetchone()[0]
    for severity, n in db.execute("SELECT severity, count(*) FROM findings GROUP BY severity"):
        result.findings[severity] = n
    return result
