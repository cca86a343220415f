"""The ``labnote-index`` commands: arguments parsed, the library (``api.py``) called,
its answers written (``command.py`` maps errors to exit codes)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from . import lazy
from .choices import DIRECTIONS, PROV_FORMATS
from .cli_sites import merge_command, publish_command, serve_command
from .command import (
    CHECK_FORMATS,
    CONTEXT_SETTINGS,
    EXIT_FOUND,
    EXIT_OK,
    LabnoteGroup,
    also_write_option,
    build_options,
    db_option,
    echo_rows,
    format_option,
    git_asked_early,
    progress_bar,
    run_build,
    write_report,
)
from .format.rules import SEVERITIES
from .text import plural, shown

if TYPE_CHECKING:
    from . import api
    from . import configuration as configuration_
    from .index import registry_views as views_
    from .output import report
else:  # loaded when a command first calls it (labnote_index/lazy.py)
    api = lazy.module("labnote_index.api")
    configuration_ = lazy.module("labnote_index.configuration")
    report = lazy.module("labnote_index.output.report")
    views_ = lazy.module("labnote_index.index.registry_views")


@click.group(cls=LabnoteGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="labnote-index")
def cli() -> None:
    """Index a LabNote repository into SQLite, check it with SQL, publish it with Datasette.

    Typical use: 'labnote-index check REPO' in CI (exit 1 on errors), and
    'labnote-index build REPO' then 'labnote-index serve' to browse.
    """


@cli.command()
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@db_option
@build_options
def build(
    repo: Path,
    db_path: Path,
    isolated: bool,
    enforce_layout: bool,
    jobs: int | None,
    full: bool,
    files: tuple[str, ...],
) -> None:
    """Index REPO into the database (and record its findings).

    Without FILES every record under registry/ and every handoff manifest and
    packet lock is indexed; with FILES (paths relative to REPO) exactly those.
    Bad files are indexed as far as they can be read and reported by 'check':
    build itself exits 0 unless REPO cannot be read or is not a LabNote
    repository (no registry/, no handoff packet), --db names something that
    is not a labnote index, or the index cannot be written (exit 2); 130 when
    interrupted (143 for SIGTERM), saying whether the index had been replaced.
    The database is replaced only once the new index is complete. On an
    existing index of the same repository only files whose size, times or
    inode changed are read again (--full reads everything).
    Many files to read are shared out among processes (--jobs).
    The repository's configuration file (see 'check --show-settings') chooses
    what is left out and how each check reports; --isolated ignores it.
    """
    with git_asked_early(repo, not files):
        settings = api.configuration(repo, isolated=isolated, enforce_layout=enforce_layout or None)
        result = run_build(repo, db_path, files, settings, full, jobs)
    click.echo(result.summary(), err=True)


@cli.command()
@click.argument("repo", required=False, type=click.Path(file_okay=False, path_type=Path))
@db_option
@format_option(
    list(CHECK_FORMATS),
    "text groups findings by file; json prints an array of finding objects, csv "
    "one row a finding; github prints GitHub Actions ::error/::warning "
    "annotations; sarif prints a SARIF 2.1.0 log for code scanning (one rule per "
    "check); markdown a summary for a job summary or a pull-request comment; junit "
    "JUnit XML for test report viewers (a suite per check); gitlab GitLab Code "
    "Quality JSON. In github, sarif and gitlab output, paths are relative to the "
    "git work tree holding REPO (else to the current directory), as CI resolves them.",
)
@click.option(
    "--no-db",
    is_flag=True,
    help="With REPO: index into a temporary file, removed afterwards (nothing is "
    "left behind): what a check of REPO does without --db or --cache; said "
    "explicitly for scripts.",
)
@click.option(
    "--cache",
    is_flag=True,
    help="With REPO: keep the index in REPO/.labnote-index-cache/ (made with a "
    ".gitignore, so it is never committed), so that every run after the first is "
    "incremental; one that is damaged, of another version or not written by a "
    "build here (committed, copied in) is rebuilt in full (for hooks).",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    help="Exit 1 when a finding at or above this severity exists (default: the "
    "configuration's fail-on, else error).",
)
@click.option(
    "--show-settings",
    is_flag=True,
    help="Print the effective settings, each with where it came from (the "
    "configuration file, the command line or the default), and which schemas "
    "govern each record type (the repository's committed registry/schemas/ or "
    "the packaged contract), and exit.",
)
@click.option(
    "--base",
    metavar="REV",
    help="Also compare with this git revision: illegal status transitions, tag "
    "promotions in the same change set, changed handoff packets and visits.",
)
@click.option(
    "--head",
    metavar="REV",
    help="With --base: the revision to check (default: the working tree).",
)
@click.option(
    "--new-only",
    is_flag=True,
    help="With --base: report (and fail on) only the findings the change "
    "introduced, not those already at the base (matched by check, record and "
    "field, wherever in the file).",
)
@also_write_option
@build_options
def check(
    repo: Path | None,
    db_path: Path,
    fmt: str,
    no_db: bool,
    cache: bool,
    fail_on: str | None,
    show_settings: bool,
    base: str | None,
    head: str | None,
    new_only: bool,
    also_write: list[tuple[str, Path]],
    isolated: bool,
    enforce_layout: bool,
    jobs: int | None,
    full: bool,
    files: tuple[str, ...],
) -> None:
    """Check a repository (or an existing index) and report findings.

    With REPO the index is built first (same arguments as build) into a
    temporary file, removed afterwards (nothing is written into the
    repository or anywhere else), or into --db, or into the repository's
    cache (--cache), which later runs build on incrementally; with only --db
    the existing index is checked again. FILES (paths relative to REPO
    or to the current directory) limit what is reported, not what is
    indexed: the whole repository is indexed, incrementally, and the
    findings on those files (or under those directories) are shown; a path
    that names nothing at all (no such file or directory) is refused before
    anything is built (exit 2), never a pass. With --base REV the repository
    is also compared with that revision, read from git objects without a
    checkout; the index keeps what changed (its changes table, and each
    record's story page in serve).

    Settings come from the repository's configuration file: labnote-index.toml
    at its root or, failing that, [tool.labnote-index] in its pyproject.toml
    (exclude, extend-exclude, per-file-ignores, severity, fail-on,
    enforce-layout). Command-line options win; --isolated ignores the file.
    With --base the base revision's file governs both sides, and a change to
    it is reported (config_changed).

    Exit status: 0 when nothing at or above --fail-on was found; 1 when
    something was; 2 on a usage error (FILES that name nothing among them),
    a configuration file it cannot follow (naming the key), an unreadable
    repository or a directory that is not one (no registry/ and no handoff
    packet), a bad revision, no index at
    --db, a --db that is not a labnote index, or an index that cannot be
    written or read; 130 when interrupted (143 for SIGTERM).
    """
    if no_db and repo is None:
        raise click.UsageError("--no-db needs REPO: there is no index to check otherwise")
    ctx = click.get_current_context()
    db_given = ctx.get_parameter_source("db_path") == click.core.ParameterSource.COMMANDLINE
    if sum((no_db, cache, db_given)) > 1:
        raise click.UsageError("--no-db, --cache and --db contradict each other: give one")
    if cache and repo is None:
        raise click.UsageError("--cache needs REPO: the cache is the repository's")
    if (files or enforce_layout or full or isolated) and repo is None:
        raise click.UsageError("FILES, --enforce-layout, --isolated and --full need REPO")
    if new_only and base is None:
        raise click.UsageError("--new-only needs --base: new since which revision?")
    if base is not None or head is not None:
        if repo is None or base is None:
            raise click.UsageError("--base (and --head) need REPO and --base")
        if files or enforce_layout:
            raise click.UsageError("--base compares whole revisions: no FILES or --enforce-layout")
    # With REPO a check writes nothing unless asked to: without --db (or --cache)
    # its index is a temporary file, never a labnote.db left in a work tree.
    kept = db_given or cache
    with git_asked_early(repo, kept and not show_settings):
        if repo is None:
            settings = api.stored_settings(api.open_index(db_path))
        else:
            settings = api.configuration(
                repo,
                isolated=isolated,
                enforce_layout=enforce_layout or None,
                fail_on=fail_on,
                base=base,
            )
        if show_settings:
            click.echo(settings.show())
            click.echo(api.governing_schemas(repo) if repo else api.governing_schemas(db=db_path))
            return
        db = api.cache_index(repo) if cache and repo is not None else db_path if kept else None
        found = api.check(
            repo if repo is not None else db_path,
            db=db,
            base=base,
            head=head,
            full=full,
            jobs=jobs,
            files=files,
            progress=progress_bar() if repo is not None else None,
            settings=settings,
            with_absent=True,
            note=lambda message: click.echo(f"note: {message}", err=True),
        )
    compared = [f.as_dict() for f in found]
    if new_only:
        found = [f for f in found if f.baseline == "new"]
    else:
        found = [f for f in found if f.baseline != "absent"]
    rows = [f.as_dict() for f in found]
    prefixes: list[str] = []  # asked of git once, for the formats CI reads paths of

    def prefix() -> str:
        if not prefixes:
            root = repo if repo is not None else api.repository_of(db_path)
            warn = lambda m: click.echo(f"warning: {m}", err=True)  # noqa: E731
            prefixes.append(api.annotation_prefix(root, warn))
        return prefixes[0]

    def render(fmt: str) -> str:
        return report.findings_output(
            fmt,
            rows,
            compared,
            api.catalogue,
            prefix,
            keys=api.FINDING_KEYS,
            compared_with_base=base is not None,
            new_only=new_only,
        )

    # color=True: click would strip escape sequences from values off a terminal.
    click.echo(render(fmt), nl=False, color=fmt == "csv" or None)
    for also_fmt, path in also_write:
        write_report(path, render(also_fmt))
    threshold = cast(api.Severity, fail_on or settings.fail_on)
    sys.exit(EXIT_FOUND if api.fails(found, threshold) else EXIT_OK)


@cli.command()
@click.argument("repo", required=False, type=click.Path(file_okay=False, path_type=Path))
@db_option
@format_option(["text", "json", "csv"])
def orphans(repo: Path | None, db_path: Path, fmt: str) -> None:
    """List every reference whose target does not exist, grouped by field.

    Each line names the record, its file, the field, the missing ID and the
    type of record it should have named. With REPO the index is built first.
    Exit 1 when there is at least one orphan.
    """
    if repo is not None:
        run_build(repo, db_path, (), api.configuration(repo))
    rows = [vars(o) for o in api.orphans(db_path)]
    echo_rows(rows, report.ORPHAN_KEYS, fmt, report.orphans_text)
    sys.exit(EXIT_FOUND if rows else EXIT_OK)


@cli.command(name="checks")
@click.argument("name", required=False)
@format_option(["text", "markdown", "json", "csv"])
def list_checks(name: str | None, fmt: str) -> None:
    """List the check catalogue: id, severity, what each check protects, how to repair.

    The checks of one index come first, then the transition checks that
    'check --base' adds when it compares two revisions. json and csv give one
    row a check (id, severity, protects, repair, fix, reported, passes). With
    NAME, one check's whole documentation: also its scope, its fix, an example
    it reports and a legal look-alike it passes, the file that defines it and
    the query it runs (exit 2, with the nearest name, when there is no such check).
    """
    checks = [api.check_named(name)] if name is not None else api.catalogue()
    if fmt in report.ROW_FORMATS:
        rows = [dataclasses.asdict(c) for c in checks]
        click.echo(report.output_rows(rows, report.CHECK_KEYS, fmt))
    elif name is not None:
        click.echo(report.check_text(checks[0]))
    else:
        index, transitions = api.catalogue(False), api.catalogue(True)
        click.echo(report.catalogue_text(index, transitions, fmt == "markdown"), nl=False)


@cli.command(name="export")
@click.argument("repo", required=False, type=click.Path(file_okay=False, path_type=Path))
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(PROV_FORMATS),
    default="prov-json",
    show_default=True,
    help="PROV-JSON, PROV-N, PROV-O (RDF, as Turtle) or PROV-XML.",
)
@click.option(
    "--node",
    metavar="ID_OR_PACKET_DIR",
    help="Only this record's or handoff packet's lineage (named as lineage names it).",
)
def export_command(repo: Path | None, db_path: Path, fmt: str, node: str | None) -> None:
    """The provenance of the index as W3C PROV, for other provenance tools.

    Records and handoff packets are entities, derivative_of and replies derivations,
    a response generated by answering its packet, a packet by the handoff that used
    its input_packets; a reference naming nothing is said on its entity
    (labnote:missing), never a relation. With REPO the index is built first.
    """
    if repo is not None:
        run_build(repo, db_path, (), api.configuration(repo))
    click.echo(api.export(db_path, fmt, node), nl=False)


@cli.command(name="lineage")
@click.argument("key", metavar="ID_OR_PACKET_DIR")
@db_option
@click.option(
    "--direction",
    type=click.Choice(DIRECTIONS),
    default="both",
    show_default=True,
    help="up: where it came from; down: what came from it.",
)
@format_option(["text", "json"])
def lineage(key: str, db_path: Path, direction: str, fmt: str) -> None:
    """The provenance tree of a record or handoff packet, from the index.

    ID_OR_PACKET_DIR is a record ID, a record file, a handoff packet directory
    or its manifest path. Registry records follow derivative_of, source
    packets, responses and replies; handoff packets follow input_packets.
    Exit 2 when nothing has that name.
    """
    tree = api.lineage(db_path, key, cast(api.Direction, direction))
    if fmt == "json":
        click.echo(json.dumps(tree, indent=2))
    else:
        click.echo(report.lineage_text(dict(tree)))


@cli.command(name="views")
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Build the index into this file (kept) and make the views from it "
    "(default: no index; the records are read from the files).",
)
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; exit 1 listing each view that differs, 0 when all are current.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for the views (default: REPO/registry).",
)
def views_command(repo: Path, db_path: Path | None, check_only: bool, out: Path | None) -> None:
    """Generate the CSV registries and registry/INDEX.md from the records.

    The views are made from the canonical records byte for byte in the
    reference generator's format (docs/views.md): read from the files
    themselves, or, with --db, from the index built there first (kept). A
    view path that is a symlink or not a regular file, or a registry/ that
    leads outside REPO, is never written or read: exit 2 naming it. While a record file cannot be
    read, no view is written or compared (it would drop the record's row):
    exit 2 naming the files.
    """
    # The views module and the settings alone: without --db, no index is made,
    # and neither sqlite-utils nor the record models are loaded.
    out = views_.output_directory(repo, out)
    settings = configuration_.configuration(repo)
    if db_path is None:
        generated = views_.repository_views(repo, settings.excluded(), progress_bar("Reading"))
    else:
        run_build(repo, db_path, (), settings)
        generated = api.views(db_path)
    if check_only:
        stale = views_.stale_views(generated, out)
        for path, diff in stale:
            click.echo(f"{'missing' if diff == 'missing' else 'stale'}: {path}")
            if diff != "missing":  # the committed file's lines are repository content
                # Split at newlines only: every other control character is shown escaped.
                click.echo("\n".join(shown(line) for line in diff.rstrip("\n").split("\n")))
        if not stale:
            click.echo(f"{plural(len(generated), 'view is', 'views are')} current")
        sys.exit(EXIT_FOUND if stale else EXIT_OK)
    for target in views_.write_views(generated, out):
        click.echo(f"wrote {target}", err=True)


@cli.command(name="diff")
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@click.option("--base", metavar="REV", required=True, help="The git revision to compare with.")
@click.option("--head", metavar="REV", help="The revision to compare (default: the working tree).")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index the head into this file and keep it, with the changes (for "
    "serve's story pages); without it the index is temporary and removed.",
)
@format_option(["text", "json", "csv"])
def diff_command(repo: Path, base: str, head: str | None, db_path: Path | None, fmt: str) -> None:
    """What changed between two revisions, record by record, for reviewers.

    Records and handoff packets added and removed, status changes, moves,
    references added and removed, and other edits. The head is indexed into a
    temporary file, or into --db, which keeps the changes too (for serve's
    story pages); the base is read from git objects without a checkout.
    Nothing is written into the repository.
    """
    rows = [vars(c) for c in api.diff(repo, base, head, db=db_path)]
    echo_rows(rows, api.DIFF_KEYS, fmt, report.diff_text)


@cli.command(name="fix")
@click.argument("repo", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--apply",
    "apply_",
    is_flag=True,
    help="Make the changes (without it nothing is written), then index and check again.",
)
@click.option(
    "--check",
    "only",
    multiple=True,
    metavar="NAME",
    help="Only the fixes of this check (repeat for more); 'checks' lists the fixable ones.",
)
@format_option(["text", "json"])
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the index in this file (default: a temporary index, removed afterwards).",
)
def fix_command(
    repo: Path, apply_: bool, only: tuple[str, ...], fmt: str, db_path: Path | None
) -> None:
    """Repair what can be repaired mechanically: a dry run unless --apply.

    Without --apply it writes nothing and prints each change: 'rename a -> b'
    for a move, a unified diff for new content. Fixes: move records (and their
    artifacts) into the bucket of their status, rename a file to its ID, move a
    record to its created_at year, rename legacy fields, write stale views,
    strip a byte order mark. Never a packet.lock.json or a handoff packet,
    never through a symlink or outside REPO, never a record's text; a file two
    fixes want is left alone and reported. Exit 1 when there is something to
    fix (or, with --apply, something could not be fixed), 0 otherwise; 130
    when interrupted (143 for SIGTERM), between two repairs, naming those made.
    """
    known = {c.id for c in api.catalogue(transitions=False) if c.fix}
    unknown = sorted(set(only) - known)
    if unknown:
        raise click.UsageError(
            f"no fix for {', '.join(unknown)}: the fixable checks are {', '.join(sorted(known))}"
        )
    result = api.fix(repo, apply=apply_, checks=only or None, db=db_path)
    repairs, refusals = result.plan.repairs, result.plan.refusals
    if fmt == "json":
        click.echo(json.dumps(report.fix_json(result), indent=2))
    else:
        click.echo(report.fix_text(result))
    failed = any(r.status.startswith("failed") for r in repairs)
    if apply_:
        sys.exit(EXIT_FOUND if failed or refusals or result.remaining else EXIT_OK)
    sys.exit(EXIT_FOUND if repairs else EXIT_OK)


# The commands of many repositories and of a site, defined in their own module.
for _command in (serve_command, publish_command, merge_command):
    cli.add_command(_command)


def main() -> None:
    """The ``labnote-index`` program: the command line, its outcome settled once a
    command has done its work (a Ctrl-C landing as it exits is ignored)."""
    # The record models are the program's own: no pydantic plugin installed
    # beside it is run on them, as no sqlite-utils plugin is run on an index
    # (index_file.as_database), and the look through every installed package
    # for one (9-13 ms of each process that validates) is skipped. The user's
    # own setting stands (an empty one runs every plugin).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    cli.settle_when_done = True
    cli(prog_name="labnote-index")
