"""The importer: every file accounted for, relationships resolved, bad input kept.

Tests of: ``index/rows.py``, ``index/resolve.py``, ``index/inserts.py``,
``index/schema.py``, ``read/discover.py``, ``index/files.py``, ``interrupts.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import example, given
from hypothesis import strategies as st

from bench.generate import generate
from labnote_index.api import build as build_index
from labnote_index.index.registry_views import render_views

from .helpers import (
    BAD_INPUTS,
    SAMPLE_REPO,
    Calls,
    Repo,
    cli_as,
    compared,
    content,
    everything_stored,
    findings_of,
    git,
    not_when_built,
    open_copy,
    signals_as_usual,
)


def json_files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in (root / "registry").rglob("*.json")
        if "schemas" not in p.parts
    }


def test_every_sample_record_file_appears_exactly_once(sample_repo: Repo):
    db = sample_repo.index()
    paths = [r["path"] for r in db.query("SELECT path FROM files WHERE kind = 'record'")]
    assert len(paths) == len(set(paths))
    assert set(paths) == json_files(sample_repo.root)
    assert len(paths) >= 40
    records = [r["file"] for r in db.query("SELECT file FROM records")]
    assert sorted(records) == sorted(paths)


def test_sample_repo_has_all_seven_types(sample_repo: Repo):
    db = sample_repo.index()
    counts = {
        r["record_type"]: r["n"]
        for r in db.query("SELECT record_type, count(*) AS n FROM records GROUP BY record_type")
    }
    assert set(counts) == {
        "packet",
        "response",
        "message",
        "notification",
        "visit",
        "visitor",
        "tag",
    }
    for rt, table in [("packet", "packets"), ("tag", "tags"), ("visit", "visits")]:
        assert db[table].count == counts[rt]


def test_generated_repository_of_hundreds_of_records(tmp_path: Path):
    root = tmp_path / "big"
    written = generate(root, packets=80)
    assert written > 300
    db_path = tmp_path / "big.db"
    result = build_index(root, db_path)
    db = sqlite_utils.Database(db_path)
    paths = [r["path"] for r in db.query("SELECT path FROM files WHERE kind = 'record'")]
    assert len(paths) == len(set(paths)) == written
    assert set(paths) == json_files(root)
    assert sum(result.records.values()) == written
    assert result.files_with_findings == 0


def test_relationship_tables_hold_sample_edges(sample_repo: Repo):
    db = sample_repo.index()

    def edge(field, source_id):
        return list(
            db.query(
                "SELECT x.target_id, t.record_id AS resolved FROM refs x "
                "LEFT JOIN records t ON t.file = x.target_file "
                "WHERE x.field = ? AND x.source_id = ? ORDER BY x.position",
                [field, source_id],
            )
        )

    survey = "20260903-claude-retention-survey"
    assert edge("source_packet_id", survey) == [
        {
            "target_id": "20260903-maria-ops-retention-question",
            "resolved": "20260903-maria-ops-retention-question",
        }
    ]
    # derivative_of mixes packets and responses, and resolves both
    summary = edge("derivative_of", "20260906-gemini-retention-summary")
    assert [e["resolved"] for e in summary] == ["20260905-claude-retention-followup", survey]
    # the visit resolves to its packet through its own ID
    visit = edge("visit_id", "20260903-maria-ops-retention-question-visit")
    assert visit[0]["resolved"] == "20260903-maria-ops-retention-question"
    # the orphaned reply stays unresolved, with the raw target kept
    orphan = edge("reply_to", "20260912-gemini-late-reply")
    assert orphan == [{"target_id": "20260911-maria-ops-summary-length", "resolved": None}]
    # tags: the unknown tag is unresolved, the known one points at the tag row
    uses = {
        r["tag_slug"]: r["tag_file"]
        for r in db.query(
            "SELECT tag_slug, tag_file FROM tag_uses WHERE source_id = ?",
            ["20260912-maria-ops-search-index"],
        )
    }
    assert uses == {
        "search-index": "registry/tags/proposed/search-index.json",
        "vector-search": None,
    }
    refs = [
        r["ref"]
        for r in db.query(
            "SELECT ref FROM source_refs WHERE source_id = '20260910-perplexity-web-scan'"
        )
    ]
    assert "https://datasette.io/" in refs


def test_reply_chain_view_gives_thread_depth(sample_repo: Repo):
    db = sample_repo.index()
    rows = {
        r["message_id"]: (r["root_message_id"], r["depth"])
        for r in db.query("SELECT * FROM reply_chains")
    }
    assert rows["20260904-claude-retention-done"] == ("20260903-maria-ops-retention-kickoff", 3)
    assert rows["20260903-maria-ops-retention-kickoff"] == (
        "20260903-maria-ops-retention-kickoff",
        0,
    )


def test_foreign_keys_are_declared_for_datasette(sample_repo: Repo):
    db = sample_repo.index()
    fks = {(fk.column, fk.other_table, fk.other_column) for fk in db["refs"].foreign_keys}
    assert ("target_file", "records", "file") in fks
    assert ("tag_file", "tags", "file") in {
        (fk.column, fk.other_table, fk.other_column) for fk in db["tag_uses"].foreign_keys
    }
    assert list(db.query("PRAGMA foreign_key_check")) == []


def test_artifacts_existence_and_body(sample_repo: Repo):
    db = sample_repo.index()
    status = {r["path"]: r for r in db.query("SELECT * FROM artifacts")}
    missing = status["datadrops/2026/20260914-codex-registry-audit.md"]
    assert missing["status"] == "missing" and missing["body"] is None
    present = status["datadrops/2026/20260903-maria-ops-retention-question.md"]
    assert present["status"] == "ok" and "retention schedule" in present["body"]
    assert present["sha256"] and present["size"] > 0


def test_duplicate_ids_keep_both_records(repo: Repo):
    original = repo.first("registry/packets/*/*.json")
    copy = original.replace(".json", "-copy.json")
    repo.write(copy, (repo.root / original).read_text())
    db = repo.index()
    rows = list(
        db.query("SELECT file FROM packets WHERE packet_id = ?", [repo.load(original)["packet_id"]])
    )
    assert sorted(r["file"] for r in rows) == sorted([original, copy])


def test_legacy_spellings_are_mapped_and_flagged(repo: Repo):
    visit = repo.first("registry/visits/*/*.json")
    data = repo.load(visit)
    data["visitor_family"] = data.pop("session_family")
    repo.save(visit, data)
    packet = repo.first("registry/packets/*/*.json")
    data = repo.load(packet)
    del data["record_type"]
    data["source_ai"] = data.pop("source_session")
    repo.save(packet, data)
    db = repo.index()
    assert db["visits"].get(visit)["session_family"] == repo.load(visit)["visitor_family"]
    assert db["packets"].get(packet)["source_session"] == repo.load(packet)["source_ai"]
    legacy = {
        (r["file"], r["legacy_field"], r["canonical_field"])
        for r in db.query("SELECT * FROM legacy_fields")
    }
    assert legacy == {
        (visit, "visitor_family", "session_family"),
        (packet, "(no record_type)", "record_type"),
        (packet, "source_ai", "source_session"),
    }
    # mapped fields are neither missing nor unknown
    assert list(db.query("SELECT * FROM validation_errors")) == []


def test_invalid_record_keeps_every_readable_field(repo: Repo):
    visit = repo.first("registry/visits/*/*.json")
    repo.edit(visit, relay_needed="no", mood="cheerful")
    db = repo.index()
    row = db["visits"].get(visit)
    assert row["relay_needed"] == "no"
    assert row["valid"] == 0
    assert json.loads(row["extra"]) == {"mood": "cheerful"}
    assert row["visitor_id"] == repo.load(visit)["visitor_id"]


# ---- bad input: each a file-named row, the rest indexed, no crash


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_unreadable_file_becomes_an_error_row(repo: Repo, name: str):
    content, expected = BAD_INPUTS[name]
    bad = repo.write(f"registry/packets/2025/20250301-bad-{name}.json", content)
    before = len(json_files(repo.root)) - 1
    db = repo.index()
    row = db["files"].get(bad)
    assert expected in row["error"]
    assert db["records"].count_where("NOT unreadable") == before
    # Still a record of the index, as its location names it, and nothing more.
    stub = db["records"].get(bad)
    assert (stub["unreadable"], stub["record_type"], stub["record_id"]) == (
        1,
        "packet",
        f"20250301-bad-{name}",
    )
    assert stub["created_at"] is None and db["packets"].count_where("file = ?", [bad]) == 0
    assert any(f["file"] == bad and f["check"] == "file_unreadable" for f in findings_of(db))


def test_bom_and_duplicate_keys_are_read_and_flagged(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    text = (repo.root / packet).read_text()
    text = text.replace('"notes": ""', '"notes": "first", "notes": "second"')
    repo.write(packet, b"\xef\xbb\xbf" + text.encode())
    db = repo.index()
    assert db["packets"].get(packet)["notes"] == "second"
    errors = {
        (r["field"], r["error_type"])
        for r in db.query("SELECT * FROM validation_errors WHERE file = ?", [packet])
    }
    assert errors == {("", "encoding_bom"), ("notes", "duplicate_key")}


def test_numbers_beyond_64_bits_and_lone_surrogates_are_indexed_and_flagged(repo: Repo):
    # Python reads both; SQLite stores neither (an OverflowError, a UnicodeEncodeError).
    packet = repo.first("registry/packets/*/*.json")
    text = (repo.root / packet).read_text()
    big = "10000000000000000000"
    text = text.replace('"notes": ""', f'"notes": "half \\ud800 a pair", "\\udc80": {big}')
    text = text.replace('"schema_version": 1', '"schema_version": 123456789012345678901234567890')
    repo.write(packet, text)
    message = repo.first("registry/messages/*/*.json")
    repo.edit(message, notes="intact")
    db = repo.index()
    row = db["packets"].get(packet)
    assert row["notes"] == "half \ufffd a pair"
    assert row["schema_version"] == 1.2345678901234568e29  # a numeric column rounds it
    assert json.loads(row["extra"]) == {"\ufffd": big}  # as text: exactly
    assert db["record_json"].get(packet)["json"] == text  # the file as written
    errors = {
        (r["field"], r["error_type"])
        for r in db.query("SELECT * FROM validation_errors WHERE file = ?", [packet])
    }
    assert {
        ("schema_version", "number_out_of_range"),
        ("notes", "lone_surrogate"),
        ("\ufffd", "lone_surrogate"),
        ("\ufffd", "number_out_of_range"),
    } <= errors
    strict = {(f["file"], f["field"]) for f in findings_of(db) if f["check"] == "json_strict"}
    assert {(packet, "schema_version"), (packet, "notes")} <= strict
    assert db["messages"].get(message)["notes"] == "intact"  # the rest is indexed as ever
    assert "half \ufffd a pair" in render_views(db)["registry/packet_registry.csv"]


def test_file_names_that_are_not_utf8_are_accounted_for_not_read(sample_repo: Repo, tmp_path: Path):
    # Linux allows any bytes in a name; Python hands them over as surrogate escapes.
    root = os.fsencode(sample_repo.root)
    packet_dir = b"docs/workflow/roles/architect/reports/retention-policy/packet-v001"
    for name in (b"registry/packets/2026/bad\xffname.json", packet_dir + b"/notes-\xfe.md"):
        with open(root + b"/" + name, "wb") as handle:
            handle.write(b"{}")
    os.makedirs(root + b"/docs/\xfd", exist_ok=True)
    with open(root + b"/docs/\xfd/handoff.manifest.json", "wb") as handle:
        handle.write(b"{}")
    db = sample_repo.index()
    errors = {r["path"]: r["error"] for r in db.query("SELECT * FROM files WHERE error != ''")}
    for shown in ("registry/packets/2026/bad\\xffname.json", "docs/\\xfd/handoff.manifest.json"):
        assert "not valid UTF-8" in errors[shown]
    files = [r["path"] for r in db.query("SELECT path FROM handoff_files")]
    assert "notes-\\xfe.md" in files
    assert {f["file"] for f in findings_of(db) if f["check"] == "file_unreadable"} >= set(errors)
    again = build_index(sample_repo.root, sample_repo.db_path)  # incremental, not a crash
    assert again.incremental
    build_index(sample_repo.root, tmp_path / "full.db", full=True)
    assert content(sqlite_utils.Database(sample_repo.db_path)) == content(
        sqlite_utils.Database(tmp_path / "full.db")
    )


def test_directories_that_cannot_be_listed_are_reported(unprivileged):
    work, as_nobody = unprivileged
    root = open_copy(SAMPLE_REPO, work / "repo")
    (root / "registry/visits").chmod(0)
    (root / "docs").chmod(0)  # the handoff packets are in there
    done = cli_as(as_nobody, "check", root, "--db", work / "index.db", "--format", "json")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    unreadable = {
        f["file"]: f["message"] for f in json.loads(done.stdout) if f["check"] == "file_unreadable"
    }
    assert set(unreadable) >= {"registry/visits", "docs"}
    assert "could not be listed" in unreadable["docs"]
    db = sqlite_utils.Database(work / "index.db")
    assert db["records"].count_where("record_type = 'packet'") > 0  # the rest is indexed


def test_unknown_record_type(repo: Repo):
    bad = repo.write("registry/packets/2025/common.json", '{"record_type": "common"}')
    db = repo.index()
    assert db["files"].get(bad)["record_type"] == "common"
    assert [
        r["error_type"]
        for r in db.query("SELECT error_type FROM validation_errors WHERE file = ?", [bad])
    ] == ["unknown_record_type"]
    assert not list(db.query("SELECT * FROM records WHERE file = ?", [bad]))


def test_record_in_wrong_directory_is_indexed_and_found(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    moved = repo.move(packet, "registry/messages/open/" + packet.rsplit("/", 1)[1])
    db = repo.index()
    assert db["packets"].get(moved)["packet_id"]
    assert any(f["file"] == moved and f["check"] == "location_directory" for f in findings_of(db))


def test_huge_file_is_accounted_for_but_not_read(repo: Repo):
    big = "registry/packets/2025/20250301-huge.json"
    with (repo.root / big).open("wb") as handle:
        handle.write(b'{"notes": "')
        handle.write(b"x" * (50 * 1024 * 1024))
        handle.write(b'"}')
    db = repo.index()
    row = db["files"].get(big)
    assert row["size"] > 50 * 1024 * 1024
    assert "not read" in row["error"]
    assert len(row["sha256"]) == 64


def _reads_counted(
    monkeypatch: pytest.MonkeyPatch, grow: tuple[Path, bytes] | None = None, short: bool = False
):
    """os.read counted (the real one called); with ``grow`` (a file, bytes), the
    file has the bytes appended just before the first read: after its fstat.
    ``short``: the first read gives half of what it is asked for, as one cut
    short by a signal does."""
    real, calls = os.read, []

    def counted(fd: int, n: int) -> bytes:
        first = not calls
        if grow is not None and first:
            with grow[0].open("ab") as handle:
                handle.write(grow[1])
        calls.append(n)
        return real(fd, n // 2 if short and first else n)

    monkeypatch.setattr(os, "read", counted)
    return calls


@pytest.mark.parametrize("size", [0, 1, 700, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 2 << 20])
def test_a_file_at_its_fstat_size_is_read_whole_in_as_few_reads_as_it_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
):
    from labnote_index.read.parse import MAX_RECORD_BYTES, hash_file, read_record_file

    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "file.json"
    path.write_bytes(data)
    calls = _reads_counted(monkeypatch)
    hashed = hash_file(path, keep_up_to=max(size, 1))
    # The read of nothing that would only confirm the end is not made; a file of
    # exactly the chunk size needs it, as one of nothing needs its one read.
    chunks = max(1, -(-size // (1 << 20)))
    assert len(calls) == chunks + (size > 0 and size % (1 << 20) == 0)
    assert (hashed.size, hashed.content) == (size, data)
    assert hashed.sha256 == hashlib.sha256(data).hexdigest()
    calls.clear()
    parsed = read_record_file(path)
    assert size > MAX_RECORD_BYTES or len(calls) == 1
    assert (parsed.size, parsed.sha256) == (size, hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize("size", [10, 1 << 20, 2 << 20])
@pytest.mark.parametrize("how", ["grown since its fstat", "its first read cut short"])
def test_a_file_is_read_to_its_end_when_a_read_stops_short_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, how: str
):
    from labnote_index.read.parse import hash_file, read_record_file

    path = tmp_path / "file.json"
    grown = how.startswith("grown")
    for read in (hash_file, read_record_file):
        path.write_bytes(b"a" * size)
        _reads_counted(monkeypatch, grow=(path, b"grown") if grown else None, short=not grown)
        got = read(path)
        monkeypatch.undo()
        whole = b"a" * size + (b"grown" if grown else b"")
        assert (got.size, got.sha256) == (len(whole), hashlib.sha256(whole).hexdigest())


_PACKET_DIR = "docs/workflow/roles/architect/reports/milestone-1/packet-v001"


def _a_record(repo: Repo) -> tuple[str, str]:
    return repo.first("registry/packets/*/*.json"), "files"


def _a_manifest(repo: Repo) -> tuple[str, str]:
    return f"{_PACKET_DIR}/handoff.manifest.json", "files"


def _an_artifact_in_markdown(repo: Repo) -> tuple[str, str]:
    return repo.load(repo.first("registry/packets/*/*.json"))["path"], "artifacts"


def _markdown_in_a_run(repo: Repo) -> tuple[str, str]:
    for n in range(70):  # more than a run (MARKDOWN_RUN) in one directory
        repo.write(f"notes/n{n:03}.md", f"# note {n}\n")
    return "notes/n010.md", "files"


def _a_stray_file(repo: Repo) -> tuple[str, str]:
    return repo.write("registry/packets/2025/notes.txt", "kept beside the records\n"), "files"


def _the_registry_readme(repo: Repo) -> tuple[str, str]:
    return repo.write("registry/README.md", "# Registry\n"), "files"


def _an_artifact_not_markdown(repo: Repo) -> tuple[str, str]:
    repo.edit(repo.first("registry/packets/*/*.json"), path="datadrops/2025/table.txt")
    return repo.write("datadrops/2025/table.txt", "a, b\n"), "artifacts"


def _a_packet_file(repo: Repo) -> tuple[str, str]:
    return repo.write(f"{_PACKET_DIR}/table.csv", "a,b\n"), "handoff_files"


CHANGED_AFTER_ITS_LOOK = [
    _a_record,
    _a_manifest,
    _an_artifact_in_markdown,
    _markdown_in_a_run,
    _a_stray_file,
    _the_registry_readme,
    _an_artifact_not_markdown,
    _a_packet_file,
]


@pytest.mark.parametrize("chosen", CHANGED_AFTER_ITS_LOOK, ids=lambda f: f.__name__[1:])
def test_a_file_changed_after_its_look_is_stored_as_it_was_read(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, chosen
):
    """A file rewritten in place between the look that listed it (the walk's,
    or a packet directory's) and its read is stored with the times of the file
    read, as its content is (paths.as_read): the walk's times with the new
    content would be a row git vouches for while the file stays as HEAD has it."""
    from labnote_index.read import parse

    path, table = chosen(repo)
    full = str(repo.root / path)
    size = (repo.root / path).stat().st_size
    real, opened = parse.open_regular, []

    def rewritten_first(where: str | Path, follow: bool = True):
        if str(where) == full and not opened:
            opened.append(where)
            with open(full, "r+b") as handle:  # in place: the inode stays
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
            os.utime(full, ns=(10**18, 10**18 + 7))
        return real(where, follow)

    monkeypatch.setattr(parse, "open_regular", rewritten_first)
    db = repo.index(jobs=1)
    assert opened, f"{path} was not read"
    now = os.stat(full)
    column = "path" if table != "handoff_files" else "packet_dir || '/' || path"
    stored = db.execute(
        f"SELECT size, mtime_ns, inode FROM {table} WHERE {column} = ?", [path]
    ).fetchall()
    assert stored == [(size + 1, now.st_mtime_ns, now.st_ino)]


def _an_oversized_record(repo: Repo) -> tuple[str, str]:
    from labnote_index.read.parse import MAX_RECORD_BYTES

    return repo.write("registry/packets/2025/big.json", b" " * (MAX_RECORD_BYTES + 1)), "files"


@pytest.mark.parametrize(
    "chosen, nth",
    [
        (_a_record, 1),
        (_a_manifest, 1),
        (_a_stray_file, 1),
        (_the_registry_readme, 1),
        (_an_oversized_record, 2),  # swapped between its read and its hash
    ],
    ids=lambda f: f.__name__[1:] if callable(f) else f"open-{f}",
)
def test_a_file_swapped_for_a_symlink_out_after_its_look_is_not_read(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chosen, nth: int
):
    """A file the walk saw as a regular file, made a symlink out of the
    repository before it was read (before its ``nth`` open), is an error row
    saying it changed as it was read: never read through the symlink (no
    target was checked)."""
    from labnote_index.read import parse

    outside = tmp_path / "outside.json"
    outside.write_text('{"record_type": "packet", "notes": "c2VjcmV0"}\n')
    path, _ = chosen(repo)
    full = str(repo.root / path)
    real, opened = parse.open_regular, []

    def swapped_at_nth(where: str | Path, follow: bool = True):
        if str(where) == full:
            opened.append(where)
            if len(opened) == nth:
                os.remove(full)
                os.symlink(outside, full)
        return real(where, follow)

    monkeypatch.setattr(parse, "open_regular", swapped_at_nth)
    db = repo.index(jobs=1)
    assert len(opened) >= nth, f"{path} was not read"
    row = db["files"].get(path)
    assert (row["sha256"], row["error"]) == (None, parse.read_error(parse.NotTheFileSeen()))
    assert "c2VjcmV0" not in everything_stored(repo.db_path)


def test_a_file_reached_through_a_symlink_keeps_the_links_times(repo: Repo):
    """A record and an artifact that are symlinks inside the repository (a
    Markdown file outside registry/ that is one is not listed) are stored with
    the link's times and inode (what the walk and git see), not the target's
    the read went through."""
    from labnote_index.read.paths import storable_inode

    packet = repo.first("registry/packets/*/*.json")
    record = repo.write("registry/packets/2025/target.json", (repo.root / packet).read_text())
    repo.write("notes/target.md", "# target\n")
    repo.edit(packet, path="notes/artifact.md")
    links = {
        "registry/packets/2025/linked.json": ("files", "target.json"),
        "notes/artifact.md": ("artifacts", "target.md"),
        "registry/README.md": ("files", "../notes/target.md"),
    }
    for link, (_, target) in links.items():
        (repo.root / link).symlink_to(target)
    for target in (record, "notes/target.md"):
        os.utime(repo.root / target, ns=(10**18, 10**18 + 7))  # unlike any link's
    db = repo.index(jobs=1)
    for link, (table, _) in links.items():
        seen = os.lstat(repo.root / link)
        row = db.execute(
            f"SELECT size, mtime_ns, inode FROM {table} WHERE path = ?", [link]
        ).fetchone()
        size = (repo.root / link).stat().st_size  # what was read, through the link
        assert row == (size, seen.st_mtime_ns, storable_inode(seen.st_ino)), link


def _swapped_for_a_symlink(full: str) -> None:
    os.remove(full)
    os.symlink("handoff.manifest.json", full)


def _replaced_by_another_file(full: str) -> None:
    with open(full + ".new", "w") as handle:
        handle.write("c,d\n")
    os.replace(full + ".new", full)  # another inode under the name listed


@pytest.mark.parametrize("change", [_swapped_for_a_symlink, _replaced_by_another_file])
def test_a_packet_file_changed_after_its_listing_is_not_read(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, change
):
    """A packet file that, between its packet directory's listing and its read,
    became a symlink or another file is an error row saying so (build again),
    never read through what took its place."""
    from labnote_index.read import parse

    path = repo.write(f"{_PACKET_DIR}/table.csv", "a,b\n")
    full = str(repo.root / path)
    real, changed = parse.open_regular, []

    def changed_first(where: str | Path, follow: bool = True):
        if str(where) == full and not changed:
            changed.append(where)
            change(full)
        return real(where, follow)

    monkeypatch.setattr(parse, "open_regular", changed_first)
    db = repo.index(jobs=1)
    assert changed, f"{path} was not read"
    stored = db.execute(
        "SELECT sha256, size, error FROM handoff_files WHERE packet_dir = ? AND path = ?",
        [_PACKET_DIR, "table.csv"],
    ).fetchall()
    assert stored == [(None, None, parse.read_error(parse.NotTheFileSeen()))]


def test_a_markdown_artifact_swapped_for_a_symlink_is_not_read_through_it(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
):
    """A Markdown file the walk listed that a record names, made a symlink
    inside between the walk and the artifacts' read: its artifact row is the
    symlink's, but its file row takes nothing from it (the target's hash, times
    or links are another file's); it says the file changed as it was read.
    (Git could not tell what it ignores: the loader left the file to be read
    after the artifacts.)"""
    from labnote_index.index import files, markdown_files
    from labnote_index.read import parse

    git(repo.root, "init", "-q")
    monkeypatch.setattr(markdown_files, "git_ignored", lambda root, paths: None)
    artifact = repo.load(repo.first("registry/packets/*/*.json"))["path"]
    repo.write("notes/target.md", "# target\n\nSee [there](missing-there.md).\n")
    full = str(repo.root / artifact)
    real, swapped = files.hash_file, []

    def swapping_first(where, *args, **kwargs):
        if str(where) == full and not swapped:
            swapped.append(where)
            os.remove(full)
            os.symlink(os.path.relpath(repo.root / "notes/target.md", Path(full).parent), full)
        return real(where, *args, **kwargs)

    monkeypatch.setattr(files, "hash_file", swapping_first)
    db = repo.index(jobs=1)
    assert swapped, f"{artifact} was not read"
    row = db["artifacts"].get(artifact)
    assert (row["status"], row["regular_file"]) == ("ok", 0)  # the look at the symlink
    stored = db.execute("SELECT sha256, error FROM files WHERE path = ?", [artifact]).fetchall()
    assert stored == [(None, parse.read_error(parse.NotTheFileSeen()))]
    links = db.execute("SELECT target FROM markdown_links WHERE source_file = ?", [artifact])
    assert links.fetchall() == []


def test_symlink_outside_repository_is_not_followed(repo: Repo, tmp_path: Path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"record_type": "packet", "notes": "outside"}')
    link = "registry/packets/2025/20250301-link.json"
    os.symlink(secret, repo.root / link)
    db = repo.index()
    row = db["files"].get(link)
    assert "outside the repository" in row["error"]
    assert row["sha256"] is None
    # Indexed as its location names it (an unreadable record), nothing of its content.
    (stub,) = db.query("SELECT * FROM records WHERE file = ?", [link])
    assert stub["unreadable"] == 1 and stub["created_at"] is None
    assert db["packets"].count_where("file = ?", [link]) == 0


def test_a_directory_named_as_a_file_is_said_to_be_one(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    db = repo.index(files=["registry/packets", packet])
    assert db["files"].get("registry/packets")["error"] == (
        "a directory, not a file: name the files in it"
    )
    assert db["records"].count == 1  # the file named beside it is indexed


def test_artifact_symlink_escape_and_unsafe_paths(repo: Repo, tmp_path: Path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret body")
    packets = repo.files("registry/packets/*/*.json")
    os.symlink(outside, repo.root / "datadrops" / "escape.md")
    repo.edit(packets[0], path="datadrops/escape.md")
    repo.edit(packets[1], path="../outside.md")
    repo.edit(packets[2], path="/etc/hostname")
    db = repo.index()
    status = {r["path"]: (r["status"], r["body"]) for r in db.query("SELECT * FROM artifacts")}
    assert status["datadrops/escape.md"] == ("escapes", None)
    assert status["../outside.md"] == ("unsafe", None)
    assert status["/etc/hostname"] == ("unsafe", None)
    flagged = {f["file"] for f in findings_of(db) if f["check"] == "artifact_path"}
    assert set(packets[:3]) <= flagged


def test_files_outside_registry_are_not_indexed_unless_named(repo: Repo):
    repo.write("notes/stray.json", '{"record_type": "packet"}')
    db = repo.index()
    assert db["files"].count and not list(
        db.query("SELECT * FROM files WHERE path = 'notes/stray.json'")
    )


def test_named_files_index_exactly_those(repo: Repo):
    packets = repo.files("registry/packets/*/*.json")[:2]
    db = repo.index(files=packets)
    assert [r["path"] for r in db.query("SELECT path FROM files ORDER BY path")] == packets


def test_dot_directories_are_skipped(repo: Repo):
    repo.write("registry/.cache/x.json", "{}")
    repo.write(".git/registry/packets/x.json", "{}")
    db = repo.index()
    assert not list(db.query("SELECT * FROM files WHERE path LIKE '%.cache%' OR path LIKE '.git%'"))


# ---- atomic replacement


def test_interrupted_build_leaves_previous_index_intact(repo: Repo):
    db = repo.index()
    before = db["records"].count
    db.close()
    original = repo.db_path.read_bytes()
    beside = sorted(p.name for p in repo.db_path.parent.iterdir())
    done = []

    def interrupt_halfway(n: int) -> None:
        done.append(n)
        if len(done) == 20:
            raise KeyboardInterrupt  # as if the operator pressed Ctrl-C

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, repo.db_path, full=True, progress=Calls(interrupt_halfway))
    assert repo.db_path.read_bytes() == original
    assert sqlite_utils.Database(repo.db_path)["records"].count == before
    # Nothing left beside the index: its temporary file (.labnote-tmp-...) is gone.
    assert sorted(p.name for p in repo.db_path.parent.iterdir()) == beside


def test_interrupted_first_build_leaves_no_database(repo: Repo):
    def interrupt(n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, repo.db_path, progress=Calls(interrupt))
    assert list(repo.db_path.parent.glob("*.db*")) == []


def test_interrupted_incremental_build_leaves_previous_index_intact(repo: Repo):
    repo.index().close()
    original = repo.db_path.read_bytes()
    for packet in repo.files("registry/packets/*/*.json"):
        repo.edit(packet, notes="edited")

    def interrupt(n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, repo.db_path, progress=Calls(interrupt))
    assert repo.db_path.read_bytes() == original


def test_full_build_replaces_old_index_whole(repo: Repo):
    repo.index()
    conn = sqlite3.connect(repo.db_path)
    conn.execute("CREATE TABLE leftover (x)")
    conn.commit()
    conn.close()
    db = repo.index(full=True)
    assert "leftover" not in db.table_names()


def test_sample_repo_is_untouched_by_indexing(tmp_path: Path):
    before = {p: p.stat().st_mtime_ns for p in SAMPLE_REPO.rglob("*") if p.is_file()}
    build_index(SAMPLE_REPO, tmp_path / "s.db")
    after = {p: p.stat().st_mtime_ns for p in SAMPLE_REPO.rglob("*") if p.is_file()}
    assert before == after


@pytest.mark.parametrize(
    "pattern, legacy, canonical",
    [
        ("registry/packets/*/*.json", "target_ai", "target_session"),
        ("registry/responses/*/*.json", "responding_ai", "responding_session"),
        ("registry/visitors/*.json", "visitor_family", "session_family"),
        ("registry/messages/*/*.json", "date", "created_at"),
    ],
)
def test_each_legacy_spelling_is_indexed_under_its_canonical_column(
    repo: Repo, pattern: str, legacy: str, canonical: str
):
    rel = repo.first(pattern)
    data = repo.load(rel)
    data[legacy] = data.pop(canonical)
    repo.save(rel, data)
    db = repo.index()
    table = db["records"].get(rel)["record_type"] + "s"
    assert db[table].get(rel)[canonical] == data[legacy]
    rows = list(db.query("SELECT legacy_field, canonical_field FROM legacy_fields"))
    assert rows == [{"legacy_field": legacy, "canonical_field": canonical}]
    assert [f["check"] for f in findings_of(db)] == ["legacy_spelling"]


def table_contents(db_path: Path) -> dict[str, list[tuple]]:
    """Every row of every table, in row id order, with each value's SQLite type."""
    conn = sqlite3.connect(db_path)
    tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    contents = {}
    for name in tables:
        columns = compared(name, [row[1] for row in conn.execute(f"PRAGMA table_info([{name}])")])
        typed = ", ".join(f"[{c}], typeof([{c}])" for c in columns)
        try:
            rows = conn.execute(
                f"SELECT {typed} FROM [{name}]{not_when_built(name)} ORDER BY rowid"
            ).fetchall()
        except sqlite3.OperationalError:  # a table without row ids (full-text search's)
            rows = sorted(conn.execute(f"SELECT {typed} FROM [{name}]").fetchall(), key=repr)
        contents[name] = rows
    conn.close()
    return contents


def test_prepared_inserts_build_the_index_sqlite_utils_builds(
    repo: Repo, sample_repo: Repo, monkeypatch: pytest.MonkeyPatch
):
    """The fast insert path writes, row for row and type for type, what sqlite-utils'
    insert_all wrote before it, on a clean repository and on bad input of every kind."""
    from labnote_index.index.inserts import Inserts

    for name, (raw, _) in BAD_INPUTS.items():
        repo.write(f"registry/packets/2026/bad-{name}.json", raw.decode("utf-8", "replace"))
    big = json.loads((repo.root / sorted(json_files(repo.root))[0]).read_text())
    big.update(schema_version=2**70, tags=["a", {"nested": ["é", 1.5, None]}], extra_field=[1])
    repo.write("registry/packets/2026/big.json", json.dumps(big))
    for target in (repo, sample_repo):
        build_index(target.root, target.db_path, full=True)
        fast = table_contents(target.db_path)
        with monkeypatch.context() as patch:
            patch.setattr(
                Inserts, "insert", lambda self, table, rows: self.db.table(table).insert_all(rows)
            )
            patch.setattr(
                Inserts,
                "insert_tuples",
                lambda self, table, columns, rows, scalars=False: self.db.table(table).insert_all(
                    dict(zip(columns, row, strict=True)) for row in rows
                ),
            )
            build_index(target.root, target.db_path, full=True)
        assert table_contents(target.db_path) == fast


def test_ctrl_c_right_after_the_index_is_replaced_says_it_was(repo: Repo):
    """A signal that lands once the new index is in place (while the command
    still prints) must not be answered with "no index was replaced"."""
    import signal
    import subprocess
    import sys

    repo.index().close()
    said = []
    # The moment is short (the rename, then a few lines printed): a signal may
    # come too late. Each try that lands is checked; at least one must land.
    for attempt in range(20):
        if said:
            break
        repo.edit(repo.first("registry/packets/*/*.json"), notes=f"edit {attempt}")
        inode = repo.db_path.stat().st_ino
        command = [sys.executable, "-m", "labnote_index", "build", str(repo.root)]
        build = subprocess.Popen(
            [*command, "--db", str(repo.db_path), "--full"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=signals_as_usual,
        )
        while build.poll() is None and repo.db_path.stat().st_ino == inode:
            pass  # the moment the new index is renamed into place
        if build.poll() is None:
            build.send_signal(signal.SIGINT)
        _, err = build.communicate(timeout=60)
        assert repo.db_path.stat().st_ino != inode  # it was replaced
        if build.returncode == 130:
            said.append(err)
            assert "no index was replaced" not in err, err
            assert f"the index {repo.db_path} was replaced by a complete new one" in err, err
        else:
            assert build.returncode == 0, err  # it had finished
    assert said, "no signal arrived before the build exited: nothing was tried"


LATE_SIGNAL = """
import os, signal, sys
from labnote_index import cli, interrupts
settle = interrupts.settle
def settle_then_signal():  # the signal lands the moment the command is done
    settle()
    os.kill(os.getpid(), signal.SIGINT)
interrupts.settle = settle_then_signal
sys.argv = ["labnote-index", *sys.argv[1:]]
cli.main()
"""


def test_a_ctrl_c_once_the_command_is_done_does_not_change_its_exit(repo: Repo):
    """Deterministic: the signal lands exactly after the command has done its work
    (the moment that made a whole `make test` fail with returncode -2)."""
    import subprocess
    import sys

    command = [sys.executable, "-c", LATE_SIGNAL, "build", str(repo.root)]
    done = subprocess.run([*command, "--db", str(repo.db_path)], capture_output=True, text=True)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "Indexed" in done.stderr and "interrupted" not in done.stderr
    failing = subprocess.run(
        [sys.executable, "-c", LATE_SIGNAL, "check", "--db", str(repo.root / "none.db")],
        capture_output=True,
        text=True,
    )
    assert failing.returncode == 2, (failing.returncode, failing.stderr)


ARTIFACT_OF = "registry/packets/2026/20260903-maria-ops-retention-question.json"


def test_an_artifact_that_is_a_fifo_is_not_a_file_and_never_read(sample_repo: Repo):
    artifact = sample_repo.load(ARTIFACT_OF)["path"]
    (sample_repo.root / artifact).unlink()
    os.mkfifo(sample_repo.root / artifact)  # opened without blocking: the build goes on
    db = sample_repo.index()
    row = db["artifacts"].get(artifact)
    assert (row["status"], row["sha256"], row["body"]) == ("not_a_file", None, None)


@pytest.mark.parametrize("name, kept", [("notes.txt", True), ("image.png", False)])
def test_only_a_text_artifacts_body_is_stored_however_small(sample_repo: Repo, name, kept):
    path = f"notes/{name}"
    sample_repo.write(path, "x")
    sample_repo.edit(ARTIFACT_OF, path=path)
    row = sample_repo.index()["artifacts"].get(path)
    assert row["status"] == "ok" and row["sha256"]
    assert row["body"] == ("x" if kept else None)


def _files_rows(tmp_path: Path, name: str, items, sandbox_root: Path) -> list[tuple]:
    """The files rows FileLoader writes of ``items``, in row id order."""
    from labnote_index.index.rows import FileLoader
    from labnote_index.index.schema import create_tables
    from labnote_index.read.paths import Sandbox

    db = sqlite_utils.Database(tmp_path / name)
    create_tables(db)
    told: list[int] = []
    FileLoader(Sandbox(sandbox_root), enforce_layout=True).write(db, items, told.append)
    assert sum(told) == len(items)  # progress counts each file once, in a run or not
    return db.execute("SELECT rowid, * FROM files ORDER BY rowid").fetchall()


def test_markdown_files_written_at_once_are_the_rows_written_one_by_one(tmp_path: Path):
    """Runs of Markdown files (index/markdown_files.py, MARKDOWN_RUN) are written straight
    from the walk's arrays. Whatever they are, the rows are what the loader
    makes of each file alone, in the same order: a FIFO, a name that is not
    UTF-8, a directory that has become a symlink out since the walk, a short
    run between records, and .github/ are each told as one by one."""
    from labnote_index.index.markdown_files import MARKDOWN_RUN
    from labnote_index.read.discover import discover

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    outside.mkdir()
    for directory, count in (("a-long", MARKDOWN_RUN + 5), ("b-short", 3), (".github", 2)):
        (repo / directory).mkdir(parents=True)
        for n in range(count):
            (repo / directory / f"{n:03}.md").write_text(f"note {n}\n")
    os.mkfifo(repo / "a-long" / "a-fifo.md")
    # Sorts between the first two of the run: no run may take it in.
    (repo / "a-long").joinpath(os.fsdecode(b"000-\xff.md")).write_text("x\n")
    (repo / "c-swapped").mkdir()
    for n in range(MARKDOWN_RUN):
        (repo / "c-swapped" / f"{n:03}.md").write_text("x\n")
        (outside / f"{n:03}.md").write_text("x\n")
    (repo / "registry/packets").mkdir(parents=True)
    (repo / "registry/packets/p.json").write_text("{}")
    found = discover(repo)
    (repo / "c-swapped").rename(tmp_path / "moved")
    (repo / "c-swapped").symlink_to(outside)  # after the walk, before the rows
    at_once = _files_rows(tmp_path, "once.db", found, repo)
    one_by_one = _files_rows(tmp_path, "each.db", list(found), repo)
    assert at_once == one_by_one
    errors = {row[1]: row[-1] for row in at_once}
    assert "not a regular file" in errors["a-long/a-fifo.md"]
    assert "not valid UTF-8" in errors["a-long/000-\\xff.md"]
    assert all("outside" in errors[f"c-swapped/{n:03}.md"] for n in range(MARKDOWN_RUN))
    assert errors["a-long/000.md"] is None and errors[".github/000.md"] is None
    assert errors["b-short/000.md"] is None
    assert len(at_once) == (MARKDOWN_RUN + 5 + 2) + 3 + 2 + MARKDOWN_RUN + 1


def test_markdown_runs_start_at_the_run_size_and_break_at_any_other_file(tmp_path: Path):
    from labnote_index.index.markdown_files import MARKDOWN_RUN, MarkdownReader, runs_of
    from labnote_index.read.discover import discover
    from labnote_index.read.paths import Sandbox

    repo = tmp_path / "repo"
    sizes = {"a": MARKDOWN_RUN - 1, "b": MARKDOWN_RUN, "c": 2 * MARKDOWN_RUN}
    # Each directory ends with a handoff manifest (read as such), and c has one
    # after its first MARKDOWN_RUN files too: each breaks a run.
    breaks = ["a/zz", "b/zz", "c/zz", f"c/{MARKDOWN_RUN - 1:03}.md-x"]
    for directory, count in sizes.items():
        (repo / directory).mkdir(parents=True)
        for n in range(count):
            (repo / directory / f"{n:03}.md").write_text("x\n")
    for packet in breaks:
        (repo / packet).mkdir()
        (repo / packet / "handoff.manifest.json").write_text("{}")
    found = discover(repo)
    readable = MarkdownReader(Sandbox(repo)).readable(found, found.paths)
    runs, alone = runs_of(readable)
    assert sorted([*alone, *(at for s, e in runs.items() for at in range(s, e))]) == readable
    assert [found.paths[at] for at in alone] == [f"a/{n:03}.md" for n in range(MARKDOWN_RUN - 1)]
    assert runs_of([]) == ({}, []) and runs_of([5]) == ({}, [5])
    named = {found.paths[start]: found.paths[end - 1] for start, end in runs.items()}
    last = f"{2 * MARKDOWN_RUN - 1:03}"
    assert named == {
        "b/000.md": f"b/{MARKDOWN_RUN - 1:03}.md",
        "c/000.md": f"c/{MARKDOWN_RUN - 1:03}.md",
        f"c/{MARKDOWN_RUN:03}.md": f"c/{last}.md",
    }
    assert len(found) == sum(sizes.values()) + len(breaks)


def test_a_file_added_by_its_stat_is_the_file_added_by_its_file_stat(tmp_path: Path):
    """FoundFiles.append_stat (the walk's way) keeps what append of its FileStat does."""
    from labnote_index.read.discover import DiscoveredFile, FoundFiles
    from labnote_index.read.paths import file_stat

    (tmp_path / "file.md").write_text("x\n")
    (tmp_path / "link.md").symlink_to("file.md")
    os.mkfifo(tmp_path / "fifo.md")
    (tmp_path / "dir").mkdir()
    for name in ("file.md", "link.md", "fifo.md", "dir"):
        st = os.lstat(tmp_path / name)
        by_stat, by_key = FoundFiles(), FoundFiles()
        by_stat.append_stat(name, "markdown", st)
        by_key.append(DiscoveredFile(name, "markdown", file_stat(st)))
        assert list(by_stat) == list(by_key) == [DiscoveredFile(name, "markdown", file_stat(st))]


def test_a_file_gone_between_the_listing_and_its_stat_is_still_listed(tmp_path: Path):
    """Deleted after its directory was listed, before the walk's lstat of it: it
    is listed with no stat (the loader then says it is missing), and the walk goes
    on. The walk asks ``excluded`` of each entry between the two: there it goes."""
    from labnote_index.read.discover import discover

    (tmp_path / "docs").mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / "docs" / name).write_text("x\n")

    def deleting(rel: str) -> bool:
        if rel == "docs/b.md":
            (tmp_path / rel).unlink()
        return False

    found = {f.path: f.stat for f in discover(tmp_path, excluded=deleting)}
    assert list(found) == ["docs/a.md", "docs/b.md", "docs/c.md"]
    assert found["docs/b.md"] is None
    assert found["docs/a.md"] is not None and found["docs/c.md"] is not None


def test_rows_as_tuples_name_only_columns_the_table_has(tmp_path: Path):
    from labnote_index.index.inserts import Inserts
    from labnote_index.index.schema import create_tables

    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)
    with pytest.raises(ValueError, match="no column for \\['nope'\\]"):
        Inserts(db).insert_tuples("files", ("path", "nope"), [("a.md", 1)])
    assert db["files"].count == 0
    Inserts(db).insert_tuples("files", ("path", "kind"), [("a.md", "markdown")])
    assert [(r["path"], r["kind"], r["size"]) for r in db["files"].rows] == [
        ("a.md", "markdown", None)
    ]
    # A list is JSON text, unless the caller said its rows hold none: then it
    # fails to bind (a mistake of ours, seen), never stored as something else.
    Inserts(db).insert_tuples("files", ("path", "error"), [("b.md", ["x", 1])])
    assert db.execute("SELECT error FROM files WHERE path = 'b.md'").fetchone() == ('["x", 1]',)
    with pytest.raises(sqlite3.ProgrammingError):
        Inserts(db).insert_tuples("files", ("path", "error"), [("c.md", ["x"])], scalars=True)
    assert db["files"].count == 2


