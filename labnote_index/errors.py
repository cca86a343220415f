"""The one base of every error the library raises on purpose.

A caller catches ``LabnoteError`` for "labnote-index could not do it, and says
why"; the command line maps it to exit 2 with its message, in one place.
"""

from __future__ import annotations


class LabnoteError(Exception):
    """labnote-index could not do what was asked; the message says why and what to do."""
