"""labnote-index: a SQLite index of a LabNote repository, checked with SQL."""

from .importer import BuildResult, build_index

__all__ = ["BuildResult", "build_index"]
