"""The Datasette plugin of labnote-index: its hooks (the pages are pages.py, the
home page dashboard.py, the table's markup table.py).

Registered through the ``datasette`` entry point, so ``labnote-index serve``
and a plain ``datasette labnote.db`` both have it. It acts on labnote indexes
only. Everything drawn comes from the index and is escaped: record text is
data, never markup.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

from datasette import hookimpl
from datasette.utils import tilde_decode, tilde_encode
from datasette.utils.asgi import NotFound, Response
from markupsafe import Markup, escape

from ..format.rules import RECORD_TYPES
from ..index.schema import RECORD_TABLES
from ..index.sql_views import FTS_COLUMNS
from .facets import CountedFacet
from .links import built_info, is_index, page_urls
from .pages import database_home, health, lineage_page, site_home, story_page
from .state import state_of
from .table import LONG_NAME, middle_cut, rows_and_columns

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

# Record tables whose plain search goes to search_records, and their type.
SEARCHED_TYPES = {rt.table: rt.name for rt in RECORD_TYPES.values() if rt.table in FTS_COLUMNS}

# Values Datasette would turn into links to anywhere (its is_url).
URL_SCHEMES = ("http://", "https://")


def json_list(value: str) -> str | None:
    """A JSON array of plain values as a short list (``a, b``; nothing for
    ``[]``), or None for anything else: a record's list fields, readable."""
    try:
        items = json.loads(value)
    except ValueError:
        return None
    if not isinstance(items, list) or any(isinstance(i, dict | list) for i in items):
        return None
    return ", ".join("" if i is None else str(i) for i in items)


# What a lineage or handoff query says of an input or reference that names
# nothing: a cell holding it is shown whole, wrapped, never cut.
MISSING_MARK = "MISSING"


def shown_text(value: str, limit: int | None) -> str:
    """``value`` as a cell shows text: cut at ``limit`` characters, like
    Datasette's own cells (a string, so the template escapes it)."""
    return value[:limit] + "\u2026" if limit and len(value) > limit else value


@hookimpl
def startup(datasette: Any):
    """Note which served databases are labnote indexes (the plugin acts on those only)."""

    async def find_indexes() -> None:
        found = set()
        for name, db in datasette.databases.items():
            if "build_info" in await db.table_names() and "lineage_edges" in await db.view_names():
                found.add(name)
        state_of(datasette).indexes = found

    return find_indexes


# Columns a table's page hides unless asked for, so that a row is one line and
# the table fits a 1,400 px screen on a real repository's values, not only the
# sample's (its row and story pages show every field): in record tables, what
# every row holds alike (its type, the contract version), free text and unknown
# fields (notes, extra), the artifact's path (the story links to it), and the
# details of provenance, routing and workflow that a list is not read for; what
# the checks work out from a path (the parts of a record's or handoff packet's
# directory); an artifact's whole body. Faceted columns stay.
_ALIKE = ("record_type", "schema_version")
_FREE = ("notes", "extra")
HIDDEN_COLUMNS = {
    **{table: (*_ALIKE, *_FREE) for table in RECORD_TABLES},
    "packets": (
        *_ALIKE,
        "derivative_of",
        "source_refs",
        "source_note",
        "deposited_by",
        "source_session",
        "target_session",
        "response_expected",
        "path",
        "tags",
        *_FREE,
    ),
    "responses": (
        *_ALIKE,
        "derivative_of",
        "provenance_coverage",
        "source_refs",
        "source_note",
        "deposited_by",
        "responding_session",
        "decision_at",
        "path",
        "tags",
        *_FREE,
    ),
    "messages": (
        *_ALIKE,
        "reply_expected",
        "reply_to",
        "response_message_id",
        "related_packet",
        "related_response",
        "path",
        "tags",
        *_FREE,
    ),
    "notifications": (*_ALIKE, "from_visitor_id", "path", *_FREE),
    "visits": (
        *_ALIKE,
        "checked_messages",
        "answered_messages",
        "created_messages",
        "signoff_path",
        *_FREE,
    ),
    "visitors": (*_ALIKE, "last_seen", "profile_path", *_FREE),
    "tags": (*_ALIKE, "description", "acceptance_basis", "accepted_at", *_FREE),
    "records": (
        "artifact_field",
        "layout_enforced",
        "registry_dir",
        "parent_dir",
        "sub_dir",
        "stem",
    ),
    "handoff_packets": (
        "manifest",
        "created_at",
        "version_number",
        "dir_role",
        "dir_milestone",
        "dir_packet_version",
        "schema_version",
        "source_scopes",
        "open_questions",
        "required_confirmations",
        "extra",
    ),
    "input_packets": ("manifest", "extra"),
    "artifacts": ("body",),
    # What tells findings apart for --base and SARIF, and where in its file a
    # finding is (for editors and annotations: a reader follows the story link).
    "findings": ("line", "column", "subject", "identity"),
}
ALL_COLUMNS = "_all_columns"  # Datasette ignores it; links and sorting keep it


