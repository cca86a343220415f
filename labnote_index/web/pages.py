"""The plugin's pages: an index's home and the site's, a record's lineage and its
story, drawn from the index, and the health check.

Every page that draws repository data is served with a Content-Security-Policy
that allows no script but Datasette's own inline ones (and on an index's home,
Datasette's own static scripts: its SQL editor's).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from datasette.utils import tilde_decode, tilde_encode
from datasette.utils.asgi import Forbidden, NotFound, Response
from datasette.version import __version__ as datasette_version
from markupsafe import Markup

from ..errors import NodeNotFound
from ..index.index_file import as_database
from ..queries import lineage
from ..text import parent_dir
from .dashboard import FIRST_TABLES, dashboard, headline, table_url_for
from .graph import lineage_svg
from .links import is_index, lineage_url, page_url
from .state import once_per_index, state_of

if TYPE_CHECKING:
    import sqlite_utils

# On a page that draws repository data, no script runs but Datasette's own
# inline ones, allowed by their hashes (record text is escaped, so it can never
# become a script of its own).
LINEAGE_CSP = (
    "default-src 'self'; script-src {self}{scripts}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:"
)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
# A lineage page names its node in the URL: longer than this is no record's.
MAX_NODE_NAME = 1000


def script_hashes(html: str) -> str:
    """The CSP source list allowing exactly the inline scripts of a page."""
    hashes = [
        f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
        for body in _INLINE_SCRIPT.findall(html)
    ]
    return " ".join(hashes) or "'none'"


def _row_url(datasette: Any, database: str, node: dict[str, Any]) -> str:
    if node["kind"] == "handoff_packet":
        key = parent_dir(node["node"])
        return datasette.urls.row(database, "handoff_packets", tilde_encode(key))
    return datasette.urls.row(database, "records", tilde_encode(node["node"]))


async def _for_node(
    datasette: Any, request: Any, page: str, compute: Callable[[sqlite_utils.Database, str], Any]
) -> tuple[str, Any] | Response:
    """(database, what ``compute`` found for the page's node), or the help page when
    the node is missing, too long to be a name, or names nothing."""
    database = request.url_vars["database"]
    if not is_index(datasette, database):
        raise NotFound(f"{database} is not a labnote index: {page} pages are for labnote indexes")
    key = request.args.get("node", "")
    if not key.strip() or len(key) > MAX_NODE_NAME:
        return await _lineage_help(datasette, request, database, key, page)
    try:
        found = await datasette.get_database(database).execute_fn(
            lambda conn: compute(as_database(conn), key)
        )
    except NodeNotFound as exc:
        return await _lineage_help(datasette, request, database, key, page, exc.near)
    return database, found


async def lineage_page(datasette: Any, request: Any) -> Response:
    """The lineage page of ``?node=``: the picture and the tree, up and down."""
    found = await _for_node(
        datasette, request, "lineage", lambda db, key: lineage.lineage(db, key, "both")
    )
    if isinstance(found, Response):
        return found
    database, tree = found

    for direction in ("up", "down"):
        for b in lineage.branches_in_order(tree[direction]):
            if b["missing"]:
                continue  # nothing to link to: that is the point
            b["row_url"] = _row_url(datasette, database, b)
            b["lineage_url"] = lineage_url(datasette, database, b["node"])
    tree["row_url"] = _row_url(datasette, database, tree)
    svg = lineage_svg(tree, lambda node: lineage_url(datasette, database, node))
    html = await datasette.render_template(
        "labnote_lineage.html",
        {
            "database": database,
            "tree": tree,
            "svg": Markup(svg),
            "max_nodes": lineage.MAX_NODES,
        },
        request=request,
    )
    return _page(html, datasette=datasette)


async def _lineage_help(
    datasette: Any, request: Any, database: str, key: str, page: str, near: str | None = None
) -> Response:
    """What a lineage or story page takes, when it was given nothing, or nothing
    it knows (and the nearest name it does know, if one is near)."""
    shown_key = key if len(key) <= 200 else key[:200] + f"... ({len(key)} characters)"
    near_url = (
        datasette.urls.path(f"/{quote(database)}/-/{page}?node={quote(near)}") if near else None
    )
    html = await datasette.render_template(
        "labnote_lineage_help.html",
        {
            "database": database,
            "key": shown_key,
            "typed": key if len(key) <= 200 else "",  # the form's field, to correct
            "empty": not key.strip(),
            "page": page,
            "near": near,
            "near_url": near_url,
        },
        request=request,
    )
    return _page(html, status=404)


def _page(
    html: str, status: int = 200, datasette: Any = None, own_scripts: bool = False
) -> Response:
    """``html`` with its CSP (and its Cache-Control when ``datasette`` is given);
    ``own_scripts`` allows Datasette's static scripts too (the SQL editor's)."""
    csp = LINEAGE_CSP.format(self="'self' " if own_scripts else "", scripts=script_hashes(html))
    headers = {"Content-Security-Policy": csp}
    if datasette is not None and status == 200:
        # As Datasette's own pages: the index never changes under a server.
        headers["Cache-Control"] = f"max-age={datasette.setting('default_cache_ttl')}"
    return Response.html(html, status=status, headers=headers)


async def site_home(datasette: Any, request: Any) -> Response:
    """The site's home page: every repository side by side (its errors, warnings,
    orphaned references and waiting work, each a link to its own dashboard),
    the queries across them all when there are several, and every database
    served. The plugin's own: Datasette 0.65's home checks the visibility of
    every table of every database, each check a deep copy of the metadata,
    which holds every database's (14 s at fifty repositories)."""
    if not await datasette.permission_allowed(request.actor, "view-instance", default=True):
        return Response.html("Forbidden", status=403)
    kept = state_of(datasette).headlines
    repositories = []
    for name, db in datasette.databases.items():
        if not is_index(datasette, name):
            continue
        line = await once_per_index(kept, name, db, partial(headline, db))
        repositories.append({"name": name, "url": datasette.urls.database(name), **line})
    databases = [
        {"name": name, "url": datasette.urls.database(name), "tables": len(await db.table_names())}
        for name, db in datasette.databases.items()
        if name != "_internal"
    ]
    context = {
        "labnote_title": datasette.metadata("title") or "LabNote repositories",
        "labnote_repositories": repositories,
        "labnote_databases": databases,
    }
    page = await datasette.render_template("labnote_site.html", context, request=request)
    return Response.html(page)


