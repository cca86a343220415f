"""An incremental build gives the same database as a full rebuild.

Tests of: ``index/build.py``, ``index/sql_views.py``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index.api import build as build_index
from labnote_index.cli import cli
from labnote_index.index.sql_views import FTS_COLUMNS
from labnote_index.read.paths import RACY_NS

from .helpers import Repo, content, git


def assert_same_as_full(repo: Repo, tmp_path: Path) -> None:
    incremental = repo.index()
    full_path = tmp_path / "full.db"
    build_index(repo.root, full_path, full=True)
    full = sqlite_utils.Database(full_path)
    assert content(incremental) == content(full)
    for table in FTS_COLUMNS:  # the full-text indexes still match their tables
        incremental.execute(f"INSERT INTO [{table}_fts]([{table}_fts]) VALUES ('integrity-check')")


def test_incremental_equals_full_after_adds_edits_moves_and_deletes(repo: Repo, tmp_path: Path):
    first = build_index(repo.root, repo.db_path)
    assert not first.incremental
    # added: a packet with its artifact, and a broken file
    packet = repo.first("registry/packets/*/*.json")
    data = repo.load(packet)
    data.update(packet_id="20250301-codex-added", path="datadrops/2025/added.md", tags=["perf"])
    repo.save("registry/packets/2025/20250301-codex-added.json", data)
    repo.write("datadrops/2025/added.md", "# Added\n\nfresh words\n")
    repo.write("registry/packets/2025/20250301-broken.json", "{")
    # edited: a response's status, and an artifact body alone
    response = repo.first("registry/responses/*/*.json")
    repo.edit(response, status="archived")
    artifact = repo.load(repo.files("registry/packets/*/*.json")[1])["path"]
    repo.write(artifact, "# Rewritten body\n")
    # moved: an answered message closed into its new bucket, artifact too
    message = repo.first("registry/messages/answered/*.json")
    old_path = repo.load(message)["path"]
    new_path = old_path.replace("/answered/", "/closed/")
    repo.move(old_path, new_path)
    moved = repo.move(message, message.replace("/answered/", "/closed/"))
    repo.edit(moved, status="closed", path=new_path)
    # deleted: a notification, and a tag records still use
    (repo.root / repo.first("registry/notifications/*/*.json")).unlink()
    (repo.root / "registry/tags/proposed/perf.json").unlink()
    # a locked handoff document edited: drift
    repo.write("docs/workflow/roles/architect/reports/milestone-1/packet-v001/report.md", "x\n")

    second = build_index(repo.root, repo.db_path)
    assert second.incremental
    # added packet, broken file, edited response, moved message, and four Markdown
    # files (for their links): the added and rewritten artifacts, the moved
    # message's artifact, the packet's report
    assert second.reread == 8
    assert (
        second.removed == 4
    )  # the notification, the tag, the message's old path, and the moved artifact
    assert_same_as_full(repo, tmp_path)
    checks = {f["check"] for f in sqlite_utils.Database(repo.db_path)["findings"].rows}
    assert {"file_unreadable", "tag_unresolved", "handoff_lock_drift"} <= checks


def test_nothing_changed_reads_nothing(repo: Repo, tmp_path: Path):
    build_index(repo.root, repo.db_path)
    again = build_index(repo.root, repo.db_path)
    assert again.incremental and again.reread == 0 and again.removed == 0
    assert_same_as_full(repo, tmp_path)


def test_handoff_changes_incrementally(repo: Repo, tmp_path: Path):
    build_index(repo.root, repo.db_path)
    manifest = (
        "docs/workflow/roles/product-prd/reports/milestone-1/packet-v001/handoff.manifest.json"
    )
    data = repo.load(manifest)
    data["input_packets"][0]["manifest"] = "docs/nowhere/handoff.manifest.json"
    repo.save(manifest, data)
    (
        repo.root / "docs/workflow/roles/researcher/reports/milestone-1/packet-v001/report.md"
    ).unlink()
    assert_same_as_full(repo, tmp_path)


def test_other_settings_mean_a_full_build(repo: Repo):
    build_index(repo.root, repo.db_path)
    assert not build_index(repo.root, repo.db_path, enforce_layout=True).incremental
    assert build_index(repo.root, repo.db_path, enforce_layout=True).incremental
    assert not build_index(repo.root, repo.db_path, full=True).incremental


def test_cli_full_flag_and_summary(repo: Repo):
    runner = CliRunner()
    first = runner.invoke(cli, ["build", str(repo.root), "--db", str(repo.db_path)])
    assert "incremental" not in first.stderr
    again = runner.invoke(cli, ["build", str(repo.root), "--db", str(repo.db_path)])
    assert "(incremental: 0 files read again, 0 removed)" in again.stderr
    full = runner.invoke(cli, ["build", str(repo.root), "--db", str(repo.db_path), "--full"])
    assert full.exit_code == 0 and "incremental" not in full.stderr


def _damage(db_path: Path) -> None:
    """One page of garbage, in the files table (which every build reads)."""
    with sqlite3.connect(db_path) as conn:
        pages = [n for (n,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'files'")]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db_path.read_bytes())
    middle = (pages[len(pages) // 2] - 1) * page
    data[middle : middle + page] = b"\xff" * page
    db_path.write_bytes(bytes(data))


def test_a_damaged_index_is_rebuilt_in_full(repo: Repo, tmp_path: Path):
    repo.index()
    _damage(repo.db_path)
    repo.edit(repo.first("registry/packets/*/*.json"), notes="edited")
    result = build_index(repo.root, repo.db_path)
    assert not result.incremental and result.rebuilt_because
    assert "damaged" in result.rebuilt_because and result.records["packet"] == 12
    build_index(repo.root, tmp_path / "full.db", full=True)
    assert content(sqlite_utils.Database(repo.db_path)) == content(
        sqlite_utils.Database(tmp_path / "full.db")
    )


def test_check_says_when_its_index_was_rebuilt_in_full(repo: Repo):
    """check --db tells (on stderr) what build tells: the index was damaged and
    was rebuilt; its findings are those of the whole repository."""
    args = ["check", str(repo.root), "--db", str(repo.db_path), "--format", "json"]
    first = CliRunner().invoke(cli, args)
    assert "note:" not in first.stderr
    _damage(repo.db_path)
    again = CliRunner().invoke(cli, args)
    assert "note: the index was damaged" in again.stderr and "rebuilt in full" in again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)


def written(db_path: Path) -> tuple[int, int]:
    st = db_path.stat()
    return st.st_ino, st.st_mtime_ns


def test_an_unchanged_repository_leaves_the_index_as_it_is(repo: Repo, tmp_path: Path):
    packet = "docs/workflow/roles/architect/reports/milestone-1/packet-v001"
    (repo.root / packet / "linked.md").symlink_to("report.md")  # an error row, every build
    build_index(repo.root, repo.db_path)
    before = written(repo.db_path)
    again = build_index(repo.root, repo.db_path)
    assert again.incremental and again.reread == 0
    assert written(repo.db_path) == before  # not copied, checked or replaced
    assert again.files == build_index(repo.root, tmp_path / "full.db", full=True).files

    # Anything the index holds changing means a build: an artifact alone...
    artifact = repo.load(repo.first("registry/packets/*/*.json"))["path"]
    repo.write(artifact, "# Rewritten body\n")
    build_index(repo.root, repo.db_path)
    assert written(repo.db_path) != before
    assert_same_as_full(repo, tmp_path)
    # ... a file in a handoff packet alone ...
    before = written(repo.db_path)
    repo.write(f"{packet}/report.md", "edited after the lock\n")
    build_index(repo.root, repo.db_path)
    assert written(repo.db_path) != before
    assert_same_as_full(repo, tmp_path)
    # ... or other checks: an index is never left with findings of checks it no longer has.
    from labnote_index.checks.catalogue import run_checks
    from labnote_index.index.build import build_index as build_with

    before = written(repo.db_path)
    build_with(repo.root, repo.db_path, check=run_checks, check_fingerprint="other checks")
    assert written(repo.db_path) != before


def test_an_index_built_without_checks_counts_its_files_and_no_findings(repo: Repo, tmp_path: Path):
    """The index layer builds without the check catalogue when given none: its
    result counts the files and records, and no findings (there is no findings
    table to count), built and then found unchanged alike."""
    from labnote_index.index.build import build_index as build_with

    db_path = tmp_path / "unchecked.db"
    for _ in range(2):  # built, then unchanged (nothing rewritten)
        result = build_with(repo.root, db_path)
        assert "findings" not in sqlite_utils.Database(db_path).table_names()
        assert result.files == sqlite_utils.Database(db_path).table("files").count > 0
        assert sum(result.records.values()) > 0
        assert result.findings == {} and result.files_with_findings == 0


def test_builds_import_only_what_they_use(repo: Repo):
    """A build never imports the web side; one that finds nothing changed not
    even pydantic (its models are for reading files)."""
    import subprocess
    import sys

    code = (
        "import sys; from labnote_index.cli import cli; "
        "sys.argv = ['labnote-index', 'build', sys.argv[1], '--db', sys.argv[2]]\n"
        "try: cli()\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('datasette', 'pydantic', 'uvicorn', 'jinja2')))"
    )
    loaded = []
    for _ in range(2):  # a full build, then one with nothing to do
        run = subprocess.run(
            [sys.executable, "-c", code, str(repo.root), str(repo.db_path)],
            capture_output=True,
            text=True,
            check=True,
        )
        loaded.append(run.stdout.strip())
    full, nothing_to_do = loaded
    assert "datasette" not in full and "uvicorn" not in full and "pydantic" in full
    assert nothing_to_do == "[]"


# Run as a build in a process of its own: each git_state call (a full build's,
# in a thread of the pool, then an incremental one's, in this process's only
# thread) says as it returns whether the module reading needs is imported.
_WHILE_GIT = """
import sys, threading
from labnote_index.index import build
asked, jobs = build.git_state, sys.argv[3]
def git_state(*args):
    found = asked(*args)
    if threading.current_thread() is threading.main_thread():
        loaded = hasattr(sys.modules.get("labnote_index.index.rows"), "FileLoader")
        print("imported" if loaded else "not-imported", threading.active_count())
    return found
