"""The SQL check catalogue: each check fires on a repository that violates it and
stays silent on one that does not; the reference conformance suite; sample_repo.

Tests of: ``checks/catalogue.py``, ``read/settings.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index.checks.catalogue import (
    Check,
    CheckFileError,
    _validation_checks,
    fails,
    fingerprint,
    load_checks,
    parse_check,
    run_checks,
    store_validation_kinds,
)
from labnote_index.cli import cli
from labnote_index.read.settings import Settings

from .helpers import SAMPLE_REPO, Repo, findings_of

# ---- one planted defect per check: (check id, mutation returning the file it damaged)


def _first_packet(repo: Repo) -> str:
    return repo.first("registry/packets/*/*.json")


def _answered_message(repo: Repo) -> str:
    return repo.first("registry/messages/answered/*.json")


def _break_what_a_reply_cites(repo: Repo) -> str:
    """Truncate the message a reply cites; the reply's file."""
    by_id = {repo.load(f)["message_id"]: f for f in repo.files("registry/messages/*/*.json")}
    reply = next(f for f in by_id.values() if repo.load(f).get("reply_to") in by_id)
    cited = repo.root / by_id[repo.load(reply)["reply_to"]]
    cited.write_bytes(cited.read_bytes()[:40])
    return reply


def _thread(repo: Repo, depth: int) -> list[str]:
    """Files of a reply thread of the given depth, first message first."""
    by_id = {repo.load(f)["message_id"]: f for f in repo.files("registry/messages/*/*.json")}
    for message_id in sorted(by_id):
        if message_id.endswith("-0"):
            stem = message_id[:-2]
            thread = [by_id.get(f"{stem}-{n}") for n in range(depth)]
            if all(thread) and f"{stem}-{depth}" not in by_id:
                return thread  # type: ignore[return-value]
    raise AssertionError("no thread of that depth")


def _swap_dir(repo: Repo, rel: str, new_dir: str) -> str:
    return repo.move(rel, f"{new_dir}/{rel.rsplit('/', 1)[1]}")


def _unreadable(repo: Repo) -> str:
    return repo.write(_first_packet(repo), '{"record_type": "packet",')


def _bom(repo: Repo) -> str:
    rel = _first_packet(repo)
    return repo.write(rel, b"\xef\xbb\xbf" + (repo.root / rel).read_bytes())


def _missing_field(repo: Repo) -> str:
    rel = _first_packet(repo)
    data = repo.load(rel)
    del data["notes"]
    repo.save(rel, data)
    return rel


def _stray(repo: Repo) -> str:
    return repo.write("registry/packets/2025/notes.txt", "scratch notes")


def _upper_case_json(repo: Repo) -> str:
    rel = _first_packet(repo)
    return repo.move(rel, rel.replace(".json", ".JSON"))


def _missing_artifact(repo: Repo) -> str:
    rel = _first_packet(repo)
    (repo.root / repo.load(rel)["path"]).unlink()
    return rel


def _hard_linked_artifact(repo: Repo) -> str:
    rel = _first_packet(repo)
    artifact = repo.root / repo.load(rel)["path"]
    artifact.unlink()
    elsewhere = repo.root.parent / "outside.md"
    elsewhere.write_text("text that lives outside the repository")
    artifact.hardlink_to(elsewhere)
    return rel


def _artifact_elsewhere(repo: Repo) -> str:
    rel = _first_packet(repo)
    old = repo.load(rel)["path"]
    repo.move(old, "notes/packet.md")
    return repo.edit(rel, path="notes/packet.md")


def _duplicate(repo: Repo) -> str:
    rel = _first_packet(repo)
    return repo.write(rel.replace(".json", "-copy.json"), (repo.root / rel).read_text())


def _accepted_response(repo: Repo) -> str:
    return next(
        f for f in repo.files("registry/responses/*/*.json") if repo.load(f)["status"] == "accepted"
    )


def _reply_cycle(repo: Repo) -> str:
    thread = _thread(repo, 3)
    return repo.edit(thread[0], reply_to=repo.load(thread[2])["message_id"])


def _derivation_cycle(repo: Repo) -> str:
    response = repo.first("registry/responses/*/*.json")
    packet_id = repo.load(response)["source_packet_id"]
    packet = next(f for f in repo.files("registry/packets/*/*.json") if packet_id in f)
    return repo.edit(
        packet,
        content_origin="model_generated",
        derivative_of=[repo.load(response)["response_id"]],
        source_refs=[],
    )


def _not_reciprocal(repo: Repo) -> str:
    thread = _thread(repo, 3)
    return repo.edit(thread[0], response_message_id=repo.load(thread[2])["message_id"])


def _answered_alone(repo: Repo) -> str:
    answered = {repo.load(f)["source_packet_id"] for f in repo.files("registry/responses/*/*.json")}
    rel = next(
        f
        for f in repo.files("registry/packets/*/*.json")
        if repo.load(f)["packet_id"] not in answered
    )
    return repo.edit(rel, status="answered")


def _mismatched_link(repo: Repo) -> str:
    responses = repo.files("registry/responses/*/*.json")
    first, second = repo.load(responses[0]), repo.load(responses[1])
    packet = next(
        f for f in repo.files("registry/packets/*/*.json") if first["source_packet_id"] in f
    )
    return repo.edit(packet, response_packet_id=second["response_id"])


def _answer_before_its_question(repo: Repo) -> str:
    """A response created before the packet it answers (the same day: its ID's)."""
    response = repo.first("registry/responses/*/*.json")
    data = repo.load(response)
    packet = next(
        f
        for f in repo.files("registry/packets/*/*.json")
        if repo.load(f)["packet_id"] == data["source_packet_id"]
    )
    repo.edit(packet, created_at=data["created_at"][:10] + "T23:59:59Z")
    return response


