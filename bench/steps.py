"""The baselines the benchmark measures labnote-index against, each run as its own process.

python bench/steps.py floor REPO            (records read and parsed)
python bench/steps.py floor-artifacts REPO  (and the artifacts they name read)
python bench/steps.py stat-walk REPO        (every file of the repository stat'ed)
python bench/steps.py jsonschema REPO SCHEMA_DIR
python bench/steps.py checks DB      (seconds in one process, then in several)
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

# The fields naming a record's artifact (formats.py's artifact_field values).
ARTIFACT_FIELDS = ("path", "profile_path", "signoff_path")


def floor(repo: Path, artifacts: bool = False) -> int:
    """The least any indexer must do: walk registry/, read and parse every record;
    with ``artifacts``, read every artifact a record names too (the floor of a
    build, which hashes and stores them)."""
    count = 0
    for top, dirs, files in os.walk(repo / "registry"):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "schemas"]
        for name in files:
            if not name.endswith(".json"):
                continue
            with open(os.path.join(top, name), "rb") as handle:
                record = json.loads(handle.read())
            count += 1
            if not artifacts or not isinstance(record, dict):
                continue
            artifact = next(
                (record[f] for f in ARTIFACT_FIELDS if isinstance(record.get(f), str)), None
            )
            if artifact is not None:
                try:
                    with open(repo / artifact, "rb") as handle:
                        handle.read()
                except OSError:
                    pass
    return count


def stat_walk(repo: Path) -> int:
    """The floor of an incremental build: a walk that stats every file of the
    repository (dot-directories aside), to tell what changed."""
    count = 0
    for top, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            os.lstat(os.path.join(top, name))
            count += 1
    return count


def reference_validator(repo: Path, schemas: Path, compiled: bool = True) -> int:
    """What repositories run today: per-file JSON Schema validation with jsonschema.

    Every record file is read, parsed and validated against the schema its
    record_type names, with format checking on. ``compiled`` reuses one
    validator per schema (the kindest reading); without it each file is
    checked with ``jsonschema.validate()``, as per-file validator scripts
    usually are, which also checks the schema itself every time.
    Returns the number of invalid files.
    """
    import jsonschema
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources = []
    validators = {}
    for path in schemas.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        resources.append((path.name, Resource.from_contents(schema)))
    registry = Registry().with_resources(resources)
    for name, resource in resources:
        record_type = name.split(".")[0]
        validators[record_type] = Draft202012Validator(
            resource.contents,
            registry=registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )
    invalid = 0
    for top, dirs, files in os.walk(repo / "registry"):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "schemas"]
        for name in files:
            if not name.endswith(".json"):
                continue
            with open(os.path.join(top, name), "rb") as handle:
                data = json.loads(handle.read())
            validator = validators.get(data.get("record_type"))
            if validator is None:
                invalid += 1
            elif compiled:
                invalid += any(True for _ in validator.iter_errors(data))
            else:
                try:
                    jsonschema.validate(
                        data,
                        validator.schema,
                        cls=Draft202012Validator,
                        registry=registry,
                        format_checker=Draft202012Validator.FORMAT_CHECKER,
                    )
                except jsonschema.ValidationError:
                    invalid += 1
    return invalid


def checks(db_path: Path) -> float:
    """Seconds the whole check catalogue takes on an existing index (one process)."""
    import sqlite_utils

    from labnote_index.checks.catalogue import load_checks, run_checks

    db = sqlite_utils.Database(db_path)
    catalogue = load_checks()
    start = time.perf_counter()
    run_checks(db, catalogue)
    return time.perf_counter() - start


if __name__ == "__main__":
    step, *args = sys.argv[1:]
    if step == "floor":
        print(floor(Path(args[0])))
    elif step == "floor-artifacts":
        print(floor(Path(args[0]), artifacts=True))
    elif step == "stat-walk":
        print(stat_walk(Path(args[0])))
    elif step == "jsonschema":
        print(reference_validator(Path(args[0]), Path(args[1]), compiled=True))
    elif step == "jsonschema-per-file":
        print(reference_validator(Path(args[0]), Path(args[1]), compiled=False))
    elif step == "checks":
        print(f"{checks(Path(args[0])):.4f}")
    else:
        raise SystemExit(f"unknown step {step}")
