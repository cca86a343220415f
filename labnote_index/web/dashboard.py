"""The home page of an index: what is broken, what is waiting, where things come
from, and activity over time, each count a link to the rows it counts.

Every number comes from one small query over the index (the tables' indexes
make each a search or a count); the activity chart is SVG drawn here, every
text in it escaped, with no script and nothing from elsewhere, so the page
works offline and inside any Content-Security-Policy.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup, escape

from ..format.rules import RECORD_TYPES

# Record tables first, then the findings, on the home page's list of tables.
FIRST_TABLES = (
    "findings",
    "records",
    "packets",
    "responses",
    "messages",
    "notifications",
    "visits",
    "visitors",
    "tags",
    "handoff_packets",
)
WEEKS_SHOWN = 26
TYPE_COLOURS = {
    "packet": "#2563eb",
    "response": "#16a34a",
    "message": "#d97706",
    "notification": "#dc2626",
    "visit": "#7c3aed",
    "visitor": "#0891b2",
    "tag": "#6b7280",
}


# What waits, each a view of the index (index.sql_views.WAITING_VIEWS): counted
# here and linked to, one definition for the number and the rows it links to.
WAITING = (
    ("open messages", "open_messages"),
    ("packets awaiting a response", "packets_awaiting_response"),
    ("notifications that need a human", "notifications_needing_a_human"),
    ("proposed tags awaiting promotion", "tags_awaiting_promotion"),
    ("handoff packets blocked", "blocked_handoff_packets"),
)
# Where records come from: the record types whose records say so.
ORIGIN_TYPES = ("packet", "response")

QUERIES = {
    "by_check": "SELECT severity, [check], count(*) AS n FROM findings "
    "GROUP BY severity, [check] ORDER BY severity = 'warning', n DESC, [check]",
    "orphans": "SELECT count(*) AS n FROM orphans",
    "unreadable": "SELECT count(*) AS n FROM files WHERE error IS NOT NULL",
    "oldest_open": "SELECT message_id, status, created_at, summary, file FROM open_messages "
    "ORDER BY created_at LIMIT 5",
    **{view: f"SELECT count(*) AS n FROM [{view}]" for _, view in WAITING},
    "origins": "SELECT record_type, content_origin, count(*) AS n FROM ("
    + " UNION ALL ".join(
        f"SELECT '{t}' AS record_type, content_origin FROM [{RECORD_TYPES[t].table}]"
        for t in ORIGIN_TYPES
    )
    + ") GROUP BY record_type, content_origin ORDER BY n DESC",
    "without_sources": "SELECT count(*) AS n FROM findings WHERE [check] = 'provenance'",
    "activity": "SELECT substr(created_at, 1, 10) AS day, record_type, count(*) AS n "
    "FROM records WHERE created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' "
    "GROUP BY day, record_type",
}


async def dashboard(db: Any, table_url: Any) -> dict[str, Any]:
    """What the home page shows: ``db`` a Datasette database, ``table_url(table,
    **filters)`` the URL of a table page with those filters."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, sql in QUERIES.items():
        found[name] = [dict(row) for row in await db.execute(sql)]

    def count(name: str) -> int:
        return int(found[name][0]["n"])

    by_check = [
        {**row, "url": table_url("findings", check=row["check"], severity=row["severity"])}
        for row in found["by_check"]
    ]
    errors = sum(r["n"] for r in by_check if r["severity"] == "error")
    warnings = sum(r["n"] for r in by_check if r["severity"] == "warning")
    waiting = [(label, count(view), table_url(view)) for label, view in WAITING]
    origins = [
        {
            **row,
            "url": table_url(
                RECORD_TYPES[row["record_type"]].table,
                **(
                    {"content_origin": row["content_origin"]}
                    if row["content_origin"] is not None
                    else {"content_origin__isnull": 1}  # no origin given: NULL, not 'None'
                ),
            ),
        }
        for row in found["origins"]
    ]
    return {
        "errors": errors,
        "warnings": warnings,
        "by_check": by_check,
        "findings_url": table_url("findings"),
        "orphans": count("orphans"),
        "orphans_url": table_url("orphans"),
        "unreadable": count("unreadable"),
        "unreadable_url": table_url("files", error__notnull=1),
        "waiting": waiting,
        "oldest_open": [
            {**row, "url": table_url("open_messages", file=row["file"])}
            for row in found["oldest_open"]
        ],
        "origins": origins,
        "without_sources": count("without_sources"),
        "without_sources_url": table_url("findings", check="provenance"),
        "activity": activity_svg(found["activity"], table_url),
    }