def _legacy(repo: Repo) -> str:
    rel = repo.first("registry/visits/*/*.json")
    data = repo.load(rel)
    data["visitor_family"] = data.pop("session_family")
    repo.save(rel, data)
    return rel


def _tag(repo: Repo, status: str) -> str:
    return repo.first(f"registry/tags/{status}/*.json")


def _manifest(role: str) -> str:
    return f"docs/workflow/roles/{role}/reports/milestone-1/packet-v001/handoff.manifest.json"


def _lock(role: str = "architect") -> str:
    return _manifest(role).replace("handoff.manifest.json", "packet.lock.json")


def _edit_input(repo: Repo, role: str, **changes: object) -> str:
    data = repo.load(_manifest(role))
    data["input_packets"][0].update(changes)
    repo.save(_manifest(role), data)
    return _manifest(role)


def _drop_field(repo: Repo, rel: str, field: str) -> str:
    data = repo.load(rel)
    del data[field]
    repo.save(rel, data)
    return rel


def _remove_lock(repo: Repo) -> str:
    (repo.root / _lock()).unlink()
    return _manifest("architect")


def _edit_one_byte(repo: Repo) -> str:
    report = repo.root / _lock().replace("packet.lock.json", "report.md")
    content = bytearray(report.read_bytes())
    content[2] ^= 0x20  # flip the case of one letter
    report.write_bytes(bytes(content))
    return _lock()


def _input_cycle(repo: Repo) -> str:
    implementer = repo.load(_manifest("implementer"))
    entry = {
        **implementer["input_packets"][0],
        "role": "implementer",
        "manifest": _manifest("implementer"),
        "status_at_consumption": "draft",
    }
    return repo.edit(_manifest("researcher"), input_packets=[entry])


HANDOFF_PLANTED: list[tuple[str, Callable[[Repo], str]]] = [
    ("handoff_schema", lambda r: _drop_field(r, _manifest("researcher"), "summary")),
    ("handoff_schema", lambda r: _drop_field(r, _manifest("researcher"), "handoff_to")),
    ("handoff_schema", lambda r: r.edit(_manifest("researcher"), blocked="no")),
    ("handoff_status", lambda r: r.edit(_manifest("researcher"), status="accepted")),
    ("handoff_directory", lambda r: r.edit(_manifest("researcher"), milestone="other")),
    (
        "handoff_document_path",
        lambda r: r.edit(_manifest("researcher"), documents=[{"path": "../x.md"}]),
    ),
    (
        "handoff_document_missing",
        lambda r: r.edit(_manifest("researcher"), documents=[{"path": "absent.md"}]),
    ),
    ("input_packet_unresolved", lambda r: _edit_input(r, "product-prd", manifest="docs/x.json")),
    ("input_packet_mismatch", lambda r: _edit_input(r, "product-prd", packet_version="packet-v9")),
    (
        "input_packet_consumption",
        lambda r: _edit_input(r, "product-prd", consumption_status="rejected"),
    ),
    (
        "input_packet_status",
        lambda r: _edit_input(r, "product-prd", status_at_consumption="accepted"),
    ),
    ("handoff_ready_blocked", lambda r: r.edit(_manifest("architect"), blocked=True)),
    ("handoff_lock_missing", _remove_lock),
    ("handoff_lock_mismatch", lambda r: r.edit(_lock(), role="someone-else")),
    (
        "handoff_lock_mismatch",
        lambda r: r.write(_lock("researcher"), (r.root / _lock()).read_text()),
    ),
    ("handoff_lock_drift", _edit_one_byte),
    (
        "handoff_lock_drift",
        lambda r: r.write(_lock().replace("packet.lock.json", "new.md"), "x") and _lock(),
    ),
    ("handoff_superseded", lambda r: r.edit(_manifest("researcher"), status="superseded")),
    ("input_packet_lock", lambda r: _remove_lock(r) and _manifest("implementer")),
    ("input_packet_cycle", _input_cycle),
]


def _committed_schema(repo: Repo, name: str, change: Callable[[dict], object]) -> str:
    """The packaged schema of ``name`` committed to registry/schemas/, changed."""
    from importlib import resources

    packaged = resources.files("labnote_index.format").joinpath("schemas", f"{name}.schema.json")
    value = json.loads(packaged.read_text())
    change(value)
    return repo.write(f"registry/schemas/{name}.schema.json", json.dumps(value))


def _notes_pattern(repo: Repo) -> str:
    _committed_schema(repo, "packet", lambda s: s["properties"]["notes"].update(pattern="^#"))
    return _first_packet(repo)


def _stale_view(repo: Repo) -> str:
    from labnote_index.index.registry_views import render_views, write_views

    write_views(render_views(repo.index()), repo.root / "registry")
    repo.edit(_first_packet(repo), notes="edited after the views were generated")
    return "registry/packet_registry.csv"


