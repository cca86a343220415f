"""The command line's frame: the exit codes a CI job can trust, every library
error mapped to one clear line and exit 2, Ctrl-C and SIGTERM told and mapped
to 130 and 143, and the progress bar of a long build (``cli.py`` holds the
commands themselves)."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import interrupts, lazy
from .choices import DEFAULT_DB
from .errors import LabnoteError, NoIndex
from .progress import Progress
from .text import shown

if TYPE_CHECKING:
    from . import api
    from .index.build import BuildResult
    from .output import report
else:  # loaded when a command first calls it (labnote_index/lazy.py)
    api = lazy.module("labnote_index.api")
    report = lazy.module("labnote_index.output.report")

# Exit codes a CI job can trust: 1 only ever means "findings".
EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
EXIT_BROKEN_PIPE = 141  # what a shell reports for a process ended by SIGPIPE


class Failed(click.ClickException):
    """Nothing to report on (no index could be made or read): exit 2, never 1."""

    exit_code = EXIT_USAGE


# Errors and what they mean on the command line, in one place: the library's
# own (each says what to do), an index SQLite cannot read, and the system's.
ERRORS: dict[type[BaseException], str] = {
    LabnoteError: "{}",
    sqlite3.DatabaseError: "cannot read the index: {} (rebuild it with 'build --full', "
    "or give another --db)",
    OSError: "{}",
}


class LabnoteGroup(click.Group):
    """Maps every library error to one clear line and exit 2, Ctrl-C to 130 and
    SIGTERM to 143, each saying what had been changed."""

    # Run as the program (main), a command that has done its work ignores a late
    # Ctrl-C: its exit is its own (or 130, said), never a death by the signal.
    settle_when_done = False

    def invoke(self, ctx: click.Context) -> Any:
        """Run a command with SIGTERM unwound as an interruption, and map what
        goes wrong to the exit codes the README documents."""
        interrupts.forget()
        main = threading.current_thread() is threading.main_thread()
        before = signal.signal(signal.SIGTERM, interrupts.raise_terminated) if main else None
        try:
            try:
                return super().invoke(ctx)
            finally:
                if main and self.settle_when_done:
                    interrupts.settle()
        except BrokenPipeError:
            # The reader went away (`| head`): output ends quietly, as cat's does.
            # Whatever is still buffered for stdout goes nowhere, not to an error.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
        except KeyboardInterrupt as exc:
            if main and self.settle_when_done:
                interrupts.settle()  # this answer is the last word: no second signal cuts it
            # Said as it is: what was changed for good before the signal, if anything.
            done = interrupts.changes()
            said = "; ".join(shown(d) for d in done) + "; nothing else was changed"
            click.echo(
                f"interrupted: {said if done else 'nothing was changed (no index was replaced)'}",
                err=True,
            )
            terminated = isinstance(exc, interrupts.Terminated)
            raise click.exceptions.Exit(
                EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
            ) from None
        except NoIndex as exc:
            advice = "give REPO, or " if ctx.invoked_subcommand in ("check", "orphans") else ""
            build = "labnote-index build REPO --db FILE"
            raise Failed(f"{exc}: {advice}run '{build}' first") from exc
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_FULL:
                raise Failed(ERRORS[sqlite3.DatabaseError].format(exc)) from exc
            raise Failed(
                "cannot write an index: the disk is full: free space, or give --db (and "
                "TMPDIR, for the temporary indexes of --no-db and --base) a disk with room"
            ) from exc
        except tuple(ERRORS) as exc:
            kind = next(k for k in ERRORS if isinstance(exc, k))
            raise Failed(ERRORS[kind].format(exc)) from exc
        finally:
            if main:
                signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)


class _Bar(Progress):
    """A progress bar on stderr (the CLI shows one only on a terminal)."""

    def __init__(self, label: str) -> None:
        self.bar: Any = None
        self.label = label

    def start(self, total: int) -> None:
        self.finish()  # a damaged index is rebuilt in full: a second bar
        self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
        self.bar.__enter__()

    def advance(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def progress_bar(label: str = "Indexing") -> Progress | None:
    """A bar on standard error when it is a terminal; no progress otherwise."""
    return _Bar(label) if sys.stderr.isatty() else None


# Options and output the commands share.


def db_option(func):
    """The --db option: the SQLite index file."""
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=DEFAULT_DB,
        show_default=True,
        help="The SQLite index file.",
    )(func)


def format_option(choices: list[str], help: str | None = None):
    """The --format option, of these ``choices`` (text first, the default)."""
    return click.option(
        "--format", "fmt", type=click.Choice(choices), default="text", show_default=True, help=help
    )


def echo_rows(rows: list[dict[str, Any]], keys: tuple[str, ...], fmt: str, text: Any) -> None:
    """A listing: ``text(rows)`` for people, else the one json/csv writer."""
    if fmt in report.ROW_FORMATS:
        # color=True: click would strip escape sequences from values off a terminal.
        click.echo(report.output_rows(rows, keys, fmt), color=fmt == "csv" or None)
    else:
        click.echo(text(rows))


CHECK_FORMATS = ("text", "json", "csv", "github", "sarif", "markdown", "junit", "gitlab")


def format_and_path(value: str) -> tuple[str, Path]:
    """--also-write's FORMAT:PATH."""
    fmt, sep, path = value.partition(":")
    if not sep or not path or fmt not in CHECK_FORMATS:
        raise click.BadParameter(
            f"{value!r}: give FORMAT:PATH, FORMAT one of {', '.join(CHECK_FORMATS)}"
        )
    return fmt, Path(path)


