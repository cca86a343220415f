"""check's CI formats, each read back by a library made for it (markdown-it-py,
junitparser and an XML Schema validator, GitLab's documented keys as a model).

Tests of: ``output/ci.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

import pytest
from click.testing import CliRunner
from pydantic import BaseModel, ConfigDict

from labnote_index.cli import cli
from labnote_index.text import shown

from .helpers import ROOT, Repo

# Record text that would be a link, an image, HTML, a cell boundary, a
# terminal escape and a bidirectional override if a report took it raw.
HOSTILE_TAG = "[click](https://evil.example) ![x](y) <img src=x> | cell \x1b[2J \u202e"
PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"


def report(repo: Repo, fmt: str) -> tuple[str, list[dict]]:
    repo.edit(PACKET, tags=[HOSTILE_TAG])
    args = ["check", str(repo.root), "--db", str(repo.db_path)]
    out = CliRunner().invoke(cli, [*args, "--format", fmt])
    assert out.exit_code == 1, out.output
    rows = json.loads(
        CliRunner().invoke(cli, ["check", "--db", str(repo.db_path), "--format", "json"]).output
    )
    return out.output, rows


def test_markdown_shows_record_text_as_text_and_nothing_else(sample_repo: Repo):
    from markdown_it import MarkdownIt

    text, rows = report(sample_repo, "markdown")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}
    cells = [t for t in tokens if t.type == "inline"]
    tables = [i for i, t in enumerate(tokens) if t.type == "table_open"]
    assert len(tables) == 2
    body_rows = [t for t in tokens[tables[1] :] if t.type == "tr_open"]
    assert len(body_rows) == len(rows) + 1  # the header, then a row a finding
    hostile = [r for r in rows if r["check"] == "tag_unresolved" and r["file"] == PACKET]
    shown_cells = {"".join(x.content for x in c.children or []) for c in cells}
    assert hostile and shown(hostile[0]["message"]) in shown_cells  # the text, exactly
    assert "\x1b" not in text and "\u202e" not in text


def test_junit_reads_back_a_suite_per_check_and_a_failure_per_finding(sample_repo: Repo):
    import xmlschema
    from junitparser import Failure, JUnitXml

    text, rows = report(sample_repo, "junit")
    xmlschema.XMLSchema(ROOT / "tests" / "fixtures" / "junit.xsd").validate(text)
    path = sample_repo.root.parent / "report.xml"
    path.write_text(text)
    suites = {s.name: s for s in JUnitXml.fromfile(str(path))}
    checks = json.loads(CliRunner().invoke(cli, ["checks", "--format", "json"]).output)
    assert set(suites) == {c["id"] for c in checks}
    failures = [
        (suite.name, result.message, result.type)
        for suite in suites.values()
        for case in suite
        for result in case.result
        if isinstance(result, Failure)
    ]
    assert sorted(failures) == sorted(
        (r["check"], shown(r["message"]), r["severity"]) for r in rows
    )
    assert sum(s.failures for s in suites.values()) == len(rows)
    assert all(s.tests >= 1 for s in suites.values())  # a passing case where nothing failed


def test_junit_stays_valid_xml_whatever_a_file_is_named(sample_repo: Repo):
    """A character XML forbids (U+FFFE, U+FFFF, a C0 control, a name that is not
    UTF-8) in a file name voided the whole report: it is written escaped."""
    import xml.etree.ElementTree as ET

    import xmlschema

    names = ["bad\ufffe.txt", "bad\uffff.txt", "bad\x01\x0b.txt"]
    for name in names:
        sample_repo.write(f"registry/{name}", "stray\n")
    (sample_repo.root / os.fsdecode(b"registry/bad\xff.txt")).write_text("stray\n")
    result = CliRunner().invoke(
        cli, ["check", str(sample_repo.root), "--no-db", "--format", "junit"]
    )
    assert result.exit_code == 1, result.output
    xmlschema.XMLSchema(ROOT / "tests" / "fixtures" / "junit.xsd").validate(result.stdout)
    root = ET.fromstring(result.stdout.encode("utf-8"))
    stray = [c.get("file") for c in root.iter("testcase") if c.get("classname") == "stray_file"]
    assert sorted(stray) == sorted(
        [
            "registry/bad\\ufffe.txt",
            "registry/bad\\uffff.txt",
            "registry/bad\\x01\\x0b.txt",
            "registry/bad\\xff.txt",
        ]
    )


class Lines(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    begin: int


class Location(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    path: str
    lines: Lines


class CodeQualityIssue(BaseModel):
    """One issue of a GitLab Code Quality report, as GitLab documents its keys."""

    model_config = ConfigDict(extra="forbid", strict=True)
    description: str
    check_name: str
    fingerprint: str
    severity: Literal["info", "minor", "major", "critical", "blocker"]
    location: Location


def test_gitlab_code_quality_has_the_documented_keys_and_stable_fingerprints(
    sample_repo: Repo,
):
    text, rows = report(sample_repo, "gitlab")
    issues = [CodeQualityIssue.model_validate(i) for i in json.loads(text)]
    assert len(issues) == len(rows)
    assert len({i.fingerprint for i in issues}) == len(issues)
    # Outside git, paths are given from the current directory (as github's are).
    assert sorted(i.location.path for i in issues) == sorted(
        str(Path(os.path.relpath(sample_repo.root / r["file"]))) for r in rows
    )
    assert all("\x1b" not in i.description and "\u202e" not in i.description for i in issues)
    # Reformatted (its lines move): the same findings, the same fingerprints.
    before = {i.fingerprint for i in issues}
    data = sample_repo.load(PACKET)
    (sample_repo.root / PACKET).write_text(json.dumps(data, indent=8))
    again = CliRunner().invoke(
        cli,
        ["check", str(sample_repo.root), "--db", str(sample_repo.db_path), "--format", "gitlab"],
    )
    assert {i["fingerprint"] for i in json.loads(again.output)} == before


@pytest.mark.parametrize("fmt", ["markdown", "junit", "gitlab"])
def test_a_clean_repository_reports_nothing_wrong(repo: Repo, fmt: str, tmp_path: Path):
    result = CliRunner().invoke(cli, ["check", str(repo.root), "--no-db", "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "gitlab":
        assert json.loads(result.output) == []
    elif fmt == "markdown":
        assert "no findings" in result.output or "0 errors" in result.output
    else:
        assert 'failures="0"' in result.output


def test_also_write_gives_each_report_exactly_as_its_own_run_would(history: Repo, tmp_path: Path):
    """One check, every report: what --also-write puts in a file is what a run of
    that format alone prints (and the run's own output and exit are unchanged)."""
    history.edit(history.first("registry/packets/*/*.json"), status="lost")
    args = ["check", str(history.root), "--no-db", "--base", "base"]
    runner = CliRunner()
    alone = {
        fmt: runner.invoke(cli, [*args, "--format", fmt])
        for fmt in ("github", "markdown", "sarif", "junit", "json", "text")
    }
    also = [f"{fmt}:{tmp_path / fmt}" for fmt in ("markdown", "sarif", "junit", "json", "text")]
    together = runner.invoke(
        cli, [*args, "--format", "github", *(a for v in also for a in ("--also-write", v))]
    )
    assert (together.exit_code, together.stdout) == (1, alone["github"].stdout)
    for fmt in ("markdown", "sarif", "junit", "json", "text"):
        assert alone[fmt].exit_code == 1
        assert (tmp_path / fmt).read_text() == alone[fmt].stdout, fmt


@pytest.mark.parametrize("value", ["markdown", "pdf:out.pdf", "json:", ":x"])
def test_also_write_of_no_format_and_path_is_a_usage_error(repo: Repo, value: str):
    result = CliRunner().invoke(cli, ["check", str(repo.root), "--also-write", value])
    assert result.exit_code == 2 and "FORMAT:PATH" in result.output


def test_also_write_that_cannot_write_is_exit_2_naming_the_file(repo: Repo, tmp_path: Path):
    target = tmp_path / "no-such-dir" / "report.md"
    result = CliRunner().invoke(
        cli, ["check", str(repo.root), "--also-write", f"markdown:{target}"]
    )
    assert result.exit_code == 2 and f"cannot write {target}" in result.output
