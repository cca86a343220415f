"""Publish an index with Datasette: read-only, with the project's metadata."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
import weakref
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from datasette.app import Datasette
from datasette.database import Database

from ..errors import ServeError
from ..index.schema import METADATA_DATABASE, described_index
from ..index.tempfiles import new_directory, temp_name
from .facets import COUNTS_KEY, CountedFacet


def load_metadata(database: str = METADATA_DATABASE) -> dict[str, Any]:
    """The packaged metadata.yml, applied to the database called ``database``,
    its facets counted once over a whole table (the plugin's ``counted`` facet)."""
    metadata = described_index()
    described = metadata["databases"][METADATA_DATABASE]
    for table in described["tables"].values():
        if "facets" in table:
            table["facets"] = [{CountedFacet.type: facet} for facet in table["facets"]]
    metadata["databases"] = {database: described}
    return metadata


# Suggested facets cost every table page a query per column and help nobody on a
# described index (its facets are chosen in metadata.yml); facets get less time.
SETTINGS = {
    "default_page_size": 50,
    "sql_time_limit_ms": 3000,
    "suggest_facets": False,
    "facet_time_limit_ms": 500,
    "num_sql_threads": 3,
}


def make_datasette(db_path: Path, threads: int | None = None) -> Datasette:
    """Datasette over the index, immutable (opened read-only, never written);
    ``threads``: SQL threads (0: queries run in the server's own loop).

    Datasette's threads each connect on first use, so a server given the index's
    name would read whatever file has that name by then: a build replacing it
    meanwhile would split its answers over two indexes. It is given a name of
    its own for the file instead (``pinned``), which a build never replaces."""
    db_path = Path(db_path)
    settings = SETTINGS if threads is None else {**SETTINGS, "num_sql_threads": threads}
    datasette = Datasette(metadata=load_metadata(db_path.stem), settings=settings)
    path = pinned(db_path, datasette)
    datasette.add_database(Database(datasette, str(path), is_mutable=False), name=db_path.stem)
    datasette.remove_database("_memory")  # added for a Datasette given no files
    # The installed templates do not change while a server runs: Jinja need not
    # stat each of a page's templates again on every request.
    datasette.jinja_env.auto_reload = False
    return datasette


def pinned(db_path: Path, owner: Datasette) -> Path:
    """A name of this process's own for the index file as it is now, kept until
    ``release(owner)`` (or this process's exit): a hard link beside it (named as
    temporary files are, so one left by a killed server is cleared away by the
    next build), or where its directory cannot take one, a private copy in the
    system's temporary directory."""
    link = db_path.parent / temp_name("serve", db_path.name)
    try:
        os.link(db_path, link, follow_symlinks=False)
    except OSError:
        copy = new_directory("serve") / db_path.name
        shutil.copyfile(db_path, copy)
        owner._labnote_release = weakref.finalize(
            owner, shutil.rmtree, copy.parent, ignore_errors=True
        )
        return copy
    owner._labnote_release = weakref.finalize(owner, _unlink, link)
    return link


def release(datasette: Datasette) -> None:
    """Let go of the index file a server was pinned to."""
    finalizer = getattr(datasette, "_labnote_release", None)
    if finalizer is not None:
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
    replaced whole (copy on write), as its own add_database does."""
    name = Path(db_path).stem
    old = datasette.databases[name]
    let_go = getattr(datasette, "_labnote_release", None)
    fresh = Database(datasette, str(pinned(db_path, datasette)), is_mutable=False)
    fresh.name = fresh.route = name
    datasette.databases = {**datasette.databases, name: fresh}
    datasette.__dict__.pop(COUNTS_KEY, None)  # counted over the old index
    if old._read_connection is not None:
        old._read_connection.close()
    if let_go is not None:
        let_go()


def serve(
    db_path: Path,
    host: str,
    port: int,
    open_browser: bool = False,
    watcher: Watcher | None = None,
) -> None:
    """Serve the index at ``db_path`` on ``host``:``port`` until interrupted
    (port 0: one the system chooses, printed); open a browser when asked. With
    ``watcher``, run it in a thread of its own and take up each index it rebuilds
    at ``db_path`` without a restart."""
    import uvicorn

    sock = listen(host, port)
    datasette = make_datasette(db_path, threads=0 if watcher else None)
    port = sock.getsockname()[1]  # the one chosen, for --port 0
    url = f"http://{host}:{port}/{Path(db_path).stem}"
    if open_browser:
        threading.Timer(1.0, webbrowser.open, [url]).start()
    print(f"Serving {db_path} at {url} (Ctrl-C to stop)", flush=True)
    server = uvicorn.Server(uvicorn.Config(datasette.app(), log_level="warning"))
    stop = threading.Event()

    async def run() -> None:
        if watcher is not None:
            loop = asyncio.get_running_loop()

            def rebuilt() -> None:
                loop.call_soon_threadsafe(swap, datasette, Path(db_path))

            threading.Thread(target=watcher, args=(rebuilt, stop), daemon=True).start()
        await server.serve(sockets=[sock])

    try:
        asyncio.run(run())
    finally:
        stop.set()
        release(datasette)
