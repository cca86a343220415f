"""Workflow handoff packets: ``handoff.manifest.json`` and ``packet.lock.json``.

A packet is the directory holding a manifest, normally
``docs/workflow/roles/<role>/reports/<milestone>/packet-vNNN/``. Manifests are
additive: unknown fields are kept in ``extra``, never rejected. The rows made
here are resolved in SQL after loading (documents and locked files against the
packet's files, input_packets against the manifests).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from ..text import as_text, parent_dir
from .models import problem_from_error
from .problem import Problem
from .rules import MANIFEST_STATUSES, template_role


def _status(value: str) -> str:
    if value not in MANIFEST_STATUSES:
        hint = (
            "; downstream acceptance is recorded in input_packets as accepted_as_input"
            if value == "accepted"
            else ""
        )
        raise PydanticCustomError(
            "handoff_status",
            "status must be one of draft, blocked, ready_for_next_role, superseded, got '{value}'"
            + hint,
            {"value": value},
        )
    return value


class _Handoff(BaseModel):
    # Unknown fields are allowed: new manifest fields are additive. Built on
    # first use, as the record models are (models.py).
    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)


class Document(_Handoff):
    """One document a manifest lists (``documents``)."""

    path: str
    type: str | None = None
    required: bool = True
    description: str | None = None


class InputPacket(_Handoff):
    """One upstream packet a manifest consumed (``input_packets``)."""

    role: str
    milestone: str
    packet_version: str
    manifest: str
    status_at_consumption: str
    consumption_status: str


class Manifest(_Handoff):
    """A handoff packet's ``handoff.manifest.json`` (packet-schema.md)."""

    schema_version: str | int
    role: str
    milestone: str
    packet_version: str
    status: str
    created_at: str
    updated_at: str
    summary: str
    documents: list[Document]
    input_packets: list[InputPacket]
    source_scopes: list[Any]
    # Where the packet goes next: packet-schema.md's handoff_to (a list of roles),
    # or the later workflow's return_to (one role, a string). Either will do.
    return_to: str | None = None
    handoff_to: list[str] | None = None
    open_questions: list[Any]
    blocked: bool
    required_confirmations: list[Any]

    @field_validator("status")
    @classmethod
    def _manifest_status(cls, value: str) -> str:
        return _status(value)


class LockedFile(_Handoff):
    """One file a packet lock pins, with its SHA-256."""

    path: str
    sha256: str


class Lock(_Handoff):
    """A handoff packet's ``packet.lock.json``: the files it pins."""

    schema_version: str | int
    role: str
    milestone: str
    packet_version: str
    status: str
    files: list[LockedFile]


MANIFEST_FIELDS = set(Manifest.model_fields)
LOCK_FIELDS = set(Lock.model_fields)


def validate_handoff(kind: str, data: dict[str, Any]) -> list[Problem]:
    """The problems of a manifest, a template manifest (checked as a manifest:
    its values are placeholders, which no field's type rules out) or a lock."""
    model = Lock if kind == "packet_lock" else Manifest
    problems = []
    try:
        model.model_validate(data)
    except ValidationError as exc:
        problems = [problem_from_error(kind, error) for error in exc.errors()]
    # Either shape says where the packet goes next; a manifest needs one of them.
    if model is Manifest and data.get("handoff_to") is None and data.get("return_to") is None:
        message = "required field handoff_to (or return_to) is missing"
        problems.append(Problem("handoff_to", "missing_next_role", message))
    elif model is Manifest and data.get("handoff_to") is None:
        back = data.get("return_to")
        if isinstance(back, str) and not back.strip():  # says it, but names no role
            message = f"return_to {back!r} names no role: name the role the packet goes to"
            problems.append(Problem("return_to", "missing_next_role", message))
    if kind == "handoff_manifest":  # a packet, not a template: no placeholder is left
        problems += _placeholders(data)
    return problems


# What a packet template holds where a packet holds values (packet-schema's
# templates): a date of YYYY-MM-DD, the milestone "template", "<milestone>" in a path.
_DATE_PLACEHOLDER = "YYYY-MM-DD"
_ANGLED = re.compile(r"<[A-Za-z_-]{1,40}>")


def _placeholders(data: dict[str, Any]) -> list[Problem]:
    """The template placeholders a packet still holds, in the fields templates
    put them in (a fixed set of fields and one level of entries: no recursion)."""
    found = []

    def look(field: str, value: Any) -> None:
        if not isinstance(value, str):
            return
        angled = _ANGLED.search(value)
        if value == _DATE_PLACEHOLDER or (field.endswith("milestone") and value == "template"):
            message = f"{field} is the template placeholder {value!r}: give the packet's own"
        elif angled:
            message = f"{field} holds the placeholder {angled.group()}: give the packet's own"
        else:
            return
        found.append(Problem(field, "placeholder", message))

    for field in ("created_at", "updated_at", "milestone", "summary"):
        look(field, data.get(field))
    for array, keys in (("documents", ("path",)), ("input_packets", ("milestone", "manifest"))):
        entries = data.get(array)
        for n, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict):
                for key in keys:
                    look(f"{array}[{n}].{key}", entry.get(key))
    return found


