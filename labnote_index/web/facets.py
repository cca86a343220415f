"""Facets of a whole table, counted once while a server runs.

`labnote-index serve` opens an index immutable, and a build puts a new file in
its place rather than writing to it, so the facet counts of a table page with no
filter cannot change while the server runs. Counting them was most of the time
of the pages of the largest tables (three GROUP BYs over every row; bench/web.py
times the pages, BENCHMARKS.md); a ``counted`` facet counts a column of the whole
table once, with Datasette's own query, and keeps the answer. A page with a
filter or a search, a facet size of its own choosing, or a database that can
change, is counted by Datasette's column facet, as before.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from datasette.database import QueryInterrupted
from datasette.facets import ColumnFacet
from datasette.utils import escape_sqlite, path_with_removed_args

from .state import state_of
from .table import adding_to

# Flags a facet names as their cells do (render_cell): yes or no, not 1 or 0.
YES_NO = {("findings", "fixable"), ("checks", "fixable")}


class CountedFacet(ColumnFacet):
    """A column facet whose counts over a whole immutable table are kept."""

    type = "counted"

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Datasette's facet results, counted once for a whole immutable table."""
        results, timed_out = await self._results()
        for facet in results:
            # To a reader it is a column facet: Datasette names any other type
            # beside the facet's name ("status (counted)").
            facet["type"] = ColumnFacet.type
            if (self.table, facet["name"]) in YES_NO:
                for value in facet["results"]:
                    value["label"] = "yes" if value["value"] in (1, "1", True) else "no"
        return results, timed_out

    async def _results(self) -> tuple[list[dict[str, Any]], list[str]]:
        size = self.get_facet_size()
        database = self.ds.get_database(self.database)
        whole = self.table is not None and not self.params and self._whole_table()
        # A size the request chose is counted as asked, not kept: one kept list
        # a facet, of the size the table's metadata or the settings give.
        if database.is_mutable or not whole or "_facet_size" in self.request.args:
            return await super().facet_results()
        pairs = self.get_querystring_pairs()
        results, timed_out = [], []
        for entry in self.get_configs():
            column = entry["config"].get("column") or entry["config"]["simple"]
            try:
                counted = await self._counted(database, column, size + 1)
            except QueryInterrupted:
                timed_out.append(column)
                continue
            results.append(self._facet(column, entry["source"], counted, size, pairs))
        return results, timed_out

    def _whole_table(self) -> bool:
        """Whether the page's rows are the whole table: its query has no WHERE."""
        return self.sql.rstrip().endswith(f"from {escape_sqlite(self.table)}")

    async def _counted(self, database: Any, column: str, limit: int) -> list[tuple]:
        kept = state_of(self.ds).facet_counts
        key = (database, self.table, column, limit)
        if key not in kept:
            name, table = escape_sqlite(column), escape_sqlite(self.table)
            result = await self.ds.execute(
                self.database,
                f"select {name} as value, count(*) as count from {table} "
                f"where {name} is not null group by {name} order by count desc, value "
                f"limit {limit}",
                truncate=False,
                custom_time_limit=self.ds.setting("facet_time_limit_ms"),
            )
            rows = [(row["value"], row["count"]) for row in result.rows]
            labels = await self.ds.expand_foreign_keys(
                self.database, self.table, column, [value for value, _ in rows]
            )
            kept[key] = [(v, labels.get((column, v), v), count) for v, count in rows]
        return kept[key]

    def _absolute(self, origin: str, path: str) -> str:
        """Datasette's absolute_url, its scheme and host worked out once a page."""
        if path.startswith("/") and not path.startswith("//"):
            return origin + path
        return self.ds.absolute_url(self.request, path)

    def _facet(
        self, column: str, source: str, counted: list[tuple], size: int, pairs: list
    ) -> dict[str, Any]:
        """One facet as Datasette's column facet gives it, its links made for
        this request (they keep its sort and other arguments)."""
        argument = f"{column}__exact" if column.startswith("_") else column
        # Datasette's path_with_added_args for each value, the page's own
        # arguments encoded once (a facet can have hundreds of values).
        adding = adding_to(self.request)
        origin = self.ds.absolute_url(self.request, "/")[:-1]  # scheme and host
        values = []
        for value, label, count in counted[:size]:
            selected = (argument, str(value)) in pairs
            if selected:
                toggle = path_with_removed_args(self.request, {argument: str(value)})
            else:
                toggle = adding + urlencode([(argument, value)])
            values.append(
                {
                    "value": value,
                    "label": label,
                    "count": count,
                    "toggle_url": self._absolute(origin, self.ds.urls.path(toggle)),
                    "selected": selected,
                }
            )
        removed = path_with_removed_args(self.request, {f"_facet_{self.type}": column})
        return {
            "name": column,
            "hideable": source != "metadata",
            "toggle_url": self.ds.urls.path(removed),
            "results": values,
            "truncated": len(counted) > size,
        }
