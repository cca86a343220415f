"""The library: everything the command line does, for a notebook, a CI script or
a Datasette plugin. The CLI (``cli.py``) calls nothing else.

Each function takes paths and returns plain typed values; errors are
``LabnoteError`` subclasses whose message says what to do. Nothing prints.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from . import configuration as configuration_
from . import lazy
from .checks import catalogue as catalogue_
from .choices import DEFAULT_DB, DIRECTIONS, PROV_FORMATS
from .compare import git, revisions
from .errors import (
    ConfigError,
    IndexDamaged,
    InvalidArgument,
    RevisionNotFound,
    one_of,
)
from .format import rules
from .index import registry_views as views_
from .index.build import BuildResult, build_index
from .index.cache import cache_index as cache_index  # the façade's, for check --cache
from .index.index_file import (
    as_database,
    check_index_path,
    index_damage,
    indexed_repository,
    read_only_connection,
)
from .index.parallel import default_jobs
from .index.tempfiles import temporary_directory
from .progress import Progress
from .read.paths import path_inside
from .read.settings import (
    WORKING_TREE,
    Settings,
    declared_config,
    load_settings,
    working_tree_reader,
)

# What the façade returns, exported from here (labnote_index re-exports them).
from .results import DIFF_KEYS as DIFF_KEYS
from .results import FINDING_KEYS as FINDING_KEYS
from .results import Branch as Branch
from .results import Change as Change
from .results import Finding as Finding
from .results import FixReport as FixReport
from .results import Orphan as Orphan
from .results import Tree as Tree

if TYPE_CHECKING:
    import sqlite_utils

    from .index.organisation import MergeResult
    from .output import provenance
    from .queries import lineage as lineage_
else:  # what only lineage, export and merge use, loaded when they first run
    provenance = lazy.module("labnote_index.output.provenance")
    lineage_ = lazy.module("labnote_index.queries.lineage")

SEVERITIES = rules.SEVERITIES
Severity = Literal["error", "warning"]
Direction = Literal["up", "down", "both"]
# The settings a command runs under (a module of its own: views needs no index).
configuration = configuration_.configuration

# Where views go and how they are compared and written, as the views module does it.
views_directory = views_.output_directory
repository_views = views_.repository_views  # from the files, with no index
stale_views = views_.stale_views
write_views = views_.write_views


def build(
    repo: Path | str,
    db: Path | str = DEFAULT_DB,
    *,
    full: bool = False,
    jobs: int | None = None,
    enforce_layout: bool = False,
    files: Sequence[str] | None = None,
    progress: Progress | None = None,
    settings: Settings | None = None,
    browsable: bool = True,
) -> BuildResult:
    """Index ``repo`` into ``db`` (replaced only once complete; incremental on an
    index of the same repository unless ``full``), under ``settings`` (default:
    the repository's configuration file, with ``enforce_layout`` turning the
    layout rules on whatever it says). ``browsable=False``: without what only
    browsing uses (for an index made for one check)."""
    _jobs(jobs)
    repo = Path(repo)
    if settings is None:
        settings = configuration(repo, enforce_layout=enforce_layout or None)
    # The configuration the repository itself declares is kept beside the one
    # that governed (they differ under --base, where the change is reported).
    if settings.origin == WORKING_TREE:
        own_in, own = settings.declared_in, dict(settings.declared)
    else:
        try:
            own_in, own = declared_config(working_tree_reader(repo))
        except ConfigError as exc:
            own_in, own = "(unreadable)", {"error": str(exc)}
    config = {"settings": settings.as_dict(), "declared_in": own_in, "declared": own}
    return build_index(
        repo,
        Path(db),
        files=list(files) if files else None,
        enforce_layout=settings.enforce_layout,
        full=full,
        progress=progress,
        jobs=jobs,
        check=partial(catalogue_.run_checks, settings=settings),
        check_fingerprint=catalogue_.fingerprint(config=config),
        exclude=settings.excluded(),
        exclude_patterns=settings.exclude + settings.extend_exclude,
        config=config,
        browsable=browsable,
        derived=revisions.COMPARISON,
    )


def _jobs(jobs: int | None) -> None:
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise InvalidArgument(f"jobs must be a whole number of processes, 1 or more, not {jobs!r}")


def open_index(db: Path | str) -> sqlite_utils.Database:
    """An existing labnote index (NoIndex when absent, NotAnIndex when it is not one)."""
    check_index_path(Path(db), must_exist=True)
    return as_database(db)


@contextmanager
def index_file(db: Path | str | None) -> Iterator[Path]:
    """``db``, or a temporary index file removed afterwards."""
    if db is not None:
        yield Path(db)
        return
    with temporary_directory("tmp") as tmp:
        yield tmp / DEFAULT_DB


def check(
    db_or_repo: Path | str,
    *,
    db: Path | str | None = None,
    base: str | None = None,
    head: str | None = None,
    full: bool = False,
    jobs: int | None = None,
    enforce_layout: bool = False,
    files: Sequence[str] | None = None,
    progress: Progress | None = None,
    settings: Settings | None = None,
    with_absent: bool = False,
    note: Callable[[str], object] | None = None,
) -> list[Finding]:
    """The findings of a repository (a directory: built first, into ``db`` or a
    temporary index) or of an existing index (a file: its checks run again,
    under the settings it was built with).

    With ``base`` (a git revision) the repository is also compared with it: the
    transition checks run over both, the head being ``head`` or the working
    tree, and the base's configuration file governs both sides (``settings``
    default), so that a change cannot switch off the checks that judge it.
    Each finding's ``baseline`` says whether it is new or was there at the base
    already; ``with_absent`` adds, last, the base's findings the head no longer
    has (baseline ``absent``: what the change repaired). ``progress`` is told
    how the build goes; ``note`` what its user should know of it (a damaged
    index that was rebuilt in full).
    """
    _jobs(jobs)
    target = Path(db_or_repo)
    if not target.is_dir():
        index = open_index(target)
        threads = default_jobs() if jobs is None else jobs
        catalogue_.run_checks(index, settings=settings or stored_settings(index), threads=threads)
        return findings(target)
    if files:
        _named_files_there(target, files)
    with index_file(db) as db_path:
        if base is not None or head is not None:
            if base is None:
                raise RevisionNotFound("a comparison needs a base revision")
            chosen = settings or configuration(target, base=base)
            with _revisions(target, base, head, db_path, chosen, full, jobs, progress) as base_db:
                revisions.check_transitions(db_path, base_db, chosen)
                revisions.record_changes(db_path, base_db, str(base))
                revisions.compare_findings(db_path, base_db)
            if with_absent:
                return findings(db_path) + absent_findings(db_path)
        else:
            # The whole repository is indexed: a named file's findings depend on
            # what it cites. FILES choose what is reported.
            built = build(
                target,
                db_path,
                full=full,
                jobs=jobs,
                enforce_layout=enforce_layout,
                progress=progress,
                settings=settings,
                browsable=db is not None,  # a temporary index is only checked
            )
            if built.rebuilt_because and note is not None:
                note(built.rebuilt_because)
        found = findings(db_path)
        return on_files(found, target, files) if files else found


def on_files(found: Sequence[Finding], repo: Path | str, files: Sequence[str]) -> list[Finding]:
    """The findings on these files or directories (relative to ``repo``, to the
    current directory, or absolute, as a pre-commit hook or a shell gives them)."""
    wanted = [repository_path(Path(repo), name) for name in files]
    exact, whole = set(wanted), "" in wanted  # "" names the whole repository
    under = tuple(w.rstrip("/") + "/" for w in wanted if w)
    return [
        f
        for f in found
        if f.file is not None and (whole or f.file in exact or f.file.startswith(under))
    ]


def _named_files_there(repo: Path, files: Sequence[str]) -> None:
    """Refuse FILES that name nothing at all, in ``repo`` or from the current
    directory (as ``repository_path`` reads them): a mistyped path would report
    no findings, and pass. A dangling symlink is there (it is indexed, with its
    error). A path outside the repository is there too and names nothing
    indexed: a hook given a work tree's staged files may check a repository
    that is only part of it."""
    missing = [
        name
        for name in dict.fromkeys(files)  # each named once, however often given
        if not os.path.lexists(repo / name) and not os.path.lexists(name)
    ]
    if missing:
        named = ", ".join(repr(name) for name in missing)
        raise InvalidArgument(
            f"FILES: nothing is at {named}, in {repo} or from the current directory: check "
            "the path (a deleted file has no findings of its own: leave it out)"
        )


def repository_path(repo: Path, name: str) -> str:
    """A path named on the command line, as the index names it (repository-relative)."""
    path = Path(name)
    if not path.is_absolute() and not (repo / path).exists() and path.exists():
        path = Path.cwd() / path  # named from the current directory, not from REPO
    if path.is_absolute():
        inside = path_inside(path, repo)  # the one containment test
        if inside is None:
            return Path(os.path.relpath(path, repo)).as_posix()  # names nothing indexed
        return inside
    rel = Path(os.path.normpath(path)).as_posix()
    return "" if rel == "." else rel  # the whole repository


def governing_schemas(repo: Path | str | None = None, db: Path | str | None = None) -> str:
    """Which schemas govern each record type, in one line: of a repository as it
    is now (its committed ``registry/schemas/``), or as an index was built."""
    from .format.contract import describe
    from .read.paths import Sandbox
    from .read.schemas import read_contract

    if repo is not None:
        return describe(read_contract(Sandbox(Path(repo))).governing())
    row = (
        open_index(cast("Path | str", db))
        .execute("SELECT value FROM build_info WHERE key = 'contract'")
        .fetchone()
    )
    return describe(json.loads(row[0])["governing"] if row else {})


def stored_settings(index: sqlite_utils.Database) -> Settings:
    """The settings an index was built under (build_info 'config'; defaults for
    an index that keeps none)."""
    row = index.execute("SELECT value FROM build_info WHERE key = 'config'").fetchone()
    stored = json.loads(row[0]).get("settings", {}) if row else {}
    return load_settings(None, catalogue_.ids, stored, origin="index")


def findings(db: Path | str) -> list[Finding]:
    """The findings an index holds (as its last build or check left them), errors
    first, then by file."""
    check_index_path(Path(db), must_exist=True)
    with closing(read_only_connection(db)) as conn:  # no sqlite-utils: see Queryable
        return [Finding(**row) for row in catalogue_.findings(conn)]


def absent_findings(db: Path | str) -> list[Finding]:
    """The findings the base revision had and the head no longer has, after a
    ``check`` with ``base`` (none otherwise): what a change repaired."""
    index = open_index(db)
    if "absent_findings" not in index.table_names():
        return []
    return [Finding(**row) for row in catalogue_.findings(index, "absent_findings")]


def fails(found: Sequence[Finding], fail_on: Severity = "error") -> bool:
    """Whether any finding is at or above ``fail_on`` (error > warning)."""
    one_of("fail_on", fail_on, SEVERITIES)
    return catalogue_.fails([f.as_dict() for f in found], fail_on)


@contextmanager
def _revisions(
    repo: Path,
    base: str,
    head: str | None,
    db_path: Path,
    chosen: Settings,
    full: bool = False,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> Iterator[Path]:
    """Index the head (a revision, or the working tree) into ``db_path``; yield an
    index of the base, both under ``chosen``. Both revisions are looked up
    before anything is built."""
    for rev in (base, head) if head is not None else (base,):
        git.resolve(repo, rev)

    def index(tree: Path, into: Path, full: bool = full, progress: Progress | None = None) -> None:
        build(tree, into, full=full, jobs=jobs, progress=progress, settings=chosen)

    if head is not None:
        revisions.build_revision(repo, head, db_path, index)
    else:
        index(repo, db_path, progress=progress)
    with revisions.base_index(repo, base, partial(index, full=True)) as base_db:
        yield base_db


def orphans(db: Path | str) -> list[Orphan]:
    """Every reference whose target does not exist, by field, file and ID."""
    index = open_index(db)
    rows = index.query("SELECT * FROM orphans ORDER BY field, file, missing_id")
    return [Orphan(**row) for row in rows]


def lineage(db: Path | str, node: str, direction: Direction = "both") -> Tree:
    """The provenance tree of a record or handoff packet (ID, file, packet
    directory or manifest path): ``up``, ``down`` or ``both`` (as the CLI)."""
    one_of("direction", direction, DIRECTIONS)
    return cast(Tree, lineage_.lineage(open_index(db), node, direction))


def export(db: Path | str, fmt: str = "prov-json", node: str | None = None) -> str:
    """The provenance of an index (or of one record's or packet's lineage, named as
    ``lineage`` names it) as W3C PROV text: PROV-JSON, PROV-N, PROV-O (Turtle) or
    PROV-XML (output/provenance.py says how records map to PROV terms)."""
    one_of("format", fmt, PROV_FORMATS)
    index = open_index(db)
    start = lineage_.find_node(index, node) if node is not None else None
    return provenance.serialized(provenance.prov_document(index, start), fmt)


def diff(
    repo: Path | str,
    base: str,
    head: str | None = None,
    *,
    db: Path | str | None = None,
    jobs: int | None = None,
) -> list[Change]:
    """What changed from ``base`` to ``head`` (default: the working tree), record
    by record; the head is indexed into ``db`` (or a temporary index)."""
    chosen = configuration(repo, base=base)
    with (
        index_file(db) as db_path,
        _revisions(Path(repo), base, head, db_path, chosen, jobs=jobs) as old,
    ):
        return [Change(**row) for row in revisions.record_changes(db_path, old, base)]


def views(db: Path | str) -> dict[str, str]:
    """The generated views (CSV registries, INDEX.md) the records of an index make,
    keyed by repository path."""
    return views_.current_views(open_index(db))


def _whole_index(path: Path) -> None:
    """That ``path`` is a labnote index SQLite finds whole, before serving or
    publishing it: NoIndex, NotAnIndex or IndexDamaged otherwise."""
    open_index(path)
    damage = index_damage(path)
    if damage:
        said = " ".join(damage.split())  # SQLite's report runs over lines: one line here
        raise IndexDamaged(f"the index {path} is damaged ({said}): build it again with --full")


def serve(
    db: Path | str | Sequence[Path | str],
    host: str = "127.0.0.1",
    port: int = 8001,
    open_browser: bool = False,
    watch: Path | str | None = None,
    on_rebuilt: Callable[[BuildResult | Exception], None] | None = None,
) -> None:
    """Publish an index (or several together, each under its repository's name,
    with a home page of them side by side and cross-repository queries) with
    Datasette until interrupted (read-only, immutable). The port is bound before
    anything is announced. With ``watch`` (a repository; one index), it is
    indexed into ``db`` first, and again, incrementally, whenever its files
    change; the server takes up each new index without a restart
    (``on_rebuilt`` is told each build, or what stopped one)."""
    paths = [Path(db)] if isinstance(db, str | Path) else [Path(p) for p in db]
    if not paths:
        raise InvalidArgument("serve needs an index to serve")
    watcher = None
    if watch is not None:
        if len(paths) != 1:
            raise InvalidArgument("watch rebuilds one index: give one")
        build(watch, paths[0])
        from .watch import watch_repository

        watcher = partial(
            watch_repository, build, Path(watch), paths[0], on_rebuilt or (lambda _: None)
        )
    for path in paths:
        _whole_index(path)
    from .web.serve import serve as run_server  # Datasette is imported only to serve

    run_server(paths, host, port, open_browser, watcher)


def publish(db: Sequence[Path | str], out: Path | str) -> list[str]:
    """Write a self-contained deployment of these indexes into ``out`` (absent or
    empty): the indexes, metadata, a pinned requirements file and a wheel of
    this package, ``datasette inspect``'s file, the start command and a
    Dockerfile. Returns the names the indexes are served under."""
    paths = [Path(p) for p in db]
    if not paths:
        raise InvalidArgument("publish needs an index to publish")
    for path in paths:
        _whole_index(path)
    from .web.publish import write_deployment  # Datasette is imported only for it

    return write_deployment(paths, Path(out))


def merge(db: Sequence[Path | str], organisation: Path | str) -> MergeResult:
    """Merge the indexes ``db`` (one a repository, each built and checked alone)
    into the organisation index ``organisation``: every table, and every view
    materialised, each row under a ``repository`` column (the names serve gives
    them); incremental, an index unchanged since the last merge is kept."""
    from .index.organisation import index_names, merge_indexes

    paths = [Path(p) for p in db]
    if not paths:
        raise InvalidArgument("merge needs an index to merge")
    for path in paths:
        _whole_index(path)
    return merge_indexes(list(zip(index_names(paths), paths, strict=True)), Path(organisation))


def catalogue(transitions: bool | None = None) -> list[catalogue_.Check]:
    """The checks of one index (``transitions=False``), the transition checks that
    a comparison with ``base`` adds (``True``), or both, in that order (``None``)."""
    if transitions is None:
        return catalogue_.catalogue()
    return catalogue_.load_checks("checks/transitions" if transitions else "checks")


def check_named(name: str) -> catalogue_.Check:
    """One check of the catalogue (an index's or a transition check) by its id;
    InvalidArgument, with the nearest id, when there is none."""
    from .checks.suggest import Names

    every = {c.id: c for c in catalogue_.catalogue()}
    if name in every:
        return every[name]
    near = Names(every).nearest(name)
    mean = f": did you mean {near!r}?" if near else ""
    raise InvalidArgument(f"no check {name!r}{mean} ('labnote-index checks' lists them all)")


def fix(
    repo: Path | str,
    *,
    apply: bool = False,
    checks: Sequence[str] | None = None,
    db: Path | str | None = None,
    jobs: int | None = None,
) -> FixReport:
    """Plan the mechanical repairs of ``repo``'s findings (only those of ``checks``,
    when given); with ``apply``, carry them out, then index and check again."""
    from .repair.repairs import apply as apply_fixes  # only this command writes to the repository
    from .repair.repairs import plan as plan_fixes

    repo = Path(repo)
    _jobs(jobs)
    known = sorted(c.id for c in catalogue(transitions=False) if c.fix)
    for check_id in checks or ():
        one_of("checks", check_id, known)
    chosen = set(checks) if checks else None
    with index_file(db) as db_path:
        build(repo, db_path, jobs=jobs)
        before = findings(db_path)
        index = open_index(db_path)
        planned = plan_fixes(index, repo, chosen)
        # Records moved or renamed change what committed views should say: those
        # views are written anew in a second pass (when view_stale is among the fixes).
        views_follow = (chosen is None or "view_stale" in chosen) and any(
            r.check != "view_stale" for r in planned.repairs
        )
        views_follow = views_follow and views_.commits_views(index)
        if not apply or not planned.repairs:
            return FixReport(planned, False, [], [], [], views_follow=views_follow)
        apply_fixes(planned, repo)
        build(repo, db_path, jobs=jobs)
        rewritten = 0
        if chosen is None or "view_stale" in chosen:
            views_pass = plan_fixes(open_index(db_path), repo, {"view_stale"})
            if views_pass.repairs:
                apply_fixes(views_pass, repo)
                rewritten = len(views_pass.repairs)
                planned.repairs += views_pass.repairs
                planned.refusals += views_pass.refusals
                build(repo, db_path, jobs=jobs)
        after = findings(db_path)
    fixable = {
        c.id for c in catalogue(transitions=False) if c.fix and (not chosen or c.id in chosen)
    }
    still, had = set(after), set(before)  # findings are hashable: no list scans
    return FixReport(
        planned,
        True,
        gone=[f for f in before if f not in still],
        remaining=[f for f in after if f.check in fixable],
        appeared=[f for f in after if f not in had],
        views_follow=views_follow,
        views_rewritten=rewritten,
        after=after,
    )


def annotation_prefix(root: Path | None, warn: Callable[[str], None] | None = None) -> str:
    """What goes before a repository-relative path in GitHub annotations and SARIF
    (paths from the top of the git work tree holding ``root``); ``warn`` is told
    when git refuses the repository (another user's)."""
    return git.path_prefix(root, warn) if root is not None else ""


def repository_of(db: Path | str) -> Path | None:
    """The repository an index was built from."""
    return indexed_repository(open_index(db))
