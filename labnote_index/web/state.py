"""What the plugin keeps for each Datasette instance while it serves, beside it
(never as attributes of Datasette's own object): which databases are indexes,
the facet counts and dashboards worked out once, the pins of the index files.
Held by a weak reference, so that a Datasette let go takes its state with it.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar


@dataclass
class ServerState:
    """One Datasette instance's labnote state."""

    # The served databases that are labnote indexes (found at startup).
    indexes: set[str] = field(default_factory=set)
    # (database, table, column, limit) -> [(value, label, count)] of a whole table.
    facet_counts: dict[tuple, list[tuple]] = field(default_factory=dict)
    # database -> (the Database it was worked out for, its dashboard).
    dashboards: dict[str, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    # database and actor -> (the Database, what the actor may see of it: tables,
    # views, queries), for an index's home page.
    listings: dict[str, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    # database -> (the Database it was worked out for, its line on the site's home).
    headlines: dict[str, tuple[Any, dict[str, int]]] = field(default_factory=dict)
    # database -> what lets go of its pinned index file.
    releases: dict[str, weakref.finalize] = field(default_factory=dict)


_STATES: weakref.WeakKeyDictionary[Any, ServerState] = weakref.WeakKeyDictionary()


def state_of(datasette: Any) -> ServerState:
    """The labnote state of ``datasette`` (made empty on first ask)."""
    state = _STATES.get(datasette)
    if state is None:
        state = _STATES[datasette] = ServerState()
    return state


T = TypeVar("T")


async def once_per_index(
    kept: dict[str, tuple[Any, Any]], name: str, db: Any, make: Callable[[], Awaitable[T]]
) -> T:
    """What ``make`` works out of database ``name``, worked out once while a server
    runs where the database is immutable (its counts cannot change; a rebuilt
    index taken up by --watch is a new Database, so it is worked out anew), and
    on every call where it is mutable."""
    held = kept.get(name)
    if held is not None and held[0] is db:
        made: T = held[1]
        return made
    made = await make()
    if not db.is_mutable:
        kept[name] = (db, made)
    return made
