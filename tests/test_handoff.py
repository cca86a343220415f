"""Handoff packets: tables, lineage across input_packets, and the lineage command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from labnote_index.cli import cli

from .helpers import Repo, assert_every_problem_is_a_finding, findings_of, needs_shared

CHAIN = ["researcher", "product-prd", "architect", "implementer"]


def manifest(role: str, milestone: str = "milestone-1") -> str:
    return f"docs/workflow/roles/{role}/reports/{milestone}/packet-v001/handoff.manifest.json"


def packet_dir(role: str, milestone: str = "milestone-1") -> str:
    return manifest(role, milestone).rsplit("/", 1)[0]


def test_handoff_tables_of_a_generated_chain(repo: Repo):
    db = repo.index()
    packets = {
        r["role"]: r
        for r in db.query("SELECT * FROM handoff_packets WHERE milestone = 'milestone-1'")
    }
    assert set(packets) == set(CHAIN)
    architect = packets["architect"]
    assert architect["status"] == "ready_for_next_role"
    assert (architect["dir_role"], architect["dir_milestone"], architect["dir_packet_version"]) == (
        "architect",
        "milestone-1",
        "packet-v001",
    )
    inputs = {r["consumer"]: r for r in db.query("SELECT * FROM input_packets")}
    implementer = inputs[packet_dir("implementer")]
    assert implementer["upstream"] == packet_dir("architect")
    assert implementer["status_at_consumption"] == "ready_for_next_role"
    locked = list(
        db.query(
            "SELECT path, recorded_sha256 = current_sha256 AS same FROM locked_files "
            "WHERE packet_dir = ? ORDER BY path",
            [packet_dir("architect")],
        )
    )
    assert locked == [
        {"path": "handoff.manifest.json", "same": 1},
        {"path": "report.md", "same": 1},
    ]
    documents = list(
        db.query(
            "SELECT path, required, [exists] FROM handoff_documents WHERE packet_dir = ?",
            [packet_dir("researcher")],
        )
    )
    assert documents == [{"path": "report.md", "required": 1, "exists": 1}]


def test_unknown_manifest_fields_are_kept_and_return_to_accepted(repo: Repo):
    data = repo.load(manifest("researcher"))
    data.pop("handoff_to")
    data["return_to"] = "workflow-orchestrator"  # the later shape: one role, a string
    data["reviewer_notes"] = {"by": "operator"}
    data["documents"][0]["checksum_hint"] = "none"
    repo.save(manifest("researcher"), data)
    db = repo.index()
    row = db["handoff_packets"].get(packet_dir("researcher"))
    assert json.loads(row["extra"]) == {"reviewer_notes": {"by": "operator"}}
    assert row["valid"] == 1
    assert findings_of(db) == []


def test_lock_drift_after_editing_one_byte(repo: Repo):
    report = repo.root / packet_dir("architect") / "report.md"
    assert findings_of(repo.index()) == []
    content = bytearray(report.read_bytes())
    content[-2] = ord("!")
    report.write_bytes(bytes(content))
    drift = [f for f in findings_of(repo.index()) if f["check"] == "handoff_lock_drift"]
    assert len(drift) == 1
    assert drift[0]["file"] == packet_dir("architect") + "/packet.lock.json"
    assert "report.md" in drift[0]["message"]


def test_sample_chain_is_indexed(sample_repo: Repo):
    db = sample_repo.index()
    roles = [r["role"] for r in db.query("SELECT DISTINCT role FROM handoff_packets ORDER BY role")]
    assert roles == sorted(CHAIN)
    assert db["packet_locks"].count == 1


def test_extra_shared_handoff_templates_are_indexed_without_crashing(tmp_path: Path):
    templates = needs_shared("handoff", "templates")
    root = tmp_path / "templates"
    for template in templates.glob("*.json"):
        role = template.name.split(".")[0]
        target = root / "docs/workflow/roles" / role / "reports/template/packet-v001"
        target.mkdir(parents=True)
        shutil.copy(template, target / "handoff.manifest.json")
    result = CliRunner().invoke(
        cli, ["check", str(root), "--db", str(tmp_path / "t.db"), "--format", "json"]
    )
    assert result.exit_code == 1  # templates list documents they do not ship
    checks = {f["check"] for f in json.loads(result.stdout)}
    assert "handoff_document_missing" in checks
    assert "file_unreadable" not in checks


# ---- lineage


def lineage(db_path: Path, *args: str):
    return CliRunner().invoke(cli, ["lineage", *args, "--db", str(db_path)])


def test_lineage_up_a_four_role_chain(repo: Repo):
    repo.index()
    result = lineage(repo.db_path, packet_dir("implementer"), "--direction", "up")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("handoff_packet implementer/milestone-1/packet-v001 [draft]")
    roles = [line.split("handoff_packet ")[1].split("/")[0] for line in lines[2:]]
    assert roles == ["architect", "product-prd", "researcher"]
    depths = [(len(line) - len(line.lstrip())) // 2 for line in lines[2:]]
    assert depths == [1, 2, 3]


def test_lineage_json_down_from_the_first_role(repo: Repo):
    repo.index()
    result = lineage(
        repo.db_path, manifest("researcher"), "--direction", "down", "--format", "json"
    )
    tree = json.loads(result.stdout)
    assert "up" not in tree
    chain, node = [], tree["down"]
    while node:
        assert len(node) == 1 and node[0]["via"] == ["input_packets"]
        chain.append((node[0]["label"].split("/")[0], node[0]["depth"]))
        node = node[0]["children"]
    assert chain == [("product-prd", 1), ("architect", 2), ("implementer", 3)]


def test_lineage_of_a_registry_record(sample_repo: Repo):
    sample_repo.index()
    result = lineage(sample_repo.db_path, "20260908-gemini-retention-brief", "--format", "json")
    tree = json.loads(result.stdout)
    assert tree["down"] == []
    first = tree["up"][0]
    assert (first["kind"], first["label"]) == ("response", "20260906-gemini-retention-summary")
    grand = first["children"][0]
    assert grand["label"] == "20260905-claude-retention-followup"
    assert set(grand["via"]) == {"derivative_of", "source_packet_id", "response_packet_id"}


def test_lineage_survives_a_cycle(repo: Repo):
    data = repo.load(manifest("researcher"))
    data["input_packets"] = [
        repo.load(manifest("product-prd"))["input_packets"][0]
        | {
            "role": "implementer",
            "manifest": manifest("implementer"),
            "status_at_consumption": "draft",
        }
    ]
    repo.save(manifest("researcher"), data)
    repo.index()
    result = lineage(repo.db_path, packet_dir("implementer"), "--direction", "up")
    assert result.exit_code == 0
    assert "(shown above)" in result.stdout


def test_lineage_of_an_unknown_name_is_a_usage_error(repo: Repo):
    repo.index()
    result = lineage(repo.db_path, "20990101-nobody-nothing")
    assert result.exit_code == 2
    assert "no record ID" in result.output


def test_each_manifest_problem_is_reported_once_by_the_check_that_owns_it(repo: Repo):
    manifest = packet_dir("architect") + "/handoff.manifest.json"
    data = repo.load(manifest)
    del data["summary"]
    repo.write(manifest, b"\xef\xbb\xbf" + json.dumps(data).encode())
    db = repo.index()
    assert_every_problem_is_a_finding(db)
    mine = [(f["check"], f["field"]) for f in findings_of(db) if f["file"] == manifest]
    assert sorted(mine) == [("handoff_schema", "summary"), ("json_strict", "")]


def test_lineage_shows_an_input_that_was_never_written(sample_repo: Repo):
    from click.testing import CliRunner

    from labnote_index.cli import cli

    sample_repo.index().close()
    implementer = "docs/workflow/roles/implementer/reports/retention-policy/packet-v001"
    args = ["lineage", implementer, "--db", str(sample_repo.db_path), "--direction", "up"]
    tree = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    missing = [b for b in tree["up"] if b["missing"]]
    assert [(b["via"], b["expected"]) for b in missing] == [(["input_packets"], "handoff_packet")]
    assert missing[0]["label"].startswith("docs/workflow/roles/code-context/")
    text = CliRunner().invoke(cli, args).stdout
    assert "input_packets: MISSING handoff_packet docs/workflow/roles/code-context/" in text


def test_a_story_walks_the_reply_thread_from_its_first_message(sample_repo: Repo):
    from labnote_index.queries.lineage import story

    db = sample_repo.index()
    thread = story(db, "20260904-maria-ops-retention-scope")["thread"]
    assert [(m["depth"], m["message_id"]) for m in thread][:3] == [
        (0, "20260903-maria-ops-retention-kickoff"),
        (1, "20260903-claude-retention-ack"),
        (2, "20260904-maria-ops-retention-scope"),
    ]


# The rows one manifest, template or lock becomes, field by field: what the
# handoff tables, their checks and the lineage read.

PACKET_DIR = "docs/workflow/roles/architect/reports/m1/packet-v002"


def test_a_manifest_s_rows_keep_every_field_as_written():
    from labnote_index.format.handoff import manifest_rows

    data = {
        "schema_version": 2,
        "role": "architect",
        "milestone": "m1",
        "packet_version": "packet-v002",
        "status": "ready_for_next_role",
        "created_at": "2026-09-01",
        "updated_at": "2026-09-02",
        "summary": "the plan",
        "documents": [
            {"path": "plan.md", "type": "plan", "required": False, "description": "d"},
            "not an object",
            {"path": "notes.md"},
            {"path": "risk.md", "required": "no"},  # not false: required
        ],
        "input_packets": [
            {
                "role": "pm",
                "milestone": "m1",
                "packet_version": "packet-v001",
                "manifest": "docs/workflow/roles/pm/reports/m1/packet-v001/handoff.manifest.json",
                "status_at_consumption": "ready_for_next_role",
                "consumption_status": "accepted_as_input",
                "note": "kept",
            },
            7,
            {"role": "qa"},
        ],
        "source_scopes": ["a"],
        "handoff_to": ["developer"],
        "open_questions": [],
        "blocked": False,
        "required_confirmations": ["x"],
        "reviewer": "maria",
    }
    rows = manifest_rows(PACKET_DIR + "/handoff.manifest.json", data, True)
    assert rows["handoff_packets"] == [
        {
            "packet_dir": PACKET_DIR,
            "manifest": PACKET_DIR + "/handoff.manifest.json",
            "dir_role": "architect",
            "dir_milestone": "m1",
            "dir_packet_version": "packet-v002",
            "role": "architect",
            "milestone": "m1",
            "packet_version": "packet-v002",
            "status": "ready_for_next_role",
            "created_at": "2026-09-01",
            "updated_at": "2026-09-02",
            "summary": "the plan",
            "version_number": 2,
            "schema_version": "2",
            "blocked": False,
            "handoff_to": ["developer"],
            "return_to": None,
            "source_scopes": ["a"],
            "open_questions": [],
            "required_confirmations": ["x"],
            "extra": '{"reviewer": "maria"}',
            "valid": True,
        }
    ]
    document = {"packet_dir": PACKET_DIR, "type": None, "description": None}
    assert rows["handoff_documents"] == [
        {
            **document,
            "position": 0,
            "path": "plan.md",
            "type": "plan",
            "required": False,
            "description": "d",
        },
        {**document, "position": 1, "path": "notes.md", "required": True},
        {**document, "position": 2, "path": "risk.md", "required": True},
    ]
    assert rows["input_packets"] == [
        {
            "consumer": PACKET_DIR,
            "position": 0,
            "role": "pm",
            "milestone": "m1",
            "packet_version": "packet-v001",
            "manifest": "docs/workflow/roles/pm/reports/m1/packet-v001/handoff.manifest.json",
            "status_at_consumption": "ready_for_next_role",
            "consumption_status": "accepted_as_input",
            "extra": '{"note": "kept"}',
        },
        {
            "consumer": PACKET_DIR,
            "position": 1,
            "role": "qa",
            **dict.fromkeys(
                ("milestone", "packet_version", "manifest", "status_at_consumption"), None
            ),
            "consumption_status": None,
            "extra": None,
        },
    ]
    # documents and input_packets that are no list (nor iterable) give no row, no crash.
    for wrong in (None, 7, {"path": "plan.md"}):
        odd = manifest_rows(
            "m/handoff.manifest.json", {"documents": wrong, "input_packets": wrong}, False
        )
        assert (odd["handoff_documents"], odd["input_packets"]) == ([], []), wrong
    # Nothing beyond the known fields: no extra at all, not an empty object.
    plain = {k: v for k, v in data.items() if k != "reviewer"}
    assert (
        manifest_rows("m/handoff.manifest.json", plain, False)["handoff_packets"][0]["extra"]
        is None
    )


def test_a_lock_s_rows_keep_every_field_as_written():
    from labnote_index.format.handoff import lock_rows

    lock = PACKET_DIR + "/packet.lock.json"
    data = {
        "schema_version": "1",
        "role": "architect",
        "milestone": "m1",
        "packet_version": "packet-v002",
        "status": "locked",
        "files": [{"path": "plan.md", "sha256": "ab"}, [], {"path": "x.md"}],
        "signed_by": "maria",
    }
    rows = lock_rows(lock, data)
    assert rows["packet_locks"] == [
        {
            "lock_file": lock,
            "packet_dir": PACKET_DIR,
            "role": "architect",
            "milestone": "m1",
            "packet_version": "packet-v002",
            "status": "locked",
            "schema_version": "1",
            "extra": '{"signed_by": "maria"}',
        }
    ]
    assert rows["locked_files"] == [
        {"lock_file": lock, "packet_dir": PACKET_DIR, "path": "plan.md", "recorded_sha256": "ab"},
        {"lock_file": lock, "packet_dir": PACKET_DIR, "path": "x.md", "recorded_sha256": None},
    ]
    del data["signed_by"]
    assert lock_rows(lock, data)["packet_locks"][0]["extra"] is None
    assert lock_rows(lock, {"files": "none"}) == {
        "packet_locks": [
            {"lock_file": lock, "packet_dir": PACKET_DIR, "extra": None}
            | dict.fromkeys(("role", "milestone", "packet_version", "status", "schema_version"))
        ],
        "locked_files": [],
    }
    # files that is no list, nor iterable at all, gives no file and no crash.
    for wrong in (None, 7, {"path": "plan.md"}):
        assert lock_rows(lock, {"files": wrong})["locked_files"] == [], wrong


def test_a_template_s_row_keeps_what_it_says():
    from labnote_index.format.handoff import template_rows

    manifest = "docs/workflow/roles/qa/templates/handoff.manifest.json"
    data = {
        "schema_version": 1,
        "role": "qa",
        "milestone": "template",
        "packet_version": "packet-v001",
        "status": "draft",
        "summary": "<summary>",
        "documents": [{"path": "report.md"}, "x", {"type": "t"}],
        "return_to": "developer",
        "owner": "qa",
    }
    assert template_rows(manifest, data, False) == {
        "handoff_templates": [
            {
                "manifest": manifest,
                "dir_role": "qa",
                "role": "qa",
                "milestone": "template",
                "packet_version": "packet-v001",
                "status": "draft",
                "summary": "<summary>",
                "schema_version": "1",
                "documents": ["report.md", None],
                "handoff_to": None,
                "return_to": "developer",
                "extra": '{"owner": "qa"}',
                "valid": False,
            }
        ]
    }
    del data["owner"]
    assert template_rows(manifest, data, True)["handoff_templates"][0]["extra"] is None


def test_a_packet_directory_names_its_role_milestone_and_version_only_at_its_place():
    from labnote_index.format.handoff import packet_location, version_number

    named = {"dir_role": "a", "dir_milestone": "m", "dir_packet_version": "packet-v001"}
    assert packet_location("docs/workflow/roles/a/reports/m/packet-v001") == named
    assert packet_location("roles/a/reports/m/packet-v001") == named  # at the root
    nothing = dict.fromkeys(named)
    for near in (
        "docs/workflow/roles/a/reports/m/packet-v001/deeper",  # one level too deep
        "docs/workflow/roles/a/reports/packet-v001",  # no milestone
        "docs/workflow/roles/a/report/m/packet-v001",  # not reports
        "docs/workflow/role/a/reports/m/packet-v001",  # not roles
        "a/reports/m/packet-v001",
    ):
        assert packet_location(near) == nothing, near
    assert version_number("packet-v012") == 12
    assert version_number("packet-v1000") == 1000 > version_number("packet-v999")  # type: ignore[operator]
    assert version_number("packet-v" + "9" * 9) == 999_999_999
    for near in (
        "packet-v" + "9" * 10,
        "packet-v",
        "xpacket-v1",
        "packet-v1x",
        "packet-V1",
        12,
        None,
    ):
        assert version_number(near) is None, near


def _valid_manifest() -> dict:
    """A manifest of the sample's architect packet: valid, no placeholder left."""
    path = "sample_repo/docs/workflow/roles/architect/reports/retention-policy/packet-v001"
    return json.loads((Path(__file__).parent.parent / path / "handoff.manifest.json").read_text())


