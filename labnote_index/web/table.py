"""The rows-and-columns table of Datasette's table and row pages, written in one pass.

Datasette's own ``_table.html`` walks every cell in Jinja's async mode: on a
50-row page of 20 columns that walk was a quarter of the page's time. This
writes the markup Datasette's table.js reads (the header's class and data
attributes, each cell's ``col-`` class, the sort links) with f-strings. Every
text is escaped; a cell's value is already Markup only where Datasette or the
plugin made it a link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from datasette.utils import to_css_class
from markupsafe import Markup, escape


def adding_to(request: Any, dropped: tuple[str, ...] = ()) -> str:
    """The page's path and query (less ``dropped`` arguments), ready for one more
    ``urlencode``d argument: Datasette's ``path_with_added_args`` and
    ``path_with_replaced_args``, with the query string read once for many links."""
    kept = urlencode([(k, v) for k, v in parse_qsl(request.query_string) if k not in dropped])
    return f"{request.path}?{kept}&" if kept else f"{request.path}?"


class _SortLinks:
    """The header links that sort a page by a column, keeping its other
    arguments: Datasette's ``path_with_replaced_args`` for each column, with
    the page's query string read once instead of once per column."""

    REPLACED = ("_sort", "_sort_desc", "_next")

    def __init__(self, request: Any, fix_path: Callable[[str], str]) -> None:
        self.prefix = adding_to(request, self.REPLACED)
        self.fix_path = fix_path

    def __call__(self, column: str, desc: bool) -> str:
        key = "_sort_desc" if desc else "_sort"
        href = self.fix_path(self.prefix + urlencode([(key, column)]))
        return f'<a href="{escape(href)}" rel="nofollow">'


def _header(
    column: Mapping[str, Any],
    css: str,
    sort_link: _SortLinks,
    sort: str | None,
    sort_desc: str | None,
) -> str:
    name = column["name"]
    # A long name may break after an underscore: a header of two short lines,
    # not one as wide as "provenance_coverage" over a column of "full".
    label = Markup(str(escape(name)).replace("_", "_<wbr>"))
    if column.get("sortable"):
        if name == sort:  # sorted ascending by it: the link turns the order round
            label = Markup(f"{sort_link(name, True)}{label}&nbsp;▼</a>")
        else:
            arrow = "&nbsp;▲" if name == sort_desc else ""
            label = Markup(f"{sort_link(name, False)}{label}{arrow}</a>")
    description = column.get("description")
    described = f'data-column-description="{escape(description)}" ' if description else ""
    return (
        f'<th {described}class="col-{css}" scope="col" data-column="{escape(name)}" '
        f'data-column-type="{escape(str(column.get("type") or "").lower())}" '
        f'data-column-not-null="{escape(column.get("notnull"))}" '
        f'data-is-pk="{1 if column.get("is_pk") else 0}">{label}</th>'
    )


# A text cell this long or longer carries its value (up to TITLE_LIMIT) as its title.
TITLE_FROM, TITLE_LIMIT = 24, 500
# A name (an ID, a path: text without spaces) longer than this is cut in the
# middle when its cell is too narrow: its end is what tells two names apart.
LONG_NAME = 24
_KEPT_END = 14


def middle_cut(value: str) -> Markup:
    """A long name as a cell shows it: its start cut with an ellipsis as the cell
    narrows, its last characters always shown, the whole in its title."""
    head, tail = escape(value[:-_KEPT_END]), escape(value[-_KEPT_END:])
    return Markup(
        f'<span class="labnote-name" title="{escape(value)}"><span class="labnote-head">{head}'
        f'</span><span class="labnote-tail">{tail}</span></span>'
    )


def _key_cell(value: Any, raw: Any) -> Any:
    """A row's key cell (Datasette's link to the row page) with a long name, a
    record's file, cut in the middle like other names: the path's start is the
    same on every row of a record table, its end is the record."""
    if not isinstance(raw, str) or len(raw) <= LONG_NAME or " " in raw:
        return value
    text = f">{escape(raw)}</a>"
    markup = str(value)
    if not markup.endswith(text):
        return value
    # Named by the whole path: a reader of the cut parts would hear them apart.
    named = f' aria-label="{escape(raw)}">'
    return Markup(f"{markup[: -len(text)]}{named}{middle_cut(raw)}</a>")


def rows_and_columns(
    fix_path: Callable[[str], str],
    columns: Iterable[Mapping[str, Any]],
    rows: Iterable[Iterable[Mapping[str, Any]]],
    request: Any,
    sort: str | None = None,
    sort_desc: str | None = None,
) -> Markup:
    """The table of ``rows`` under ``columns`` (Datasette's display columns and
    rows), or the sentence saying there are none; ``fix_path`` puts Datasette's
    base URL before a path."""
    rows = list(rows)
    if not rows:
        return Markup('<p class="zero-results">0 records</p>')
    css: dict[str, str] = {}  # a column's CSS class, worked out once per page

    def css_class(name: str) -> str:
        if name not in css:
            css[name] = str(escape(to_css_class(name)))
        return css[name]

    sort_link = _SortLinks(request, fix_path)
    out = ['<div class="table-wrapper"><table class="rows-and-columns"><thead><tr>']
    for column in columns:
        out.append(_header(column, css_class(column["name"]), sort_link, sort, sort_desc))
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for cell in row:
            raw, value = cell.get("raw"), cell["value"]
            if cell["value_type"] == "pk":
                value = _key_cell(value, raw)
            # A cell shows one line; a long text's whole value is there on hover.
            title = (
                f' title="{escape(raw[:TITLE_LIMIT])}"'
                if isinstance(raw, str) and len(raw) > TITLE_FROM
                else ""
            )
            out.append(
                f'<td class="col-{css_class(cell["column"])} type-{escape(cell["value_type"])}"'
                f"{title}>{escape(value)}</td>"
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return Markup("".join(out))