def _artifact_rows(root: Path, db_path: Path, items, sandbox=None, ask_git=True) -> dict[str, dict]:
    """The artifacts rows ArtifactWriter makes of ``items`` (path, walked) in a
    new index, by path; the change time aside (kept or not by the clock). Its
    Sandbox is new unless given: each directory is resolved as it is now, as
    refresh_artifacts has it (a walk's Sandbox holds what the walk entered)."""
    from labnote_index.index.files import ArtifactWriter
    from labnote_index.index.schema import create_tables
    from labnote_index.read.paths import Sandbox

    db = sqlite_utils.Database(db_path)
    create_tables(db)
    ArtifactWriter(sandbox or Sandbox(root), ask_git=ask_git).write(db, items, None)
    rows = db.execute("SELECT * FROM artifacts ORDER BY rowid").fetchall()
    columns = [c.name for c in db["artifacts"].columns]
    return {
        row[0]: {
            name: value for name, value in zip(columns, row, strict=True) if name != "ctime_ns"
        }
        for row in rows
    }


def _walked(db: sqlite_utils.Database) -> dict[str, tuple]:
    """What the walk stored of each regular file it listed (refresh_artifacts' join)."""
    return {
        path: tuple(rest)
        for path, *rest in db.execute(
            "SELECT path, size, mtime_ns, ctime_ns, inode FROM files WHERE regular_file = 1"
        )
    }