def test_where_a_packet_goes_next_is_said_once_by_either_field():
    """The problems of the next-role rule, exact (field, kind, message): the kind
    is what the validation_errors table shows; a lock has no next role at all."""
    from labnote_index.format.handoff import validate_handoff
    from labnote_index.format.problem import Problem

    base = _valid_manifest()
    base.pop("handoff_to", None)
    base.pop("return_to", None)
    assert validate_handoff("handoff_manifest", base) == [
        Problem(
            "handoff_to", "missing_next_role", "required field handoff_to (or return_to) is missing"
        )
    ]
    blank = {**base, "return_to": "  "}
    assert validate_handoff("handoff_manifest", blank) == [
        Problem(
            "return_to",
            "missing_next_role",
            "return_to '  ' names no role: name the role the packet goes to",
        )
    ]
    # handoff_to says it: a blank return_to beside it is not asked about.
    assert validate_handoff("handoff_manifest", {**blank, "handoff_to": ["reviewer"]}) == []
    assert validate_handoff("handoff_manifest", {**base, "return_to": "reviewer"}) == []
    lock = {
        "schema_version": 1,
        "role": "architect",
        "milestone": "m1",
        "packet_version": "packet-v001",
        "status": "locked",
        "files": [],
    }
    assert validate_handoff("packet_lock", lock) == []
    assert validate_handoff("packet_lock", {**lock, "return_to": " "}) == []  # kept, not a rule