def packet_location(packet_dir: str) -> dict[str, str | None]:
    """role, milestone and packet_version as the directory names them."""
    parts = packet_dir.split("/")
    for i in range(len(parts) - 4):
        if parts[i] == "roles" and parts[i + 2] == "reports" and i + 4 == len(parts) - 1:
            return {
                "dir_role": parts[i + 1],
                "dir_milestone": parts[i + 3],
                "dir_packet_version": parts[i + 4],
            }
    return {"dir_role": None, "dir_milestone": None, "dir_packet_version": None}


def manifest_rows(manifest: str, data: dict[str, Any], valid: bool) -> dict[str, list[dict]]:
    """Rows for handoff_packets, handoff_documents and input_packets from one manifest."""
    packet_dir = parent_dir(manifest)
    extra = {k: v for k, v in data.items() if k not in MANIFEST_FIELDS}
    packet = {
        "packet_dir": packet_dir,
        "manifest": manifest,
        **packet_location(packet_dir),
        **{
            k: as_text(data.get(k))
            for k in (
                "role",
                "milestone",
                "packet_version",
                "status",
                "created_at",
                "updated_at",
                "summary",
            )
        },
        "version_number": version_number(data.get("packet_version")),
        "schema_version": as_text(data.get("schema_version")),
        "blocked": data.get("blocked"),
        # Both kept as written: which shape said where the packet goes next.
        "handoff_to": data.get("handoff_to"),
        "return_to": data.get("return_to"),
        **{k: data.get(k) for k in ("source_scopes", "open_questions", "required_confirmations")},
        "extra": json.dumps(extra) if extra else None,
        "valid": valid,
    }
    documents = []
    for position, doc in enumerate(_objects(data.get("documents"))):
        documents.append(
            {
                "packet_dir": packet_dir,
                "position": position,
                "path": as_text(doc.get("path")),
                "type": as_text(doc.get("type")),
                "required": doc.get("required") is not False,  # absent means required
                "description": as_text(doc.get("description")),
            }
        )
    inputs = []
    for position, entry in enumerate(_objects(data.get("input_packets"))):
        extra_entry = {k: v for k, v in entry.items() if k not in InputPacket.model_fields}
        inputs.append(
            {
                "consumer": packet_dir,
                "position": position,
                **{k: as_text(entry.get(k)) for k in InputPacket.model_fields},
                "extra": json.dumps(extra_entry) if extra_entry else None,
            }
        )
    return {"handoff_packets": [packet], "handoff_documents": documents, "input_packets": inputs}


_VERSION = re.compile(r"packet-v(\d{1,9})")


def version_number(packet_version: Any) -> int | None:
    """The number of a packet_version (``packet-v012`` is 12): versions are ordered
    by it, as text ``packet-v1000`` would sort before ``packet-v999``."""
    match = _VERSION.fullmatch(packet_version) if isinstance(packet_version, str) else None
    return int(match.group(1)) if match else None


def template_rows(manifest: str, data: dict[str, Any], valid: bool) -> dict[str, list[dict]]:
    """The row of a packet template (``roles/<role>/templates/handoff.manifest.json``):
    what it says, for browsing. A template is no packet: its documents and
    input_packets are placeholders, never resolved, never a lineage."""
    extra = {k: v for k, v in data.items() if k not in MANIFEST_FIELDS}
    row = {
        "manifest": manifest,
        "dir_role": template_role(manifest),
        **{k: as_text(data.get(k)) for k in ("role", "milestone", "packet_version", "status")},
        "summary": as_text(data.get("summary")),
        "schema_version": as_text(data.get("schema_version")),
        "documents": [as_text(d.get("path")) for d in _objects(data.get("documents"))],
        "handoff_to": data.get("handoff_to"),
        "return_to": data.get("return_to"),
        "extra": json.dumps(extra) if extra else None,
        "valid": valid,
    }
    return {"handoff_templates": [row]}


def lock_rows(lock: str, data: dict[str, Any]) -> dict[str, list[dict]]:
    """The rows of a packet lock (``lock``, its repository path) for the
    ``packet_locks`` and ``locked_files`` tables."""
    packet_dir = parent_dir(lock)
    extra = {k: v for k, v in data.items() if k not in LOCK_FIELDS}
    row = {
        "lock_file": lock,
        "packet_dir": packet_dir,
        **{k: as_text(data.get(k)) for k in ("role", "milestone", "packet_version", "status")},
        "schema_version": as_text(data.get("schema_version")),
        "extra": json.dumps(extra) if extra else None,
    }
    files = [
        {
            "lock_file": lock,
            "packet_dir": packet_dir,
            "path": as_text(entry.get("path")),
            "recorded_sha256": as_text(entry.get("sha256")),
        }
        for entry in _objects(data.get("files"))
    ]
    return {"packet_locks": [row], "locked_files": files}


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
