"""Which served databases are labnote indexes, and the URLs of the plugin's pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .state import state_of


def is_index(datasette: Any, database: str) -> bool:
    """Whether the served database ``database`` is a labnote index (found at
    startup): the plugin acts on those only."""
    return database in state_of(datasette).indexes


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


async def built_info(db: Any) -> dict[str, Any] | None:
    """When an index was built, from what commit, of what repository (None for an
    index built before it said so)."""
    rows = await db.execute("SELECT key, value FROM build_info WHERE key IN ('built', 'settings')")
    found = {row["key"]: json.loads(row["value"]) for row in rows}
    if "built" not in found:
        return None
    # The repository's name only: its path is the building machine's (a home
    # directory, a CI workspace), no part of what is published.
    repo = found.get("settings", {}).get("repo")
    licence = found.get("settings", {}).get("licence")
    return {**found["built"], "repo": Path(repo).name if repo else None, "licence": licence}
