"""Findings in the formats CI systems read: GitHub annotations, SARIF (code
scanning), a Markdown summary (a job summary or a pull-request comment), JUnit
XML (test report viewers: GitLab, Jenkins, CircleCI) and GitLab Code Quality.

Record text is hostile here as everywhere: each format escapes it its own way,
after ``shown`` has written every control or bidirectional character as an
escape, so nothing a record holds acts on a log, a page or a report viewer.
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from importlib import metadata
from typing import Any
from urllib.parse import quote

from ..checks.catalogue import Check
from ..text import findings_phrase, plural, shown


def _escape_data(value: str) -> str:
    # shown() first: a control or bidirectional character from a record (an
    # escape sequence, U+202E) never reaches the log or the annotation raw.
    return shown(value).replace("%", "%25")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def findings_github(findings: list[dict[str, Any]], prefix: str = "") -> str:
    """GitHub Actions workflow commands: one ::error or ::warning annotation a finding,
    its file written ``prefix`` + the repository-relative path."""
    lines = []
    for f in findings:
        where = prefix + f["file"] if f["file"] else ""
        props = f"file={_escape_property(where)}"
        if f.get("line"):
            props += f",line={f['line']},col={f['column'] or 1}"
        props += f",title={_escape_property(f['check'])}"
        where = f"{f['field']}: " if f["field"] else ""
        text = f"{where}{f['message']} (fix: {f['hint']})"
        lines.append(f"::{f['severity']} {props}::{_escape_data(text)}")
    return "\n".join(lines)


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _region(f: dict[str, Any]) -> dict[str, int]:
    """Where in the file: the finding's line and column, or the file's first line."""
    if not f.get("line"):
        return {"startLine": 1}
    return {"startLine": f["line"], "startColumn": f["column"] or 1}


def findings_sarif(findings: list[dict[str, Any]], catalogue: list[Check], prefix: str = "") -> str:
    """A SARIF 2.1.0 log: one rule per check (what it protects, how to repair),
    one result per finding, located at its file (``prefix`` + the path), with
    its baselineState (new, unchanged, absent) when compared with a base."""
    rules = [
        {
            "id": c.id,
            "name": c.id,
            "shortDescription": {"text": c.protects},
            "fullDescription": {"text": c.protects},
            "help": {"text": f"Repair: {c.repair}"},
            # SARIF's levels are error, warning, note and none: a check off by default is none.
            "defaultConfiguration": {"level": "none" if c.severity == "off" else c.severity},
        }
        for c in catalogue
    ]
    index = {c.id: n for n, c in enumerate(catalogue)}
    results = []
    for f in findings:
        where = f" ({f['field']})" if f["field"] else ""
        result: dict[str, Any] = {
            "ruleId": f["check"],
            "level": f["severity"],
            "message": {"text": f"{f['message']}{where}. Fix: {f['hint']}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": quote(prefix + (f["file"] or ""))},
                        "region": _region(f),
                    }
                }
            ],
        }
        if f["check"] in index:
            result["ruleIndex"] = index[f["check"]]
        if f.get("identity"):  # the same finding across runs, as --base matches it
            result["partialFingerprints"] = {"labnoteIdentity/v1": finding_fingerprint(f)}
        if f.get("baseline"):  # compared with a base: GitHub code scanning reads it
            result["baselineState"] = f["baseline"]
            if f["baseline"] == "absent":  # repaired by the change: no longer a problem
                result.update(kind="pass", level="none")
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "labnote-index",
                        "version": _version(),
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


def _version() -> str:
    try:
        return metadata.version("labnote-index")
    except metadata.PackageNotFoundError:
        return "0+unknown"


# CommonMark lets any ASCII punctuation be escaped with a backslash: every one
# is, so that record text is never a link, an image, emphasis, HTML or a table
# cell boundary in the summary, only the text it is.
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def markdown_text(value: Any) -> str:
    """Text as Markdown shows it literally (one line; see _MARKDOWN_PUNCTUATION)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", shown(value))


MARKDOWN_ROWS = 500  # a pull-request comment has a size limit: the rest is counted


