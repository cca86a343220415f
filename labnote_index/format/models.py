"""Pydantic models of the seven record types of Registry Contract v1.

They follow the v1 JSON Schemas (packaged in ``schemas/``): required fields, types (strict: "no" is
not a boolean, 1 is not a string), enums, nullability, patterns, conditional
provenance, no extra fields. Validation never stops at the first problem: each
problem becomes one ``Problem`` naming the field, so the loader can keep the
record and report every defect.

Rules that depend on another field (provenance, accepted tags, a message's
recipient) are field validators that read the earlier, already-validated field
from ``info.data``; field order in each model matters for that reason.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from .problem import Problem
from .rules import SAFE_PATH_RE

ARTIFACT_ID_RE = re.compile(r"^[0-9]{8}-[a-z0-9][a-z0-9-]*$")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
VISITOR_ID_RE = re.compile(r"^[a-z][a-z0-9-]*-[0-9]{8}-[0-9]{4}-[a-z0-9][a-z0-9-]*-[0-9]{2}$")
RFC3339_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def _pattern(regex: re.Pattern[str], error_type: str, message: str):
    def check(value: str) -> str:
        if not regex.fullmatch(value):  # "$" would let a trailing newline pass
            raise PydanticCustomError(
                error_type, message + ", got '{value}'", {"value": repr(value)[1:-1]}
            )
        return value

    return AfterValidator(check)


def _timestamp(value: str) -> str:
    match = RFC3339_RE.fullmatch(value)
    valid = bool(match)
    if match:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            valid = False
    if not valid:
        raise PydanticCustomError(
            "timestamp",
            "must be an RFC 3339 timestamp such as 2026-06-02T10:00:00Z, got '{value}'",
            {"value": value},
        )
    return value


NonEmpty = Annotated[str, Field(min_length=1)]
Timestamp = Annotated[str, AfterValidator(_timestamp)]
ArtifactId = Annotated[
    str,
    _pattern(ARTIFACT_ID_RE, "id_grammar", "must look like YYYYMMDD-<creator-slug>-<short-topic>"),
]
Slug = Annotated[
    str,
    _pattern(SLUG_RE, "slug_grammar", "must be a lowercase hyphenated slug like 'registry-ops'"),
]
VisitorId = Annotated[
    str,
    _pattern(
        VISITOR_ID_RE,
        "visitor_id_grammar",
        "must match <family>-<YYYYMMDD>-<HHMM>-<purpose>-<nn>",
    ),
]
SafePath = Annotated[
    str,
    _pattern(
        SAFE_PATH_RE,
        "unsafe_path",
        "must be a repository-relative path (no leading '/', no '..', only [A-Za-z0-9._/-])",
    ),
]
Origin = Literal["operator_authored", "third_party", "web", "model_generated", "mixed", "unknown"]
Coverage = Literal["record_level", "claim_level", "partial"]


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()  # a set: a list of 100,000 tags is checked in linear time
    for value in values:
        if value in seen:
            raise PydanticCustomError(
                "duplicate_item", "must not list '{value}' more than once", {"value": value}
            )
        seen.add(value)
    return values


Tags = Annotated[list[Slug], AfterValidator(_unique)]


def _not_bool(value: Any) -> Any:
    # Literal[1] alone accepts true, since True == 1 in Python.
    if isinstance(value, bool):
        raise PydanticCustomError(
            "type", "must be the integer 1, got {value}", {"value": str(value).lower()}
        )
    return value


SchemaVersion = Annotated[Literal[1], BeforeValidator(_not_bool)]


class Record(BaseModel):
    """What every canonical record has (common.schema.json); strict, no extra fields."""

    # Built on first use: a build that reads no record (an edited Markdown
    # file) builds none, and pays nothing of pydantic's first build (its plugin
    # look-up: 15-30 ms); a check builds only the types its repository holds.
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    record_type: str
    schema_version: SchemaVersion


class ProvenanceRecord(Record):
    """Fields shared by packets and responses, in validation order."""

    content_origin: Origin
    source_refs: list[NonEmpty]
    source_note: str
    derivative_of: list[NonEmpty]
    provenance_coverage: Coverage
    created_by: NonEmpty
    deposited_by: NonEmpty

    @field_validator("source_refs")
    @classmethod
    def _sources_for_outside_material(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("content_origin") in ("third_party", "web", "mixed") and not value:
            raise PydanticCustomError(
                "provenance_source_refs",
                "third_party/web/mixed origin requires non-empty source_refs",
            )
        return value

    @field_validator("source_note")
    @classmethod
    def _note_for_unknown(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("content_origin") == "unknown" and not value:
            raise PydanticCustomError(
                "provenance_source_note", "unknown origin requires a non-empty source_note"
            )
        return value

    @field_validator("derivative_of")
    @classmethod
    def _upstream_for_generated(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("content_origin") == "model_generated" and not value:
            raise PydanticCustomError(
                "provenance_derivative_of",
                "model_generated content requires non-empty derivative_of",
            )
        return value


class Packet(ProvenanceRecord):
    """A packet (packet.schema.json)."""

    record_type: Literal["packet"]
    packet_id: ArtifactId
    created_at: Timestamp
    source_session: NonEmpty
    target_session: NonEmpty
    topic: Slug
    status: Literal["new", "in_review", "answered", "superseded", "archived"]
    path: SafePath
    response_expected: bool
    response_packet_id: str | None
    tags: Tags
    notes: str


class Response(ProvenanceRecord):
    """A response to a packet (response.schema.json)."""

    record_type: Literal["response"]
    response_id: ArtifactId
    created_at: Timestamp
    responding_session: NonEmpty
    source_packet_id: NonEmpty
    status: Literal["pending_review", "accepted", "rejected", "archived"]
    path: SafePath
    accepted_by: str | None
    decision_at: Timestamp | None
    tags: Tags
    notes: str


class Message(Record):
    """A message between visitors (message.schema.json)."""

    record_type: Literal["message"]
    message_id: ArtifactId
    created_at: Timestamp
    from_visitor_id: NonEmpty
    to_visitor_id: str | None
    to_group: str | None
    status: Literal[
        "open", "acknowledged", "in_progress", "blocked", "answered", "closed", "archived"
    ]
    path: SafePath
    tags: Tags
    reply_to: str | None
    reply_expected: bool
    response_message_id: str | None
    needs_human_relay: bool
    related_packet: str | None
    related_response: str | None
    summary: str
    notes: str

    @field_validator("to_group")
    @classmethod
    def _has_recipient(cls, value: str | None, info: ValidationInfo) -> str | None:
        if not value and not info.data.get("to_visitor_id"):
            raise PydanticCustomError(
                "message_recipient", "a message needs to_visitor_id or to_group (or both)"
            )
        return value


class Notification(Record):
    """A notification for a visitor (notification.schema.json)."""

    record_type: Literal["notification"]
    notification_id: ArtifactId
    created_at: Timestamp
    from_visitor_id: NonEmpty
    to_visitor_id: NonEmpty
    message_id: NonEmpty
    status: Literal["needed", "told_to_human", "delivered_by_human", "confirmed", "cancelled"]
    path: SafePath
    needs_human_action: bool
    summary: str
    notes: str


class Visit(Record):
    """A visit of a session to a packet (visit.schema.json)."""

    record_type: Literal["visit"]
    visit_id: ArtifactId
    created_at: Timestamp
    visitor_id: NonEmpty
    session_family: NonEmpty
    checked_messages: bool
    answered_messages: bool
    created_messages: bool
    relay_needed: bool
    signoff_path: SafePath
    notes: str


class Visitor(Record):
    """A visitor: a session family that works in the repository (visitor.schema.json)."""

    record_type: Literal["visitor"]
    visitor_id: VisitorId
    created_at: Timestamp
    session_family: NonEmpty
    session_type: NonEmpty
    display_name: NonEmpty
    status: Literal["registered", "active", "dormant", "retired", "superseded"]
    last_seen: Timestamp | None
    # The schema's pattern here is double-escaped (it never rejects ".."); the
    # intent, shared with every other path field, is the common safe_path.
    profile_path: SafePath | None
    notes: str


class Tag(Record):
    """A tag and its promotion (tag.schema.json)."""

    record_type: Literal["tag"]
    tag_slug: Slug
    created_at: Timestamp
    display_name: NonEmpty
    status: Literal["proposed", "accepted", "deprecated"]
    scope: NonEmpty
    description: NonEmpty
    created_by: NonEmpty
    accepted_by: str | None
    accepted_at: Timestamp | None
    acceptance_basis: Literal["operator_supplied", "operator_approved_promotion"] | None
    notes: str

    @field_validator("accepted_by", "accepted_at", "acceptance_basis")
    @classmethod
    def _acceptance_recorded(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("status") == "accepted" and not value:
            raise PydanticCustomError(
                "accepted_tag",
                "accepted tag requires accepted_by, accepted_at and acceptance_basis; "
                "{field} is empty",
                {"field": info.field_name},
            )
        return value


MODELS: dict[str, type[Record]] = {
    "packet": Packet,
    "response": Response,
    "message": Message,
    "notification": Notification,
    "visit": Visit,
    "visitor": Visitor,
    "tag": Tag,
}


def column_types(record_type: str) -> dict[str, type]:
    """SQLite column types of a record type's table, in schema order."""
    columns: dict[str, type] = {}
    for name, info in MODELS[record_type].model_fields.items():
        text = repr(info.annotation)
        if "list[" in text:
            columns[name] = str  # JSON array text
        elif info.annotation is bool:
            columns[name] = bool
        elif name == "schema_version":
            columns[name] = int
        else:
            columns[name] = str
    return columns


