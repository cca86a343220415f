"""Modules loaded on first use, so that a command imports only what it runs.

The CLI names the library (``api``) and the report writers at its top, but
``--help``, ``--version`` and a command that fails on its arguments use
neither; loaded eagerly they were most of a small check's time (sqlite-utils,
the build, the checks' catalogue). ``importlib.util.LazyLoader`` runs a module's
body at its first attribute access instead of at the import statement.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def module(name: str) -> ModuleType:
    """The module ``name`` (absolute), its body run when an attribute is first
    read; the module itself where it is loaded already."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    lazy = importlib.util.module_from_spec(spec)
    sys.modules[name] = lazy
    loader.exec_module(lazy)
    return lazy