def test_a_template_milestone_left_in_a_packet_is_a_placeholder_wherever_it_names_one():
    from labnote_index.format.handoff import validate_handoff
    from labnote_index.format.problem import Problem

    base = _valid_manifest()
    assert validate_handoff("handoff_manifest", base) == []
    inputs = [dict(entry) for entry in base["input_packets"]]
    assert inputs, "the sample packet consumes one: this test needs it"
    inputs[0]["milestone"] = "template"
    found = validate_handoff(
        "handoff_manifest", {**base, "milestone": "template", "input_packets": inputs}
    )
    assert found == [
        Problem(
            "milestone",
            "placeholder",
            "milestone is the template placeholder 'template': give the packet's own",
        ),
        Problem(
            "input_packets[0].milestone",
            "placeholder",
            "input_packets[0].milestone is the template placeholder 'template': "
            "give the packet's own",
        ),
    ]
    # "template" is a placeholder only as a milestone; as a summary it is words,
    # and a milestone named otherwise ("template-v2", "Template") is a name.
    for near in ({"summary": "template"}, {"milestone": "template-v2"}, {"milestone": "Template"}):
        assert validate_handoff("handoff_manifest", {**base, **near}) == [], near
    documents = [dict(d) for d in base["documents"]]
    documents[0]["path"] = "reports/<milestone>/plan.md"
    inputs = [dict(entry) for entry in base["input_packets"]]
    inputs[0]["manifest"] = "roles/<role>/handoff.manifest.json"
    found = validate_handoff(
        "handoff_manifest",
        {**base, "summary": "<summary>", "documents": documents, "input_packets": inputs},
    )
    assert [(p.field, p.error_type) for p in found] == [
        ("summary", "placeholder"),
        ("documents[0].path", "placeholder"),
        ("input_packets[0].manifest", "placeholder"),
    ]
    assert found[0].message == "summary holds the placeholder <summary>: give the packet's own"
    # The dates a template leaves: either one is named.
    for field in ("created_at", "updated_at"):
        assert validate_handoff("handoff_manifest", {**base, field: "YYYY-MM-DD"}) == [
            Problem(
                field,
                "placeholder",
                f"{field} is the template placeholder 'YYYY-MM-DD': give the packet's own",
            )
        ], field
    # documents that is no list is a type problem, and no placeholder is looked for in it.
    for wrong in (None, "<path>", {"path": "<path>"}):
        found = validate_handoff("handoff_manifest", {**base, "documents": wrong})
        assert [p.error_type for p in found] == ["type"], wrong
    # A template is checked as a manifest: its placeholders are what it holds.
    assert validate_handoff("handoff_template", {**base, "milestone": "template"}) == []
