"""The settings a command runs under: the repository's configuration file (or a
git revision's), under the options given. Its own module, light to import: the
views of a repository are made without an index, and need nothing else of the
library (``api`` re-exports it)."""

from __future__ import annotations

from pathlib import Path

from .read.settings import WORKING_TREE, Settings, load_settings, working_tree_reader


def _check_ids() -> frozenset[str]:
    # Imported when a configuration names a check: views never load the catalogue.
    from .checks import catalogue

    return catalogue.ids()


def configuration(
    repo: Path | str | None,
    *,
    isolated: bool = False,
    enforce_layout: bool | None = None,
    fail_on: str | None = None,
    base: str | None = None,
) -> Settings:
    """The settings a check of ``repo`` runs under: its configuration file
    (``labnote-index.toml``, else ``[tool.labnote-index]`` in ``pyproject.toml``;
    with ``base``, the file of that git revision, which then governs both
    sides of a comparison), under the options given here (None: not given).
    ``isolated`` ignores the file. An unknown key or check id is a ConfigError."""
    read = None
    origin = "isolated" if isolated else WORKING_TREE
    if repo is not None and not isolated:
        if base is None:
            read = working_tree_reader(Path(repo))
        else:
            from .compare import git  # only a comparison reads a revision's file

            read, origin = git.root_file_reader(Path(repo), base), f"revision {base}"
    overrides = {"enforce-layout": enforce_layout, "fail-on": fail_on}
    return load_settings(read, _check_ids, overrides, origin=origin)
