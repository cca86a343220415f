"""Findings and orphans as text for people, JSON for programs, annotations for CI."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable
from itertools import groupby
from typing import Any

import orjson

from ..checks.catalogue import Check
from ..queries.lineage import branches_in_order
from ..text import findings_phrase, plural, shown


def baseline_phrase(findings: list[dict[str, Any]], shown_only_new: bool = False) -> str:
    """``N new, M already at base`` for findings compared with a base."""
    new = sum(1 for f in findings if f.get("baseline") == "new")
    old = sum(1 for f in findings if f.get("baseline") == "unchanged")
    gone = sum(1 for f in findings if f.get("baseline") == "absent")
    phrase = f"{new} new, {old} already at base"
    if shown_only_new and old:
        phrase += " (not shown: --new-only)"
    return phrase + (f", {gone} repaired" if gone else "")


def findings_output(
    fmt: str,
    rows: list[dict[str, Any]],
    compared: list[dict[str, Any]],
    catalogue: Callable[[], list[Check]],
    prefix: Callable[[], str],
    *,
    keys: tuple[str, ...],
    compared_with_base: bool,
    new_only: bool,
) -> str:
    """The findings ``rows`` (those ``compared`` with a base, the repaired included,
    for the baseline's summary) as one ``check --format`` writes them, whole,
    final newline included. ``prefix`` is what goes before a path in the formats
    CI resolves paths of (asked only for those); ``catalogue``, the checks."""
    if fmt in ROW_FORMATS:
        return output_rows(rows, keys, fmt) + "\n"
    if fmt == "text":
        text = findings_text(rows) + "\n"
        if compared_with_base:
            text += baseline_phrase(compared, shown_only_new=new_only) + "\n"
        return text
    from . import ci  # the CI formats' libraries (XML) only when asked for

    if fmt == "sarif":  # with the base's findings the change repaired (absent)
        absent = [r for r in compared if r["baseline"] == "absent"]
        return ci.findings_sarif(rows + absent, catalogue(), prefix()) + "\n"
    if fmt == "gitlab":
        return ci.findings_gitlab(rows, prefix()) + "\n"
    if fmt == "github":
        return ci.findings_github(rows, prefix()) + "\n" if rows else ""
    if fmt == "markdown":
        text = ci.findings_markdown(rows)
        if compared_with_base:
            text += "\n" + ci.markdown_text(baseline_phrase(compared, new_only)) + "\n"
        return text
    if fmt == "junit":
        return ci.findings_junit(rows, catalogue()) + "\n"
    raise ValueError(f"no findings format {fmt!r}")


def findings_text(findings: list[dict[str, Any]]) -> str:
    """Findings grouped by file, errors before warnings, with a closing count."""
    lines: list[str] = []
    ordered = sorted(findings, key=lambda f: (f["file"] or "", f["severity"] != "error"))
    for file, group in groupby(ordered, key=lambda f: f["file"] or ""):
        lines.append(shown(file) or "(repository)")
        for f in group:
            where = f" {shown(f['field'])}" if f["field"] else ""
            lines.append(f"  {f['severity']} [{f['check']}]{where}: {shown(f['message'])}")
            if f.get("line"):  # file:line:column, which editors and terminals follow
                lines.append(f"      at {shown(file)}:{f['line']}:{f['column'] or 1}")
            lines.append(f"      fix: {shown(f['hint'])}")
    errors = sum(1 for f in findings if f["severity"] == "error")
    files = len({f["file"] for f in findings})
    lines.append(findings_phrase(errors, len(findings) - errors, files))
    return "\n".join(lines)


# Outside ASCII, as json.dumps writes it: \\u escapes (a surrogate pair beyond
# the first plane), so that no bidirectional override reaches a terminal raw.
_NOT_ASCII = re.compile("[^\x00-\x7e]")


def _escaped(match: re.Match[str]) -> str:
    return json.dumps(match.group())[1:-1]


def json_text(value: Any) -> str:
    """``value`` (text, whole numbers, booleans, nulls, lists and objects: what a
    listing holds) as indented JSON, exactly as ``json.dumps(value, indent=2)``
    writes it, by orjson (json's indenting encoder is pure Python: 100,000
    findings took seconds); json itself writes what orjson cannot (a lone
    surrogate, an integer beyond 64 bits)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, indent=2)
    return _NOT_ASCII.sub(_escaped, text)


