"""The package's layout: data flows one way, and no module imports one above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "labnote_index"

# Bottom to top. A module may import modules of its own layer or of layers below.
LAYERS = [
    ("utilities", {"errors", "text", "progress", "interrupts"}),
    ("read", {"paths", "parse", "formats", "settings", "markdown", "discover"}),
    ("model", {"models", "handoff"}),
    (
        "index",
        {
            "schema",
            "resolve",
            "cycles",
            "rows",
            "files",
            "parallel",
            "registry_views",
            "index_file",
            "tempfiles",
            "build",
        },
    ),
    ("checks", {"positions", "suggest", "catalogue", "provenance"}),
    (
        "report, git, fix, web",
        {
            "report",
            "git",
            "revisions",
            "repairs",
            "serve",
            "plugin",
            "plugin.graph",
            "plugin.table",
            "plugin.facets",
        },
    ),
    ("façade", {"api"}),
    ("command line", {"cli", "__main__", "__init__"}),
]
LAYER_OF = {module: n for n, (_, modules) in enumerate(LAYERS) for module in modules}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    name = ".".join(rel.parts)
    return "plugin" if name == "plugin.__init__" else name


def imported(path: Path) -> set[str]:
    """The package modules a file imports (at the top or inside a function)."""
    here = list(path.parent.relative_to(PACKAGE).parts)  # the package the file is in
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if node.module:
                found.add(target)
            else:  # from . import a, b
                found |= {".".join([*base, alias.name]) for alias in node.names}
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    assert {module_name(p) for p in MODULES} <= set(LAYER_OF)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_imports_one_above_it(path: Path):
    mine = LAYER_OF[module_name(path)]
    for target in imported(path):
        assert LAYER_OF[target] <= mine, f"{module_name(path)} imports {target}, a layer above"