def _odd_artifacts(repo: Repo, outside: Path) -> list[str]:
    """Artifacts of every shape beside the sample's plain Markdown files: text
    the walk does not list, a symlink inside and one out, a hard link, a
    directory, a missing file, a git-ignored one and an unsafe path."""
    root = repo.root
    git(root, "init", "-q")
    repo.write(".gitignore", "secret/\n")
    repo.write("secret/notes.md", "hidden\n")
    repo.write("notes/plain.txt", "text\n")
    repo.write("notes/target.md", "target\n")
    (root / "notes/linked.md").symlink_to("target.md")
    (outside / "far.md").write_text("far\n")
    (root / "notes/out.md").symlink_to(outside / "far.md")
    repo.write("notes/twice.md", "two names\n")
    os.link(root / "notes/twice.md", root / "notes/twice-too.md")
    (root / "notes/dir.md").mkdir()
    odd = ["notes/plain.txt", "notes/linked.md", "notes/out.md", "notes/twice.md"]
    odd += ["notes/dir.md", "notes/gone.md", "secret/notes.md", "../up.md"]
    return odd


def test_an_artifact_the_walk_saw_takes_its_stat_and_makes_the_row_a_look_makes(
    sample_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A record's artifact the walk listed as a regular file takes the walk's
    stat (no second lstat): its row is the one an lstat of it makes, and so is
    every other artifact's, whatever its shape."""
    from labnote_index.index import files

    outside = tmp_path / "outside"
    outside.mkdir()
    paths = _odd_artifacts(sample_repo, outside)
    db = sample_repo.index()
    paths += [p for (p,) in db.execute("SELECT path FROM artifacts")]
    walked = _walked(db)
    assert sum(p in walked for p in paths) > 20 and "notes/twice.md" in walked
    looks: list[str] = []
    lstat_key = files.lstat_key
    monkeypatch.setattr(files, "lstat_key", lambda p: looks.append(p) or lstat_key(p))
    fast = _artifact_rows(
        sample_repo.root, tmp_path / "fast.db", [(p, walked.get(p)) for p in paths]
    )
    assert not any(str(look).endswith(tuple(walked)) for look in looks)  # none looked at again
    slow = _artifact_rows(sample_repo.root, tmp_path / "slow.db", [(p, None) for p in paths])
    assert fast == slow and len(fast) == len(set(paths))
    status = {path: row["status"] for path, row in fast.items()}
    assert status["secret/notes.md"] == "ignored" and status["notes/out.md"] == "escapes"
    assert status["notes/dir.md"] == "not_a_file" and status["notes/gone.md"] == "missing"
    assert status["../up.md"] == "unsafe" and status["notes/linked.md"] == "ok"
    twice = fast["notes/twice.md"]
    assert (twice["status"], twice["links"], twice["body"]) == ("ok", 2, None)
    assert twice["regular_file"] == 1 and twice["size"] == len("two names\n")
    # A build takes the walk's stat for every artifact the walk listed as a regular file.
    given: dict[str, object] = {}
    looked_at = files._looked_at

    def noting(sandbox, path, walked=None):
        given[path] = walked
        return looked_at(sandbox, path, walked)

    monkeypatch.setattr(files, "_looked_at", noting)
    sample_repo.edit(ARTIFACT_OF, path="notes/plain.txt")
    packet = "registry/packets/2026/20260905-claude-retention-followup.json"
    (sample_repo.root / "registry/packets/2026/linked.json").symlink_to(packet.rsplit("/")[-1])
    db = sample_repo.index(full=True)
    walked = _walked(db)
    assert packet in walked and "registry/packets/2026/linked.json" not in walked
    assert db["files"].get("registry/packets/2026/linked.json")["size"] is not None
    listed = [p for p in given if p in walked]
    assert all(given[p] == walked[p] for p in listed)
    assert given["notes/plain.txt"] is None and "notes/plain.txt" not in walked
    # The Markdown artifacts were read as the records were: taken from that read,
    # never looked at again (the fast and slow rows above are what a look makes).
    artifacts = {p for (p,) in db.execute("SELECT path FROM artifacts")}
    read_already = [p for p in walked if p in artifacts and p not in given]
    assert len(read_already) > 20 and all(p.endswith(".md") for p in read_already)


def test_a_file_that_changed_since_the_walk_is_looked_at_again(sample_repo: Repo, tmp_path: Path):
    """Between the walk and the artifacts' read, files the walk saw as regular
    files became a symlink inside, one out, one to a file git ignores, a FIFO,
    a directory, or went, or another file took one's name: each row is what a
    look at it now makes (git asked of the symlinks' targets once), never the
    walk's stat of what was there. So it is even where the walk's own word on
    the directories is kept: a file read through a directory swapped for a
    symlink out is not the one the walk saw (its inode), and is looked at again
    with its directory resolved afresh."""
    from labnote_index.read.discover import discover
    from labnote_index.read.paths import Sandbox

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.md").write_text("far\n")
    git(sample_repo.root, "init", "-q")
    sample_repo.write(".gitignore", "secret/\n")
    sample_repo.write("secret/notes.md", "hidden\n")
    sample_repo.write("notes/target.md", "target\n")
    db = sample_repo.index()
    walked = _walked(db)
    changed = [p for (p,) in db.execute("SELECT path FROM artifacts WHERE status = 'ok'")][:6]
    assert len(changed) == 6 and all(p in walked for p in changed)
    root = sample_repo.root
    walks = Sandbox(root)
    discover(root, walks.entered)  # what the walk entered, kept as a build keeps it
    replaced = [p for p in walked if p.startswith("responses/")][0]
    (root / "notes/new.md").write_text("a new file\n")
    (root / "notes/new.md").replace(root / replaced)  # another inode, the same name
    # A directory of artifacts made a symlink out: what lies below it is outside.
    swapped = [p for p in walked if p.startswith("notifications/closed/")]
    assert swapped and not set(swapped) & set(changed)
    shutil.copytree(root / "notifications/closed", outside / "closed")
    shutil.rmtree(root / "notifications/closed")
    (root / "notifications/closed").symlink_to(outside / "closed")
    for path in changed:
        (root / path).unlink()
    linked, out, secret, fifo, directory, gone = changed
    (root / linked).symlink_to(root / "notes/target.md")
    (root / out).symlink_to(outside / "far.md")
    (root / secret).symlink_to(root / "secret/notes.md")
    os.mkfifo(root / fifo)
    (root / directory).mkdir()
    items = [(p, walked[p]) for p in changed + swapped + [replaced]]
    fast = _artifact_rows(root, tmp_path / "fast.db", items)
    slow = [(p, None) for p in changed + swapped + [replaced]]
    assert fast == _artifact_rows(root, tmp_path / "slow.db", slow)
    # With the walk's word on the directories (git aside: asked of a path
    # beyond a symlink it cannot tell, and every path of the batch is then
    # taken as ignored, never read), the rows are the same.
    alone = _artifact_rows(root, tmp_path / "alone.db", items, ask_git=False)
    assert alone == _artifact_rows(root, tmp_path / "walks.db", items, walks, ask_git=False)
    assert all(alone[path]["status"] == "escapes" for path in swapped)
    assert alone[replaced] == fast[replaced]
    assert {path: (row["status"], row["regular_file"]) for path, row in fast.items()} == {
        linked: ("ok", 0),
        out: ("escapes", 0),
        secret: ("ignored", 0),
        fifo: ("not_a_file", 0),
        directory: ("not_a_file", 0),
        gone: ("missing", 0),
        **{path: ("escapes", 0) for path in swapped},
        replaced: ("ok", 1),
    }
    new = os.lstat(root / replaced)
    assert (fast[replaced]["inode"], fast[replaced]["size"]) == (new.st_ino, new.st_size)
    assert fast[replaced]["body"] == "a new file\n" and new.st_ino != walked[replaced][3]
    assert all(fast[path]["body"] is None for path in swapped)
    target = hashlib.sha256(b"target\n").hexdigest()
    assert fast[linked]["sha256"] == target and fast[linked]["body"] == "target\n"
    assert fast[gone]["size"] is None and fast[gone]["mtime_ns"] is None  # no stale stat
    assert fast[fifo]["size"] == 0 and fast[fifo]["inode"] == os.lstat(root / fifo).st_ino


def test_rows_of_a_table_are_queued_in_one_shape(tmp_path: Path):
    """Rows as tuples (the rows every record makes) and rows as dicts never mix
    in one table, nor tuples of two column lists: either would bind values to
    the wrong columns."""
    from labnote_index.index.inserts import Inserts
    from labnote_index.index.rows import JSON_COLUMNS, Rows
    from labnote_index.index.schema import create_tables

    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)
    rows = Rows()
    rows.add_values("record_json", JSON_COLUMNS, ("a.json", "{}"))
    with pytest.raises(ValueError, match="two column lists"):
        rows.add_values("record_json", ("file", "json"), ("b.json", "{}"))
    rows.add("record_json", {"file": "c.json", "json": "{}"})
    with pytest.raises(ValueError, match="as dicts and as tuples"):
        rows.flush(Inserts(db))
    rows = Rows()
    rows.add_values("record_json", JSON_COLUMNS, ("a.json", "{}"))
    rows.add_values("files", ("path", "kind"), ("a.json", "record"))
    assert rows.queued("record_json") == 1 and rows.count == 2
    rows.flush(Inserts(db))
    assert [r["file"] for r in db["record_json"].rows] == ["a.json"]
    assert rows.count == 0 and rows.queued("files") == 0


