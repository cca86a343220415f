"""Which JSON Schemas govern a repository's records.

A LabNote repository carries its contract in ``registry/schemas/*.schema.json``,
and its own validator validates against those. Where a record type's committed
schema (with the committed ``common.schema.json`` it refers to) says what the
packaged Registry Contract v1 says, the packaged models validate it, with their
plain-words messages. Where it says something else (an older slug pattern, an
optional field added), the committed schema governs that type's records in
full, through jsonschema-rs (compiled once; validation runs on every record).
A committed schema that is not valid JSON Schema is a finding of its own, and
the packaged contract governs its type until it is fixed.

Schemas are data from the repository, so no reference ever leaves it: ``$ref``
is resolved only to the other committed schemas, never fetched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from .problem import Problem
from .rules import RECORD_TYPES

SCHEMA_DIR = "registry/schemas"
COMMON = "common"
PACKAGED = "packaged Registry Contract v1"


def schema_file(name: str) -> str:
    """The repository path of a committed schema (a record type's, or common)."""
    return f"{SCHEMA_DIR}/{name}.schema.json"


@cache
def packaged(name: str) -> Any:
    """The packaged contract's schema of ``name``, as JSON."""
    text = resources.files(__package__).joinpath("schemas", f"{name}.schema.json").read_text()
    return json.loads(text)


@dataclass
class CommittedSchema:
    """One committed schema file as read: its bytes' hash and its JSON, or why not."""

    sha256: str
    value: Any = None
    error: str | None = None


@dataclass
class Contract:
    """The schemas that govern each record type, and what is wrong with the
    committed ones. Picklable (build workers get a copy): the compiled
    validators are made again on first use in each process."""

    # record type -> committed schema JSON, for the types it governs
    schemas: dict[str, Any] = field(default_factory=dict)
    common: Any = None
    # schema file -> its problem (not JSON, not a valid JSON Schema)
    problems: dict[str, Problem] = field(default_factory=dict)
    # schema file -> sha256 of its bytes: what a build's settings keep
    fingerprint: dict[str, str] = field(default_factory=dict)
    _validators: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_validators": {}}

    def governing(self) -> dict[str, str]:
        """Record type -> the schema that governs it (a file, or PACKAGED)."""
        return {
            name: schema_file(name) if name in self.schemas else PACKAGED for name in RECORD_TYPES
        }

    def validate(self, record_type: str, data: dict[str, Any]) -> list[Problem] | None:
        """The problems the committed schema finds in one record, or None where
        the packaged contract governs its type."""
        if record_type not in self.schemas:
            return None
        validator = self._validators.get(record_type)
        if validator is None:
            validator = self._validators[record_type] = _compile(
                self.schemas[record_type], self.common
            )
        rt = RECORD_TYPES[record_type]
        problems: list[Problem] = []
        try:
            for error in validator.iter_errors(data):
                problems.extend(_problems(rt.id_field, _ID_GRAMMARS[rt.id_grammar], error))
        except Exception as exc:  # the committed schema's fault, told as the record's problem
            why = f"the committed {schema_file(record_type)} could not validate it: "
            problems.append(Problem("", "type", why + _first_line(exc)))
        return problems


def describe(governing: dict[str, str]) -> str:
    """One line on which schemas govern (``Contract.governing``), for --show-settings."""
    committed = sorted(name for name, by in governing.items() if by != PACKAGED)
    if not committed:
        return f"schemas: the {PACKAGED} governs every record type"
    rest = sorted(set(governing) - set(committed))
    line = f"schemas: {SCHEMA_DIR}/ governs {', '.join(committed)}"
    return line + (f"; the {PACKAGED}, {', '.join(rest)}" if rest else "")


def contract_of(committed: dict[str, CommittedSchema]) -> Contract:
    """The contract of a repository whose ``registry/schemas/`` holds these
    (name -> schema, for the record types' names and common)."""
    contract = Contract()
    contract.fingerprint = {schema_file(n): s.sha256 for n, s in sorted(committed.items())}
    if not committed:
        return contract
    common = committed.get(COMMON)
    common_value = packaged(COMMON)
    if common is not None:
        problem = _unusable(common)
        if problem:
            contract.problems[schema_file(COMMON)] = problem
        else:
            common_value = common.value
    own_common = common is not None and common_value != packaged(COMMON)
    for name in RECORD_TYPES:
        schema = committed.get(name)
        if schema is None:
            continue  # no committed schema of this type: the packaged one governs it
        problem = _unusable(schema)
        if problem is None and (schema.value != packaged(name) or own_common):
            try:
                _compile(schema.value, common_value)
            except Exception as exc:  # a hostile schema is a finding, never a crash
                problem = _invalid(f"is not a valid JSON Schema: {_first_line(exc)}")
            else:
                contract.schemas[name] = schema.value
        if problem:
            contract.problems[schema_file(name)] = problem
    if contract.schemas:
        contract.common = common_value
    return contract


def _unusable(schema: CommittedSchema) -> Problem | None:
    if schema.error:
        return _invalid(schema.error)
    if not isinstance(schema.value, dict):
        return _invalid("is not a JSON Schema: a schema is one JSON object")
    return None


def _invalid(why: str) -> Problem:
    return Problem(
        "", "schema_invalid", f"this committed schema {why}; the {PACKAGED} governs its records"
    )


def _first_line(exc: BaseException) -> str:
    """The library's message, and where in the schema it is."""
    where = "/".join(str(p) for p in getattr(exc, "instance_path", ()) or ())
    first = str(exc).strip().split("\n", 1)[0]
    return f"at {where}: {first}" if where else first


def _compile(schema: Any, common: Any) -> Any:
    import jsonschema_rs  # only where a committed schema governs

    def retrieve(uri: str) -> Any:
        # A reference is resolved to the committed common schema, or not at all.
        if uri.rsplit("/", 1)[-1] == f"{COMMON}.schema.json":
            return common
        raise ValueError(f"{uri} is not one of the repository's schemas (never fetched)")

    return jsonschema_rs.validator_for(schema, retriever=retrieve, validate_formats=True)


# The grammar a pattern or format stands for, by the definition it comes from.
_GRAMMARS = {
    "slug": "slug_grammar",
    "artifact_id": "id_grammar",
    "safe_path": "unsafe_path",
    "timestamp": "timestamp",
}


_TIME_FORMATS = ("date-time", "date", "time")
_ID_GRAMMARS = {
    "artifact_id": "id_grammar",
    "slug": "slug_grammar",
    "visitor_id": "visitor_id_grammar",
}


def _problems(id_field: str, id_grammar: str, error: Any) -> list[Problem]:
    """One jsonschema-rs error as the problems it stands for (the problem kinds
    the packaged models give, so each is reported by the same check)."""
    kind = type(error.kind).__name__  # ValidationErrorKind.Required, ...
    path = ".".join(str(part) for part in error.instance_path)
    at = f"{path}." if path else ""
    if kind == "Required":
        name = f"{at}{error.kind.property}"
        return [Problem(name, "missing", f"required field {name} is missing")]
    if kind in ("AdditionalProperties", "UnevaluatedProperties"):
        names = getattr(error.kind, "unexpected", None) or [""]
        return [
            Problem(
                f"{at}{n}",
                "extra_forbidden",
                f"{at}{n} is not a field of the committed schema (unknown fields are defects)",
            )
            for n in names
        ]
    message = f"{path}: {error.message}" if path else error.message
    if kind in ("Enum", "Constant"):
        return [Problem(path, "enum", message)]
    if kind in ("Pattern", "Format"):
        defined = next((p for p in reversed(error.schema_path[:-1]) if p in _GRAMMARS), None)
        if defined:
            return [Problem(path, _GRAMMARS[defined], message)]
        if path == id_field:
            return [Problem(path, id_grammar, message)]
        timestamp = kind == "Format" and error.kind.format in _TIME_FORMATS
        return [Problem(path, "timestamp" if timestamp else "pattern", message)]
    if kind == "MinLength" and error.instance == "":
        return [Problem(path, "empty_value", f"{path} must not be empty")]
    return [Problem(path, "type", message)]