build.git_state = git_state
from labnote_index.cli import cli
sys.argv = ["labnote-index", "build", sys.argv[1], "--db", sys.argv[2], "--jobs", jobs]
try:
    cli()
except SystemExit:
    pass
print("pydantic" in sys.modules)
"""


@pytest.mark.parametrize("edit", [False, True], ids=["unchanged", "one-edit"])
def test_a_build_in_a_work_tree_imports_the_record_models_only_to_read(repo: Repo, edit: bool):
    """An incremental build in a work tree asks git what changed first. With
    ``--jobs 1`` nothing is imported as git works (no thread): a build that finds
    nothing changed imports neither pydantic nor the record models, one that
    reads a file imports them then. (With a core to spare they are imported as
    git works, when it is still working: test_changed.py and test_api.py, the
    tests of the wait and of imported_meanwhile.)"""
    import subprocess
    import sys

    git(repo.root, "init", "-q")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-qm", "all")
    args = [sys.executable, "-c", _WHILE_GIT, str(repo.root), str(repo.db_path), "1"]
    subprocess.run(args, capture_output=True, check=True)  # the full build
    if edit:
        packet = repo.root / repo.first("registry/packets/*/*.json")
        packet.write_text(packet.read_text() + "\n")  # another size: read again
    said = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    assert said == ["not-imported", "1", "True" if edit else "False"]


@pytest.mark.parametrize("racy", [False, True], ids=["by-change-time", "racily-clean"])
def test_an_edit_keeping_size_and_modification_time_is_read_again(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, racy: bool
):
    """Same length, modification time put back (touch -r): the change time and
    inode tell (by-change-time); a file read within the timestamp granularity
    of its last change is compared by content (racily-clean, git's rule)."""
    from labnote_index.read import paths

    if not racy:
        monkeypatch.setattr(paths, "RACY_NS", 0)  # every change time is kept
    packet = repo.first("registry/packets/*/*.json")
    build_index(repo.root, repo.db_path)
    stored = sqlite_utils.Database(repo.db_path)["files"].get(packet)
    assert (stored["ctime_ns"] is None) == racy
    path = repo.root / packet
    before = path.stat()
    text = path.read_text()
    status = json.loads(text)["status"]
    edited = text.replace(f'"status": "{status}"', f'"status": "{"x" * len(status)}"')
    assert len(edited) == len(text) and edited != text
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # touch -r
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    again = build_index(repo.root, repo.db_path)
    assert again.incremental and again.reread == 1
    full = build_index(repo.root, tmp_path / "full.db", full=True)
    assert again.findings == full.findings and sum(full.findings.values()) >= 1


def test_a_new_copy_of_an_id_that_sorts_first_is_resolved_to_on_an_incremental_build(
    sample_repo: Repo, tmp_path: Path
):
    """Of duplicates, a reference resolves to the first file in path order; a copy
    added where it sorts first takes the references over on an incremental build
    too, though no citing file changed."""
    packet = "registry/packets/2026/20260903-maria-ops-retention-question.json"
    sample_repo.index().close()
    copy = "registry/packets/2025/20260903-maria-ops-retention-question.json"
    sample_repo.save(copy, sample_repo.load(packet))
    assert_same_as_full(sample_repo, tmp_path)
    db = sqlite_utils.Database(sample_repo.db_path)
    cited = {
        r["target_file"]
        for r in db.query("SELECT * FROM refs WHERE target_id = ?", [packet.rsplit("/", 1)[1][:-5]])
    }
    assert cited == {copy}


def test_a_symlinked_artifact_is_followed_again_on_every_build(sample_repo: Repo, tmp_path: Path):
    """The link itself is unchanged when what it leads to (a file the walk does not
    list) goes: an incremental build still finds the artifact missing, as a full
    build does."""
    packet = "registry/packets/2026/20260903-maria-ops-retention-question.json"
    link = "../notes/real.txt"
    # As long as the link's own text: the sizes the row keeps and lstat gives agree.
    sample_repo.write("notes/real.txt", "x" * (len(link) - 1) + "\n")
    (sample_repo.root / "datadrops" / "linked.md").symlink_to(link)
    sample_repo.edit(packet, path="datadrops/linked.md")
    # Older than the racy window (paths.RACY_NS): the link's stat alone would say
    # "unchanged", and no content hash would catch what it leads to.
    time.sleep(RACY_NS / 1e9 + 0.2)

    def broken() -> list[str]:
        rows = sample_repo.index()["findings"].rows_where("[check] = 'artifact_path'")
        return [f["file"] for f in rows if f["file"] == packet]

    assert broken() == []
    (sample_repo.root / "notes/real.txt").unlink()
    assert broken() == [packet]
    assert_same_as_full(sample_repo, tmp_path)


def test_record_scoped_checks_look_again_only_at_what_changed(repo: Repo, tmp_path: Path):
    """A record-scoped finding appears with its edit, stays while other files
    change, and goes with its repair: after each incremental build, the findings
    are those of a full build."""
    from labnote_index.checks.catalogue import load_checks

    scoped = {c.id for c in load_checks() if c.scope == "record"}
    assert {"location_id_date", "schema_type", "stray_file"} <= scoped
    assert "reference_unresolved" not in scoped and "duplicate_id" not in scoped
    repo.index().close()
    first, second = repo.files("registry/packets/*/*.json")[:2]
    original = repo.load(first)

    def dated() -> list[str]:
        """Build (incrementally), then the files location_id_date finds."""
        rows = repo.index()["findings"].rows
        return sorted(f["file"] for f in rows if f["check"] == "location_id_date")

    repo.edit(first, created_at="1999-01-01T00:00:00Z")
    assert dated() == [first]
    assert_same_as_full(repo, tmp_path)
    repo.edit(second, created_at="1999-01-02T00:00:00Z")
    repo.write("registry/stray.txt", "not a record\n")
    assert dated() == sorted([first, second])  # the first one's finding is kept
    assert_same_as_full(repo, tmp_path)
    repo.save(first, original)
    (repo.root / "registry/stray.txt").unlink()
    assert dated() == [second]
    assert_same_as_full(repo, tmp_path)


def _scans(conn: sqlite3.Connection, sql: str) -> list[str]:
    """The steps of ``sql``'s plan that read a whole table, row by row."""
    plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    return [step for step in plan if step.startswith("SCAN") and "INDEX" not in step]


def test_the_few_rows_every_build_looks_for_are_searched_not_scanned(repo: Repo):
    # An incremental build after one edit runs these on every row's table: each
    # is a search of schema.PARTIAL_INDEXES (a handful of rows), never a scan
    # of the 44,000 Markdown files, records or artifacts of the benchmark.
    from labnote_index.checks.catalogue import load_checks
    from labnote_index.index import markdown_files
    from labnote_index.index.files import NOT_REGULAR

    build_index(repo.root, repo.db_path)
    checks = {check.id: check.sql for check in load_checks()}
    statements = [checks[name] for name in ("file_unreadable", "reference_unreadable")]
    statements.append(checks["artifact_hard_link"])
    statements += [
        markdown_files.UNHASHED_TO_READ,
        markdown_files.UNHASHED_READ_ALREADY,
        markdown_files.UNHASHED_HASHED_ALREADY,
        f"SELECT path FROM artifacts WHERE {NOT_REGULAR}",
        f"SELECT path FROM link_targets WHERE {NOT_REGULAR}",
    ]
    conn = sqlite3.connect(repo.db_path)
    for sql in statements:
        assert _scans(conn, sql) == [], sql
    for sql in statements[3:6]:  # from the few files, not from every artifact read whole
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
        first = next(step for step in plan if step.startswith(("SCAN", "SEARCH")))
        assert first.startswith("SEARCH f USING INDEX idx_files_unhashed"), plan
    # The indexes hold the few: none, once a clean build is done.
    for name in ("idx_files_unhashed", "idx_files_error", "idx_artifacts_irregular"):
        table = conn.execute("SELECT tbl_name FROM sqlite_master WHERE name = ?", [name])
        where = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [name]).fetchone()[0]
        rows = conn.execute(
            f"SELECT count(*) FROM {table.fetchone()[0]} WHERE {where.split(' WHERE ')[1]}"
        )
        assert rows.fetchone()[0] == 0, name
    conn.close()


