"""The pydantic models against the conformance fixtures and the packaged v1 schemas.

Tests of: ``format/problem.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import labnote_index
from labnote_index.format.models import column_types, validate
from labnote_index.format.rules import RECORD_TYPES

from .helpers import CONFORMANCE

VALID = CONFORMANCE / "records" / "valid"
INVALID = CONFORMANCE / "records" / "invalid"
SCHEMAS = Path(labnote_index.__file__).parent / "format" / "schemas"


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("record_type", list(RECORD_TYPES))
def test_valid_fixture_of_each_type_validates(record_type):
    data = load(VALID / record_type / "record.json")
    assert validate(record_type, data) == []


@pytest.mark.parametrize("record_type", list(RECORD_TYPES))
def test_model_columns_are_the_schema_properties(record_type):
    schema = load(SCHEMAS / f"{record_type}.schema.json")
    assert set(column_types(record_type)) == set(schema["properties"]) == set(schema["required"])


@pytest.mark.parametrize(
    "fixture, record_type, field, error_type",
    [
        ("source-refs", "packet", "source_refs", "provenance_source_refs"),
        ("unknown-origin", "packet", "source_note", "provenance_source_note"),
        ("derivation", "response", "derivative_of", "provenance_derivative_of"),
        ("recipient", "message", "to_group", "message_recipient"),
        ("notification-status", "notification", "status", "enum"),
        ("visit-boolean", "visit", "relay_needed", "type"),
        ("visitor-id", "visitor", "visitor_id", "visitor_id_grammar"),
        ("tag-acceptance", "tag", "accepted_by", "accepted_tag"),
    ],
)
def test_invalid_fixture_names_field_and_problem(fixture, record_type, field, error_type):
    data = load(INVALID / fixture / "record.json")
    problems = validate(record_type, data)
    assert (field, error_type) in {(p.field, p.error_type) for p in problems}
    assert all(p.message for p in problems)


def packet():
    return load(VALID / "packet" / "record.json")


@pytest.mark.parametrize(
    "change, field, error_type",
    [
        ({"schema_version": True}, "schema_version", "type"),
        ({"schema_version": 2}, "schema_version", "enum"),
        ({"response_expected": "yes"}, "response_expected", "type"),
        ({"response_expected": 1}, "response_expected", "type"),
        ({"tags": "fixture-tag"}, "tags", "type"),
        ({"tags": ["a", "a"]}, "tags", "duplicate_item"),
        ({"tags": ["Not A Slug"]}, "tags.0", "slug_grammar"),
        ({"created_at": "2026-09-02"}, "created_at", "timestamp"),
        ({"created_at": "2026-02-30T10:00:00Z"}, "created_at", "timestamp"),
        ({"packet_id": "fixture"}, "packet_id", "id_grammar"),
        ({"path": "../outside.md"}, "path", "unsafe_path"),
        ({"path": "/etc/passwd"}, "path", "unsafe_path"),
        ({"created_by": ""}, "created_by", "empty_value"),
        ({"priority": "high"}, "priority", "extra_forbidden"),
        ({"content_origin": "invented"}, "content_origin", "enum"),
    ],
)
def test_packet_strictness(change, field, error_type):
    data = packet() | change
    problems = {(p.field, p.error_type) for p in validate("packet", data)}
    assert (field, error_type) in problems


def test_missing_field_is_named():
    data = packet()
    del data["notes"]
    assert [(p.field, p.error_type) for p in validate("packet", data)] == [("notes", "missing")]


def test_provenance_rules_apply_even_when_other_fields_are_broken():
    data = packet() | {"content_origin": "web", "source_refs": [], "topic": "Bad Topic"}
    problems = {(p.field, p.error_type) for p in validate("packet", data)}
    assert ("source_refs", "provenance_source_refs") in problems
    assert ("topic", "slug_grammar") in problems


def test_message_with_group_only_is_addressed():
    data = load(VALID / "message" / "record.json") | {"to_visitor_id": None, "to_group": "ops"}
    assert validate("message", data) == []


def test_status_vocabularies_of_the_models_and_the_rules_agree():
    from typing import get_args

    from labnote_index.format.models import MODELS
    from labnote_index.format.rules import STATUS_BUCKETS, STATUS_TRANSITIONS

    for name, model in MODELS.items():
        if "status" not in model.model_fields:
            continue
        vocabulary = set(get_args(model.model_fields["status"].annotation))
        moves = {status for pair in STATUS_TRANSITIONS.get(name, []) for status in pair}
        assert moves == vocabulary, name
        if name in STATUS_BUCKETS:
            assert set(STATUS_BUCKETS[name]) == vocabulary, name


def test_a_model_is_built_only_when_a_record_of_its_kind_is_validated():
    """The models are built on first use (``defer_build``): a process that
    validates only packets builds the packet model and no other, nor the bases
    no record is validated against; one that validates none builds none (nor
    pays pydantic's first build, 15-30 ms). A manifest builds its own model,
    with its documents and input packets in it."""
    probe = (
        "import json, sys\nimport pydantic\n"
        "from labnote_index.format import handoff, models\n"
        "def built():\n"
        "    kinds = [*vars(models).values(), *vars(handoff).values()]\n"
        "    return sorted(m.__name__ for m in kinds if isinstance(m, type)\n"
        "        and issubclass(m, pydantic.BaseModel) and m.__pydantic_complete__)\n"
        "print(built())\n"
        "packet = json.loads(open(sys.argv[1], encoding='utf-8').read())\n"
        "print(models.validate('packet', packet), built())\n"
        "print(handoff.validate_handoff('handoff_manifest', {}) != [], built())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, str(VALID / "packet" / "record.json")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.splitlines() == [
        "[]",
        "[] ['Packet']",
        "True ['Manifest', 'Packet']",
    ]