def test_a_list_among_a_tuples_values_is_stored_as_json(tmp_path: Path):
    from labnote_index.index.inserts import Inserts
    from labnote_index.index.schema import create_tables

    db = sqlite_utils.Database(tmp_path / "index.db")
    create_tables(db)
    Inserts(db).insert_tuples(
        "packets", ("file", "tags", "valid"), [("p.json", ["a", {"b": "é"}], True)]
    )
    assert db.execute("SELECT tags, valid FROM packets").fetchall() == [('["a", {"b": "é"}]', 1)]


_JSON_SCALARS = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())


@given(st.lists(st.one_of(st.text(), st.lists(_JSON_SCALARS, max_size=3), _JSON_SCALARS)))
@example(["tag-a", "tag-b"])
@example([])
@example(['"quoted" \\ back', "\u00e9\u2028\x00\x1f", "\ud800 lone"])
@example(["a", 1])
@example([["a"]])
def test_a_list_is_bound_as_the_json_encoder_writes_it(value: list):
    """A list of strings takes a shorter way to its JSON text than any other
    value: the text is the encoder's, whatever the strings hold."""
    from labnote_index.index.inserts import bindable

    expected = json.dumps(value, ensure_ascii=False)
    assert bindable(("p.json", value, None)) == ("p.json", expected, None)
    assert bindable((tuple(value),)) == (expected,)