def findings_markdown(findings: list[dict[str, Any]], title: str = "labnote-index") -> str:
    """A Markdown report (a job summary or a pull-request comment): the counts by
    severity and by check, then a table of the findings, errors first, each
    with its file and line."""
    errors = sum(1 for f in findings if f["severity"] == "error")
    files = len({f["file"] for f in findings})
    counts = findings_phrase(errors, len(findings) - errors, files)
    lines = [f"## {markdown_text(title)}: {counts}"]
    if not findings:
        return lines[0] + "\n"
    by_check = Counter((f["severity"], f["check"]) for f in findings)
    lines += ["", "| severity | check | findings |", "| --- | --- | ---: |"]
    for (severity, check), n in sorted(by_check.items(), key=lambda x: (x[0][0] != "error", x[0])):
        lines.append(f"| {severity} | {markdown_text(check)} | {n} |")
    lines += ["", "| severity | check | where | field | finding | repair |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    ordered = sorted(
        findings, key=lambda f: (f["severity"] != "error", f["file"] or "", f["check"])
    )
    for f in ordered[:MARKDOWN_ROWS]:
        where = markdown_text(f["file"] or "(repository)")
        if f.get("line"):
            where += f":{f['line']}"
        cells = [f["severity"], markdown_text(f["check"]), where]
        cells += [markdown_text(f["field"] or ""), markdown_text(f["message"])]
        cells.append(markdown_text(f["hint"]))
        lines.append("| " + " | ".join(cells) + " |")
    if len(ordered) > MARKDOWN_ROWS:
        lines.append(f"\n{plural(len(ordered) - MARKDOWN_ROWS, 'more finding')} not listed.")
    return "\n".join(lines) + "\n"


# What XML 1.0 cannot hold at all, escaped or not: the C0 controls but tab,
# newline and carriage return (which shown() escapes already), lone surrogates
# (a file name that is not UTF-8) and the non-characters U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def _xml(value: Any) -> str:
    """Text for an XML report: as shown() gives it, and what XML forbids written
    as an escape (\\ufffe), so that one file name cannot void the whole report."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", shown(value))


def findings_junit(findings: list[dict[str, Any]], catalogue: list[Check]) -> str:
    """JUnit XML: a test suite per check of the catalogue, a failing test case per
    finding (named after its file, field and record), a passing one for a check
    with nothing found. A warning is a failure of type ``warning``."""
    by_check: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        by_check.setdefault(f["check"], []).append(f)
    known = [c.id for c in catalogue]
    suites = ET.Element("testsuites", name="labnote-index")
    suites.set("tests", str(sum(max(1, len(by_check.get(c, []))) for c in known)))
    suites.set("failures", str(len(findings)))
    for check in [*known, *sorted(set(by_check) - set(known))]:
        found = by_check.get(check, [])
        suite = ET.SubElement(suites, "testsuite", name=_xml(check))
        suite.set("tests", str(max(1, len(found))))
        suite.set("failures", str(len(found)))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        if not found:
            ET.SubElement(suite, "testcase", name=_xml(check), classname=_xml(check))
        for f in found:
            name = f["file"] or "(repository)"
            if f["field"]:
                name += f" {f['field']}"
            case = ET.SubElement(suite, "testcase", name=_xml(name), classname=_xml(check))
            case.set("file", _xml(f["file"] or ""))
            if f.get("line"):
                case.set("line", str(f["line"]))
            failure = ET.SubElement(case, "failure", message=_xml(f["message"]))
            failure.set("type", f["severity"])
            failure.text = f"{_xml(f['message'])}\nRepair: {_xml(f['hint'])}"
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


# GitLab Code Quality severities: info, minor, major, critical, blocker.
GITLAB_SEVERITY = {"error": "major", "warning": "minor"}


def finding_fingerprint(f: dict[str, Any]) -> str:
    """A finding's fingerprint: its identity (checks.IDENTITY_SQL, the one
    ``check --base`` matches findings by) as a hash, never its line: the same
    finding keeps it when its record moves, and no two findings share one."""
    return hashlib.sha256(str(f["identity"]).encode()).hexdigest()


def findings_gitlab(findings: list[dict[str, Any]], prefix: str = "") -> str:
    """GitLab Code Quality JSON (its documented keys): one issue a finding."""
    issues = []
    for f in findings:
        where = f" ({f['field']})" if f["field"] else ""
        issues.append(
            {
                "description": shown(f"{f['message']}{where}. Repair: {f['hint']}"),
                "check_name": f["check"],
                "fingerprint": finding_fingerprint(f),
                "severity": GITLAB_SEVERITY.get(f["severity"], "info"),
                "location": {
                    "path": prefix + (f["file"] or ""),
                    "lines": {"begin": f.get("line") or 1},
                },
            }
        )
    return json.dumps(issues, indent=2)
