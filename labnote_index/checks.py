"""The check catalogue: one SQL file per check, run over the index.

Each file under ``checks/`` is one query that SELECTs the violating rows (zero
rows means pass), with columns ``record_type, record_id, file, field, message``
and optionally ``hint``. Its header names the check and says how to read it::

    -- check: reference_unresolved
    -- severity: error
    -- protects: every typed reference names a record that exists
    -- repair: create the missing record, or correct the ID in the field

Adding a check means adding a file; nothing here names one.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import quote

import sqlite_utils

from .errors import LabnoteError
from .parallel import map_forked

SEVERITIES = ("error", "warning")
FINDING_KEYS = ("check", "severity", "record_type", "record_id", "file", "field", "message", "hint")
# Files indexed before the queries are worth dealing out to other processes
# (below this the whole catalogue takes a few hundredths of a second).
DEAL_OUT_FROM = 5000
_HEADER = re.compile(r"^--\s*(check|severity|protects|repair):\s*(.+?)\s*$")


@dataclass(frozen=True)
class Check:
    id: str
    severity: str
    protects: str
    repair: str
    sql: str


class CheckFileError(LabnoteError):
    """A check file whose header is incomplete or wrong: a bug in the catalogue."""


def parse_check(name: str, text: str) -> Check:
    header: dict[str, str] = {}
    for line in text.splitlines():
        match = _HEADER.match(line)
        if match:
            key, value = match.groups()
            header[key] = f"{header[key]} {value}" if key in header else value
        elif line.strip() and not line.startswith("--"):
            break
    missing = [k for k in ("check", "severity", "protects", "repair") if k not in header]
    if missing:
        raise CheckFileError(f"{name}: header lacks {', '.join(missing)}")
    if header["check"] != name:
        raise CheckFileError(f"{name}: header names check {header['check']!r}")
    if header["severity"] not in SEVERITIES:
        raise CheckFileError(f"{name}: severity must be one of {SEVERITIES}")
    return Check(header["check"], header["severity"], header["protects"], header["repair"], text)


def load_checks(catalogue: str = "checks") -> list[Check]:
    """Every check of a catalogue, in file name order: ``checks`` (one index) or
    ``checks/transitions`` (two revisions, the base attached as ``base``)."""
    folder = resources.files("labnote_index").joinpath(*catalogue.split("/"))
    found = sorted(
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".sql")
    )
    return [parse_check(name[: -len(".sql")], text) for name, text in found]


def catalogue() -> list[Check]:
    """Every check: those of one index, then the transition checks (--base)."""
    return load_checks() + load_checks("checks/transitions")


def run_checks(
    db: sqlite_utils.Database,
    checks: list[Check] | None = None,
    replace: bool = True,
    jobs: int = 1,
) -> int:
    """Run the catalogue and write the ``findings`` table (anew, or adding to it when
    ``replace`` is false). Returns the number of findings written. The queries
    are dealt out over up to ``jobs`` processes on an index of DEAL_OUT_FROM
    files or more."""
    checks = load_checks() if checks is None else checks
    findings: list[dict[str, Any]] = []
    for check, rows in zip(checks, _violations(db, checks, jobs), strict=True):
        for row in rows:
            findings.append(
                {
                    "check": check.id,
                    "severity": check.severity,
                    "record_type": row.get("record_type"),
                    "record_id": row.get("record_id"),
                    "file": row.get("file"),
                    "field": row.get("field"),
                    "message": row.get("message"),
                    "hint": row.get("hint") or check.repair,
                }
            )
    with db.atomic():
        if replace or "findings" not in db.table_names():
            db["findings"].drop(ignore=True)
            db["findings"].create({"id": int, **{key: str for key in FINDING_KEYS}}, pk="id")
            db["findings"].create_index(["file"])
            db["findings"].create_index(["check"])
        db["findings"].insert_all(findings, batch_size=1000)
    return len(findings)


def _violations(
    db: sqlite_utils.Database, checks: list[Check], jobs: int
) -> list[list[dict[str, Any]]]:
    """Each check's violating rows. Other processes read the committed database
    file through connections of their own, with the same databases attached."""
    databases = {name: file for _, name, file in db.execute("PRAGMA database_list")}
    path = databases.pop("main")
    if jobs <= 1 or not path or db["files"].count < DEAL_OUT_FROM:
        return [list(db.query(check.sql)) for check in checks]
    if db.conn.in_transaction:
        db.conn.commit()
    attached = [(name, file) for name, file in databases.items() if name != "temp"]

    def run(hand: list[Check]) -> list[list[dict[str, Any]]]:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
        try:
            for name, file in attached:
                conn.execute("ATTACH DATABASE ? AS ?", [f"file:{quote(file)}?mode=ro", name])
            reader = sqlite_utils.Database(conn)
            return [list(reader.query(check.sql)) for check in hand]
        finally:
            conn.close()

    return map_forked(run, checks, jobs)


def findings(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """The findings of an index, errors first, then by file."""
    sql = (
        f"SELECT {', '.join(f'[{k}]' for k in FINDING_KEYS)} FROM findings "
        "ORDER BY severity = 'warning', file, [check], field, record_id"
    )
    return list(db.query(sql))


def fails(found: list[dict[str, Any]], fail_on: str) -> bool:
    """Whether any finding is at or above the severity ``fail_on`` (error > warning)."""
    failing = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
    return any(f["severity"] in failing for f in found)