PLANTED: list[tuple[str, Callable[[Repo], str]]] = HANDOFF_PLANTED + [
    ("view_stale", _stale_view),
    ("file_unreadable", _unreadable),
    ("json_strict", _bom),
    ("record_type_unknown", lambda r: r.edit(_first_packet(r), record_type="common")),
    ("schema_required", _missing_field),
    ("schema_unknown_field", lambda r: r.edit(_first_packet(r), priority="high")),
    ("schema_type", lambda r: r.edit(r.first("registry/visits/*/*.json"), relay_needed="no")),
    ("schema_enum", lambda r: r.edit(_first_packet(r), status="done")),
    ("id_grammar", lambda r: r.edit(_first_packet(r), packet_id="Packet_One")),
    ("id_grammar", lambda r: r.edit(r.first("registry/visits/*/*.json"), visit_id="20250301-x")),
    ("slug_grammar", lambda r: r.edit(_first_packet(r), topic="Bad Topic")),
    ("visitor_id_grammar", lambda r: r.edit(r.first("registry/visitors/*.json"), visitor_id="v1")),
    ("timestamp_format", lambda r: r.edit(_first_packet(r), created_at="2025-03-01 09:00")),
    ("provenance", lambda r: r.edit(_first_packet(r), content_origin="web", source_refs=[])),
    ("provenance", lambda r: r.edit(_first_packet(r), content_origin="unknown", source_note="")),
    ("accepted_tag", lambda r: r.edit(_tag(r, "accepted"), accepted_by=None)),
    ("message_recipient", lambda r: r.edit(_answered_message(r), to_visitor_id=None)),
    ("location_directory", lambda r: _swap_dir(r, _first_packet(r), "registry/messages/open")),
    ("location_filename", lambda r: r.move(_first_packet(r), "registry/packets/2025/renamed.json")),
    ("location_id_date", lambda r: r.edit(_first_packet(r), created_at="2025-04-01T09:00:00Z")),
    ("location_year_dir", lambda r: _swap_dir(r, _first_packet(r), "registry/packets/1999")),
    ("lifecycle_bucket", lambda r: r.edit(_answered_message(r), status="closed")),
    ("lifecycle_bucket", lambda r: _swap_dir(r, _tag(r, "proposed"), "registry/tags/accepted")),
    ("location_nesting", lambda r: _swap_dir(r, _tag(r, "accepted"), "registry/tags/accepted/x")),
    ("stray_file", lambda r: r.write("registry/packets/README.md", "# Packets\n")),
    ("artifact_location", _artifact_elsewhere),
    ("stray_file", _stray),
    ("stray_file", _upper_case_json),
    ("artifact_path", _missing_artifact),
    ("artifact_hard_link", _hard_linked_artifact),
    ("artifact_path", lambda r: r.edit(_first_packet(r), path="../../etc/passwd")),
    ("duplicate_id", _duplicate),
    (
        "reference_unresolved",
        lambda r: r.edit(r.first("registry/responses/*/*.json"), source_packet_id="20250301-nope"),
    ),
    ("reference_unresolved", lambda r: r.edit(_answered_message(r), reply_to="20250301-gone")),
    ("reference_unreadable", _break_what_a_reply_cites),
    (
        "reference_unresolved",
        lambda r: r.edit(r.first("registry/notifications/*/*.json"), message_id="20250301-gone"),
    ),
    (
        "derivative_unresolved",
        lambda r: r.edit(r.first("registry/responses/*/*.json"), derivative_of=["20250301-nope"]),
    ),
    ("tag_unresolved", lambda r: r.edit(_first_packet(r), tags=["no-such-tag"])),
    ("tag_deprecated", lambda r: r.edit(_first_packet(r), tags=["old-format"])),
    ("reply_cycle", _reply_cycle),
    ("derivation_cycle", _derivation_cycle),
    ("reply_not_reciprocal", _not_reciprocal),
    ("answered_without_response", _answered_alone),
    ("response_decision", lambda r: r.edit(_accepted_response(r), decision_at=None)),
    (
        "timestamp_order",
        lambda r: r.edit(_accepted_response(r), decision_at="2000-01-01T00:00:00Z"),
    ),
    ("response_link_mismatch", _mismatched_link),
    ("legacy_spelling", _legacy),
    ("causal_order", _answer_before_its_question),
    ("markdown_link_missing", lambda r: r.write("docs/notes.md", "See [the plan](plan.md).\n")),
    ("markdown_link_outside", lambda r: r.write("docs/notes.md", "See [home](../../x.md).\n")),
    # Off by default (strict validation): turned on below for its planted defect.
    ("handoff_unknown_field", lambda r: _manifest_field(r, "artifact_policy", {"annexes": True})),
    # The repository's own committed schemas (registry/schemas/).
    ("schema_pattern", _notes_pattern),
    ("committed_schema", lambda r: _committed_schema(r, "tag", lambda s: s.update(type=5))),
]


def _manifest_field(repo: Repo, name: str, value: Any) -> str:
    rel = _manifest("researcher")
    data = repo.load(rel)
    data[name] = value
    repo.save(rel, data)
    return rel


def test_clean_generated_repository_has_no_findings(repo: Repo):
    assert findings_of(repo.index()) == []


@pytest.mark.parametrize(
    "check_id, plant", PLANTED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(PLANTED)]
)
def test_planted_defect_is_found_on_its_record(repo: Repo, check_id: str, plant):
    damaged = plant(repo)
    default = {c.id: c.severity for c in load_checks()}[check_id]
    on = Settings(severity={check_id: "warning"}) if default == "off" else None
    found = findings_of(repo.index(settings=on))
    hits = [f for f in found if f["check"] == check_id]
    assert hits, f"{check_id} did not fire; findings: {found}"
    assert damaged in {f["file"] for f in hits}
    for f in hits:
        assert f["message"] and f["hint"] and f["severity"] in ("error", "warning")


def test_every_check_file_has_a_planted_defect():
    assert {c.id for c in load_checks()} == {check_id for check_id, _ in PLANTED}


