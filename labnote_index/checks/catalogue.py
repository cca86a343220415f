"""The check catalogue: one SQL file per check, run over the index.

Each file under ``checks/`` is one query that SELECTs the violating rows (zero
rows means pass), with columns ``record_type, record_id, file, field, message``
and optionally ``hint``, ``line`` and ``column`` (where in the file, when the
check knows it) and ``subject`` (what tells two findings of the check on one
record and field apart: a link's target, a duplicate's file). Its header
names the check and says how to read it::

    -- check: reference_unresolved
    -- severity: error
    -- protects: every typed reference names a record that exists
    -- repair: create the missing record, or correct the ID in the field
    -- reported: a response whose source_packet_id names no packet
    -- passes: a null source_packet_id where the contract allows null

(``reported`` and ``passes`` are its examples: a case it reports, and one that
looks like it but is legal; ``checks NAME`` prints them with the rest.)

Adding a check means adding a file; nothing here names one. The validation
checks, which all report one kind of problem found reading files, share one
query (``generic/validation.sql``, the way a dbt generic test is shared) and are
declared in ``validation.toml``: severity, what each protects, its repair.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CheckFileError
from ..format.rules import LEVELS, SEVERITIES
from ..index.index_file import Queryable, database_file, read_only_connection
from ..index.inserts import Inserts
from ..index.resolve import delete_in, linked_files
from .positions import locate
from .suggest import suggest

if TYPE_CHECKING:
    import sqlite_utils

    from ..read.settings import Settings

# The package's directory: its catalogues are plain files beside this module.
PACKAGE = Path(__file__).resolve().parent.parent

# A check may be off unless a configuration turns it on (a strict rule).
DEFAULT_SEVERITIES = LEVELS
FINDING_KEYS = (
    "check",
    "severity",
    "record_type",
    "record_id",
    "file",
    "field",
    "message",
    "hint",
    "line",  # where in the file, when known (1-based; None otherwise)
    "column",
    "identity",  # the finding's identity across runs and revisions (IDENTITY_SQL)
)
_HEADER = re.compile(
    r"^--\s*(check|severity|protects|repair|fix|scope|reported|passes|record_problems|"
    r"handoff_problems):"
    r"\s*(.+?)\s*$"
)
# The families of files a validation problem is found in (a registry record; a
# handoff manifest or lock), and the key that lists the kinds a check reports.
FAMILIES = {"record": "record_problems", "handoff": "handoff_problems"}
# A check's scope: "record" when a file's findings depend on that file's rows
# alone (its record, its validation problems, where it lies), so that after an
# incremental build only the files read again need checking; "linked" when
# they depend on those of the records linked to it too (index.resolve.linked_files:
# a reference either way, a shared ID), so that only the files read again and
# those linked to them, before or after, need checking; "global" (the default)
# when they depend on files further off (cycles, files a path names).
SCOPES = ("record", "linked", "global")


@dataclass(frozen=True)
class Check:
    """One check: its id, default severity, what it protects, its repair, its SQL."""

    id: str
    severity: str
    protects: str
    repair: str
    sql: str
    fix: str | None = None  # what ``labnote-index fix`` does about it, if anything
    scope: str = "global"  # or "record", "linked" (see SCOPES)
    # The parameters of a generic check's query (its own id, for a validation check).
    params: tuple[tuple[str, str], ...] = ()
    # Where it is written, in the package: its SQL file, or validation.toml's entry.
    source: str = ""
    # The kinds of validation problem it reports, as (kind, family) pairs (the
    # validation_checks table, which the validation_problems view joins).
    reports: tuple[tuple[str, str], ...] = ()
    # The module of its fix, checks/<id>.py beside its SQL (its plan), if it has one.
    fixer: str = ""
    reported: str = ""  # an example it reports
    passes: str = ""  # an example that looks like it and is legal


def parse_check(name: str, text: str) -> Check:
    """The check a file ``name``.sql holds, its header read and checked;
    CheckFileError when the header is incomplete or names another check."""
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
    if header["severity"] not in DEFAULT_SEVERITIES:
        raise CheckFileError(f"{name}: severity must be one of {DEFAULT_SEVERITIES}")
    if header.get("scope", "global") not in SCOPES:
        raise CheckFileError(f"{name}: scope must be one of {SCOPES}")
    reports = tuple(
        (kind, family)
        for family, key in FAMILIES.items()
        for kind in header.get(key, "").replace(",", " ").split()
    )
    return Check(
        header["check"],
        header["severity"],
        header["protects"],
        header["repair"],
        text,
        header.get("fix"),
        scope=header.get("scope", "global"),
        reports=reports,
        reported=header.get("reported", ""),
        passes=header.get("passes", ""),
    )


def load_checks(catalogue: str = "checks") -> list[Check]:
    """Every check of a catalogue, in id order: ``checks`` (one index: its SQL files
    and the validation checks of ``validation.toml``) or ``checks/transitions``
    (two revisions, the base attached as ``base``)."""
    return list(_loaded(catalogue))


@functools.cache
def _loaded(catalogue: str) -> tuple[Check, ...]:
    """The checks of a catalogue, read and parsed once a process (the package's
    files do not change under it; a Check is frozen)."""
    folder = PACKAGE.joinpath(*catalogue.split("/"))
    checks = [
        dataclasses.replace(
            parse_check(entry.name[: -len(".sql")], entry.read_text(encoding="utf-8")),
            source=f"{catalogue}/{entry.name}",
        )
        for entry in sorted(folder.iterdir())
        if entry.name.endswith(".sql")
    ]
    declared = folder / "validation.toml"
    if declared.is_file():
        checks += _validation_checks(declared.read_text(encoding="utf-8"), {c.id for c in checks})
    package = "labnote_index." + catalogue.replace("/", ".")
    checks = [_with_fix(c, folder.joinpath(f"{c.id}.py").is_file(), package) for c in checks]
    return tuple(sorted(checks, key=lambda c: c.id))


def _with_fix(check: Check, has_module: bool, package: str) -> Check:
    """A check and its fix are one: a ``-- fix:`` header says what the module
    beside it (``<id>.py``, its ``plan``) does, and neither comes alone."""
    if bool(check.fix) != has_module:
        if check.fix:
            raise CheckFileError(
                f"{check.id}: its header gives a fix, and no {check.id}.py plans it"
            )
        raise CheckFileError(f"{check.id}: {check.id}.py plans a fix its header does not describe")
    if not has_module:
        return check
    source = f"{check.source}, fix checks/{check.id}.py"
    return dataclasses.replace(check, fixer=f"{package}.{check.id}", source=source)


# What a validation check's validation.toml entry may give, besides its problem kinds.
_DECLARED = ("severity", "protects", "repair", "fix", "scope", "reported", "passes")


def _validation_checks(declarations: str, files: set[str]) -> list[Check]:
    """The checks ``validation.toml`` declares, each the generic validation query
    for its own id."""
    import tomllib  # here: a check that reads no catalogue (nothing changed) never needs it

    sql = (PACKAGE / "checks" / "generic" / "validation.sql").read_text(encoding="utf-8")
    checks = []
    for name, fields in tomllib.loads(declarations).items():
        if name in files:
            raise CheckFileError(f"{name}: declared in validation.toml and as {name}.sql")
        known = {*_DECLARED, *FAMILIES.values()}
        unknown = set(fields) - known
        if unknown:
            raise CheckFileError(f"{name}: validation.toml gives {', '.join(sorted(unknown))}")
        # A file's problems are its own: a validation check is record-scoped.
        fields = {"scope": "record", **fields}
        for key in FAMILIES.values():
            if key in fields:
                fields[key] = " ".join(fields[key])
        keys = (*_DECLARED, *FAMILIES.values())
        header = "".join(f"-- {k}: {fields[k]}\n" for k in keys if k in fields)
        check = parse_check(name, f"-- check: {name}\n{header}{sql}")
        source = f"checks/validation.toml [{name}], query checks/generic/validation.sql"
        checks.append(dataclasses.replace(check, params=(("check", name),), source=source))
    return checks


def fingerprint(config: dict[str, Any] | None = None, folder: Path | None = None) -> str:
    """What the findings of an index depend on besides its rows: the files the
    checks are made from (``folder``, default the package's ``checks/``: every
    ``.sql`` and ``.toml`` file below it, by path) and the configuration that
    chooses among them (JSON-able). An unchanged repository needs its checks
    run again only when this changes (a new version of the package, an edited
    check, another configuration). The files' bytes, not the checks parsed
    from them: an unchanged repository's check parses no check at all."""
    folder = PACKAGE / "checks" if folder is None else folder
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".sql", ".toml") and p.is_file())
    for path in files:
        data = path.read_bytes()
        name = path.relative_to(folder).as_posix().encode()
        digest.update(b"%d %s %d\n" % (len(name), name, len(data)))  # unambiguous
        digest.update(data)
    if config is not None:
        digest.update(json.dumps(config, sort_keys=True).encode())
    return digest.hexdigest()


