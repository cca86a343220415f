"""What the LabNote formats say, as data.

Everything the importer and the SQL checks need to know about record types,
buckets, references and legacy spellings lives here, once. The importer also
loads these tables into the database (``record_types``, ``status_buckets``,
``reference_rules``) so that checks can join against them instead of repeating
the rules in SQL literals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# How loud a finding is, the one vocabulary every layer reads: a check's
# severity (or "off": not run), what --fail-on and fail-on take.
SEVERITIES = ("error", "warning")
LEVELS = (*SEVERITIES, "off")

# The schema's safe_path: no leading "/", no ".." segment, a closed character set.
SAFE_PATH_RE = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9._/-]+$")


@dataclass(frozen=True, kw_only=True)
class RecordType:
    """One of the seven canonical registry record types."""

    name: str  # value of record_type
    table: str  # table in the index
    id_field: str
    id_grammar: str  # "artifact_id", "visitor_id" or "slug"
    directory: str  # directory under registry/
    sub_directory: str | None  # "year", "bucket", "status" or None
    artifact_field: str | None
    artifact_prefix: str | None  # "{bucket}" is replaced by the status bucket

    @property
    def views_file(self) -> str | None:
        """The generated CSV view of this type, or None (tags are in INDEX.md)."""
        return None if self.name == "tag" else f"{self.name}_registry.csv"


RECORD_TYPES: dict[str, RecordType] = {
    rt.name: rt
    for rt in [
        RecordType(
            name="packet",
            table="packets",
            id_field="packet_id",
            id_grammar="artifact_id",
            directory="packets",
            sub_directory="year",
            artifact_field="path",
            artifact_prefix="datadrops/",
        ),
        RecordType(
            name="response",
            table="responses",
            id_field="response_id",
            id_grammar="artifact_id",
            directory="responses",
            sub_directory="year",
            artifact_field="path",
            artifact_prefix="responses/",
        ),
        RecordType(
            name="message",
            table="messages",
            id_field="message_id",
            id_grammar="artifact_id",
            directory="messages",
            sub_directory="bucket",
            artifact_field="path",
            artifact_prefix="messages/{bucket}/",
        ),
        RecordType(
            name="notification",
            table="notifications",
            id_field="notification_id",
            id_grammar="artifact_id",
            directory="notifications",
            sub_directory="bucket",
            artifact_field="path",
            artifact_prefix="notifications/{bucket}/",
        ),
        RecordType(
            name="visit",
            table="visits",
            id_field="visit_id",
            id_grammar="artifact_id",
            directory="visits",
            sub_directory="year",
            artifact_field="signoff_path",
            artifact_prefix="responses/signoffs/",
        ),
        RecordType(
            name="visitor",
            table="visitors",
            id_field="visitor_id",
            id_grammar="visitor_id",
            directory="visitors",
            sub_directory=None,
            artifact_field="profile_path",
            artifact_prefix=None,
        ),
        RecordType(
            name="tag",
            table="tags",
            id_field="tag_slug",
            id_grammar="slug",
            directory="tags",
            sub_directory="status",
            artifact_field=None,
            artifact_prefix=None,
        ),
    ]
}

RECORD_TYPE_BY_DIRECTORY = {rt.directory: rt for rt in RECORD_TYPES.values()}

# status -> bucket directory, for the types whose records and artifacts move
# between buckets as their status changes.
STATUS_BUCKETS: dict[str, dict[str, str]] = {
    "message": {
        "open": "open",
        "acknowledged": "open",
        "in_progress": "open",
        "blocked": "open",
        "answered": "answered",
        "closed": "closed",
        "archived": "archived",
    },
    "notification": {
        "needed": "open",
        "told_to_human": "open",
        "delivered_by_human": "delivered",
        "confirmed": "closed",
        "cancelled": "closed",
    },
    "tag": {"proposed": "proposed", "accepted": "accepted", "deprecated": "deprecated"},
}


@dataclass(frozen=True)
class ReferenceRule:
    """A field whose value is the ID of another record (FORMAT.md, References)."""

    source_type: str
    field: str
    target_type: str
    many: bool = False  # a list of IDs rather than one


REFERENCE_RULES: list[ReferenceRule] = [
    ReferenceRule("packet", "response_packet_id", "response"),
    ReferenceRule("response", "source_packet_id", "packet"),
    ReferenceRule("message", "reply_to", "message"),
    ReferenceRule("message", "response_message_id", "message"),
    ReferenceRule("message", "related_packet", "packet"),
    ReferenceRule("message", "related_response", "response"),
    ReferenceRule("notification", "message_id", "message"),
    # A visit's packet is its own ID minus "-visit" (see visit_packet_id).
    ReferenceRule("visit", "visit_id", "packet"),
    ReferenceRule("packet", "derivative_of", "packet", many=True),
    ReferenceRule("packet", "derivative_of", "response", many=True),
    ReferenceRule("response", "derivative_of", "packet", many=True),
    ReferenceRule("response", "derivative_of", "response", many=True),
]

# Record types that carry tags[] and provenance fields.
TAGGED_TYPES = ("packet", "response", "message")
PROVENANCE_TYPES = ("packet", "response")

VISIT_SUFFIX = "-visit"


def visit_packet_id(visit_id: str) -> str | None:
    """The packet a visit signs off: its ID without the ``-visit`` suffix."""
    if visit_id.endswith(VISIT_SUFFIX) and len(visit_id) > len(VISIT_SUFFIX):
        return visit_id[: -len(VISIT_SUFFIX)]
    return None


# Legacy spelling -> (record types it applies to, canonical field).
LEGACY_FIELDS: dict[str, tuple[tuple[str, ...], str]] = {
    "source_ai": (("packet",), "source_session"),
    "target_ai": (("packet",), "target_session"),
    "responding_ai": (("response",), "responding_session"),
    "visitor_family": (("visit", "visitor"), "session_family"),
    "date": (tuple(RECORD_TYPES), "created_at"),
}


def canonical_spelling(
    rt: RecordType, data: dict[str, Any], legacy: list[dict[str, Any]]
) -> dict[str, Any]:
    """``data`` (a copy) with legacy spellings moved to their canonical fields,
    each one noted in ``legacy``."""
    mapped = dict(data)
    for old, (types, canonical) in LEGACY_FIELDS.items():
        if old not in mapped or rt.name not in types:
            continue
        value = mapped.pop(old)
        if canonical in mapped:
            note = f"both {old} and {canonical} are present; {canonical} was kept"
        else:
            mapped[canonical] = value
            note = f"{old} indexed as {canonical}"
        legacy.append(
            {
                "record_type": rt.name,
                "legacy_field": old,
                "canonical_field": canonical,
                "note": note,
            }
        )
    return mapped


# Files under registry/ that are not records.
GENERATED_VIEWS = tuple(
    [f"registry/{rt.views_file}" for rt in RECORD_TYPES.values() if rt.views_file]
    + ["registry/INDEX.md"]
)

HANDOFF_MANIFEST = "handoff.manifest.json"


def template_role(path: str) -> str | None:
    """The role of a packet template (``.../roles/<role>/templates/handoff.manifest.json``,
    a manifest of placeholders beside the role's template documents), or None
    for any other path."""
    parts = path.split("/")
    if len(parts) >= 4 and parts[-2] == "templates" and parts[-4] == "roles":
        return parts[-3]
    return None


MANIFEST_STATUSES = ("draft", "blocked", "ready_for_next_role", "superseded")
PACKET_LOCK = "packet.lock.json"

# Status changes the lifecycles allow between two revisions (FORMAT.md,
# Lifecycles). Keeping a status is always allowed. Where the contract names a
# path (new -> in_review -> answered) a step forward that skips a state is
# allowed; nothing moves back.
# A message in one of these states is still waiting for someone to act (its
# open bucket): the dashboard and the cross-repository queries count them.
OPEN_MESSAGE_STATUSES = ("open", "acknowledged", "in_progress", "blocked")

STATUS_TRANSITIONS: dict[str, list[tuple[str, str]]] = {
    "packet": [
        ("new", "in_review"),
        ("new", "answered"),
        ("in_review", "answered"),
        *[(s, "superseded") for s in ("new", "in_review", "answered")],
        *[(s, "archived") for s in ("new", "in_review", "answered", "superseded")],
    ],
    "response": [
        ("pending_review", "accepted"),
        ("pending_review", "rejected"),
        *[(s, "archived") for s in ("pending_review", "accepted", "rejected")],
    ],
    # Open-bucket states move freely among themselves and onward; once answered
    # or closed a message never reopens (a new request is a new message);
    # archived is terminal.
    "message": [
        *[
            (a, b)
            for a in OPEN_MESSAGE_STATUSES
            for b in (*OPEN_MESSAGE_STATUSES, "answered", "closed", "archived")
            if a != b
        ],
        ("answered", "closed"),
        ("answered", "archived"),
        ("closed", "archived"),
    ],
    "notification": [
        ("needed", "told_to_human"),
        ("needed", "delivered_by_human"),
        ("needed", "confirmed"),
        ("told_to_human", "delivered_by_human"),
        ("told_to_human", "confirmed"),
        ("delivered_by_human", "confirmed"),
        *[(s, "cancelled") for s in ("needed", "told_to_human", "delivered_by_human")],
    ],
    "visitor": [
        ("registered", "active"),
        ("active", "dormant"),
        ("dormant", "active"),
        *[(s, t) for s in ("registered", "active", "dormant") for t in ("retired", "superseded")],
    ],
    # proposed -> accepted is a legal lifecycle step, but never within one
    # change set: the tag_promotion check says so.
    "tag": [("proposed", "accepted"), ("proposed", "deprecated"), ("accepted", "deprecated")],
}

# How far along a handoff packet is; a packet never moves to a lower rank.
MANIFEST_STATUS_RANK = {"draft": 0, "blocked": 0, "ready_for_next_role": 1, "superseded": 2}


# Timestamps of what happened to a record after it was created: none may come
# before its created_at (the record_events view, the timestamp_order check).
LATER_TIMESTAMPS = {
    "response": ("decision_at",),
    "tag": ("accepted_at",),
    "visitor": ("last_seen",),
}


# Provenance. Every reference points from a record to where it came from (its
# parent), except these, which name what answered it (a child): a lineage turns
# them round. One list, for the lineage_edges and lineage_missing views.
ANSWER_FIELDS = ("response_packet_id", "response_message_id")
# The fields by which an answer names what it answers (a response its packet, a
# reply the message it replies to): the other side of ANSWER_FIELDS.
ANSWERING_FIELDS = ("source_packet_id", "reply_to")
# How many levels a lineage follows, in the CLI, the pages and the canned query
# (which reads it from the lineage_limits view): deep enough for any real
# provenance, bounded for a hostile one (a 1,500-long derivative_of chain).
LINEAGE_DEPTH = 40
# How many steps a milestone's handoff chain follows (the handoff_chain canned
# query, from lineage_limits), and how many messages a reply thread holds (the
# reply_chains view, a message's thread on its page): bounds for hostile chains.
HANDOFF_CHAIN_STEPS = 50
REPLY_THREAD_LENGTH = 1000
