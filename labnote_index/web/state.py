"""What the plugin keeps for each Datasette instance while it serves, beside it
(never as attributes of Datasette's own object): which databases are indexes,
the facet counts and dashboards worked out once, the pins of the index files.
Held by a weak reference, so that a Datasette let go takes its state with it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServerState:
    """One Datasette instance's labnote state."""

    # The served databases that are labnote indexes (found at startup).
    indexes: set[str] = field(default_factory=set)
    # (database, table, column, limit) -> [(value, label, count)] of a whole table.
    facet_counts: dict[tuple, list[tuple]] = field(default_factory=dict)
    # database -> (the Database it was worked out for, its dashboard).
    dashboards: dict[str, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
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
