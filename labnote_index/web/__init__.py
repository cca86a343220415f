"""The Datasette plugin of labnote-index: lineage pages and links to them.

Registered through the ``datasette`` entry point, so ``labnote-index serve``
and a plain ``datasette labnote.db`` both have it. Everything drawn comes from
the index and is escaped: record text is data, never markup.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import sqlite_utils
from datasette import hookimpl
from datasette.utils import tilde_encode
from datasette.utils.asgi import NotFound, Response
from markupsafe import Markup, escape

from ..errors import NodeNotFound
from ..format.rules import RECORD_TYPES
from ..index.schema import RECORD_TABLES
from ..queries import lineage
from ..text import parent_dir
from .facets import CountedFacet
from .graph import lineage_svg
from .table import rows_and_columns

LINKED_TABLES = {"records", *RECORD_TABLES}
# Columns naming an artifact: linked to its artifacts row (on row pages too).
ARTIFACT_COLUMNS = {"artifact_path", "path", "signoff_path", "profile_path"}
# The ID column of each record table, and the records table's.
ID_COLUMNS = {"records": "record_id", **{rt.table: rt.id_field for rt in RECORD_TYPES.values()}}
# Columns of query results that name a record or packet (the canned queries').
QUERY_LINKED_COLUMNS = {"node", "packet_dir", "file", "source_file"}
LINKED_COLUMNS = {
    "manifest",
    *ARTIFACT_COLUMNS,
    *ID_COLUMNS.values(),
    *QUERY_LINKED_COLUMNS,
}

# Values Datasette would turn into links to anywhere (its is_url).
URL_SCHEMES = ("http://", "https://")


def shown_text(value: str, limit: int | None) -> str:
    """``value`` as a cell shows text: cut at ``limit`` characters, like
    Datasette's own cells (a string, so the template escapes it)."""
    return value[:limit] + "\u2026" if limit and len(value) > limit else value


# On a page that draws repository data, no script runs but Datasette's own
# inline ones, allowed by their hashes (record text is escaped, so it can never
# become a script of its own).
LINEAGE_CSP = (
    "default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:"
)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
# A lineage page names its node in the URL: longer than this is no record's.
MAX_NODE_NAME = 1000
# Databases this plugin acts on: labnote indexes only (found at startup).
INDEXES_KEY = "labnote_index_databases"


def script_hashes(html: str) -> str:
    """The CSP source list allowing exactly the inline scripts of a page."""
    hashes = [
        f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
        for body in _INLINE_SCRIPT.findall(html)
    ]
    return " ".join(hashes) or "'none'"


@hookimpl
def startup(datasette: Any):
    """Note which served databases are labnote indexes (the plugin acts on those only)."""

    async def find_indexes() -> None:
        found = set()
        for name, db in datasette.databases.items():
            if "build_info" in await db.table_names() and "lineage_edges" in await db.view_names():
                found.add(name)
        setattr(datasette, INDEXES_KEY, found)

    return find_indexes


def _is_index(datasette: Any, database: str) -> bool:
    return database in getattr(datasette, INDEXES_KEY, set())


# Columns a table's page hides unless asked for, so that what tells rows apart
# fits the screen (its row and story pages show every field): in record tables,
# what every row holds alike (its type, the contract version), free text and
# unknown fields (notes, extra), and the details of provenance and routing that
# a list is not read for; what the checks work out from a path (the parts of a
# record's or handoff packet's directory); an artifact's whole body. Faceted
# columns stay.
_ALIKE = ("record_type", "schema_version")
_FREE = ("notes", "extra")
HIDDEN_COLUMNS = {
    **{table: (*_ALIKE, *_FREE) for table in RECORD_TABLES},
    "packets": (
        *_ALIKE,
        "source_refs",
        "source_note",
        "deposited_by",
        "source_session",
        "response_expected",
        "tags",
        *_FREE,
    ),
    "responses": (
        *_ALIKE,
        "source_refs",
        "source_note",
        "deposited_by",
        "responding_session",
        "tags",
        *_FREE,
    ),
    "messages": (*_ALIKE, "reply_expected", "related_response", "tags", *_FREE),
    "records": (
        "artifact_field",
        "layout_enforced",
        "registry_dir",
        "parent_dir",
        "sub_dir",
        "stem",
    ),
    "handoff_packets": (
        "dir_role",
        "dir_milestone",
        "dir_packet_version",
        "schema_version",
        "source_scopes",
        "open_questions",
        "required_confirmations",
        "extra",
    ),
    "input_packets": ("extra",),
    "artifacts": ("body",),
}
ALL_COLUMNS = "_all_columns"  # Datasette ignores it; links and sorting keep it


