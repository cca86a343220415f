"""labnote-index: a SQLite index of a LabNote repository, checked with SQL.

The library is what the command line does, as functions (see README, "Use from
Python")::

    import labnote_index as li

    result = li.build("sample_repo", "sample.db")
    for finding in li.check("sample.db"):
        print(finding.severity, finding.check, finding.file, finding.message)
"""

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
    build,
    catalogue,
    check,
    diff,
    fails,
    findings,
    fix,
    lineage,
    open_index,
    orphans,
    repository_of,
    serve,
    stale_views,
    views,
    write_views,
)
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
    RecordsUnreadable,
    RepositoryError,
    RevisionError,
    RevisionNotFound,
    RevisionRefused,
    ServeError,
    ViewPathError,
    WorkerError,
)
from .index.build import BuildResult
from .progress import Progress

__all__ = [
    "Branch",
    "BuildResult",
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
    "build",
    "catalogue",
    "check",
    "diff",
    "fails",
    "findings",
    "fix",
    "lineage",
    "open_index",
    "orphans",
    "repository_of",
    "serve",
    "stale_views",
    "views",
    "write_views",
]