def _table_page(datasette: Any, path: str) -> tuple[str, str] | None:
    """(database, table) when ``path`` is the HTML page of a labnote index's table."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[1] in HIDDEN_COLUMNS and is_index(datasette, parts[0]):
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
    """A plain search of the artifacts table, or of a record table, goes to the
    query that ranks the matches by relevance and shows each one's passage,
    marked, with its record (search_artifacts, search_records)."""
    if not page or len(pairs) != 1 or pairs[0][0] != "_search" or not pairs[0][1].strip():
        return None
    words, base = pairs[0][1], datasette.urls.database(page[0])
    if page[1] == "artifacts":
        return base + "/search_artifacts?" + urlencode({"words": words})
    record_type = SEARCHED_TYPES.get(page[1])
    if record_type is not None:
        return base + "/search_records?" + urlencode({"words": words, "type": record_type})
    return None


def _index_home(datasette: Any, scope: dict, query: bytes) -> str | None:
    """The path of the plugin's home page of an index when ``scope`` asks for the
    index's own address with no query (with one, ``?sql=`` and the rest, it is
    Datasette's database page)."""
    raw = scope.get("raw_path") or scope.get("path", "").encode("utf-8")
    match = re.fullmatch(rb"/([^/.]+)", raw)
    if query or match is None:
        return None
    route = match.group(1).decode("ascii", "replace")
    try:
        name = datasette.get_database(route=tilde_decode(route)).name
    except KeyError:
        return None
    return f"/{route}/-/home" if is_index(datasette, name) else None


def _cached(send: Any, ttl: int) -> Any:
    """``send``, with the Cache-Control every other page has added to a page that
    lacks one (Datasette's own home page, ``/``): the index never changes under
    a server."""

    async def sending(message: dict) -> None:
        if message.get("type") == "http.response.start" and message.get("status") == 200:
            headers = list(message.get("headers", []))
            if not any(name.lower() == b"cache-control" for name, _ in headers):
                headers.append((b"cache-control", f"max-age={ttl}".encode()))
                message = {**message, "headers": headers}
        await send(message)

    return sending


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
                home = _index_home(datasette, scope, query)
                if home is not None:
                    scope = dict(scope, path=home, raw_path=home.encode("ascii"))
                kept = _kept_pairs(page, pairs)
                if kept != pairs:
                    scope = dict(scope, query_string=urlencode(kept).encode("latin-1"))
                if scope.get("path") == "/":
                    send = _cached(send, datasette.setting("default_cache_ttl"))
            await app(scope, receive, send)

        return adjusted

    return wrap


@hookimpl
def handle_exception(datasette: Any, request: Any, exception: Exception) -> Any:
    """A table an index does not have: a page that names it, says what is near, and
    leads back (Datasette's own says only "Table not found")."""
    if not isinstance(exception, NotFound) or str(exception) != "Table not found":
        return None
    vars_ = getattr(request, "url_vars", None) or {}
    database, table = vars_.get("database"), vars_.get("table")
    if not database or not table or vars_.get("format") or not is_index(datasette, database):
        return None  # (JSON keeps Datasette's own error)

    async def page() -> Response:
        from ..checks.suggest import Names

        db = datasette.get_database(database)
        names = [*await db.table_names(), *await db.view_names()]
        names += list(datasette.metadata("queries", database=database) or {})
        table_name = tilde_decode(table)
        near = Names(names).nearest(table_name)
        html = await datasette.render_template(
            "labnote_not_found.html",
            {
                "database": database,
                "table": table_name[:200],
                "near": near,
                "near_url": datasette.urls.table(database, near) if near else None,
            },
            request=request,
        )
        return Response.html(html, status=404)

    return page


@hookimpl
def register_facet_classes() -> list[type]:
    """The counted facet (facets.py)."""
    return [CountedFacet]


@hookimpl
def extra_template_vars(database: str | None, datasette: Any, view_name: str) -> Any:
    """Whether the page's database is an index, the table renderer, and on a
    database page when and from what the index was built."""

    async def template_vars() -> dict[str, Any]:
        index = database is not None and is_index(datasette, database)
        built = None
        if index and database is not None and view_name == "database":
            built = await built_info(datasette.get_database(database))
        return {
            "labnote_index": index,
            "labnote_built": built,
            "rows_and_columns": functools.partial(rows_and_columns, datasette.urls.path),
        }

    return template_vars