# Actors whose view of each index is kept (past it, every view is forgotten).
MAX_ACTORS_KEPT = 256


async def database_home(datasette: Any, request: Any) -> Response:
    """An index's home page, at its database's address (asgi_wrapper sends a bare
    ``/DB`` here; with a query, ``/DB?sql=...`` and the rest, it is Datasette's
    own page): the dashboard, the canned queries, the tables that hold rows with
    their counts and descriptions, the SQL box, and a link to Datasette's own
    list of every table. The plugin's own: Datasette 0.65's database page asks
    the view-table permission of every table and view, each ask a deep copy of
    the whole metadata (0.4 s at 43,508 records); here what an actor may see of
    an index is asked once while it is served, like the dashboard's counts."""
    route = tilde_decode(request.url_vars["database"])
    try:
        db = datasette.get_database(route=route)
    except KeyError:
        raise NotFound(f"No database {route}") from None
    name = db.name
    if not is_index(datasette, name):
        raise NotFound(f"{name} is not a labnote index")
    actor = request.actor
    visible, _ = await datasette.check_visibility(
        actor, permissions=[("view-database", name), "view-instance"]
    )
    if not visible:
        raise Forbidden("You do not have permission to view this database")
    state = state_of(datasette)
    if len(state.listings) > MAX_ACTORS_KEPT:
        state.listings.clear()
    seen = await once_per_index(
        state.listings,
        f"{name}\0{json.dumps(actor, sort_keys=True, default=str)}",
        db,
        partial(_listing, datasette, actor, name, db),
    )
    shown = await once_per_index(
        state.dashboards, name, db, partial(dashboard, db, table_url_for(datasette, name))
    )
    metadata = dict((datasette.metadata("databases") or {}).get(name) or {})
    datasette.update_with_inherited_metadata(metadata)
    json_url = datasette.absolute_url(request, datasette.urls.database(name, format="json"))
    html = await datasette.render_template(
        "labnote_database.html",
        {
            **seen,
            "database": name,
            "metadata": metadata,
            "labnote_dashboard": shown,
            "labnote_first_tables": FIRST_TABLES,
            "alternate_url_json": json_url,
            "datasette_version": datasette_version,
        },
        request=request,
        view_name="database",
    )
    page = _page(html, datasette=datasette, own_scripts=True)
    page.headers["Link"] = f'{json_url}; rel="alternate"; type="application/json+datasette"'
    return page


