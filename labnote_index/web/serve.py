"""Publish an index with Datasette: read-only, with the project's metadata."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import weakref
import webbrowser
from pathlib import Path
from typing import Any

from datasette.app import Datasette
from datasette.database import Database

from ..errors import ServeError
from ..index.schema import METADATA_DATABASE, described_index
from ..index.tempfiles import new_directory, temp_name
from .facets import CountedFacet


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


def make_datasette(db_path: Path) -> Datasette:
    """Datasette over the index, immutable (opened read-only, never written).

    Datasette's threads each connect on first use, so a server given the index's
    name would read whatever file has that name by then: a build replacing it
    meanwhile would split its answers over two indexes. It is given a name of
    its own for the file instead (``pinned``), which a build never replaces."""
    db_path = Path(db_path)
    datasette = Datasette(metadata=load_metadata(db_path.stem), settings=SETTINGS)
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


def serve(db_path: Path, host: str, port: int, open_browser: bool = False) -> None:
    """Serve the index at ``db_path`` on ``host``:``port`` until interrupted
    (port 0: one the system chooses, printed); open a browser when asked."""
    import uvicorn

    sock = listen(host, port)
    datasette = make_datasette(db_path)
    port = sock.getsockname()[1]  # the one chosen, for --port 0
    url = f"http://{host}:{port}/{Path(db_path).stem}"
    if open_browser:
        threading.Timer(1.0, webbrowser.open, [url]).start()
    print(f"Serving {db_path} at {url} (Ctrl-C to stop)", flush=True)
    server = uvicorn.Server(uvicorn.Config(datasette.app(), log_level="warning"))
    try:
        server.run(sockets=[sock])
    finally:
        release(datasette)
