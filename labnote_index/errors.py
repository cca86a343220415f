"""Every error the library raises on purpose, in one place, all exported.

A caller catches ``LabnoteError`` for "labnote-index could not do it, and says
why"; the command line maps it to exit 2 with its message, in one place.
"""

from __future__ import annotations


class LabnoteError(Exception):
    """labnote-index could not do what was asked; the message says why and what to do."""


class InvalidArgument(LabnoteError, ValueError):
    """A value the library does not take (a severity, a direction, a check, a
    number of processes): the message names the argument and what it takes."""


# Reading the repository and the configuration.


class RepositoryError(LabnoteError):
    """The repository itself cannot be read (not a directory)."""


class NotARepository(RepositoryError):
    """A directory that holds no LabNote repository: nothing to check there."""


class ConfigError(LabnoteError):
    """A configuration file labnote-index cannot follow: it names the file and the key."""


# The index file.


class NotAnIndex(LabnoteError):
    """A path that is not a labnote index: never read as one, never replaced."""


class NoIndex(NotAnIndex):
    """Nothing at all where an index should be."""


class IndexWriteError(LabnoteError):
    """The index could not be written (its directory, the disk)."""


class IndexDamaged(LabnoteError):
    """An index SQLite's own check finds damaged."""


class WorkerError(LabnoteError):
    """A worker process died before finishing its share of the work."""


# Checks, queries and views.


class CheckFileError(LabnoteError):
    """A check file whose header is incomplete or wrong: a bug in the catalogue."""


class NodeNotFound(LabnoteError):
    """No node has that name; ``near`` is the existing ID nearest to it, if any."""

    def __init__(self, message: str, near: str | None = None) -> None:
        super().__init__(message)
        self.near = near


class RecordsUnreadable(LabnoteError):
    """Views cannot be made while records they would hold cannot be read."""


class ViewPathError(LabnoteError):
    """A view path that is a symlink or not a regular file: never written or read."""


# Git revisions.


class RevisionError(LabnoteError):
    """A revision that cannot be read (git missing, not a git repository)."""


class RevisionNotFound(RevisionError):
    """No such revision in the repository (or an empty one)."""


class RevisionRefused(RevisionError):
    """Git refuses the repository itself (it belongs to another user)."""


class NotAGitRepository(RevisionError):
    """The directory is in no git repository."""


# Serving and publishing.


class PublishError(LabnoteError):
    """A deployment directory cannot be written (it is not empty, a wheel cannot
    be made, datasette inspect failed)."""


class ServeError(LabnoteError):
    """The server cannot start (the port is taken, the host is not this machine's)."""


def one_of(name: str, value: object, allowed: tuple[str, ...] | list[str]) -> None:
    """InvalidArgument unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