async def _listing(datasette: Any, actor: Any, name: str, db: Any) -> dict[str, Any]:
    """What ``actor`` may see of index ``name``: its tables (with their counts),
    views and canned queries, and whether it may run SQL of its own."""

    async def may_see(resource: tuple[str, Any] | str) -> bool:
        permissions = [resource, ("view-database", name), "view-instance"]
        return (await datasette.check_visibility(actor, permissions=permissions))[0]

    hidden = set(await db.hidden_table_names())
    tables = [
        {"name": table, "count": count, "hidden": table in hidden}
        for table, count in (await db.table_counts(5)).items()
        if await may_see(("view-table", (name, table)))
    ]
    tables.sort(key=lambda t: (t["hidden"], t["name"]))
    views = [
        {"name": view}
        for view in await db.view_names()
        if await may_see(("view-table", (name, view)))
    ]
    queries = [
        query
        for query in (await datasette.get_canned_queries(name, actor)).values()
        if await may_see(("view-query", (name, query["name"])))
    ]
    allow_sql = await datasette.permission_allowed(actor, "execute-sql", name, default=True)
    return {"tables": tables, "views": views, "queries": queries, "allow_execute_sql": allow_sql}


async def health(datasette: Any) -> Response:
    """For load balancers: 200 when every index served answers a query, 503 if any
    does not (with which); never cached."""
    answers = {}
    for name in datasette.databases:
        if not is_index(datasette, name):
            continue
        try:
            await datasette.get_database(name).execute("SELECT count(*) FROM build_info")
            answers[name] = "ok"
        except Exception as exc:  # any failure is the answer: this replica is not well
            answers[name] = f"failing: {type(exc).__name__}"
    healthy = bool(answers) and all(v == "ok" for v in answers.values())
    return Response.json(
        {"ok": healthy, "indexes": answers},
        status=200 if healthy else 503,
        headers={"Cache-Control": "no-store"},
    )


async def story_page(datasette: Any, request: Any) -> Response:
    """One page that tells a record's (or handoff packet's) whole story."""
    found = await _for_node(datasette, request, "story", lineage.story)
    if isinstance(found, Response):
        return found
    database, info = found
    tree = info["tree"]
    tree["row_url"] = _row_url(datasette, database, tree)
    svg = lineage_svg(tree, lambda node: page_url(datasette, database, "story", node))

    def story(node: str | None) -> str | None:
        return page_url(datasette, database, "story", node) if node else None

    # A name missing here may name a record of another repository served beside
    # this one: said so, never taken as resolved (references across repositories
    # are not part of the contract).
    others = [n for n in datasette.databases if n != database and is_index(datasette, n)]
    for cited in info["cites"]:
        cited["elsewhere"] = []
        if cited["resolved"] is None and cited["target"]:
            for name in others:
                rows = await datasette.get_database(name).execute(
                    "SELECT DISTINCT node FROM node_names WHERE name = ? LIMIT 1",
                    [cited["target"]],
                )
                cited["elsewhere"] += [
                    {"database": name, "url": page_url(datasette, name, "story", r["node"])}
                    for r in rows
                ]

    html = await datasette.render_template(
        "labnote_story.html",
        {
            "database": database,
            "info": info,
            "tree": tree,
            "svg": Markup(svg),
            "story": story,
            "lineage_url": lineage_url(datasette, database, info["node"]),
        },
        request=request,
    )
    return _page(html, datasette=datasette)
