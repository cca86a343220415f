"""Bulk rows into the index: a prepared ``executemany`` a table, on sqlite-utils'
own connection (sqlite-utils created the tables; this only fills them)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils


# Values SQLite binds as they are; a row holding anything else (a list or an
# object from a record) has it written as JSON text, as sqlite-utils does.
_BOUND_AS_IS = {str, int, float, bool, bytes, type(None)}
_CONTAINERS = {dict, list, tuple}
# json.dumps with these options builds an encoder on every call; one will do.
_encode = json.JSONEncoder(ensure_ascii=False, default=repr).encode
_STR = {str}
# The encoder's own quoting of a string (its C function, ensure_ascii off).
_quoted = json.encoder.encode_basestring


def _as_json(value: Any) -> str:
    """``value`` as the encoder writes it. A list of strings (a record's tags,
    sources, upstream IDs: nearly every value here) is joined from the encoder's
    own quoting of each, the same text at a third of the encoder's cost."""
    if type(value) is list and _STR.issuperset(map(type, value)):
        return "[" + ", ".join(map(_quoted, value)) + "]"
    return _encode(value)


class Inserts:
    """Rows written with one prepared INSERT per table, on the database's own
    connection. The column list comes from the table sqlite-utils created (never
    a second list written here; an integer ``id`` key is left to SQLite), and
    each row is bound as a tuple in that order: the same rows sqlite-utils'
    ``insert_all`` writes, at a third of its cost (it checks every value in
    Python to see whether it needs JSON; this checks a row's types at once)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self._prepared: dict[str, tuple[list[str], str]] = {}

    def _statement(self, table: str) -> tuple[list[str], str]:
        if table not in self._prepared:
            t = self.db.table(table)
            auto = ["id"] if t.pks == ["id"] else []
            columns = [c.name for c in t.columns if c.name not in auto]
            self._prepared[table] = (columns, _insert_sql(table, columns))
        return self._prepared[table]

    def insert(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Append ``rows`` (dicts; a missing key is NULL) to ``table``, committed."""
        with self.db.conn:
            self.append(table, rows)

    def insert_tuples(
        self,
        table: str,
        columns: Sequence[str],
        rows: Iterable[tuple[Any, ...]],
        scalars: bool = False,
    ) -> None:
        """Append ``rows``, each a tuple of ``columns`` (the others NULL), to
        ``table``, committed: rows made as tuples skip a dict each (326,000 at
        the benchmark's size). A list or object among the values is JSON text,
        unless ``scalars``: the caller made every value a str, int, bool or None
        (a row of anything else fails to bind), so none is looked at."""
        known, _ = self._statement(table)
        if not set(columns) <= set(known):
            raise ValueError(f"no column for {sorted(set(columns) - set(known))}")
        with self.db.conn:
            bound = rows if scalars else map(bindable, rows)
            self.db.conn.executemany(_insert_sql(table, columns), bound)

    def append(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        """Append ``rows`` to ``table`` within the transaction under way."""
        columns, sql = self._statement(table)
        known = set(columns)
        self.db.conn.executemany(sql, (_bound(row, columns, known) for row in rows))


def _insert_sql(table: str, columns: Sequence[str]) -> str:
    """The INSERT of a row of ``columns`` into ``table``, each bound by a ``?``."""
    names = ", ".join(f"[{c}]" for c in columns)
    return f"INSERT INTO [{table}] ({names}) VALUES ({', '.join('?' * len(columns))})"


def _bound(row: dict[str, Any], columns: list[str], known: set[str]) -> tuple[Any, ...]:
    if not row.keys() <= known:  # a key no column has: a mistake here, never data
        raise ValueError(f"no column for {sorted(row.keys() - known)}")
    return bindable(tuple(map(row.get, columns)))


def bindable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``values`` as SQLite binds them: a list or an object as JSON text."""
    if _BOUND_AS_IS.issuperset(map(type, values)):  # the common case, decided in C
        return values
    return tuple(_as_json(v) if type(v) in _CONTAINERS else v for v in values)