def test_each_kind_of_problem_has_one_validation_check_and_each_check_a_kind():
    """A kind of problem reported by no check would vanish; a generic check no
    kind maps to could never report anything."""
    checks = {c.id: c for c in load_checks()}
    reported = [pair for c in checks.values() for pair in c.reports]
    assert len(reported) == len(set(reported))  # no kind reported by two checks
    reporting = {c.id for c in checks.values() if c.reports}
    generic = {c.id for c in checks.values() if c.params}
    assert generic and generic <= reporting | {"handoff_schema"}
    assert {"id_grammar", "artifact_path"} <= reporting - generic  # SQL files declare theirs
    assert all(dict(checks[i].params) == {"check": i} for i in generic)
    # Every kind the readers give is declared where its check is.
    assert {("missing", "record"), ("handoff_status", "handoff"), ("pattern", "record")} <= set(
        reported
    )


def test_a_validation_check_is_declared_once():
    declared = '[schema_type]\nseverity = "error"\nprotects = "a"\nrepair = "b"\n'
    assert [c.id for c in _validation_checks(declared, set())] == ["schema_type"]
    with pytest.raises(CheckFileError, match="declared in validation.toml and as"):
        _validation_checks(declared, {"schema_type"})
    with pytest.raises(CheckFileError, match="gives sql"):
        _validation_checks(declared + 'sql = "SELECT 1"\n', set())
    with pytest.raises(CheckFileError, match="lacks repair"):
        _validation_checks('[x]\nseverity = "error"\nprotects = "a"\n', set())


def test_a_validation_checks_declaration_is_read_whole():
    """What validation.toml gives becomes the check's header: every field, its
    kinds (a list), record scope unless it says otherwise, the generic query
    with the check's own id as its parameter, and where it came from."""
    declared = (
        '[b_check]\nseverity = "warning"\nprotects = "p"\nrepair = "r"\nreported = "x"\n'
        'passes = "y"\nrecord_problems = ["missing", "type"]\n'
        '[a_check]\nseverity = "error"\nprotects = "p2"\nrepair = "r2"\nscope = "global"\n'
        'handoff_problems = ["handoff_status"]\n'
    )
    b, a = _validation_checks(declared, {"other"})
    assert (b.id, b.severity, b.protects, b.repair, b.scope) == (
        "b_check",
        "warning",
        "p",
        "r",
        "record",
    )
    assert (b.reported, b.passes, b.reports) == (
        "x",
        "y",
        (("missing", "record"), ("type", "record")),
    )
    assert (a.id, a.scope, a.reports) == ("a_check", "global", (("handoff_status", "handoff"),))
    assert b.params == (("check", "b_check"),) and a.params == (("check", "a_check"),)
    assert b.source == "checks/validation.toml [b_check], query checks/generic/validation.sql"
    assert "validation_problems" in b.sql and b.sql.startswith("-- check: b_check\n")
    with pytest.raises(CheckFileError) as raised:
        _validation_checks('[x]\nseverity = "error"\nsql = "1"\nquery = "2"\n', set())
    assert str(raised.value) == "x: validation.toml gives query, sql"


def test_cycles_report_every_member_once(repo: Repo):
    thread = _thread(repo, 3)
    _reply_cycle(repo)
    found = [f for f in findings_of(repo.index()) if f["check"] == "reply_cycle"]
    assert sorted(f["file"] for f in found) == sorted(thread)


HEADER = "-- check: x\n-- severity: error\n-- protects: a\n-- repair: b\n"


def test_a_check_file_with_a_wrong_header_is_refused():
    refused = {
        "-- check: y\n-- severity: error\n-- protects: a\n-- repair: b\n": (
            "x: header names check 'y'"
        ),
        HEADER.replace("error", "fatal"): "x: severity must be one of ('error', 'warning', 'off')",
        HEADER + "-- scope: file\n": "x: scope must be one of ('record', 'linked', 'global')",
        "-- check: x\n-- severity: error\n": "x: header lacks protects, repair",
        # The header ends at the first line of SQL: a header line after it is SQL's.
        "-- check: x\n-- severity: error\nSELECT 1\n-- protects: a\n-- repair: b\n": (
            "x: header lacks protects, repair"
        ),
    }
    for text, message in refused.items():
        with pytest.raises(CheckFileError) as raised:
            parse_check("x", text + "SELECT 1")
        assert str(raised.value) == message, text


def test_a_run_fails_at_or_above_its_level_only():
    error, warning = {"severity": "error"}, {"severity": "warning"}
    assert fails([error], "error") and fails([warning, error], "error")
    assert not fails([warning], "error") and not fails([], "warning")
    assert fails([warning], "warning") and fails([error], "warning")


def test_a_check_files_header_is_read_whole():
    """Every field, a header line continued on the next (joined by a space), the
    kinds it reports listed with commas or spaces, blank lines and other comments
    inside the header, and the defaults of what it leaves out."""
    text = (
        HEADER
        + "-- repair: and c\n\n-- a comment of the file's own\n"
        + "-- scope:   record  \n-- fix: renames it\n-- reported: one\n-- passes: two\n"
        + "-- record_problems: missing, pattern type\n-- handoff_problems: handoff_status\n"
        + "SELECT 1 AS a\n"
    )
    check = parse_check("x", text)
    assert (check.id, check.severity, check.protects, check.repair) == (
        "x",
        "error",
        "a",
        "b and c",
    )
    assert (check.scope, check.fix, check.reported, check.passes) == (
        "record",
        "renames it",
        "one",
        "two",
    )
    assert check.reports == (
        ("missing", "record"),
        ("pattern", "record"),
        ("type", "record"),
        ("handoff_status", "handoff"),
    )
    assert check.sql == text
    plain = parse_check("x", HEADER + "SELECT 1")
    assert (plain.scope, plain.fix, plain.reports, plain.reported, plain.passes) == (
        "global",
        None,
        (),
        "",
        "",
    )


