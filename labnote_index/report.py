"""Findings and orphans as text for people, JSON for programs, annotations for CI."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from itertools import groupby
from typing import Any

from .checks import FINDING_KEYS, Check


def findings_text(findings: list[dict[str, Any]]) -> str:
    """Findings grouped by file, errors before warnings, with a closing count."""
    lines: list[str] = []
    ordered = sorted(findings, key=lambda f: (f["file"] or "", f["severity"] != "error"))
    for file, group in groupby(ordered, key=lambda f: f["file"] or ""):
        lines.append(file or "(repository)")
        for f in group:
            where = f" {f['field']}" if f["field"] else ""
            lines.append(f"  {f['severity']} [{f['check']}]{where}: {f['message']}")
            lines.append(f"      fix: {f['hint']}")
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
        lines.append(f"{field} ({len(rows)})")
        for o in rows:
            lines.append(
                f"  {o['file']}: {o['record_type']} {o['record_id']} -> "
                f"missing {o['expected_type']} {o['missing_id']}"
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
