"""Conformance cases through the CLI: the project's own (tests/conformance), always;
the reference validator's (../shared/labnote/conformance), as an extra where present.

Both are laid out as a repository root with a JSON list of cases: index exactly
the listed files (build REPO FILE...), check the index, then expect no errors or
an error finding on the target.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index.cli import cli
from labnote_index.format.rules import RECORD_TYPES

from .helpers import CONFORMANCE, SHARED, assert_every_problem_is_a_finding, needs_shared

OWN_CASES = json.loads((CONFORMANCE / "cases.json").read_text())["cases"]


def run_case(root: Path, case: dict[str, Any], db: Path) -> None:
    # build REPO FILE... indexes exactly those files (check's FILE arguments
    # choose what is reported from the whole repository instead).
    args = ["build", str(root), "--db", str(db)]
    if case["enforce_layout"]:
        args.append("--enforce-layout")
    built = CliRunner().invoke(cli, args + case["files"])
    assert built.exit_code == 0, built.output
    result = CliRunner().invoke(cli, ["check", "--db", str(db), "--format", "json"])
    found = json.loads(result.stdout)
    assert_every_problem_is_a_finding(sqlite_utils.Database(db))
    errors = [f for f in found if f["severity"] == "error"]
    if case["expect"] == "no_errors":
        assert errors == [] and result.exit_code == 0, found
        return
    assert result.exit_code == 1
    on_target = {f["check"] for f in errors if f["file"] == case["target"]}
    assert on_target, found
    if "check" in case:
        assert case["check"] in on_target, found


@pytest.mark.parametrize("case", OWN_CASES, ids=[c["name"] for c in OWN_CASES])
def test_own_conformance_case(case: dict[str, Any], tmp_path: Path):
    run_case(CONFORMANCE, case, tmp_path / "c.db")


def test_own_cases_cover_every_record_type_valid_and_many_checks():
    valid = next(c for c in OWN_CASES if c["expect"] == "no_errors")
    types = {json.loads((CONFORMANCE / f).read_text())["record_type"] for f in valid["files"]}
    assert types == set(RECORD_TYPES)
    assert len({c["check"] for c in OWN_CASES if "check" in c}) >= 20


def test_conformance_fixtures_are_not_modified(tmp_path: Path):
    copy = tmp_path / "conformance"
    shutil.copytree(CONFORMANCE, copy)
    CliRunner().invoke(cli, ["check", str(CONFORMANCE), "--db", str(tmp_path / "c.db")])
    for path in copy.rglob("*"):
        if path.is_file():
            assert (CONFORMANCE / path.relative_to(copy)).read_bytes() == path.read_bytes()


def _shared_cases() -> list[dict[str, Any]]:
    path = SHARED / "labnote" / "conformance" / "conformance.json"
    # Where it is absent, one case that the test skips with the reason.
    return json.loads(path.read_text())["cases"] if path.is_file() else [{"name": "absent"}]


@pytest.mark.parametrize("case", _shared_cases(), ids=lambda c: c["name"])
def test_extra_reference_validator_conformance_case(case: dict[str, Any], tmp_path: Path):
    root = needs_shared("labnote", "conformance")
    run_case(root, case, tmp_path / "c.db")