def test_run_checks_rewrites_findings(repo: Repo):
    db = repo.index()
    assert db["findings"].count == 0
    _stray(repo)
    db = repo.index()
    assert db["findings"].count == 1
    (repo.root / "registry/packets/2025/notes.txt").unlink()
    # re-checking the same index after a fix to its data clears the finding
    db.execute("DELETE FROM files WHERE kind = 'stray'")
    assert run_checks(db) == 0


# ---- sample_repo: exactly what DEFECTS.md lists


def documented_defects() -> set[tuple[str, str, str]]:
    text = (SAMPLE_REPO / "DEFECTS.md").read_text()
    rows = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and "/" in cells[0] and cells[1] != "---":
            rows.add((cells[0], cells[1], cells[2]))
    return rows


def test_sample_repo_reports_exactly_its_documented_defects(tmp_path: Path):
    result = CliRunner().invoke(
        cli, ["check", str(SAMPLE_REPO), "--db", str(tmp_path / "s.db"), "--format", "json"]
    )
    found = {(f["file"], f["check"], f["severity"]) for f in json.loads(result.stdout)}
    expected = documented_defects()
    assert len(expected) >= 6
    assert found == expected
    assert result.exit_code == 1


def test_checks_can_be_rerun_on_an_existing_index(tmp_path: Path):
    db_path = tmp_path / "s.db"
    CliRunner().invoke(cli, ["build", str(SAMPLE_REPO), "--db", str(db_path)])
    db = sqlite_utils.Database(db_path)
    first = findings_of(db)
    assert run_checks(db) == len(first)


def test_checks_not_replacing_add_to_the_findings_whatever_changed(tmp_path: Path):
    """replace=False adds the catalogue's findings to those the index holds (as a
    comparison adds its transition findings): the files an incremental build
    read again do not narrow it, and no finding already there is dropped."""
    db_path = tmp_path / "s.db"
    CliRunner().invoke(cli, ["build", str(SAMPLE_REPO), "--db", str(db_path)])
    db = sqlite_utils.Database(db_path)

    def found() -> list[tuple[Any, ...]]:
        # (Without its id and identity: a second copy of a finding is its second occurrence.)
        rows = findings_of(db)
        return sorted(tuple(v for k, v in f.items() if k not in ("id", "identity")) for f in rows)

    first = found()
    assert first and run_checks(db, replace=False, changed=[]) == len(first)
    assert found() == sorted(first + first)


def test_checks_not_replacing_on_an_index_without_findings_make_the_table(tmp_path: Path):
    """No findings table yet: adding to it makes it as a run that replaces does
    (its id key, its indexes, the catalogue it links to), not a table of
    whatever columns the first rows have."""
    db_path = tmp_path / "s.db"
    CliRunner().invoke(cli, ["build", str(SAMPLE_REPO), "--db", str(db_path)])
    db = sqlite_utils.Database(db_path)
    expected = len(findings_of(db))
    db["findings"].drop()
    assert run_checks(db, replace=False) == expected
    assert db["findings"].pks == ["id"] and db["checks"].count > 0
    assert {i.columns[0] for i in db["findings"].indexes} >= {"file", "check", "identity"}


def test_clean_repository_of_a_few_thousand_records_has_no_findings(tmp_path: Path):
    from bench.generate import generate
    from labnote_index.api import build as build_index

    records = generate(tmp_path / "big", packets=600)
    assert records > 2500
    result = build_index(tmp_path / "big", tmp_path / "big.db")
    assert sum(result.records.values()) == records
    assert findings_of(sqlite_utils.Database(tmp_path / "big.db")) == []


@pytest.mark.parametrize(
    "pattern, field, value",
    [
        ("registry/tags/accepted/*.json", "accepted_at", "2000-01-01T00:00:00Z"),
        ("registry/responses/*/*.json", "decision_at", "2000-01-01T00:00:00Z"),
        ("registry/visitors/*.json", "last_seen", "2000-01-01T00:00:00Z"),
    ],
)
def test_nothing_happens_to_a_record_before_it_was_created(
    repo: Repo, pattern: str, field: str, value: str
):
    """One rule for every record's later timestamps (a tag accepted before it was
    created was not reported, though a response decided before was)."""
    target = repo.first(pattern)
    repo.edit(target, **{field: value})
    found = [f for f in findings_of(repo.index()) if f["file"] == target]
    ordered = [f for f in found if f["check"] == "timestamp_order"]
    assert len(ordered) == 1 and ordered[0]["field"] == field, found
    assert f"{field} {value} is before created_at" in ordered[0]["message"]


def _lookup_tables(path: Path) -> sqlite_utils.Database:
    """An index holding only the empty tables run_checks looks positions,
    suggestions and validation kinds up in."""
    db = sqlite_utils.Database(path)
    db["validation_checks"].create({"error_type": str, "family": str, "check_id": str})
    db["record_json"].create({"file": str, "json": str})
    db["handoff_json"].create({"file": str, "json": str})
    db["records"].create({"record_id": str, "record_type": str})
    return db


def _checked_index(tmp_path: Path) -> sqlite_utils.Database:
    """An index holding only what run_checks and its checks below read: a table
    of things, and the lookup tables."""
    db = _lookup_tables(tmp_path / "checked.db")
    db["things"].insert_all(
        [
            {"file": "f1", "kind": "bad"},
            {"file": "f2", "kind": "ok"},
            {"file": "f3", "kind": "bad"},
            {"file": "ignored/f4", "kind": "bad"},
            {"file": "f5", "kind": "dup"},
        ]
    )
    return db