@functools.cache
def ids() -> frozenset[str]:
    """The id of every check, of one index and of transitions."""
    return frozenset(check.id for check in catalogue())


def catalogue() -> list[Check]:
    """Every check: those of one index, then the transition checks (--base)."""
    return load_checks() + load_checks("checks/transitions")


# At most this many files changed, an incremental build checks them alone with
# the record-scoped checks (their names are parameters SQLite pushes into each
# check's query); more, and every check runs over the whole index.
SCOPED_UP_TO = 500


def run_checks(
    db: sqlite_utils.Database,
    checks: list[Check] | None = None,
    replace: bool = True,
    settings: Settings | None = None,
    changed: list[str] | None = None,
    threads: int = 1,
    linked: Iterable[str] = (),
) -> int:
    """Run the catalogue and write the ``findings`` table (anew, or adding to it when
    ``replace`` is false). Returns the number of findings written. ``settings``
    choose each check's severity (a check that is off is not run) and drop
    the findings per-file-ignores names. With ``changed`` (the files an
    incremental build read again or removed, findings of the same checks and
    settings already in the table), the record-scoped checks look at those
    files only, the linked ones at those and the files linked to them
    (``linked``: as the index had them, before the build; and as it has them
    now), and both keep their findings on the others. ``threads``: how many
    connections may share the queries (``rows_of``); the findings are the same."""
    checks = load_checks() if checks is None else checks
    store_validation_kinds(db)
    scoped = (
        changed is not None
        and len(changed) <= SCOPED_UP_TO
        and replace
        and "findings" in db.table_names()
    )
    files = list(changed or [])  # looked at only when scoped
    around: list[str] | None = None  # and the files linked to them, when asked
    findings: list[dict[str, Any]] = []
    kept: list[str] = []  # scoped checks whose findings on other files stand
    kept_linked: list[str] = []
    queries: list[tuple[Check, str, str, dict[str, Any]]] = []  # check, severity, query
    for check in checks:
        severity = settings.severity.get(check.id, check.severity) if settings else check.severity
        if severity == "off":
            continue
        sql, params = check.sql, dict(check.params)
        looked_at = None  # the files a scoped check looks at (None: every file)
        if scoped and check.scope == "record":
            looked_at = files
        elif scoped and check.scope == "linked":
            if around is None:
                around = sorted({*files, *linked, *linked_files(db, files)})
            if len(around) <= SCOPED_UP_TO:
                looked_at = around
                kept_linked.append(check.id)
        if looked_at is not None:
            kept.append(check.id)
            if not looked_at:
                continue
            marks = ", ".join(f":changed_{n}" for n in range(len(looked_at)))
            sql = f"SELECT * FROM (\n{sql}\n) WHERE file IN ({marks})"
            params.update({f"changed_{n}": f for n, f in enumerate(looked_at)})
        queries.append((check, severity, sql, params))
    answers = rows_of(db, [(sql, params) for _, _, sql, params in queries], threads)
    for (check, severity, _, _), rows in zip(queries, answers, strict=True):
        for row in rows:
            if settings is not None and settings.ignored(check.id, row.get("file")):
                continue
            findings.append(
                {
                    "check": check.id,
                    "severity": severity,
                    "record_type": row.get("record_type"),
                    "record_id": row.get("record_id"),
                    "file": row.get("file"),
                    "field": row.get("field"),
                    "message": row.get("message"),
                    "hint": row.get("hint") or check.repair,
                    "fixable": check.fix is not None,
                    "line": row.get("line"),
                    "column": row.get("column"),
                    "subject": row.get("subject") or "",
                }
            )
    locate(db, findings)
    suggest(db, findings)
    with db.atomic():
        if scoped:
            # Only the findings these checks vouch for stand: those of scoped checks
            # on files not looked at again. Every other finding is made again,
            # or is gone (a comparison's transition findings belong to that
            # comparison: a second `check --base` adds them once, not twice).
            db.execute(
                "DELETE FROM findings WHERE [check] NOT IN (SELECT value FROM json_each(?))",
                [json.dumps(kept)],
            )
            delete_in(db, "findings", "file", files)
            db.execute(
                "DELETE FROM findings WHERE [check] IN (SELECT value FROM json_each(?)) "
                "AND file IN (SELECT value FROM json_each(?))",
                [json.dumps(kept_linked), json.dumps(around or [])],
            )
        elif replace or "findings" not in db.table_names():
            db.table("findings").drop(ignore=True)
            _store_catalogue(db, settings)
            # In the order people read a finding (JSON output keeps FINDING_KEYS' order).
            people = ("severity", "check", "record_id", "message", "hint", "file", "field")
            columns: dict[str, type] = {"id": int, **{key: str for key in people}}
            columns.update({"record_type": str, "fixable": bool, "line": int, "column": int})
            columns.update({"subject": str, "identity": str})
            # Each finding's check links to the catalogue's row for it (checks).
            db.table("findings").create(columns, pk="id", foreign_keys=[("check", "checks", "id")])
            db.table("findings").create_index(["file"])
            db.table("findings").create_index(["check"])
            db.table("findings").create_index(["identity"])
            # Errors first, then by check: the order of the table's page.
            findings.sort(key=lambda f: (f["severity"] != "error", f["check"], f["file"] or ""))
        Inserts(db).append("findings", findings)  # prepared: 100,000 findings happen
        db.execute(IDENTITY_SQL)
    return len(findings)


