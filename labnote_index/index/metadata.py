"""The packaged metadata.yml, read: what each table and column of the index is
for, and how Datasette pages sort and facet them (builds and servers read it)."""

from __future__ import annotations

from importlib import resources
from typing import Any

# The key metadata.yml uses for the database; a served file may have any name.
METADATA_DATABASE = "labnote"


def described_index() -> dict[str, Any]:
    """The packaged metadata.yml: what each table and column is for, and how
    Datasette pages sort and facet them (the ``x-`` keys are notes, left out)."""
    import yaml  # only builds and servers read it

    text = (resources.files("labnote_index") / "metadata.yml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when built
    return {k: v for k, v in yaml.load(text, Loader=loader).items() if not k.startswith("x-")}
