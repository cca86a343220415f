"""The commands of many repositories and of a site: ``serve`` (one index or
several), ``publish`` (a deployment of replicas), ``merge`` (an organisation
index). Registered on the group in ``cli.py``; each calls the library once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from . import lazy
from .choices import DEFAULT_DB
from .command import Failed, indexes_argument
from .errors import NoIndex, NotAnIndex

if TYPE_CHECKING:
    from . import api
else:  # loaded when a command first calls it (labnote_index/lazy.py)
    api = lazy.module("labnote_index.api")


@click.command(name="serve")
@click.argument(
    "db_paths",
    metavar="[DB]...",
    nargs=-1,
    type=click.Path(dir_okay=False, path_type=Path),
)
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to bind; the default serves this machine only.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open a web browser on the index.")
@click.option(
    "--watch",
    "repo",
    metavar="REPO",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Index REPO into DB first, then again (incrementally) whenever its files "
    "change, and serve each new index without a restart.",
)
def serve_command(
    db_paths: tuple[Path, ...], port: int, host: str, open_browser: bool, repo: Path | None
) -> None:
    """Browse an index in Datasette: described tables, canned provenance queries,
    full-text search and lineage graphs. The database is opened read-only; a
    build meanwhile writes a new file in its place, so the server goes on
    answering from the index it opened (restart it to serve the rebuild, or
    give --watch REPO: the server then builds and takes up each new index
    itself). The database page says when the index was built, and from what.

    Several indexes (one per repository) are served together, each under its
    repository's name: the home page shows each one's errors, warnings,
    orphans and waiting work side by side, and canned queries ask them all at
    once (every finding, orphan, open message, a milestone's handoff chain),
    from an organisation index merged from them at start (any number: see merge)."""

    from .index.build import BuildResult  # loaded by the build --watch runs anyway

    def told(outcome: BuildResult | Exception) -> None:
        if isinstance(outcome, BuildResult):
            click.echo(f"rebuilt: {outcome.summary()}", err=True)
        else:
            click.echo(f"not rebuilt: {outcome} (serving the previous index)", err=True)

    try:
        api.serve(
            db_paths or (Path(DEFAULT_DB),),
            host,
            port,
            open_browser,
            watch=repo,
            on_rebuilt=told,
        )
    except NoIndex:
        raise
    except NotAnIndex as exc:  # serve takes the index as DB, not as --db
        raise Failed(str(exc).replace("give another --db", "give another DB")) from exc


@click.command(name="publish")
@indexes_argument
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The deployment directory to write (absent or empty).",
)
def publish_command(db_paths: tuple[Path, ...], out: Path) -> None:
    """Write a deployment that scales out: stateless Datasette replicas of these
    indexes, as many as the readers need, behind any load balancer.

    OUT gets the indexes (named as serve names them), metadata.json, datasette
    inspect's inspect-data.json (a replica starts without reading the
    databases through), wheels/ and a pinned requirements.txt, start.sh (the
    one command a replica runs; HOST and PORT from the environment) and a
    Dockerfile. Responses may be cached for a day by a CDN (the files never
    change under a replica); /-/health answers load balancers."""
    names = api.publish(db_paths, out)
    click.echo(f"Wrote {out}: {', '.join(names)}; run {out / 'start.sh'} (PORT=8001 by default)")


@click.command(name="merge")
@indexes_argument
@click.option(
    "--db",
    "org_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The organisation index to write (made anew, or brought up to date).",
)
def merge_command(db_paths: tuple[Path, ...], org_path: Path) -> None:
    """Merge the indexes of many repositories into one organisation index.

    Each DB is one repository's index, built and checked alone (so its
    references name only its own records, and its findings are its own). The
    organisation index holds every table, and every view materialised (findings,
    orphans, open_messages, ...), each row under a repository column (named as
    serve names them); repositories lists them. An orphaned reference whose ID
    another repository has stays an orphan, and says where (orphans.exists_in).
    Incremental: an index unchanged since the last merge is not copied again; a
    repository not named this time is dropped. Exit 2 on a DB that is not an
    index, or one built by another version."""
    result = api.merge(db_paths, org_path)
    kept = f"; {len(result.kept)} kept as they were" if result.kept else ""
    dropped = f"; dropped {', '.join(result.dropped)}" if result.dropped else ""
    merged = ", ".join(result.merged) or "none"
    click.echo(f"Merged into {org_path}: {merged}{kept}{dropped}", err=True)