@hookimpl
def table_actions(datasette: Any, database: str, table: str, request: Any):
    """A way back to the columns a table's page hides."""
    if table not in HIDDEN_COLUMNS or not is_index(datasette, database):
        return None
    pairs = parse_qsl(request.query_string, keep_blank_values=True)
    args = [(k, v) for k, v in pairs if k not in ("_nocol", "_col", ALL_COLUMNS)]
    href = datasette.urls.table(database, table) + "?" + urlencode([*args, (ALL_COLUMNS, "1")])
    hidden = ", ".join(HIDDEN_COLUMNS[table])
    return [{"href": href, "label": f"Show all columns (with {hidden})"}]


@hookimpl
def render_cell(
    value: Any, column: str, table: str | None, database: str, datasette: Any, row: Any
):
    """Story and lineage links beside every record and packet: on the ID of each
    table row (the key column is Datasette's own link to the row page), on the
    file of row pages, and on the names in query results. A URL a record holds
    stays text: Datasette would make it a link, and record text is data. A
    ``fixable`` flag reads yes or no."""
    if column == "fixable" and table in ("findings", "checks") and is_index(datasette, database):
        return "yes" if value else "no"
    if column == "severity" and table == "findings" and is_index(datasette, database):
        # The findings page hides the id column (a number, no fact; the CSS):
        # the severity, its first column, is the link to the finding's page.
        key = _cell(row, "id")
        if isinstance(value, str) and isinstance(key, int):
            url = escape(datasette.urls.row(database, "findings", str(key)))
            return Markup(f'<a class="labnote-finding" href="{url}">{escape(value)}</a>')
    if not isinstance(value, str) or not value:
        return None
    if table in LINKED_TABLES and value[0] == "[" and is_index(datasette, database):
        listed = json_list(value)
        if listed is not None:  # (an empty list: a cell that shows nothing, not "[]")
            return listed or Markup('<span class="labnote-none"></span>')
    if column in LINKED_COLUMNS and is_index(datasette, database):
        linked = _linked(value, column, table, database, datasette, row)
        if linked is not None:
            return linked
    if value.lstrip().startswith(URL_SCHEMES) and is_index(datasette, database):
        return shown_text(value, datasette.setting("truncate_cells_html"))
    if MISSING_MARK in value and is_index(datasette, database):
        return Markup(f'<span class="labnote-whole">{escape(value)}</span>')
    if len(value) > LONG_NAME and " " not in value and is_index(datasette, database):
        return middle_cut(value)
    return None  # most cells of a page: nothing to look at


def _cell(row: Any, column: str) -> Any:
    """A row's value of ``column`` (None when it has none), a foreign key Datasette
    expanded with its label read as its value."""
    try:
        value = row[column]
    except (IndexError, KeyError):
        return None
    return value.get("value") if isinstance(value, dict) else value


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
    if table == "findings" and column == "record_id" and row is not None:
        # A finding's record: its file when that is a record's (an ID may be
        # duplicated), else the ID itself (a handoff packet's directory).
        file, kind = _cell(row, "file"), _cell(row, "record_type")
        is_record = kind in RECORD_TYPES and isinstance(file, str) and file.endswith(".json")
        # The ID itself is the link (its file's cell has the story and lineage
        # links): the row keeps its width, message and hint on the first screen.
        (story,) = page_urls(datasette, database, file if is_record else value, "story")
        return Markup(f'<a class="labnote-record" href="{escape(story)}">{escape(value)}</a>')
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
    name = middle_cut(value) if len(value) > LONG_NAME else escape(value)
    return Markup(
        f'{name} <a class="labnote-story" href="{story}">story</a> '
        f'<a class="labnote-lineage" href="{lineage}">lineage graph</a>'
    )


@hookimpl
def extra_css_urls(database: str | None, datasette: Any) -> list[str]:
    """The plugin's style sheet, on the pages of an index (and on the home page of
    a site that serves any)."""
    if database is None:
        if not any(is_index(datasette, name) for name in datasette.databases):
            return []
    elif not is_index(datasette, database):
        return []
    return [datasette.urls.static_plugins("labnote-index", "labnote-index.css")]


@hookimpl
def register_routes():
    """The lineage and story pages, an index's home page (a bare ``/DB``, sent
    there by asgi_wrapper), the site's home and the health check (pages.py)."""
    return [
        (r"^/(?P<database>[^/]+)/-/lineage$", lineage_page),
        (r"^/(?P<database>[^/]+)/-/story$", story_page),
        (r"^/(?P<database>[^/]+)/-/home$", database_home),
        (r"^/-/health$", health),
        (r"^/$", site_home),
    ]