@pytest.mark.parametrize("browsable", [True, False])
def test_each_record_types_table_is_indexed_on_its_id(repo: Repo, browsable: bool):
    """Checks look records up by ID in their type's table: the index is made
    once the rows are in (faster than kept up row by row), browsable or not."""
    from labnote_index.format.rules import RECORD_TYPES

    build_index(repo.root, repo.db_path, full=True, browsable=browsable)
    db = sqlite_utils.Database(repo.db_path)
    for rt in RECORD_TYPES.values():
        assert [rt.id_field] in [i.columns for i in db[rt.table].indexes], rt.table


def test_artifacts_taken_from_the_read_are_the_rows_a_second_read_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The Markdown artifacts a build read as it read the records are written from
    that read: the artifacts, files and links rows are those of a build that
    reads each artifact again (in runs and one by one; a link, a second name,
    a body too big to keep, files git ignores, a file that is no artifact)."""
    from labnote_index.index import files

    root = tmp_path / "repo"
    generate(root, packets=200, work_tree=True)
    answered = sorted((root / "messages/answered").glob("*.md"))
    answered[0].write_text("see [the plan](../../docs/plan.md) and [gone](nowhere.md)\n")
    os.link(answered[1], root / "second-name.md")
    answered[2].write_text("[big](x.md)\n" + "x" * files.MAX_ARTIFACT_BODY)
    (root / "docs/plan.md").write_text("[back](../messages/answered/x.md)\n")  # no artifact
    git(root, "rm", "-r", "-q", "--cached", "messages/open")
    (root / ".gitignore").write_text("messages/open/\n")

    def rows(name: str, again: bool) -> dict[str, list[tuple]]:
        if again:  # the read's rows thrown away: every artifact is read again
            monkeypatch.setattr(
                files, "_take_read", lambda db, _: db.execute("DROP TABLE markdown_reads")
            )
        build_index(root, tmp_path / name)
        monkeypatch.undo()
        db = sqlite_utils.Database(tmp_path / name)
        kept = {}
        for table in ("artifacts", "files", "markdown_links"):
            names = [c.name for c in db[table].columns if c.name not in ("id", "ctime_ns")]
            kept[table] = sorted(db.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall())
        return kept

    taken, read = rows("taken.db", again=False), rows("read.db", again=True)
    assert taken == read
    artifacts = {row[0]: row for row in taken["artifacts"]}  # path, dir, status, ..., links, body
    statuses = [row[2] for row in artifacts.values()]
    assert statuses.count("ignored") >= 100 and statuses.count("ok") > 500
    name = lambda path: str(path.relative_to(root))  # noqa: E731
    assert artifacts[name(answered[1])][-3:-1] == (2, None)  # links, body: a second name
    assert artifacts[name(answered[2])][-2] is None  # too big to keep, hashed
    linked = {(row[0], row[-1]) for row in taken["markdown_links"]}  # source, target
    assert (name(answered[0]), "docs/plan.md") in linked and (name(answered[2]), None) not in linked
    assert ("docs/plan.md", "messages/answered/x.md") in linked
    assert not any(source == name(answered[1]) for source, _ in linked)


@pytest.mark.parametrize("swapped", ["after the walk", "after the read"])
def test_a_directory_swapped_for_a_symlink_out_after_the_walk_is_not_read_through(
    sample_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
):
    """A build's walk enters a directory of artifacts; then, before the files
    are read or once they are (before the artifacts are written), the directory
    becomes a symlink to a copy outside holding a secret, and a Markdown file
    elsewhere a symlink to another. The artifacts are resolved afresh: each is
    said to escape. No Markdown file is read through either (its links are the
    secret's): swapped before the read, each is told as changed while read;
    after it, each is what was read inside. Nothing outside is stored."""
    from labnote_index.index import build

    root, outside = sample_repo.root, tmp_path / "outside"
    # A text artifact too, which the walk does not list: it is looked at by lstat.
    sample_repo.write("notifications/closed/notes.txt", "inside\n")
    sample_repo.edit(ARTIFACT_OF, path="notifications/closed/notes.txt")
    sample_repo.write("notifications/closed/extra.md", "no artifact: [a](b.md)\n")
    sample_repo.write("docs/guide.md", "[a](b.md)\n")
    shutil.copytree(root / "notifications/closed", outside / "closed")
    for copy in (outside / "closed").iterdir():
        copy.write_text("c2VjcmV0 outside [x](c2VjcmV0.md)\n")
    (outside / "guide.md").write_text("[x](c2VjcmV0-guide.md)\n")
    refresh, walk = build.refresh_artifacts, build.discover

    def swap() -> None:
        shutil.rmtree(root / "notifications/closed")
        (root / "notifications/closed").symlink_to(outside / "closed")
        (root / "docs/guide.md").unlink()
        (root / "docs/guide.md").symlink_to(outside / "guide.md")

    def walking(*args):
        found = walk(*args)
        swap()
        return found

    def swapping(db, sandbox, *args):
        swap()
        return refresh(db, sandbox, *args)

    if swapped == "after the walk":
        monkeypatch.setattr(build, "discover", walking)
    else:
        monkeypatch.setattr(build, "refresh_artifacts", swapping)
    db = sample_repo.index(full=True)
    rows = [r for r in db["artifacts"].rows if r["path"].startswith("notifications/closed/")]
    assert len(rows) == 3 and {r["status"] for r in rows} == {"escapes"}
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)
    for path, text in (
        ("notifications/closed/extra.md", "no artifact: [a](b.md)\n"),
        ("docs/guide.md", "[a](b.md)\n"),
    ):
        row = db["files"].get(path)
        if swapped == "after the walk":
            assert "changed as it was read" in row["error"] and row["sha256"] is None, path
        else:
            inside = hashlib.sha256(text.encode()).hexdigest()
            assert row["error"] is None and row["sha256"] == inside, path
    linked = {r["source_file"] for r in db["markdown_links"].rows}
    assert ("docs/guide.md" in linked) == (swapped == "after the read")
    monkeypatch.setattr(build, "discover", walk)
    # Left as they are, both are read as ever the next time (the link checked).
    shutil.rmtree(outside)
    (root / "notifications/closed").unlink()
    shutil.copytree(SAMPLE_REPO / "notifications/closed", root / "notifications/closed")
    sample_repo.write("notifications/closed/extra.md", "no artifact: [a](b.md)\n")
    (root / "docs/guide.md").unlink()
    sample_repo.write("docs/guide.md", "[a](b.md)\n")
    monkeypatch.setattr(build, "refresh_artifacts", refresh)
    db = sample_repo.index(full=True)
    linked = {r["source_file"] for r in db["markdown_links"].rows if r["target"] == "docs/b.md"}
    assert "docs/guide.md" in linked and db["files"].get("docs/guide.md")["error"] is None


def test_the_packaged_schema_is_what_sqlite_utils_makes_of_the_definitions():
    """create_tables runs schema.sql: it must be the statements sqlite-utils
    makes of define_tables today (after any change to them, `make schema`)."""
    from labnote_index.index.schema import SCHEMA_SCRIPT, schema_script

    assert SCHEMA_SCRIPT.read_text(encoding="utf-8") == schema_script(), "run `make schema`"


def test_the_tables_made_from_the_script_are_the_ones_sqlite_utils_makes(tmp_path: Path):
    """The script leaves out nothing sqlite-utils makes: the same tables,
    indexes and keys, in the same order (the order Datasette lists them in),
    and the same rows in the format tables."""
    from labnote_index.index.schema import create_tables, define_tables

    made = []
    for name, create in (("script", create_tables), ("sqlite-utils", define_tables)):
        db = sqlite_utils.Database(tmp_path / f"{name}.db")
        create(db)
        master = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")
        made.append(
            (
                master.fetchall(),
                {t: list(db.execute(f"SELECT * FROM [{t}]")) for t in db.table_names()},
            )
        )
    script, by_sqlite_utils = made
    assert script == by_sqlite_utils
    assert len(script[0]) > 40 and script[1]["record_types"]