def _week(day: str) -> date | None:
    try:
        d = date.fromisoformat(day)
    except ValueError:
        return None
    return d - timedelta(days=d.weekday())  # its Monday


def activity_svg(rows: list[dict[str, Any]], table_url: Any) -> Markup:
    """Records created per week, by type, for the last WEEKS_SHOWN weeks that have
    any: a stacked bar a week, each part a link to the records it counts."""
    weeks: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        week = _week(row["day"])
        if week is not None:
            weeks[week][row["record_type"]] += row["n"]
    if not weeks:
        return Markup("<p>No record says when it was created.</p>")
    # Every week from the first to the last (at most WEEKS_SHOWN, the latest), so
    # that a quiet week is a gap, not left out.
    last = max(weeks)
    first = max(min(weeks), last - timedelta(weeks=WEEKS_SHOWN - 1))
    shown = [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)]
    tallest = max(sum(weeks[w].values()) for w in shown)
    bar, gap, height, left, bottom = 22, 8, 160, 36, 36
    width = left + len(shown) * (bar + gap) + 150
    parts = [
        f'<svg class="labnote-chart" role="img" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height + bottom + 10}" '
        f'viewBox="0 0 {width} {height + bottom + 10}">',
        "<title>Records created per week, by type</title>",
        f'<text x="{left - 6}" y="14" text-anchor="end" font-size="12">{tallest}</text>',
        f'<line x1="{left}" y1="{height + 4}" x2="{width - 150}" y2="{height + 4}" '
        'stroke="#9ca3af"/>',
    ]
    for n, week in enumerate(shown):
        x, y = left + n * (bar + gap), height + 4
        end = week + timedelta(days=7)
        for record_type, count in sorted(weeks[week].items()):
            h = max(1, round(count / tallest * (height - 10)))
            y -= h
            url = table_url(
                "records",
                record_type=record_type,
                created_at__gte=week.isoformat(),
                created_at__lt=end.isoformat(),
            )
            colour = TYPE_COLOURS.get(record_type, "#374151")
            label = f"{count} {record_type} record(s) in the week of {week.isoformat()}"
            parts.append(
                f'<a href="{escape(url)}"><rect x="{x}" y="{y}" width="{bar}" height="{h}" '
                f'fill="{colour}"><title>{escape(label)}</title></rect></a>'
            )
        if n % 4 == 0:
            parts.append(
                f'<text x="{x}" y="{height + 22}" font-size="12">{escape(week.isoformat())}</text>'
            )
    for n, (record_type, colour) in enumerate(TYPE_COLOURS.items()):
        y = 14 + n * 20
        parts.append(
            f'<rect x="{width - 140}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
            f'<text x="{width - 122}" y="{y}" font-size="13">{escape(record_type)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def table_url_for(datasette: Any, database: str) -> Any:
    """``table_url(table, **filters)`` for one database of a Datasette."""

    def table_url(table: str, **filters: Any) -> str:
        url = datasette.urls.table(database, table)
        return url + ("?" + urlencode(filters) if filters else "")

    return table_url


HEADLINE = {
    "errors": "SELECT count(*) FROM findings WHERE severity = 'error'",
    "warnings": "SELECT count(*) FROM findings WHERE severity = 'warning'",
    "orphans": "SELECT count(*) FROM orphans",
    "waiting": "SELECT "
    + " + ".join(
        f"(SELECT count(*) FROM [{view}])"
        for view in ("open_messages", "notifications_needing_a_human", "blocked_handoff_packets")
    ),
}


async def headline(db: Any) -> dict[str, int]:
    """One repository's line on a site of many: errors, warnings, orphans, and work
    waiting (open messages, notifications that need a human, blocked packets)."""
    found = {}
    for name, sql in HEADLINE.items():
        found[name] = int((await db.execute(sql)).first()[0])
    return found