def _table_page(datasette: Any, path: str) -> tuple[str, str] | None:
    """(database, table) when ``path`` is the HTML page of a labnote index's table."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[1] in HIDDEN_COLUMNS and _is_index(datasette, parts[0]):
        return parts[0], parts[1]
    return None


Pairs = list[tuple[str, str]]


def _kept_pairs(page: tuple[str, str] | None, pairs: Pairs) -> Pairs:
    """The query a page is answered with: an empty ``_search=`` (a shared or
    edited URL) is no search, not an error; a table page hides HIDDEN_COLUMNS
    unless it lists the columns to show or asks for all of them. Hiding one more
    column (the column menu's ``_nocol``) keeps them hidden too."""
    kept = [(k, v) for k, v in pairs if not (k.startswith("_search") and not v)]
    if page and not any(k in ("_col", ALL_COLUMNS) for k, _ in kept):
        named = {v for k, v in kept if k == "_nocol"}
        kept += [("_nocol", c) for c in HIDDEN_COLUMNS[page[1]] if c not in named]
    if page and page[1] in RECORD_TABLES and not any(k in ("_labels", "_label") for k, _ in kept):
        # A record table's one foreign key is its key (file, to records), which
        # the page shows as the link to the row, never with its label: looking
        # the labels up was a query and a pass over the page's rows for nothing.
        kept.append(("_labels", "off"))
    return kept


def _search_redirect(datasette: Any, page: tuple[str, str] | None, pairs: Pairs) -> str | None:
    """A plain search of the artifacts table goes to the query that shows each
    match's passage and its record, not whole bodies."""
    if page and page[1] == "artifacts" and len(pairs) == 1 and pairs[0][0] == "_search":
        words = pairs[0][1]
        if words.strip():
            return (
                datasette.urls.database(page[0])
                + "/search_artifacts?"
                + urlencode({"words": words})
            )
    return None


@hookimpl
def asgi_wrapper(datasette: Any):
    """Redirects the table and search pages that need it (see _search_redirect)."""

    def wrap(app: Any) -> Any:
        async def adjusted(scope: dict, receive: Any, send: Any) -> None:
            if scope.get("type") == "http":
                # Which databases are indexes is known once start-up hooks ran;
                # the test client's first request comes before (it is idempotent).
                await datasette.invoke_startup()
                query = scope.get("query_string", b"")
                pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
                page = _table_page(datasette, scope.get("path", ""))
                target = _search_redirect(datasette, page, pairs)
                if target is not None:
                    await Response.redirect(target).asgi_send(send)
                    return
                kept = _kept_pairs(page, pairs)
                if kept != pairs:
                    scope = dict(scope, query_string=urlencode(kept).encode("latin-1"))
            await app(scope, receive, send)

        return adjusted

    return wrap


@hookimpl
def register_facet_classes() -> list[type]:
    """The counted facet (facets.py)."""
    return [CountedFacet]


@hookimpl
def extra_template_vars(database: str | None, datasette: Any) -> dict[str, Any]:
    """Whether the page's database is an index, and the table renderer."""
    return {
        "labnote_index": database is not None and _is_index(datasette, database),
        "rows_and_columns": functools.partial(rows_and_columns, datasette.urls.path),
    }


@hookimpl
def table_actions(datasette: Any, database: str, table: str, request: Any):
    """A way back to the columns a table's page hides."""
    if table not in HIDDEN_COLUMNS or not _is_index(datasette, database):
        return None
    pairs = parse_qsl(request.query_string, keep_blank_values=True)
    args = [(k, v) for k, v in pairs if k not in ("_nocol", "_col", ALL_COLUMNS)]
    href = datasette.urls.table(database, table) + "?" + urlencode([*args, (ALL_COLUMNS, "1")])
    hidden = ", ".join(HIDDEN_COLUMNS[table])
    return [{"href": href, "label": f"Show all columns (with {hidden})"}]


def page_urls(datasette: Any, database: str, node: str, *pages: str) -> list[str]:
    """The URL of each of the plugin's ``pages`` (story, lineage) of ``node``."""
    base, name = datasette.urls.database(database), quote(node, safe="")
    return [f"{base}/-/{page}?node={name}" for page in pages]


def page_url(datasette: Any, database: str, page: str, node: str) -> str:
    """The URL of one of the plugin's pages (story, lineage) of ``node``."""
    return page_urls(datasette, database, node, page)[0]


def lineage_url(datasette: Any, database: str, node: str) -> str:
    """The URL of the lineage page of ``node``."""
    return page_url(datasette, database, "lineage", node)


@hookimpl
def render_cell(
    value: Any, column: str, table: str | None, database: str, datasette: Any, row: Any
):
    """Story and lineage links beside every record and packet: on the ID of each
    table row (the key column is Datasette's own link to the row page), on the
    file of row pages, and on the names in query results. A URL a record holds
    stays text: Datasette would make it a link, and record text is data."""
    if not isinstance(value, str) or not value:
        return None
    if column in LINKED_COLUMNS and _is_index(datasette, database):
        linked = _linked(value, column, table, database, datasette, row)
        if linked is not None:
            return linked
    if value.lstrip().startswith(URL_SCHEMES) and _is_index(datasette, database):
        return shown_text(value, datasette.setting("truncate_cells_html"))
    return None  # most cells of a page: nothing to look at


def _linked(
    value: str, column: str, table: str | None, database: str, datasette: Any, row: Any
) -> Markup | None:
    """``value`` with its links, when the cell names a record, packet or artifact."""
    names_a_node = (
        (table in LINKED_TABLES and column == "file")
        or (table == "findings" and column == "file" and value.endswith(".json"))  # a record
        or (table == "handoff_packets" and column in ("packet_dir", "manifest"))
        or (table is None and column in QUERY_LINKED_COLUMNS)
    )
    if table in LINKED_TABLES and column in ARTIFACT_COLUMNS:
        url = datasette.urls.row(database, "artifacts", tilde_encode(value))
        return Markup(f'<a href="{escape(url)}">{escape(value)}</a>')
    node = value if names_a_node else None
    if table in ID_COLUMNS and column == ID_COLUMNS[table] and row is not None:
        try:
            node = row["file"]  # an ID may be duplicated; the file is the record
        except (IndexError, KeyError):
            node = value
        if isinstance(node, dict):  # a foreign key Datasette expanded with its label
            node = node.get("value", value)
    if node is None:
        return None
    # escape() and an f-string, not Markup.format, which is slow enough to show on
    # a table page (bench/web.py times every page: BENCHMARKS.md).
    story, lineage = map(escape, page_urls(datasette, database, node, "story", "lineage"))
    return Markup(
        f'{escape(value)} <a class="labnote-story" href="{story}">story</a> '
        f'<a class="labnote-lineage" href="{lineage}">lineage graph</a>'
    )


# Column descriptions stay on table pages, in a short box of their own, so that
# the first rows show on the first screen; long text wraps instead of widening
# the table past the screen.
STYLE = """
dl.column-descriptions { max-height: 6em; overflow-y: auto; font-size: 0.85em;
  border: 1px solid #e5e7eb; padding: 0.3em 0.6em; }
td.col-message, td.col-hint, td.col-summary, td.col-notes { min-width: 16em;
  white-space: normal; }
.labnote-graph { overflow: auto; border: 1px solid #e5e7eb; padding: 8px; margin: 1em 0; }
.labnote-graph a { text-decoration: none; }
.labnote-graph a:hover rect { stroke-width: 2.5; }
.labnote-missing { color: #b91c1c; }
"""


@hookimpl
def extra_css_urls(database: str | None, datasette: Any) -> list[str]:
    """The plugin's style sheet, on the pages of an index."""
    if database is None or not _is_index(datasette, database):
        return []
    return [datasette.urls.path("/-/labnote-index.css")]


async def style_sheet() -> Response:
    """The plugin's style sheet."""
    return Response(STYLE, content_type="text/css; charset=utf-8")


@hookimpl
def register_routes():
    """The lineage and story pages, and the style sheet."""
    return [
        (r"^/(?P<database>[^/]+)/-/lineage$", lineage_page),
        (r"^/(?P<database>[^/]+)/-/story$", story_page),
        (r"^/-/labnote-index\.css$", style_sheet),
    ]


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
    if not _is_index(datasette, database):
        raise NotFound(f"{database} is not a labnote index: {page} pages are for labnote indexes")
    key = request.args.get("node", "")
    if not key.strip() or len(key) > MAX_NODE_NAME:
        return await _lineage_help(datasette, request, database, key, page)
    try:
        found = await datasette.get_database(database).execute_fn(
            lambda conn: compute(sqlite_utils.Database(conn), key)
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
    return _page(html)


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
            "empty": not key.strip(),
            "page": page,
            "near": near,
            "near_url": near_url,
        },
        request=request,
    )
    return _page(html, status=404)


def _page(html: str, status: int = 200) -> Response:
    csp = LINEAGE_CSP.format(scripts=script_hashes(html))
    return Response.html(html, status=status, headers={"Content-Security-Policy": csp})


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
    return _page(html)