def _found(db: sqlite_utils.Database, check: str) -> set[str]:
    return {row[0] for row in db.execute("SELECT file FROM findings WHERE [check] = ?", [check])}


def _checked_again(repo: Repo, tmp_path: Path) -> sqlite_utils.Database:
    """An incremental build's index, shown to be a full build's (findings too)."""
    assert_same_as_full(repo, tmp_path)
    return sqlite_utils.Database(repo.db_path)


def test_a_linked_checks_finding_follows_an_edit_of_the_record_at_the_other_end(
    repo: Repo, tmp_path: Path
):
    """A linked check's finding is on one record and made by another: each edit
    here is of the record at the other end of a reference (or of a copy of its
    ID, which references then resolve to), and the finding appears on, then
    leaves, the record that was not read again, as a full build has it."""
    db = repo.index()
    refs = "SELECT source_file, target_file FROM refs WHERE field = ? AND target_file IS NOT NULL"
    answered = (
        "SELECT x.source_file, x.target_file FROM refs x JOIN records p ON p.file = x.target_file "
        "WHERE x.field = 'source_packet_id' AND p.status = 'answered'"
    )
    response, packet = db.execute(answered).fetchone()
    asker, answer = db.execute(refs, ["response_message_id"]).fetchone()
    questioned, answered_by = db.execute(refs, ["response_packet_id"]).fetchone()
    kept = {path: (repo.root / path).read_bytes() for path in (packet, answer, answered_by)}

    def restored(path: str) -> None:
        repo.write(path, kept[path])

    # causal_order: the packet now created after the response that answers it.
    repo.edit(packet, created_at="2099-01-01T00:00:00Z", updated_at="2099-01-01T00:00:00Z")
    assert response in _found(_checked_again(repo, tmp_path), "causal_order")
    restored(packet)
    assert response not in _found(_checked_again(repo, tmp_path), "causal_order")
    # reply_not_reciprocal: the answer no longer replies to the message naming it.
    repo.edit(answer, reply_to=None)
    assert asker in _found(_checked_again(repo, tmp_path), "reply_not_reciprocal")
    restored(answer)
    assert asker not in _found(_checked_again(repo, tmp_path), "reply_not_reciprocal")
    # response_link_mismatch: the response now answers another packet.
    other = repo.load(packet)["packet_id"] if packet != questioned else None
    repo.edit(answered_by, source_packet_id=other or "PKT-elsewhere")
    assert questioned in _found(_checked_again(repo, tmp_path), "response_link_mismatch")
    restored(answered_by)
    assert questioned not in _found(_checked_again(repo, tmp_path), "response_link_mismatch")
    # answered_without_response: its response removed, then back.
    gone = (repo.root / response).read_bytes()
    (repo.root / response).unlink()
    assert packet in _found(_checked_again(repo, tmp_path), "answered_without_response")
    repo.write(response, gone)
    assert packet not in _found(_checked_again(repo, tmp_path), "answered_without_response")
    # Links one way only: a notification names the message it relays, ...
    notification, message = db.execute(refs, ["message_id"]).fetchone()
    relayed = (repo.root / message).read_bytes()
    repo.edit(message, created_at="2099-01-01T00:00:00Z")
    assert notification in _found(_checked_again(repo, tmp_path), "causal_order")
    repo.write(message, relayed)
    assert notification not in _found(_checked_again(repo, tmp_path), "causal_order")
    # ... and a packet whose response_packet_id is gone is named by its response alone.
    repo.edit(packet, response_packet_id=None)
    _checked_again(repo, tmp_path)
    (repo.root / response).unlink()
    assert packet in _found(_checked_again(repo, tmp_path), "answered_without_response")
    repo.write(response, gone)
    restored(packet)
    assert packet not in _found(_checked_again(repo, tmp_path), "answered_without_response")
    # A copy of the packet's ID, first in path order, takes its response from it.
    folder, name = packet.rsplit("/", 1)
    copy = repo.save_copy(packet, f"{folder}/0{name}")
    repo.edit(copy, status="in_review")
    db = _checked_again(repo, tmp_path)
    assert packet in _found(db, "answered_without_response")
    assert {packet, copy} <= _found(db, "duplicate_id")
    (repo.root / copy).unlink()
    assert packet not in _found(_checked_again(repo, tmp_path), "answered_without_response")
