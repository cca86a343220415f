"""Ctrl-C and SIGTERM answered truthfully: what a command has changed so far, and
steps that, once begun, complete before a signal takes effect."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_changed: list[str] = []


class Terminated(KeyboardInterrupt):
    """SIGTERM, unwound as Ctrl-C is (temporary files removed, a step completed)."""


def changed(what: str) -> None:
    """Note something this command has changed for good (said if it is interrupted)."""
    _changed.append(what)


def changes() -> list[str]:
    """What this command has changed so far, in order."""
    return list(_changed)


def forget() -> None:
    """A new command begins: nothing changed yet."""
    _changed.clear()


def raise_terminated(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM handler: unwind as Ctrl-C does."""
    raise Terminated


@contextmanager
def whole() -> Iterator[None]:
    """A step that completes once begun: Ctrl-C or SIGTERM arriving meanwhile take
    effect right after it (outside the main thread, where signals cannot be
    handled, the step runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def defer(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    before = {sig: signal.signal(sig, defer) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if pending:
            signal.raise_signal(pending[0])  # to the handler that was there


def settle() -> None:
    """The command has done its work (or said why it stopped): Ctrl-C and SIGTERM
    are ignored from here to the exit, so that the exit code is the command's
    own, never a death by a signal that landed as it finished. Only for the
    program itself (``cli.main``), never in a process that goes on."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
