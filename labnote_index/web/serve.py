"""Publish an index with Datasette: read-only, with the project's metadata."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
import weakref
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from datasette.app import Datasette
from datasette.database import Database

from ..errors import ServeError
from ..index.metadata import METADATA_DATABASE, described_index
from ..index.organisation import ORGANISATION, index_names, merge_indexes
from ..index.tempfiles import new_directory, temp_name
from .facets import CountedFacet
from .state import state_of


def load_metadata(*databases: str) -> dict[str, Any]:
    """The packaged metadata.yml, applied to each database named (``labnote`` when
    none is), its facets counted once over a whole table (the plugin's
    ``counted`` facet); with several, the cross-repository queries too."""
    metadata = described_index()
    described = metadata["databases"][METADATA_DATABASE]
    for table in described["tables"].values():
        if "facets" in table:
            table["facets"] = [{CountedFacet.type: facet} for facet in table["facets"]]
    names = databases or (METADATA_DATABASE,)
    metadata["databases"] = {name: described for name in names}
    if len(names) > 1:
        metadata["databases"][ORGANISATION] = {
            "title": "Every repository",
            "description": "Every served repository's rows, each under its name "
            "(an organisation index, as labnote-index merge makes).",
            "queries": organisation_queries(),
        }
    return metadata


def organisation_queries() -> dict[str, Any]:
    """Canned queries over every served repository at once: plain SELECTs of the
    organisation index (index/organisation.py), which holds each repository's
    rows under its name, so that they answer over any number of repositories
    (Datasette's cross-database queries stop at SQLite's ten attached)."""
    return {
        "every_finding": {
            "title": "Every finding, in every repository",
            "sql": "SELECT repository, severity, [check], record_id, file, field, message "
            "FROM findings\nORDER BY severity = 'warning', repository, [check], file",
        },
        "every_orphan": {
            "title": "Every orphaned reference, in every repository",
            "sql": "SELECT repository, field, record_type, record_id, file, missing_id, "
            "expected_type, exists_in FROM orphans\nORDER BY repository, field, file",
        },
        "every_open_message": {
            "title": "Every open message, in every repository, oldest first",
            # The view each dashboard counts, as each repository had it.
            "sql": "SELECT repository, message_id, status, created_at, summary, file "
            "FROM open_messages\nORDER BY created_at",
        },
        "milestone_chain": {
            "title": "The handoff chain of a milestone, in every repository",
            "sql": "SELECT repository, role, milestone, packet_version, status, created_at, "
            "manifest FROM handoff_packets WHERE milestone = :milestone\n"
            "ORDER BY repository, created_at, role",
        },
    }


# Suggested facets cost every table page a query per column and help nobody on a
# described index (its facets are chosen in metadata.yml); facets get less time.
SETTINGS = {
    "default_page_size": 50,
    "sql_time_limit_ms": 3000,
    "suggest_facets": False,
    "facet_time_limit_ms": 500,
    "num_sql_threads": 3,
}


def make_datasette(db_path: Path | Sequence[Path], threads: int | None = None) -> Datasette:
    """Datasette over the index (or indexes), immutable (opened read-only, never
    written); ``threads``: SQL threads (0: queries run in the server's own loop).
    Several indexes are served together, with the cross-repository queries of
    an organisation index merged from them (``organisation``).

    Datasette's threads each connect on first use, so a server given the index's
    name would read whatever file has that name by then: a build replacing it
    meanwhile would split its answers over two indexes. It is given a name of
    its own for the file instead (``pinned``), which a build never replaces."""
    paths = [Path(db_path)] if isinstance(db_path, str | Path) else [Path(p) for p in db_path]
    names = index_names(paths)
    settings = SETTINGS if threads is None else {**SETTINGS, "num_sql_threads": threads}
    datasette = Datasette(metadata=load_metadata(*names), settings=settings)
    for path, name in zip(paths, names, strict=True):
        pin = pinned(path, datasette, name)
        datasette.add_database(Database(datasette, str(pin), is_mutable=False), name=name)
    datasette.remove_database("_memory")  # added for a Datasette given no files
    if len(paths) > 1:  # the cross-repository queries' database, made from the pins
        merged = new_directory("serve") / f"{ORGANISATION}.db"
        state_of(datasette).releases[ORGANISATION] = weakref.finalize(
            datasette, shutil.rmtree, merged.parent, ignore_errors=True
        )
        pins = [datasette.get_database(n).path for n in names]
        merge_indexes(list(zip(names, map(Path, pins), strict=True)), merged)
        organisation = Database(datasette, str(merged), is_mutable=False)
        datasette.add_database(organisation, name=ORGANISATION)
    # The installed templates do not change while a server runs: Jinja need not
    # stat each of a page's templates again on every request.
    datasette.jinja_env.auto_reload = False
    return datasette


def pinned(db_path: Path, owner: Datasette, name: str | None = None) -> Path:
    """A name of this process's own for the index file as it is now, kept until
    ``release(owner)`` (or this process's exit): a hard link beside it (named as
    temporary files are, so one left by a killed server is cleared away by the
    next build), or where its directory cannot take one, or its path cannot be
    given to Datasette, a link or a private copy in the system's temporary
    directory. ``name``: the database's (an earlier pin of it is the caller's to
    release)."""
    key = name or Path(db_path).stem
    releases = state_of(owner).releases
    link = db_path.parent / temp_name("serve", db_path.name)
    if uri_safe(link):
        try:
            os.link(db_path, link, follow_symlinks=False)
        except OSError:
            pass
        else:
            releases[key] = weakref.finalize(owner, _unlink, link)
            return link
    private = new_directory("serve") / "index.db"
    releases[key] = weakref.finalize(owner, shutil.rmtree, private.parent, ignore_errors=True)
    try:
        os.link(db_path, private, follow_symlinks=False)
    except OSError:  # another file system
        shutil.copyfile(db_path, private)
    return private


def uri_safe(path: Path) -> bool:
    """Whether Datasette can open ``path``: it splices a file's path into a SQLite
    URI as it is, where a '?' or '#' ends the path and a '%' begins an escape
    (so a directory named 'q?x' served the empty database SQLite made at 'q')."""
    return not set("?#%") & set(str(path.absolute()))


def release(datasette: Datasette) -> None:
    """Let go of the index files a server was pinned to."""
    for finalizer in list(state_of(datasette).releases.values()):
        finalizer()


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, bound before anything is announced."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ServeError(
            f"cannot serve on {host}:{port} ({reason}): choose another --port"
        ) from exc
    return sock


# A watcher: told how to have the server take up a rebuilt index, and when to stop.
Watcher = Callable[[Callable[[], None], threading.Event], None]


def swap(datasette: Datasette, db_path: Path) -> None:
    """Serve the index now at ``db_path`` in place of the one served, under the
    same name: pinned anew, the old pin released, the kept facet counts dropped.
    Run in the server's loop, with SQL run there too (no threads), so that no
    query is half-way through the old index; Datasette's database list is
    replaced through its public remove_database and add_database, with no await
    between them: no request sees the database missing."""
    name = Path(db_path).stem
    old = datasette.get_database(name)
    state = state_of(datasette)
    let_go = state.releases.get(name)
    fresh = Database(datasette, str(pinned(db_path, datasette, name)), is_mutable=False)
    datasette.remove_database(name)
    datasette.add_database(fresh, name=name, route=name)
    state.facet_counts.clear()  # counted over the old index
    old.close()
    if let_go is not None:
        let_go()


def serve(
    db_path: Path | Sequence[Path],
    host: str,
    port: int,
    open_browser: bool = False,
    watcher: Watcher | None = None,
) -> None:
    """Serve the index at ``db_path`` (or several together) on ``host``:``port``
    until interrupted (port 0: one the system chooses, printed); open a browser
    when asked. With ``watcher`` (one index), run it in a thread of its own and
    take up each index it rebuilds at ``db_path`` without a restart."""
    import uvicorn

    paths = [Path(db_path)] if isinstance(db_path, str | Path) else [Path(p) for p in db_path]
    sock = listen(host, port)
    datasette = make_datasette(paths, threads=0 if watcher else None)
    port = sock.getsockname()[1]  # the one chosen, for --port 0
    if len(paths) == 1:
        url, served = f"http://{host}:{port}/{paths[0].stem}", str(paths[0])
    else:  # the site's home page: every repository side by side
        url, served = f"http://{host}:{port}/", ", ".join(map(str, paths))
    if open_browser:
        threading.Timer(1.0, webbrowser.open, [url]).start()
    print(f"Serving {served} at {url} (Ctrl-C to stop)", flush=True)
    server = uvicorn.Server(uvicorn.Config(datasette.app(), log_level="warning"))
    stop = threading.Event()

    async def run() -> None:
        if watcher is not None:
            loop = asyncio.get_running_loop()

            def rebuilt() -> None:
                loop.call_soon_threadsafe(swap, datasette, paths[0])

            threading.Thread(target=watcher, args=(rebuilt, stop), daemon=True).start()
        await server.serve(sockets=[sock])

    try:
        asyncio.run(run())
    finally:
        stop.set()
        release(datasette)
