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
    IndexDamaged,
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
from .build import BuildResult, IndexWriteError, NotARepository, RepositoryError
from .errors import InvalidArgument, LabnoteError
from .git import RevisionError, RevisionNotFound
from .index_file import NoIndex, NotAnIndex
from .parallel import WorkerError
from .progress import Progress
from .provenance import NodeNotFound
from .registry_views import RecordsUnreadable, ViewPathError

__all__ = [
    "DEFAULT_DB",
    "Branch",
    "BuildResult",
    "Change",
    "Direction",
    "Finding",
    "FixReport",
    "IndexDamaged",
    "IndexWriteError",
    "InvalidArgument",
    "LabnoteError",
    "NoIndex",
    "NodeNotFound",
    "NotARepository",
    "NotAnIndex",
    "Orphan",
    "Progress",
    "RecordsUnreadable",
    "RepositoryError",
    "RevisionError",
    "RevisionNotFound",
    "Severity",
    "Tree",
    "ViewPathError",
    "WorkerError",
    "build",
    "catalogue",
    "check",
    "diff",
    "fails",
    "fix",
    "findings",
    "lineage",
    "open_index",
    "orphans",
    "repository_of",
    "serve",
    "stale_views",
    "views",
    "write_views",
]
