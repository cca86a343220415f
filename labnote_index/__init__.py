"""labnote-index: a SQLite index of a LabNote repository, checked with SQL.

The library is what the command line does, as functions (see README, "Use from
Python")::

    import labnote_index as li

    result = li.build("sample_repo", "sample.db")
    for finding in li.check("sample.db"):
        print(finding.severity, finding.check, finding.file, finding.message)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    CheckFileError,
    ConfigError,
    IndexDamaged,
    IndexWriteError,
    InvalidArgument,
    LabnoteError,
    NodeNotFound,
    NoIndex,
    NotAGitRepository,
    NotAnIndex,
    NotARepository,
    PublishError,
    RecordsUnreadable,
    RepositoryError,
    RevisionError,
    RevisionNotFound,
    RevisionRefused,
    ServeError,
    ViewPathError,
    WorkerError,
)
from .progress import Progress

# The library's names, each imported from its module when first read (PEP 562): a
# plain "import labnote_index" (a build worker, the CLI's --help) loads none of
# the build, sqlite-utils or pydantic.
_LAZY = {
    "DEFAULT_DB": "api",
    "Branch": "api",
    "Change": "api",
    "Direction": "api",
    "Finding": "api",
    "FixReport": "api",
    "Orphan": "api",
    "Severity": "api",
    "Tree": "api",
    "absent_findings": "api",
    "build": "api",
    "catalogue": "api",
    "check": "api",
    "diff": "api",
    "export": "api",
    "fails": "api",
    "findings": "api",
    "fix": "api",
    "lineage": "api",
    "merge": "api",
    "open_index": "api",
    "orphans": "api",
    "publish": "api",
    "repository_of": "api",
    "serve": "api",
    "stale_views": "api",
    "views": "api",
    "write_views": "api",
    "BuildResult": "index.build",
    "MergeResult": "index.organisation",
}

if TYPE_CHECKING:
    from .api import (
        DEFAULT_DB,
        Branch,
        Change,
        Direction,
        Finding,
        FixReport,
        Orphan,
        Severity,
        Tree,
        absent_findings,
        build,
        catalogue,
        check,
        diff,
        export,
        fails,
        findings,
        fix,
        lineage,
        merge,
        open_index,
        orphans,
        publish,
        repository_of,
        serve,
        stale_views,
        views,
        write_views,
    )
    from .index.build import BuildResult
    from .index.organisation import MergeResult


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # read once: later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Branch",
    "BuildResult",
    "MergeResult",
    "Change",
    "CheckFileError",
    "ConfigError",
    "DEFAULT_DB",
    "Direction",
    "Finding",
    "FixReport",
    "IndexDamaged",
    "IndexWriteError",
    "InvalidArgument",
    "LabnoteError",
    "NoIndex",
    "NodeNotFound",
    "NotAGitRepository",
    "NotARepository",
    "NotAnIndex",
    "Orphan",
    "Progress",
    "PublishError",
    "RecordsUnreadable",
    "RepositoryError",
    "RevisionError",
    "RevisionNotFound",
    "RevisionRefused",
    "ServeError",
    "Severity",
    "Tree",
    "ViewPathError",
    "WorkerError",
    "absent_findings",
    "build",
    "catalogue",
    "check",
    "diff",
    "export",
    "fails",
    "findings",
    "fix",
    "lineage",
    "merge",
    "open_index",
    "orphans",
    "publish",
    "repository_of",
    "serve",
    "stale_views",
    "views",
    "write_views",
]
