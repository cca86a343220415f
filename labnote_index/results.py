"""What the façade's functions return: findings, orphans, changes, lineage trees
and fix reports, as plain typed values (``labnote_index`` exports each)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from .checks import catalogue as catalogue_
from .compare import revisions

if TYPE_CHECKING:
    from .repair import repairs as fixes


class Branch(TypedDict):
    """One branch of a lineage: a record or packet reached from its parent branch
    through ``via`` (or, with ``missing``, a reference that names nothing)."""

    node: str | None
    kind: str | None
    label: str | None
    status: str | None
    via: list[str]
    depth: int
    repeated: bool  # drawn already, elsewhere in the tree
    more: int  # branches of it not drawn (bounded): ask for its own lineage
    missing: bool
    children: list[dict[str, Any]]  # Branches, one level deeper


class Tree(TypedDict, total=False):
    """A lineage: the node, and its ``up`` and ``down`` branches (those asked for),
    with how many of its own branches each way are beyond the drawing."""

    node: str
    kind: str
    label: str | None
    status: str | None
    up: list[Branch]
    down: list[Branch]
    up_more: int
    down_more: int


# The keys of a Finding, in the order listings give them.
FINDING_KEYS = catalogue_.FINDING_KEYS


@dataclass(frozen=True)
class Finding:
    """One violation a check found: the row of the ``findings`` table."""

    check: str
    severity: str  # "error" or "warning"
    record_type: str | None
    record_id: str | None
    file: str | None  # repository-relative
    field: str | None
    message: str
    hint: str  # the repair direction
    line: int | None = None  # where in the file (1-based), when known
    column: int | None = None
    # What tells this finding from every other and finds it again at a base
    # revision (JSON text: check, record, field, subject, occurrence).
    identity: str | None = None
    # Against a base revision (check --base): new, unchanged, or absent (at the
    # base only); None when not compared.
    baseline: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The finding as a plain dict, keys in FINDING_KEYS' order (its values are
        plain already: no deep copy, which made 100,000 findings cost seconds)."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Orphan:
    """A reference whose target does not exist."""

    field: str
    record_type: str
    record_id: str | None
    file: str
    missing_id: str
    expected_type: str | None


# The keys of a Change, in the order listings give them.
DIFF_KEYS = revisions.DIFF_KEYS


@dataclass(frozen=True)
class Change:
    """One difference between two revisions (``before``/``after``: values, or
    JSON text for an edited field)."""

    change: str
    record_type: str
    record_id: str | None
    file: str | None
    field: str | None
    before: str | None
    after: str | None


@dataclass
class FixReport:
    """What ``fix`` planned (and, with ``apply``, did), and the findings after."""

    plan: fixes.Plan
    applied: bool
    gone: list[Finding]  # findings the repairs removed (with apply)
    remaining: list[Finding]  # findings of the chosen checks still there (with apply)
    appeared: list[Finding]  # findings that were not there before (with apply; none expected)
    # The repository commits views, and they are written anew after the other
    # repairs when those change them: the repairs of that second pass (with apply).
    views_follow: bool = False
    views_rewritten: int = 0
    after: list[Finding] = dataclasses.field(
        default_factory=list
    )  # every finding after (with apply)