def _own_checks() -> list[Check]:
    bad = "SELECT file, 'kind' AS field, 'bad ' || file AS message FROM things WHERE kind = 'bad'"
    dup = (
        "SELECT file, NULL AS field, 'dup' AS message, 'its own hint' AS hint, 'the other' AS"
        " subject FROM things WHERE kind = 'dup'"
    )
    return [
        Check("a_record", "warning", "p", "repair a", bad, fix="fixes a", scope="record"),
        Check("b_global", "warning", "p", "repair b", dup),
        Check("c_off", "error", "p", "repair c", "SELECT file, 'x' AS message FROM things"),
    ]


def _stored(db: sqlite_utils.Database) -> list[tuple[Any, ...]]:
    sql = (
        "SELECT [check], severity, file, field, message, hint, fixable, subject FROM findings"
        " ORDER BY id"
    )
    return [tuple(r.values()) for r in db.query(sql)]


def test_run_checks_writes_each_finding_as_its_check_and_settings_say(tmp_path: Path):
    """Over checks of its own: a severity the settings raise, a check they turn
    off not run, per-file-ignores dropping exactly that check on that glob, the
    repair as the hint where a row gives none, a subject '' where none, fixable
    from the check's fix; errors first, then by check and file; every identity
    set and none shared."""
    db = _checked_index(tmp_path)
    settings = Settings(
        severity={"a_record": "error", "c_off": "off"},
        per_file_ignores={"ignored/*": ("a_record",), "f5": ("c_off",)},
    )
    assert run_checks(db, _own_checks(), settings=settings) == 3
    assert _stored(db) == [
        ("a_record", "error", "f1", "kind", "bad f1", "repair a", 1, ""),
        ("a_record", "error", "f3", "kind", "bad f3", "repair a", 1, ""),
        ("b_global", "warning", "f5", None, "dup", "its own hint", 0, "the other"),
    ]
    identities = [r["identity"] for r in db.query("SELECT identity FROM findings")]
    assert None not in identities and len(set(identities)) == 3
    # The table: its columns in the order people read a finding, each check a
    # link to the catalogue's row, which holds the severity the settings give.
    assert db["findings"].columns_dict == {
        "id": int,
        **dict.fromkeys(("severity", "check", "record_id", "message", "hint", "file"), str),
        **{"field": str, "record_type": str, "fixable": int, "line": int, "column": int},
        **{"subject": str, "identity": str},
    }
    assert list(db["findings"].columns_dict) == [
        *("id", "severity", "check", "record_id", "message", "hint", "file", "field"),
        *("record_type", "fixable", "line", "column", "subject", "identity"),
    ]
    assert db["findings"].pks == ["id"]
    assert [(k.column, k.other_table, k.other_column) for k in db["findings"].foreign_keys] == [
        ("check", "checks", "id")
    ]
    ours = Settings(severity={"reference_unresolved": "warning", "a_record": "error"})
    run_checks(db, _own_checks(), settings=ours)
    assert db["checks"].get("reference_unresolved")["severity"] == "warning"
    assert list(db["checks"].columns_dict) == [
        *("id", "severity", "protects", "repair", "fixable", "fix", "scope"),
    ]
    from labnote_index.checks.catalogue import catalogue

    every = catalogue()
    assert any(c.fix for c in every) and any(not c.fix for c in every)
    assert {c.scope for c in every} == {"record", "linked", "global"}
    assert list(db["checks"].rows) == [
        {
            "id": c.id,
            "severity": {"reference_unresolved": "warning"}.get(c.id, c.severity),
            "protects": c.protects,
            "repair": c.repair,
            "fixable": int(c.fix is not None),
            "fix": c.fix,
            "scope": c.scope,
        }
        for c in every
    ]
    # Without settings: each check's own severity, every check run, nothing ignored.
    assert run_checks(db, _own_checks()) == 3 + 1 + 5
    assert db["checks"].get("reference_unresolved")["severity"] == "error"


def test_run_checks_after_an_edit_looks_again_at_the_files_read_again_only(tmp_path: Path):
    """With ``changed``: the record-scoped check looks at those files only and its
    findings on the others stand (f3's, though f3 changed unseen); a global check
    runs over everything; a finding of no check of this run (a comparison's) is
    gone. No file changed: the record-scoped findings all stand. More files than
    SCOPED_UP_TO: every check over the whole index again."""
    from labnote_index.checks.catalogue import SCOPED_UP_TO

    db = _checked_index(tmp_path)
    checks = _own_checks()[:2]
    run_checks(db, checks)
    db["findings"].insert({"check": "transition", "severity": "error", "file": "f9"})
    db.execute("UPDATE things SET kind = 'ok' WHERE file IN ('f1', 'f3')")
    db.execute("UPDATE things SET kind = 'bad' WHERE file = 'f2'")
    assert run_checks(db, checks, changed=["f1", "f2"]) == 2
    files = [(r[0], r[2]) for r in _stored(db)]
    assert sorted(files) == [
        ("a_record", "f2"),
        ("a_record", "f3"),
        ("a_record", "ignored/f4"),
        ("b_global", "f5"),
    ]
    assert run_checks(db, checks, changed=[]) == 1  # the global check's, made again
    assert len(_stored(db)) == 4
    many = ["f1", "f2", *(f"none-{n}" for n in range(SCOPED_UP_TO - 1))]
    assert len(many) == SCOPED_UP_TO + 1
    assert run_checks(db, checks, changed=many) == 3  # f3's stale finding gone
    assert sorted((r[0], r[2]) for r in _stored(db)) == [
        ("a_record", "f2"),
        ("a_record", "ignored/f4"),
        ("b_global", "f5"),
    ]
    # At SCOPED_UP_TO exactly: scoped (f4 turned ok unseen keeps its finding).
    db.execute("UPDATE things SET kind = 'ok' WHERE file = 'ignored/f4'")
    assert run_checks(db, checks, changed=many[:SCOPED_UP_TO]) == 2
    assert ("a_record", "ignored/f4") in [(r[0], r[2]) for r in _stored(db)]


