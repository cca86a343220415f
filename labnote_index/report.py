"""Findings and orphans as text for people, JSON for programs, annotations for CI."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from itertools import groupby
from typing import Any

from .checks import FINDING_KEYS, Check

# Control characters in repository text (a newline, an escape sequence, a
# bidirectional override) would let a record write lines of its own into a
# terminal or a CI log, where a line starting "::" is a GitHub Actions command.
# Text for people shows them escaped; JSON escapes them itself.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown(value: Any) -> str:
    """A value as one line of text that cannot act on a terminal: control
    characters written as Python escapes (a newline as \\n)."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def findings_text(findings: list[dict[str, Any]]) -> str:
    """Findings grouped by file, errors before warnings, with a closing count."""
    lines: list[str] = []
    ordered = sorted(findings, key=lambda f: (f["file"] or "", f["severity"] != "error"))
    for file, group in groupby(ordered, key=lambda f: f["file"] or ""):
        lines.append(shown(file) or "(repository)")
        for f in group:
            where = f" {shown(f['field'])}" if f["field"] else ""
            lines.append(f"  {f['severity']} [{f['check']}]{where}: {shown(f['message'])}")
            lines.append(f"      fix: {shown(f['hint'])}")
    errors = sum(1 for f in findings if f["severity"] == "error")
    warnings = len(findings) - errors
    files = len({f["file"] for f in findings})
    lines.append(f"{errors} errors, {warnings} warnings in {files} files")
    return "\n".join(lines)


def findings_json(findings: list[dict[str, Any]]) -> str:
    return json.dumps([{k: f[k] for k in FINDING_KEYS} for f in findings], indent=2)


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def findings_github(findings: list[dict[str, Any]]) -> str:
    """GitHub Actions workflow commands: one ::error or ::warning annotation a finding."""
    lines = []
    for f in findings:
        props = f"file={_escape_property(f['file'] or '')},title={_escape_property(f['check'])}"
        where = f"{f['field']}: " if f["field"] else ""
        text = f"{where}{f['message']} (fix: {f['hint']})"
        lines.append(f"::{f['severity']} {props}::{_escape_data(text)}")
    return "\n".join(lines)


ORPHAN_KEYS = ("field", "record_type", "record_id", "file", "missing_id", "expected_type")


def orphans_text(orphans: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for field, group in groupby(orphans, key=lambda o: o["field"]):
        rows = list(group)
        lines.append(f"{shown(field)} ({len(rows)})")
        for o in rows:
            lines.append(
                f"  {shown(o['file'])}: {shown(o['record_type'])} {shown(o['record_id'])} -> "
                f"missing {shown(o['expected_type'])} {shown(o['missing_id'])}"
            )
    lines.append(f"{len(orphans)} orphaned references")
    return "\n".join(lines)


def orphans_json(orphans: list[dict[str, Any]]) -> str:
    return json.dumps([{k: o[k] for k in ORPHAN_KEYS} for o in orphans], indent=2)


def rows_csv(rows: Iterable[dict[str, Any]], keys: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(keys)
    for row in rows:
        writer.writerow([row[k] for k in keys])
    return out.getvalue().rstrip("\n")


def catalogue_markdown(checks: list[Check]) -> str:
    """The check catalogue as a Markdown table (the README embeds this output)."""
    lines = ["| check | severity | protects | repair |", "| --- | --- | --- | --- |"]
    for c in checks:
        cells = [f"`{c.id}`", c.severity, c.protects, c.repair]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


# README sections generated from the check headers: marker name -> catalogue.
README_CATALOGUES = {"catalogue": "checks", "transitions": "checks/transitions"}


def readme_section(text: str, marker: str) -> str:
    start, end = f"<!-- {marker}:start -->\n", f"<!-- {marker}:end -->"
    return text.split(start, 1)[1].split(end, 1)[0].removesuffix("\n")


def update_readme(path: str) -> None:
    """Rewrite the generated catalogue tables of the README in place."""
    from pathlib import Path

    from .checks import load_checks

    readme = Path(path)
    text = readme.read_text(encoding="utf-8")
    for marker, catalogue in README_CATALOGUES.items():
        start, end = f"<!-- {marker}:start -->\n", f"<!-- {marker}:end -->"
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        table = catalogue_markdown(load_checks(catalogue))
        text = f"{head}{start}{table}\n{end}{tail}"
    readme.write_text(text, encoding="utf-8")