# The formats any listing gives, beside its text for people (sqlite-utils'
# output_rows is the model: one writer for any rows).
ROW_FORMATS = ("json", "csv")


def output_rows(rows: Iterable[dict[str, Any]], keys: tuple[str, ...], fmt: str) -> str:
    """Rows as a JSON array of objects or as CSV with a header, keys in ``keys``'
    order: the one writer of every listing command's json and csv."""
    if fmt == "json":
        return json_text([{k: row[k] for k in keys} for row in rows])
    if fmt == "csv":
        return rows_csv(rows, keys)
    raise ValueError(f"rows are written as {' or '.join(ROW_FORMATS)}, not {fmt!r}")


ORPHAN_KEYS = ("field", "record_type", "record_id", "file", "missing_id", "expected_type")


def orphans_text(orphans: list[dict[str, Any]]) -> str:
    """Orphaned references grouped by field, for people."""
    lines: list[str] = []
    for field, group in groupby(orphans, key=lambda o: o["field"]):
        rows = list(group)
        lines.append(f"{shown(field)} ({len(rows)})")
        for o in rows:
            lines.append(
                f"  {shown(o['file'])}: {shown(o['record_type'])} {shown(o['record_id'])} -> "
                f"missing {shown(o['expected_type'])} {shown(o['missing_id'])}"
            )
    lines.append(plural(len(orphans), "orphaned reference"))
    return "\n".join(lines)


def rows_csv(rows: Iterable[dict[str, Any]], keys: tuple[str, ...]) -> str:
    """Rows as CSV with a header of ``keys`` (control characters kept as they are:
    CSV quotes them)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(keys)
    for row in rows:
        writer.writerow([row[k] for k in keys])
    return out.getvalue().rstrip("\n")


CHECK_KEYS = ("id", "severity", "protects", "repair", "fix", "reported", "passes")


def check_text(check: Check) -> str:
    """One check's whole documentation, its query last (``checks NAME``)."""
    lines = [
        f"{check.id} ({check.severity}, {check.scope}-scoped)",
        f"  protects: {check.protects}",
        f"  repair: {check.repair}",
        f"  fix (labnote-index fix): {check.fix or 'none: a person repairs it'}",
        f"  reported: {check.reported or '(no example given)'}",
        f"  passes: {check.passes or '(no example given)'}",
        f"  defined in: {check.source}",
    ]
    if check.params:
        lines.append("  parameters: " + ", ".join(f":{k} = {v!r}" for k, v in check.params))
    body = [ln for ln in check.sql.splitlines() if ln.strip() and not ln.startswith("-- ")]
    return "\n".join([*lines, "  query (zero rows pass):", *("    " + ln for ln in body)])


def catalogue_text(index: list[Check], transitions: list[Check], markdown: bool = False) -> str:
    """The catalogue as ``checks`` prints it: the checks of an index, then the
    transition checks, each with its severity, what it protects, its repair and
    its fix (as Markdown tables with ``markdown``)."""
    out = []
    for title, checks in (
        ("Checks of an index", index),
        ("Transition checks (check --base)", transitions),
    ):
        if markdown:
            out.append(f"## {title}\n\n{catalogue_markdown(checks)}\n\n")
            continue
        out.append(f"{title}:\n\n")
        for c in checks:
            out.append(f"{c.id} ({c.severity})\n  protects: {c.protects}\n  repair: {c.repair}\n")
            if c.fix:
                out.append(f"  fix (labnote-index fix): {c.fix}\n")
        out.append("\n")
    return "".join(out)


def catalogue_markdown(checks: list[Check]) -> str:
    """The check catalogue as a Markdown table (the README embeds this output, by cog)."""
    lines = ["| check | severity | protects | repair | fix |", "| --- | --- | --- | --- | --- |"]
    for c in checks:
        cells = [f"`{c.id}`", c.severity, c.protects, c.repair, "yes" if c.fix else ""]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def lineage_text(tree: dict[str, Any]) -> str:
    """A lineage tree as indented text, up then down, MISSING nodes named."""

    def describe(node: dict[str, Any]) -> str:
        if node.get("missing"):
            return f"MISSING {shown(node['expected'])} {shown(node['label'])} (not in the index)"
        status = f" [{shown(node['status'])}]" if node["status"] is not None else ""
        return f"{shown(node['kind'])} {shown(node['label'])}{status} {shown(node['node'])}"

    lines = [describe(tree)]
    for d in ("up", "down"):
        if d not in tree:
            continue
        lines.append(f"{d}:" if tree[d] else f"{d}: (nothing)")
        for b in branches_in_order(tree[d]):
            seen = " (shown above)" if b["repeated"] else ""
            more = f" (+{b['more']} more, not drawn: ask for its own lineage)" if b["more"] else ""
            indent = "  " * b["depth"]
            lines.append(f"{indent}{shown(', '.join(b['via']))}: {describe(b)}{seen}{more}")
        if tree.get(f"{d}_more"):
            lines.append(f"  (+{tree[f'{d}_more']} more, not drawn: a lineage is bounded)")
    return "\n".join(lines)


