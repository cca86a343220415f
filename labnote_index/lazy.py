"""Modules loaded on first use, so that a command imports only what it runs.

The CLI names the library (``api``) and the report writers at its top, but
``--help``, ``--version`` and a command that fails on its arguments use
neither; loaded eagerly they were most of a small check's time (sqlite-utils,
the build, the checks' catalogue). ``importlib.util.LazyLoader`` runs a module's
body at its first attribute access instead of at the import statement.
``ImportedMeanwhile`` does the opposite for a command that will need a module
soon: it imports it in a thread while this one waits on another process.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Sequence
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


class ImportedMeanwhile:
    """Import ``modules`` in a thread while a block runs: for a block that waits
    on another process (git), the GIL let go, so that on a second core the
    imports cost nothing. The block's end does not wait for them: a build that
    turns out to need none of them (an unchanged index) is not held up by
    imports it never uses (0.11 s of a small repository's check, measured);
    one that needs them calls ``wait`` first, and has them no later. A daemon
    thread: a process that ends first does not wait for it either. An import
    that fails is left for the one that needs the module to raise, where it is
    needed."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = tuple(modules)
        self._thread: threading.Thread | None = None

    def _load(self) -> None:
        for name in self.modules:
            try:
                importlib.import_module(name)
            except Exception:  # raised again by the import that needs it
                return

    def __enter__(self) -> ImportedMeanwhile:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._load, name="labnote-index imports", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        return None  # not joined: see wait

    def wait(self) -> None:
        """Return once the imports are done (at once, if they never started)."""
        if self._thread is not None:
            self._thread.join()