# Below this many pages an index's whole catalogue takes milliseconds: another
# connection (which reads the schema again) would cost more than it shares.
SHARED_FROM_PAGES = 2048


def rows_of(
    db: sqlite_utils.Database, queries: list[tuple[str, dict[str, Any]]], threads: int = 1
) -> list[list[dict[str, Any]]]:
    """The rows of each query, in order: on ``db``'s connection, or shared with
    ``threads - 1`` read-only connections to its file, each in a thread of its
    own (SQLite runs a query without holding the GIL: two cores answer the
    catalogue in about half the time). Shared only where it is safe and can
    help: an index in a file with nothing uncommitted on ``db`` (the other
    connections would not see it), and not a small one. The first query to
    fail stops the others, and is raised."""
    path = database_file(db)
    shareable = (
        threads > 1
        and len(queries) > 1
        and path
        and not db.conn.in_transaction
        and db.execute("PRAGMA page_count").fetchone()[0] >= SHARED_FROM_PAGES
    )
    helpers = _read_only_connections(path, threads - 1) if shareable else []
    if not helpers:  # this connection answers alone
        return [list(db.query(sql, params)) for sql, params in queries]
    answers: list[list[dict[str, Any]]] = [[] for _ in queries]
    failed: list[BaseException] = []  # the first to fail is raised; it stops the others
    lock = threading.Lock()
    pending = iter(range(len(queries)))

    def stop(exc: BaseException) -> None:
        failed.append(exc)
        for helper in helpers:  # still open: they are closed once all have stopped
            helper.interrupt()

    def answer(conn: sqlite3.Connection) -> None:
        while not failed:
            with lock:
                at = next(pending, None)
            if at is None:
                return
            try:
                cursor = conn.execute(*queries[at])
                names = [column[0] for column in cursor.description]
                answers[at] = [dict(zip(names, row, strict=True)) for row in cursor]
            except BaseException as exc:  # Ctrl-C too
                stop(exc)

    started: list[threading.Thread] = []
    try:
        for conn in helpers:
            thread = threading.Thread(target=answer, args=(conn,), daemon=True)
            thread.start()
            started.append(thread)
        answer(db.conn)
    except BaseException as exc:  # a thread that could not start; Ctrl-C between queries
        stop(exc)
    finally:
        for thread in started:
            while thread.is_alive():  # a connection is closed only once no query runs on it
                try:
                    thread.join()
                except BaseException as exc:  # Ctrl-C while waiting
                    stop(exc)
        for conn in helpers:
            conn.close()
    if failed:
        raise failed[0]
    return answers