def also_write_option(func):
    """check's --also-write FORMAT:PATH, repeatable: other reports of the same findings."""
    return click.option(
        "--also-write",
        "also_write",
        multiple=True,
        metavar="FORMAT:PATH",
        callback=lambda ctx, param, values: [format_and_path(v) for v in values],
        help="Also write the findings in FORMAT (any --format) to the file PATH; "
        "repeatable: one build and one comparison give every report a CI job wants "
        "(annotations on stdout, a markdown summary and SARIF in files).",
    )(func)


def write_report(path: Path, text: str) -> None:
    """One --also-write report, written whole or not at all (exit 2 naming it)."""
    from .index.tempfiles import replace_file

    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise Failed(f"cannot write {path}: {exc.strerror or exc}") from exc


def build_options(func):
    """The options of a command that builds an index: FILES, --full, --jobs and the
    configuration's --isolated and --enforce-layout."""
    func = click.argument("files", nargs=-1, type=str)(func)
    func = click.option(
        "--full",
        is_flag=True,
        help="Rebuild from scratch instead of reading again only the files that changed.",
    )(func)
    func = click.option(
        "--jobs",
        type=click.IntRange(min=1),
        help="Processes to share the reading among when there are thousands of files "
        "to read, and threads to share the checks' queries among on a large index "
        "(default: the cores available, up to 4).",
    )(func)
    func = click.option(
        "--enforce-layout",
        is_flag=True,
        help="Apply the canonical-location rules (file name = ID, status buckets, "
        "artifact directories) to files outside registry/ too (the configuration's "
        "enforce-layout).",
    )(func)
    func = click.option(
        "--isolated",
        is_flag=True,
        help="Ignore the repository's configuration file (labnote-index.toml, or "
        "[tool.labnote-index] in pyproject.toml).",
    )(func)
    return func


def git_asked_early(repo: Path | None, wanted: bool) -> AbstractContextManager[object]:
    """A block in which git is already looking at REPO's work tree for the build
    the command runs (read/git.status_asked_early): where it will ask git
    (``wanted``: an index kept, every file), git looks while the library loads."""
    if repo is None or not wanted:
        return nullcontext()
    from .read.git import status_asked_early  # not for --help

    return status_asked_early(repo)


def run_build(
    repo: Path,
    db_path: Path,
    files: tuple[str, ...],
    settings: api.Settings,
    full: bool = False,
    jobs: int | None = None,
) -> BuildResult:
    """Build an index for a command: a progress bar on a terminal, and a note
    when a damaged index had to be rebuilt in full."""
    result = api.build(
        repo,
        db_path,
        files=files,
        full=full,
        jobs=jobs,
        progress=progress_bar(),
        settings=settings,
    )
    if result.rebuilt_because:
        click.echo(f"note: {result.rebuilt_because}", err=True)
    return result


# DB...: the indexes a command of many takes (publish, merge), each one that exists.
indexes_argument = click.argument(
    "db_paths",
    metavar="DB...",
    nargs=-1,
    required=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
)

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def help_text(group: click.Group, name: str | None = None, width: int = 88) -> str:
    """The --help of a command of ``group`` (of the group itself for None), at a fixed
    width: the README's command reference is made from it (cog), so the two cannot
    drift."""
    settings = {"terminal_width": width, "max_content_width": width, **CONTEXT_SETTINGS}
    top = click.Context(group, info_name="labnote-index", **settings)
    if name is None:
        return group.get_help(top)
    command = group.commands[name]
    return command.get_help(click.Context(command, info_name=name, parent=top, **settings))