def test_run_checks_not_replacing_adds_to_the_findings(tmp_path: Path):
    db = _checked_index(tmp_path)
    checks = _own_checks()[:2]
    run_checks(db, checks)
    assert run_checks(db, checks[1:], replace=False) == 1
    assert [r[0] for r in _stored(db)].count("b_global") == 2
    identities = [r["identity"] for r in db.query("SELECT identity FROM findings")]
    assert len(set(identities)) == len(identities)  # the second one is the second


def test_the_fingerprint_is_of_the_check_files_and_configuration_given(tmp_path):
    """What an unchanged index's findings depend on: every .sql and .toml file
    the checks are made from (its name and its bytes: an edit, a new file, a
    rename, one below a directory), and the configuration, whatever the order
    of its keys; no configuration is not an empty one; other files do not count."""
    import shutil

    from labnote_index.checks.catalogue import PACKAGE

    folder = tmp_path / "checks"
    shutil.copytree(PACKAGE / "checks", folder, ignore=shutil.ignore_patterns("__pycache__"))
    first = fingerprint(folder=folder)
    assert first == fingerprint() == fingerprint(folder=PACKAGE / "checks")
    seen = {first}

    def changed() -> str:
        now = fingerprint(folder=folder)
        assert now not in seen
        seen.add(now)
        return now

    check = folder / "artifact_path.sql"
    check.write_text(check.read_text() + " ")
    changed()
    (folder / "transitions" / "extra.sql").write_text("-- check: extra\n")
    changed()
    (folder / "transitions" / "extra.sql").rename(folder / "transitions" / "extra2.sql")
    changed()
    toml = folder / "validation.toml"
    toml.write_text(toml.read_text() + "\n")
    last = changed()
    (folder / "notes.txt").write_text("not a check")
    (folder / "extra.py").write_text("")
    assert fingerprint(folder=folder) == last
    # A name's end and a body's start cannot trade bytes.
    (folder / "a.sql").write_text("b.sql")
    one = fingerprint(folder=folder)
    (folder / "a.sql").unlink()
    (folder / "a.sqlb.sql").write_text("")
    assert fingerprint(folder=folder) != one
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})
    assert fingerprint({}) != fingerprint() == fingerprint(None)


def test_run_checks_writes_errors_first_then_by_check_then_by_file(tmp_path: Path):
    """The table's order, whatever order the queries give: an error of a check
    named later before a warning named earlier; within a check, by file, a
    finding on no file first."""
    db = _lookup_tables(tmp_path / "ordered.db")
    db["things"].insert_all([{"file": f} for f in ("N3.md", None, "N1.md", "N2.md")])
    everything = "SELECT file, 'seen' AS message FROM things ORDER BY rowid"
    checks = [
        Check("a_warning", "warning", "p", "r", everything),
        Check("b_error", "error", "p", "r", everything),
    ]
    assert run_checks(db, checks) == 8
    order = [
        (r["check"], r["file"]) for r in db.query("SELECT [check], file FROM findings ORDER BY id")
    ]
    files = [None, "N1.md", "N2.md", "N3.md"]
    assert order == [("b_error", f) for f in files] + [("a_warning", f) for f in files]


def test_the_validation_kinds_are_the_catalogues_whatever_the_index_held(tmp_path: Path):
    """validation_checks holds exactly each kind of validation problem and the
    check that reports it, as the catalogue declares (the validation_problems
    view joins it): a row an older catalogue left is gone, none is doubled, and
    a table already right is left as it is."""
    db = _lookup_tables(tmp_path / "kinds.db")
    table = db["validation_checks"]
    expected = {(kind, family, c.id) for c in load_checks() for kind, family in c.reports}
    assert len(expected) > 10 and {f for _, f, _ in expected} == {"record", "handoff"}

    def held() -> list[tuple[Any, ...]]:
        return sorted(db.execute("SELECT error_type, family, check_id FROM validation_checks"))

    store_validation_kinds(db)
    assert held() == sorted(expected)
    table.insert({"error_type": "gone", "family": "record", "check_id": "an_old_check"})
    store_validation_kinds(db)
    assert held() == sorted(expected)
    rowids = [r[0] for r in db.execute("SELECT rowid FROM validation_checks ORDER BY rowid")]
    store_validation_kinds(db)
    assert [
        r[0] for r in db.execute("SELECT rowid FROM validation_checks ORDER BY rowid")
    ] == rowids


# ---- the catalogue's queries shared among connections (rows_of)


def _numbers_db(path: Path, rows: int) -> sqlite_utils.Database:
    db = sqlite_utils.Database(path)
    db["numbers"].insert_all({"n": n, "pad": "x" * 200} for n in range(rows))
    return db


def _counting_connections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from labnote_index.checks import catalogue

    opened: list[int] = []
    real = catalogue.read_only_connection

    def counted(path: Any, check_same_thread: bool = True) -> Any:
        opened.append(1)
        return real(path, check_same_thread=check_same_thread)

    monkeypatch.setattr(catalogue, "read_only_connection", counted)
    return opened