_FRIENDLY = {
    "missing": "required field {field} is missing",
    "extra_forbidden": (
        "{field} is not a field of a {record_type} record (unknown fields are defects)"
    ),
    "bool_type": "{field} must be a boolean (true or false), got {input!r}",
    "string_type": "{field} must be a string, got {input!r}",
    "list_type": "{field} must be a JSON array, got {input!r}",
    "literal_error": "{field} must be one of {expected}, got {input!r}",
    "string_too_short": "{field} must not be empty",
}


def validate(record_type: str, data: dict[str, Any]) -> list[Problem]:
    """Validate one record's data against its model; every problem, none raised."""
    try:
        MODELS[record_type].model_validate(data)
    except ValidationError as exc:
        return [problem_from_error(record_type, error) for error in exc.errors()]
    return []


def problem_from_error(record_type: str, error: Any) -> Problem:
    """A pydantic error as a Problem with a field path and a plain-words message."""
    loc = [str(part) for part in error["loc"]]
    # Errors inside a union (str | None) carry the member in the location.
    loc = [p for p in loc if p not in ("str", "none", "function-after[check(), str]")]
    loc = [p for p in loc if not p.startswith("function-after[") and p != "literal[...]"]
    field = ".".join(loc)
    error_type = error["type"]
    template = _FRIENDLY.get(error_type)
    if template:
        message = template.format(
            field=field,
            record_type=record_type,
            input=error.get("input"),
            expected=(error.get("ctx") or {}).get("expected"),
        )
    elif error["msg"].startswith("must") and field:
        message = f"{field} {error['msg']}"
    else:
        message = error["msg"]
    if error_type == "literal_error":
        error_type = "enum"
    elif error_type.endswith("_type") or error_type in ("int_from_float", "string_too_short"):
        error_type = "type" if error_type != "string_too_short" else "empty_value"
    return Problem(field=field, error_type=error_type, message=message)
