"""How a long build reports progress: one object, silent unless asked.

The library never prints. A caller that wants a progress bar (the CLI, on a
terminal) passes its own ``Progress``; sqlite-utils' ``progressbar(silent=...)``
is the model.
"""

from __future__ import annotations


class Progress:
    """Told how many files a build will read, then as each batch is done.

    This base class says nothing: subclass it and override what you need.
    ``start`` may come twice (an index found damaged is rebuilt in full).
    """

    def start(self, total: int) -> None:
        """The build is about to read ``total`` files."""

    def advance(self, done: int) -> None:
        """``done`` more files were read."""

    def finish(self) -> None:
        """The build is over (whether it succeeded or not)."""


SILENT = Progress()