def _read_only_connections(path: str, count: int) -> list[sqlite3.Connection]:
    """``count`` read-only connections to ``path``, any thread's to use; none
    when one cannot be opened."""
    opened: list[sqlite3.Connection] = []
    try:
        for _ in range(count):
            opened.append(read_only_connection(path, check_same_thread=False))
    except sqlite3.Error:
        for conn in opened:
            conn.close()
        return []
    return opened


# A finding's identity, the one definition that `check --base` and `--new-only`
# match findings by and that GitLab's and SARIF's fingerprints are made from:
# the check, the record (by type and ID, which survive a move and a
# reformatting; by file for a finding on no record), the field, the subject
# (a link's target, a duplicate's file), and, for findings alike in all of
# these, which one it is among them (by message, then position). Never NULL:
# every part is text ('' for none), so the same finding is found again at the
# base, and no two findings of an index share one.
_IDENTITY_PARTS = (
    "[check]",
    "coalesce(record_type, '')",
    "coalesce(record_id, file, '')",
    "coalesce(field, '')",
    "coalesce(subject, '')",
)
IDENTITY_SQL = f"""
UPDATE findings SET identity = o.identity
FROM (
    SELECT id, json_array({", ".join(_IDENTITY_PARTS)}, row_number() OVER (
        PARTITION BY {", ".join(_IDENTITY_PARTS)}
        ORDER BY message, file, line, [column], id
    )) AS identity
    FROM findings
) AS o
WHERE o.id = findings.id AND findings.identity IS NOT o.identity
"""


