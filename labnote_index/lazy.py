"""Modules loaded on first use, so that a command imports only what it runs.

The CLI names the library (``api``) and the report writers at its top, but
``--help``, ``--version`` and a command that fails on its arguments use
neither; loaded eagerly they were most of a small check's time (sqlite-utils,
the build, the checks' catalogue). ``importlib.util.LazyLoader`` runs a module's
body at its first attribute access instead of at the import statement.
``imported_meanwhile`` does the opposite for a command that will need a module
soon: it imports it in a thread while this one waits on another process.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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


@contextmanager
def imported_meanwhile(modules: Sequence[str]) -> Iterator[None]:
    """Import ``modules`` in a thread while the block runs, and wait for it at
    the block's end: for a block that waits on another process (git), the GIL
    let go, so that on a second core the imports cost nothing. A build that
    then needs none of them has them for nothing, but no later (a thread left
    running took the GIL from the build's next steps: 6% of a hook's no-op at
    43,508 records). An import that fails is left for the one that needs the
    module to raise, where it is needed."""

    def load() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # raised again by the import that needs it
                return

    thread = threading.Thread(target=load, name="labnote-index imports")
    thread.start()
    try:
        yield
    finally:
        thread.join()
