"""The one base of every error the library raises on purpose.

A caller catches ``LabnoteError`` for "labnote-index could not do it, and says
why"; the command line maps it to exit 2 with its message, in one place.
"""

from __future__ import annotations


class LabnoteError(Exception):
    """labnote-index could not do what was asked; the message says why and what to do."""


class InvalidArgument(LabnoteError, ValueError):
    """A value the library does not take (a severity, a direction, a check, a
    number of processes): the message names the argument and what it takes."""


def one_of(name: str, value: object, allowed: tuple[str, ...] | list[str]) -> None:
    """InvalidArgument unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