def _store_catalogue(db: sqlite_utils.Database, settings: Settings | None) -> None:
    """The ``checks`` table: every check of the catalogue, with the severity it
    runs at here, what it protects, its repair and what ``fix`` does about it."""
    rows = [
        {
            "id": c.id,
            "severity": settings.severity.get(c.id, c.severity) if settings else c.severity,
            "protects": c.protects,
            "repair": c.repair,
            "fixable": c.fix is not None,
            "fix": c.fix,
            "scope": c.scope,
        }
        for c in catalogue()
    ]
    db.table("checks").drop(ignore=True)
    db.table("checks").insert_all(rows, pk="id")


def store_validation_kinds(db: sqlite_utils.Database) -> None:
    """Which check reports each kind of validation problem, as the check files and
    validation.toml declare it (the validation_checks table the validation_problems
    view joins; a handoff problem no check lists is handoff_schema's there)."""
    rows = [
        {"error_type": kind, "family": family, "check_id": c.id}
        for c in load_checks()
        for kind, family in c.reports
    ]
    table = db.table("validation_checks")
    if {tuple(r.values()) for r in rows} != set(
        db.execute("SELECT error_type, family, check_id FROM validation_checks").fetchall()
    ):
        table.delete_where()
        table.insert_all(rows)


def findings(db: Queryable, table: str = "findings") -> list[dict[str, Any]]:
    """The findings of an index, errors first, then by file, each with its
    ``baseline`` (new, unchanged, or absent for ``absent_findings``) when the
    index was compared with a base, else None."""
    columns = {row[1] for row in db.execute(f"PRAGMA table_info([{table}])")}
    baseline = (
        "baseline"
        if "baseline" in columns
        else "'absent'"
        if table == "absent_findings"
        else "NULL"
    )
    sql = (
        f"SELECT {', '.join(f'[{k}]' for k in FINDING_KEYS)}, {baseline} AS baseline "
        f"FROM [{table}] ORDER BY severity = 'warning', file, [check], field, record_id"
    )
    cursor = db.execute(sql)
    keys = [column[0] for column in cursor.description]
    return [dict(zip(keys, row, strict=True)) for row in cursor]


def fails(found: list[dict[str, Any]], fail_on: str) -> bool:
    """Whether any finding is at or above the severity ``fail_on`` (error > warning)."""
    failing = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
    return any(f["severity"] in failing for f in found)
