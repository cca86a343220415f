"""Generated views against expected files written by hand, and the staleness checks.

Tests of: ``index/registry_views.py``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from labnote_index.cli import cli

from .helpers import SAMPLE_REPO, Repo, findings_of


def views(repo: Path, db: Path, *args: str):
    return CliRunner().invoke(cli, ["views", str(repo), "--db", str(db), *args])


def write(root: Path, rel: str, data: dict) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_tricky_cells_byte_for_byte(tmp_path: Path):
    root = tmp_path / "repo"
    base = {
        "schema_version": 1,
        "created_by": "op",
        "deposited_by": "op",
        "content_origin": "operator_authored",
        "source_refs": [],
        "source_note": "",
        "derivative_of": [],
        "provenance_coverage": "record_level",
        "source_session": "a",
        "target_session": "b",
        "status": "new",
        "response_expected": False,
        "response_packet_id": None,
    }
    # Written out of ID order: rows must come back sorted by packet_id.
    write(
        root,
        "registry/packets/2026/20260902-op-zeta.json",
        {
            "record_type": "packet",
            **base,
            "packet_id": "20260902-op-zeta",
            "created_at": "2026-09-02T08:00:00Z",
            "topic": "zeta",
            "path": "datadrops/z.md",
            "tags": ["a", "b"],
            "notes": 'He said "hi", then left\nfor good',
        },
    )
    write(
        root,
        "registry/packets/2026/20260901-op-alpha.json",
        {
            "record_type": "packet",
            **base,
            "packet_id": "20260901-op-alpha",
            "created_at": "2026-09-01T23:59:59+02:00",
            "topic": "alpha",
            "path": "datadrops/a.md",
            "response_expected": True,
            "tags": [],
            "notes": "plain",
        },
    )
    # Not canonical: a message directory holding a packet, and a record with no record_type.
    write(
        root,
        "registry/messages/open/20260903-op-stray.json",
        {
            "record_type": "packet",
            **base,
            "packet_id": "20260903-op-stray",
            "created_at": "2026-09-03T08:00:00Z",
            "topic": "stray",
            "path": "x.md",
            "tags": [],
            "notes": "",
        },
    )
    write(
        root,
        "registry/packets/2026/20260904-op-legacy.json",
        {
            **base,
            "packet_id": "20260904-op-legacy",
            "created_at": "2026-09-04T08:00:00Z",
            "topic": "legacy",
            "path": "x.md",
            "tags": [],
            "notes": "",
        },
    )
    write(
        root,
        "registry/tags/accepted/pipes.json",
        {
            "record_type": "tag",
            "schema_version": 1,
            "tag_slug": "pipes",
            "created_at": "2026-09-01T00:00:00Z",
            "display_name": "Pipes",
            "status": "accepted",
            "scope": "registry",
            "description": "a | b | c",
            "created_by": "op",
            "accepted_by": "op",
            "accepted_at": "2026-09-01T00:00:00Z",
            "acceptance_basis": "operator_supplied",
            "notes": "",
        },
    )
    result = views(root, tmp_path / "v.db")
    assert result.exit_code == 0, result.output
    assert (root / "registry/packet_registry.csv").read_bytes() == (
        b"packet_id,date,created_at,created_by,deposited_by,content_origin,source_note,"
        b"source_session,target_session,topic,status,path,response_expected,"
        b"response_packet_id,tags,notes\n"
        b"20260901-op-alpha,2026-09-01,2026-09-01T23:59:59+02:00,op,op,operator_authored,,"
        b"a,b,alpha,new,datadrops/a.md,true,,,plain\n"
        b"20260902-op-zeta,2026-09-02,2026-09-02T08:00:00Z,op,op,operator_authored,,"
        b'a,b,zeta,new,datadrops/z.md,false,,a|b,"He said ""hi"", then left\nfor good"\n'
    )
    assert (root / "registry/message_registry.csv").read_text() == (
        "message_id,date,created_at,from_visitor_id,to_visitor_id,to_group,status,path,"
        "reply_to,reply_expected,response_message_id,needs_human_relay,related_packet,"
        "related_response,summary,tags,notes\n"
    )
    index = (root / "registry/INDEX.md").read_text()
    assert index == (
        "# Registry Index\n\n"
        "> Generated from canonical JSON records by scripts/generate_registry_views.py;"
        " do not edit manually.\n\n"
        "## Record Counts\n\n"
        "| Record type | Count |\n| --- | ---: |\n"
        "| packet | 2 |\n| response | 0 |\n| message | 0 |\n| notification | 0 |\n"
        "| visit | 0 |\n| visitor | 0 |\n| tag | 1 |\n\n"
        "## Tags\n\n"
        "| Tag | Status | Scope | Description |\n| --- | --- | --- | --- |\n"
        "| pipes | accepted | registry | a \\| b \\| c |\n"
    )


# An independent rendering, straight from the files, for whole repositories.
def expected_csv(
    root: Path, directory: str, record_type: str, id_field: str, columns: list[str]
) -> str:
    records = []
    for path in (root / "registry" / directory).rglob("*.json"):
        data = json.loads(path.read_text())
        if data.get("record_type") == record_type:
            records.append(data)
    records.sort(key=lambda d: d[id_field])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)

    def show(value):
        if value is None:
            return ""
        if value is True or value is False:
            return "true" if value else "false"
        if isinstance(value, list):
            return "|".join(value)
        return str(value)

    for d in records:
        writer.writerow([d["created_at"][:10] if c == "date" else show(d.get(c)) for c in columns])
    return out.getvalue()


def header(root: Path, name: str) -> list[str]:
    return (root / "registry" / name).read_text().splitlines()[0].split(",")


def check_whole_repository(root: Path, db: Path) -> None:
    result = views(root, db)
    assert result.exit_code == 0, result.output
    for directory, record_type, id_field in [
        ("packets", "packet", "packet_id"),
        ("responses", "response", "response_id"),
        ("messages", "message", "message_id"),
        ("notifications", "notification", "notification_id"),
        ("visits", "visit", "visit_id"),
        ("visitors", "visitor", "visitor_id"),
    ]:
        name = f"{record_type}_registry.csv"
        expected = expected_csv(root, directory, record_type, id_field, header(root, name))
        assert (root / "registry" / name).read_text() == expected, name


def test_sample_repo_views(sample_repo: Repo, tmp_path: Path):
    check_whole_repository(sample_repo.root, tmp_path / "s.db")


def test_generated_repository_views(repo: Repo, tmp_path: Path):
    check_whole_repository(repo.root, tmp_path / "g.db")
    lines = (repo.root / "registry/packet_registry.csv").read_text().splitlines()
    assert len(lines) == 13  # header + 12 packets


def test_committed_sample_views_are_current(tmp_path: Path):
    result = views(SAMPLE_REPO, tmp_path / "s.db", "--check")
    assert result.exit_code == 0, result.output
    assert "7 views are current" in result.output


def test_check_passes_after_views_and_fails_after_an_edit(repo: Repo, tmp_path: Path):
    db = tmp_path / "v.db"
    assert views(repo.root, db).exit_code == 0
    before = {p.name: p.read_bytes() for p in (repo.root / "registry").glob("*_registry.csv")}
    assert views(repo.root, db, "--check").exit_code == 0
    packet = repo.first("registry/packets/*/*.json")
    repo.edit(packet, status="archived")
    result = views(repo.root, db, "--check")
    assert result.exit_code == 1
    assert "stale: " in result.output and "packet_registry.csv" in result.output
    assert "+" in result.output and ",archived," in result.output
    after = {p.name: p.read_bytes() for p in (repo.root / "registry").glob("*_registry.csv")}
    assert before == after  # --check writes nothing


def test_views_to_another_directory(repo: Repo, tmp_path: Path):
    out = tmp_path / "out"
    assert views(repo.root, tmp_path / "v.db", "--out", str(out)).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "INDEX.md",
            "message_registry.csv",
            "notification_registry.csv",
            "packet_registry.csv",
            "response_registry.csv",
            "visit_registry.csv",
            "visitor_registry.csv",
        ]
    )
    assert not (repo.root / "registry/INDEX.md").exists()


def test_stale_view_is_an_error_that_fails_check(repo: Repo, tmp_path: Path):
    views(repo.root, tmp_path / "v.db")
    assert findings_of(repo.index()) == []
    (repo.root / "registry/INDEX.md").write_text("# edited by hand\n")
    found = findings_of(repo.index())
    assert [(f["check"], f["severity"], f["file"]) for f in found] == [
        ("view_stale", "error", "registry/INDEX.md")
    ]
    # Upstream CI fails on any difference: so does a plain check.
    result = CliRunner().invoke(cli, ["check", str(repo.root), "--no-db"])
    assert result.exit_code == 1, result.output


def test_a_windows_checkout_of_current_views_is_current(repo: Repo, tmp_path: Path):
    views(repo.root, tmp_path / "v.db")
    committed = sorted((repo.root / "registry").glob("*_registry.csv")) + [
        repo.root / "registry/INDEX.md"
    ]
    for path in committed:
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert findings_of(repo.index()) == []
    result = views(repo.root, tmp_path / "v.db", "--check")
    assert result.exit_code == 0, result.output
    assert "views are current" in result.output


def test_a_view_diff_shows_every_control_character(repo: Repo, tmp_path: Path):
    views(repo.root, tmp_path / "v.db")
    index = repo.root / "registry/INDEX.md"
    lines = index.read_bytes().split(b"\n")
    lines[2] = lines[2] + b" edited\x0c\x1b[31m\x0b"  # a lone CR would be a newline
    index.write_bytes(b"\n".join(lines))
    result = views(repo.root, tmp_path / "v.db", "--check")
    assert result.exit_code == 1
    edited = [line for line in result.output.splitlines() if "edited" in line]
    assert edited and edited[0].endswith("edited\\x0c\\x1b[31m\\x0b"), result.output
    assert not {"\x1b", "\x0c", "\x0b"} & set(result.output)


def test_views_are_worked_out_again_only_when_a_record_changed(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import importlib

    registry_views = importlib.import_module("labnote_index.index.registry_views")
    views(repo.root, tmp_path / "v.db")  # commits them
    repo.index()
    rendered: list[int] = []
    real = registry_views.store_views
    monkeypatch.setattr(
        registry_views, "store_views", lambda db, sandbox: rendered.append(1) or real(db, sandbox)
    )
    artifact = repo.load(repo.first("registry/packets/*/*.json"))["path"]
    repo.write(artifact, "# Only the artifact changed\n")
    repo.index()
    assert rendered == []  # an artifact feeds no view
    repo.edit(repo.first("registry/packets/*/*.json"), status="archived")
    assert findings_of(repo.index())[0]["check"] == "view_stale"
    assert rendered == [1]


def test_views_are_never_written_while_a_record_cannot_be_read(sample_repo: Repo):
    """A truncated packet: views and views --check exit 2 naming it (views
    dropped its row, exit 0), and fix leaves the committed views as they are,
    saying why and what remains in all."""
    from click.testing import CliRunner

    from labnote_index.cli import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["views", str(sample_repo.root)]).exit_code == 0
    registry = sample_repo.root / "registry/packet_registry.csv"
    before = registry.read_bytes()
    packet = sample_repo.first("registry/packets/*/*.json")
    path = sample_repo.root / packet
    path.write_bytes(path.read_bytes()[:200])  # truncated: malformed JSON
    for args in (["views", str(sample_repo.root)], ["views", str(sample_repo.root), "--check"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert packet in result.output and "cannot be read" in result.output
    assert registry.read_bytes() == before
    fixed = runner.invoke(cli, ["fix", str(sample_repo.root), "--apply"])
    assert fixed.exit_code == 1 and registry.read_bytes() == before
    assert "not fixed [view_stale]" in fixed.output and packet in fixed.output
    assert "in all: " in fixed.output and " remain" in fixed.output


def test_a_killed_view_writers_leftovers_are_cleared_and_never_a_finding(repo: Repo):
    """Views are written through a private directory beside them (the one atomic
    writer, ``replace_file``): what a killed writer left there is removed by the
    next, and never shows up as a stray file (it once was
    ``registry/.packet_registry.csv.<pid>.tmp``, an error)."""
    import subprocess
    import sys

    registry = repo.root / "registry"
    code = (
        "import sys; from labnote_index.index.tempfiles import new_directory; "
        "d = new_directory('tmp', sys.argv[1]); (d / 'packet_registry.csv').write_text('half')"
    )
    subprocess.run([sys.executable, "-c", code, str(registry)], check=True)  # then it is gone
    (left,) = [p for p in registry.iterdir() if p.name.startswith(".labnote-")]
    assert [f for f in findings_of(repo.index()) if f["check"] == "stray_file"] == []
    result = CliRunner().invoke(cli, ["views", str(repo.root), "--db", str(repo.db_path)])
    assert result.exit_code == 0, result.output
    assert not left.exists()
    assert sorted(p.name for p in registry.iterdir() if p.name.startswith(".")) == []
    assert [
        f for f in findings_of(repo.index()) if f["check"] in ("stray_file", "view_stale")
    ] == []


def test_check_says_missing_for_a_view_that_is_not_there(repo: Repo, tmp_path: Path):
    db = tmp_path / "v.db"
    assert views(repo.root, db).exit_code == 0
    (repo.root / "registry" / "visit_registry.csv").unlink()
    repo.edit(repo.first("registry/packets/*/*.json"), status="archived")
    result = views(repo.root, db, "--check")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith("missing: ") and "visit_registry.csv" in line for line in lines)
    assert not any(line.startswith("stale: ") and "visit_registry.csv" in line for line in lines)
    assert any(line.startswith("stale: ") and "packet_registry.csv" in line for line in lines)