def test_queries_shared_among_threads_answer_as_one_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from labnote_index.checks import catalogue

    db = _numbers_db(tmp_path / "n.db", 2000)
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    queries = [(f"SELECT n FROM numbers WHERE n % {k} = 0 ORDER BY n", {}) for k in range(1, 40)]
    alone = catalogue.rows_of(db, queries, threads=1)
    opened = _counting_connections(monkeypatch)
    monkeypatch.setattr(catalogue, "SHARED_FROM_PAGES", pages)  # the boundary: shared
    assert catalogue.rows_of(db, queries, threads=3) == alone
    assert len(opened) == 2  # two more connections, each in a thread
    assert [len(rows) for rows in alone] == [len(range(0, 2000, k)) for k in range(1, 40)]
    opened.clear()
    monkeypatch.setattr(catalogue, "SHARED_FROM_PAGES", pages + 1)  # one page short
    assert catalogue.rows_of(db, queries, threads=3) == alone
    assert opened == []
    monkeypatch.setattr(catalogue, "SHARED_FROM_PAGES", 0)
    assert catalogue.rows_of(db, queries, threads=1) == alone
    assert opened == []  # one thread: no other connection
    assert catalogue.rows_of(db, queries[:1], threads=3) == alone[:1]
    assert opened == []  # one query: nothing to share
    db.execute("BEGIN")
    db.execute("INSERT INTO numbers (n) VALUES (-1)")  # uncommitted: unseen by others
    assert db.conn.in_transaction
    assert catalogue.rows_of(db, queries[:1], threads=3)[0][0] == {"n": -1}
    assert catalogue.rows_of(db, queries, threads=3)[0][0] == {"n": -1}
    assert opened == []
    memory = sqlite_utils.Database(memory=True)
    assert catalogue.rows_of(memory, [("SELECT 1 AS one", {})] * 3, threads=3) == [[{"one": 1}]] * 3
    assert opened == []  # no file to share


def test_a_failing_query_among_threads_raises_and_stops_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import sqlite3

    from labnote_index.checks import catalogue

    db = _numbers_db(tmp_path / "n.db", 2000)
    monkeypatch.setattr(catalogue, "SHARED_FROM_PAGES", 0)
    good = ("SELECT count(*) AS c FROM numbers", {})
    queries = [good] * 20 + [("SELECT * FROM nowhere", {})] + [good] * 20
    with pytest.raises(sqlite3.OperationalError, match="no such table: nowhere"):
        catalogue.rows_of(db, queries, threads=2)
    assert catalogue.rows_of(db, [good], threads=2) == [[{"c": 2000}]]  # db still usable

    def unopenable(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(catalogue, "read_only_connection", unopenable)
    assert catalogue.rows_of(db, [good] * 3, threads=2) == [[{"c": 2000}]] * 3  # alone


def test_a_build_checks_with_as_many_connections_as_jobs(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The findings of a build whose checks share three connections are those of
    one connection's, row for row; ``--jobs 1`` opens no other."""
    from labnote_index.api import build
    from labnote_index.checks import catalogue

    repo.write("registry/packets/2025/20250301-broken.json", "{")
    repo.edit(repo.first("registry/messages/*/*.json"), reply_to="MSG-20990101-000000-nowhere")
    monkeypatch.setattr(catalogue, "SHARED_FROM_PAGES", 0)
    opened = _counting_connections(monkeypatch)
    build(repo.root, tmp_path / "one.db", jobs=1)
    assert opened == []
    build(repo.root, tmp_path / "three.db", jobs=3)
    assert len(opened) == 2
    columns = "[check], severity, record_id, file, field, message, line, [column], identity"
    one, three = (
        sqlite_utils.Database(tmp_path / name)
        .execute(f"SELECT {columns} FROM findings ORDER BY id")
        .fetchall()
        for name in ("one.db", "three.db")
    )
    assert len(one) >= 2 and three == one
    from labnote_index.api import check

    opened.clear()
    again = check(tmp_path / "three.db", jobs=2)  # an index's checks run again
    assert len(opened) == 1 and len(again) == len(one)
    check(tmp_path / "three.db", jobs=1)
    assert len(opened) == 1


def test_the_first_failure_stops_the_other_threads_queries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Once a query fails, no thread starts another, and one under way is
    interrupted (each connection counts, in a function of its own, the rows
    its queries reached)."""
    import sqlite3
    import time

    from labnote_index.checks import catalogue

    db = _numbers_db(tmp_path / "n.db", 10)
    monkeypatch.setattr(catalogue, "SHARED_FROM_PAGES", 0)
    ticks: list[int] = []
    later: list[int] = []

    def wait() -> int:
        time.sleep(0.2)  # the long query is under way by then
        return 1

    def functions(conn: sqlite3.Connection) -> sqlite3.Connection:
        conn.create_function("tick", 0, lambda: ticks.append(1) or 1)
        conn.create_function("wait", 0, wait)
        conn.create_function("later", 0, lambda: later.append(1) or 1)
        return conn

    real = catalogue.read_only_connection
    monkeypatch.setattr(catalogue, "read_only_connection", lambda *a, **k: functions(real(*a, **k)))
    functions(db.conn)
    rows = 5_000_000
    long = (
        f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) "
        "SELECT count(tick()) AS n FROM c",
        {},
    )
    failing = ("SELECT json(CASE WHEN wait() THEN '{' END)", {})
    with pytest.raises(sqlite3.OperationalError, match="malformed JSON"):
        catalogue.rows_of(db, [long, failing] + [("SELECT later()", {})] * 30, threads=2)
    assert len(ticks) < rows  # interrupted
    assert later == []  # and none of the thirty began
