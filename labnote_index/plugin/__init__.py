"""The Datasette plugin of labnote-index: lineage pages and links to them.

Registered through the ``datasette`` entry point, so ``labnote-index serve``
and a plain ``datasette labnote.db`` both have it. Everything drawn comes from
the index and is escaped: record text is data, never markup.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import sqlite_utils
from datasette import hookimpl
from datasette.utils.asgi import NotFound, Response
from markupsafe import Markup

from .. import provenance
from ..paths import parent_dir
from ..schema import RECORD_TABLES
from .graph import GraphvizMissing, lineage_svg

LINKED_TABLES = {"records", *RECORD_TABLES}

# No script runs on a page that draws repository data.
LINEAGE_CSP = (
    "default-src 'self'; script-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
)


def lineage_url(datasette: Any, database: str, node: str) -> str:
    return datasette.urls.database(database) + "/-/lineage?" + urlencode({"node": node})


@hookimpl
def render_cell(value: Any, column: str, table: str | None, database: str, datasette: Any):
    """A lineage link beside the file of every record and the directory of every packet."""
    if not isinstance(value, str) or not value:
        return None
    if (table in LINKED_TABLES and column == "file") or (
        table == "handoff_packets" and column == "packet_dir"
    ):
        return Markup('{} <a class="labnote-lineage" href="{}">lineage graph</a>').format(
            value, lineage_url(datasette, database, value)
        )
    return None


@hookimpl
def register_routes():
    return [(r"^/(?P<database>[^/]+)/-/lineage$", lineage_page)]


def _row_url(datasette: Any, database: str, node: dict[str, Any]) -> str:
    from datasette.utils import tilde_encode

    if node["kind"] == "handoff_packet":
        key = parent_dir(node["node"])
        return datasette.urls.row(database, "handoff_packets", tilde_encode(key))
    return datasette.urls.row(database, "records", tilde_encode(node["node"]))


async def lineage_page(datasette: Any, request: Any) -> Response:
    database = request.url_vars["database"]
    try:
        db = datasette.get_database(database)
    except KeyError as exc:
        raise NotFound(f"no database {database}") from exc
    key = request.args.get("node", "")

    def compute(conn: Any) -> dict[str, Any]:
        return provenance.lineage(sqlite_utils.Database(conn), key, "both")

    try:
        tree = await db.execute_fn(compute)
    except provenance.NodeNotFound as exc:
        raise NotFound(str(exc)) from exc

    for direction in ("up", "down"):
        for b in provenance.branches_in_order(tree[direction]):
            if b["missing"]:
                continue  # nothing to link to: that is the point
            b["row_url"] = _row_url(datasette, database, b)
            b["lineage_url"] = lineage_url(datasette, database, b["node"])
    tree["row_url"] = _row_url(datasette, database, tree)
    try:
        svg = lineage_svg(tree, lambda node: lineage_url(datasette, database, node))
        graph_error = None
    except GraphvizMissing as exc:
        svg, graph_error = None, str(exc)
    html = await datasette.render_template(
        "labnote_lineage.html",
        {
            "database": database,
            "tree": tree,
            "svg": Markup(svg) if svg else None,
            "graph_error": graph_error,
        },
        request=request,
    )
    return Response.html(html, headers={"Content-Security-Policy": LINEAGE_CSP})