def diff_text(rows: list[dict[str, Any]]) -> str:
    """What changed between two revisions, one line a change."""
    lines = []
    for row in rows:
        what = f"{shown(row['record_type'])} {shown(row['record_id'])}"
        change = row["change"]
        if change in ("status", "handoff status", "moved"):
            detail = f": {shown(row['before'])} -> {shown(row['after'])}"
        elif change.startswith("reference"):
            detail = f": {shown(row['field'])} {shown(row['after'] or row['before'])}"
        elif change in ("edited", "handoff edited") and row["field"]:
            before = "(absent)" if row["before"] is None else shown(row["before"])
            after = "(absent)" if row["after"] is None else shown(row["after"])
            detail = f": {shown(row['field'])}: {before} -> {after}"
        else:
            detail = f" ({shown(row['file'])})"
        lines.append(f"{change:18} {what}{detail}")
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["change"]] = counts.get(row["change"], 0) + 1
    summary = ", ".join(f"{change}: {n}" for change, n in sorted(counts.items()))
    lines.append(summary or "no changes")
    return "\n".join(lines)


def fix_text(result: Any) -> str:
    """A fix plan (and what came of it) for people."""
    lines = []
    for repair in result.plan.repairs:
        state = "" if repair.status == "planned" else f" [{repair.status}]"
        lines.append(f"{repair.check}: {shown(repair.file)}{state}")
        lines += [f"  {line}" for line in repair.describe().splitlines()]
    for refusal in result.plan.refusals:
        lines.append(f"not fixed [{refusal.check}] {shown(refusal.file)}: {shown(refusal.reason)}")
    planned = plural(len(result.plan.repairs), "fix", "fixes")
    if result.applied:
        done = sum(r.status == "applied" for r in result.plan.repairs)
        views = result.views_rewritten
        then = f" (with {plural(views, 'view')} written anew after the others)" if views else ""
        lines.append(
            f"{plural(done, 'fix', 'fixes')} applied{then}; "
            f"{plural(len(result.gone), 'finding')} gone, "
            f"{plural(len(result.remaining), 'finding')} of the fixable checks remaining"
        )
        lines += [
            f"  remaining [{f.check}] {shown(f.file)}: {shown(f.message)}" for f in result.remaining
        ]
        errors = sum(f.severity == "error" for f in result.after)
        warnings = sum(f.severity == "warning" for f in result.after)
        files = len({f.file for f in result.after})
        left = findings_phrase(errors, warnings, files)
        lines.append(f"in all: {left} remain" if result.after else "in all: no findings remain")
        lines += [
            f"  appeared [{f.check}] {shown(f.file)}: {shown(f.message)}" for f in result.appeared
        ]
    else:
        then = "--apply makes them" if result.plan.repairs else "nothing to do"
        if result.views_follow:
            then += ", then writes anew the committed views they change"
        lines.append(f"{planned} to make ({then})")
    return "\n".join(lines)


def fix_json(result: Any) -> dict[str, Any]:
    """A fix plan (and what came of it) for programs."""

    def repair(r: Any) -> dict[str, Any]:
        return {
            "check": r.check,
            "file": r.file,
            "final": r.final,
            "moves": [list(m) for m in r.also] + ([[r.file, r.final]] if r.final != r.file else []),
            "content_changed": r.content is not None,
            "left": r.notes,
            "status": r.status,
        }

    return {
        "repairs": [repair(r) for r in result.plan.repairs],
        "refusals": [vars(r) for r in result.plan.refusals],
        "applied": result.applied,
        "gone": [f.as_dict() for f in result.gone],
        "remaining": [f.as_dict() for f in result.remaining],
        "appeared": [f.as_dict() for f in result.appeared],
        "views_follow": result.views_follow,
        "views_rewritten": result.views_rewritten,
    }
