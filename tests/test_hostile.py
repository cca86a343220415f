"""The adversarial suite: repositories written carelessly or with intent to harm.

Each case is a promise of the README: a bad file becomes a finding naming it,
every other record is still indexed, nothing outside the repository is read or
written, and exit codes mean what they say.

Tests of: ``read/paths.py``, ``read/parse.py``, ``index/index_file.py``,
``index/tempfiles.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index import api
from labnote_index.api import build as build_index
from labnote_index.cli import cli
from labnote_index.read.parse import MAX_JSON_DEPTH

from .helpers import (
    ROOT,
    SAMPLE_REPO,
    Calls,
    Repo,
    cli_as,
    fetch,
    findings_of,
    git,
    open_copy,
    run_diff,
    signals_as_usual,
)

LATE_REPLY = "registry/messages/open/20260912-gemini-late-reply.json"
PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"
ARCHITECT = "docs/workflow/roles/architect/reports/retention-policy/packet-v001"


def errors_by_file(db: sqlite_utils.Database, check: str) -> dict[str, str]:
    return {f["file"]: f["message"] for f in findings_of(db) if f["check"] == check}


# ---- files that cannot be read, or change while read


def test_unreadable_files_of_every_kind_are_findings_not_a_failed_build(unprivileged):
    work, as_nobody = unprivileged
    root = open_copy(SAMPLE_REPO, work / "repo")
    artifact = json.loads((root / PACKET).read_text())["path"]
    manifest = f"{ARCHITECT}/handoff.manifest.json"
    for rel in (LATE_REPLY, artifact, manifest, f"{ARCHITECT}/decisions.md"):
        (root / rel).chmod(0)
    (root / ARCHITECT / "notes").mkdir()
    (root / ARCHITECT / "notes").chmod(0)
    done = cli_as(as_nobody, "check", root, "--db", work / "index.db", "--format", "json")
    assert "cannot write the index" not in done.stderr and "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr  # findings, not a failed build (2)
    found = json.loads(done.stdout)
    unreadable = {f["file"]: f["message"] for f in found if f["check"] == "file_unreadable"}
    assert "permission denied" in unreadable[LATE_REPLY]
    assert "permission denied" in unreadable[manifest]
    assert "permission denied" in unreadable[f"{ARCHITECT}/decisions.md"]
    assert "could not be listed" in unreadable[f"{ARCHITECT}/notes"]
    artifact_findings = [f for f in found if f["check"] == "artifact_path" and f["file"] == PACKET]
    assert "cannot be read" in artifact_findings[0]["message"]
    db = sqlite_utils.Database(work / "index.db")
    assert db["records"].count_where("NOT unreadable") == 43  # all but the unreadable one


def test_a_file_that_vanishes_between_listing_and_reading_is_reported_missing(sample_repo: Repo):
    doomed = sample_repo.root / LATE_REPLY

    def remove_it(_: int) -> None:  # the build calls this after each file it reads
        doomed.unlink(missing_ok=True)

    result = build_index(sample_repo.root, sample_repo.db_path, progress=Calls(remove_it), jobs=1)
    db = sqlite_utils.Database(sample_repo.db_path)
    assert (
        "is missing: it was listed, then renamed or deleted"
        in (db["files"].get(LATE_REPLY)["error"])
    )
    assert result.records["packet"] == 10  # the rest is indexed


# ---- symlinks and special paths


def test_registry_symlinked_inside_the_repository_is_followed(sample_repo: Repo):
    root = sample_repo.root
    (root / "registry").rename(root / "data")
    (root / "registry").symlink_to("data")
    db = sample_repo.index()
    assert db["records"].count == 44
    assert db["files"].get(PACKET)["error"] is None


def test_registry_symlinked_outside_is_reported_never_read(sample_repo: Repo, tmp_path: Path):
    root = sample_repo.root
    (root / "registry").rename(tmp_path / "elsewhere")
    (root / "registry").symlink_to(tmp_path / "elsewhere")
    db = sample_repo.index()
    assert db["records"].count == 0
    message = errors_by_file(db, "file_unreadable")["registry"]
    assert "registry/ is a symlink" in message and "none of its records were read" in message


def test_symlinks_and_fifos_in_packets_and_symlinked_packets_are_reported(sample_repo: Repo):
    root = sample_repo.root
    packet = root / ARCHITECT
    (packet / "link.md").symlink_to("/etc/hostname")
    os.mkfifo(packet / "pipe")
    reports = root / "docs/workflow/roles/architect/reports/retention-policy"
    (reports / "packet-v002").symlink_to("packet-v001")
    db = sample_repo.index()  # a FIFO is never opened: this would hang
    unreadable = errors_by_file(db, "file_unreadable")
    assert "a symlink (to /etc/hostname)" in unreadable[f"{ARCHITECT}/link.md"]
    assert "not a regular file" in unreadable[f"{ARCHITECT}/pipe"]
    link = "docs/workflow/roles/architect/reports/retention-policy/packet-v002"
    assert "a symlink to a directory" in unreadable[link]


def test_hard_linked_artifact_is_hashed_never_stored(sample_repo: Repo, tmp_path: Path):
    secret = tmp_path / "secret.md"
    secret.write_text("password=hunter2\n")
    artifact = sample_repo.root / sample_repo.load(PACKET)["path"]
    artifact.unlink()
    artifact.hardlink_to(secret)
    db = sample_repo.index()
    row = db["artifacts"].get(sample_repo.load(PACKET)["path"])
    assert row["body"] is None and row["links"] == 2 and row["sha256"]
    assert list(db.query("SELECT * FROM artifacts_fts WHERE artifacts_fts MATCH 'hunter2'")) == []
    assert PACKET in errors_by_file(db, "artifact_hard_link")


# ---- depth and size


@pytest.mark.parametrize(
    "payload",
    [
        "[" * 600 + "99999999999999999999999" + "]" * 600,
        "[" * 330 + '"\\ud800"' + "]" * 330,
        "[" * 5000 + "]" * 5000,
    ],
    ids=["big-integer-600-deep", "surrogate-330-deep", "5000-deep"],
)
def test_deeply_nested_record_is_refused_with_a_finding(sample_repo: Repo, payload: str):
    data = sample_repo.load(PACKET)
    text = json.dumps(data)[:-1] + f', "notes_deep": {payload}}}'
    sample_repo.write(PACKET, text)
    db = sample_repo.index()
    assert (
        f"nested more than {MAX_JSON_DEPTH} levels" in errors_by_file(db, "file_unreadable")[PACKET]
    )
    assert db["records"].count_where("NOT unreadable") == 43


def test_deep_tags_with_committed_views_do_not_crash(sample_repo: Repo):
    deep = "[" * 400 + '"x"' + "]" * 400
    text = json.dumps(sample_repo.load(PACKET))[:-1] + f', "tags": {deep}}}'
    sample_repo.write(PACKET, text)
    db = sample_repo.index()  # sample_repo commits its views: they are rendered
    assert PACKET in errors_by_file(db, "file_unreadable")


def test_files_outside_the_repository_are_never_touched(sample_repo: Repo, tmp_path: Path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    before = outside.stat()
    (sample_repo.root / "registry/packets/2026/leak.json").symlink_to(outside)
    sample_repo.index()
    after = outside.stat()
    assert (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
    assert shutil.disk_usage(tmp_path)  # the directory is still there


# ---- the index file


def not_indexes(tmp_path: Path, sample_repo: Repo) -> dict[str, Path]:
    """Paths that are something other than a labnote index."""
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    foreign = tmp_path / "foreign.db"
    sqlite_utils.Database(foreign)["t"].insert({"x": 1})
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.db"
    link.symlink_to(text)
    found = {
        "text": text,
        "record": sample_repo.root / PACKET,
        "foreign": foreign,
        "fifo": fifo,
        "symlink": link,
    }
    if os.geteuid() == 0:  # a device node of our own, never the machine's /dev/null
        device = tmp_path / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        found["device"] = device
    return found


def fingerprint(path: Path) -> tuple:
    st = os.lstat(path)
    body = path.read_bytes() if stat.S_ISREG(st.st_mode) else b""
    return st.st_mode, st.st_ino, body


def test_build_never_replaces_what_is_not_an_index(sample_repo: Repo, tmp_path: Path):
    for name, path in not_indexes(tmp_path, sample_repo).items():
        before = fingerprint(path)
        result = CliRunner().invoke(cli, ["build", str(sample_repo.root), "--db", str(path)])
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output and result.output.count("\n") == 1, name
        assert fingerprint(path) == before, name
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert (
        CliRunner().invoke(cli, ["build", str(sample_repo.root), "--db", str(empty)]).exit_code == 0
    )


def one_line_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (args, result.output)
    assert "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0, result.output


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--db"],
        ["orphans", "--db"],
        ["lineage", "20260903-maria-ops-retention-question", "--db"],
        ["serve", "--port", "0"],
    ],
)
def test_reading_commands_given_a_bad_index_exit_2_with_one_line(
    command: list[str], sample_repo: Repo, tmp_path: Path
):
    sample_repo.index().close()
    truncated = tmp_path / "truncated.db"  # ours, but cut short: unreadable pages
    truncated.write_bytes(sample_repo.db_path.read_bytes()[: 3 * 4096])
    paths = not_indexes(tmp_path, sample_repo)
    for path in (paths["text"], paths["foreign"], paths["fifo"], truncated):
        one_line_exit_2([*command, str(path)])


def test_building_commands_refuse_an_index_that_is_not_theirs(history: Repo, tmp_path: Path):
    paths = not_indexes(tmp_path, history)
    for path in (paths["text"], paths["foreign"]):
        before = fingerprint(path)
        one_line_exit_2(["views", str(history.root), "--db", str(path)])
        one_line_exit_2(["diff", str(history.root), "--base", "base", "--db", str(path)])
        one_line_exit_2(["check", str(history.root), "--base", "base", "--db", str(path)])
        assert fingerprint(path) == before


def test_killed_builds_leave_nothing_a_later_build_keeps(sample_repo: Repo, tmp_path: Path):
    from labnote_index.index.index_file import APPLICATION_ID
    from labnote_index.index.tempfiles import MARKER, temp_name

    work = tmp_path / "work"
    work.mkdir()
    ghost = subprocess.Popen(["true"])  # a process that is gone
    ghost.wait()

    def dead(kind: str, suffix: str = "") -> Path:
        return work / temp_name(kind, suffix).replace(str(os.getpid()), str(ghost.pid))

    left_file = dead("tmp", "index.db")  # a half-written index: its header is there
    conn = sqlite3.connect(left_file)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("CREATE TABLE half (x)")
    conn.close()
    left_dir = dead("shards")
    (left_dir / "inner").mkdir(parents=True)
    (left_dir / MARKER).write_text(left_dir.name + "\n")
    alive = work / temp_name("tmp", "busy.db")  # this process's: still in use
    alive.write_bytes(b"")
    mine = work / ".labnote-tmp-notes.txt"  # not a name we make: never touched
    mine.write_text("keep me")
    # Named as a dead build's would be, but not made by a build: a user's files.
    named_file = dead("tmp", "notes.db")
    named_file.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # another program's
    named_dir = dead("rev")
    (named_dir / MARKER).mkdir(parents=True)  # a marker that is not our file
    (named_dir / "keep.txt").write_text("keep me")
    build_index(sample_repo.root, work / "index.db")
    assert not left_file.exists() and not left_dir.exists()
    assert alive.exists() and mine.read_text() == "keep me"
    assert named_file.is_file() and (named_dir / "keep.txt").read_text() == "keep me"


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def test_workers_die_with_a_killed_build(tmp_path: Path):
    from bench.generate import generate

    generate(tmp_path / "big", packets=2500)  # enough files to share out (2 x MIN_PART)
    command = [sys.executable, "-m", "labnote_index", "build", str(tmp_path / "big")]
    build = subprocess.Popen([*command, "--db", str(tmp_path / "i.db"), "--jobs", "2"], cwd=ROOT)
    try:
        workers: set[int] = set()
        for _ in range(400):
            workers = descendants(build.pid)
            if len(workers) >= 2:  # the worker server and a worker at least
                break
            time.sleep(0.01)
        assert len(workers) >= 2
    finally:
        build.kill()
        build.wait()
    for _ in range(200):
        if not any(alive(pid) for pid in workers):
            break
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")  # zombie: dead


def test_index_mode_follows_the_umask_and_a_replaced_index_keeps_its_mode(
    sample_repo: Repo, tmp_path: Path
):
    old = os.umask(0o022)
    try:
        build_index(sample_repo.root, tmp_path / "new.db")
        assert stat.S_IMODE(os.stat(tmp_path / "new.db").st_mode) == 0o644
        os.chmod(tmp_path / "new.db", 0o640)
        build_index(sample_repo.root, tmp_path / "new.db", full=True)
        assert stat.S_IMODE(os.stat(tmp_path / "new.db").st_mode) == 0o640
        sample_repo.edit(PACKET, notes="edited")
        build_index(sample_repo.root, tmp_path / "new.db")  # incremental
        assert stat.S_IMODE(os.stat(tmp_path / "new.db").st_mode) == 0o640
    finally:
        os.umask(old)


def test_ctrl_c_exits_130_and_leaves_no_index(tmp_path: Path):
    from bench.generate import generate

    generate(tmp_path / "big", packets=400)
    work = tmp_path / "work"
    work.mkdir()
    command = [sys.executable, "-m", "labnote_index", "build", str(tmp_path / "big")]
    interrupted = 0
    for _ in range(5):  # a build that finished before the signal came is tried again
        build = subprocess.Popen(
            [*command, "--db", str(work / "index.db"), "--jobs", "1", "--full"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=signals_as_usual,
        )
        deadline = time.monotonic() + 60
        while not list(work.glob(".labnote-tmp-*")) and time.monotonic() < deadline:
            time.sleep(0.005)  # until the build has started writing
        build.send_signal(signal.SIGINT)
        _, err = build.communicate(timeout=60)
        if build.returncode == 0:
            (work / "index.db").unlink()
            continue
        assert build.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err
        assert list(work.iterdir()) == []
        interrupted += 1
        break
    assert interrupted == 1


# ---- views never write or read through a symlink


def test_views_refuse_symlinked_view_files(sample_repo: Repo, tmp_path: Path):
    outside = tmp_path / "outside.csv"
    outside.write_text("secret,content\n")
    view = sample_repo.root / "registry/packet_registry.csv"
    view.unlink()
    view.symlink_to(outside)
    for args in (["views", str(sample_repo.root)], ["views", str(sample_repo.root), "--check"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert "is a symlink" in result.output and "secret" not in result.output
    assert outside.read_text() == "secret,content\n"
    index = sample_repo.root / "registry/INDEX.md"
    assert index.read_text().startswith("# Registry Index")  # nothing written before refusing


def test_views_refuse_a_registry_that_leads_outside(sample_repo: Repo, tmp_path: Path):
    (sample_repo.root / "registry").rename(tmp_path / "elsewhere")
    (sample_repo.root / "registry").symlink_to(tmp_path / "elsewhere")
    before = sorted(p.name for p in (tmp_path / "elsewhere").iterdir())
    result = CliRunner().invoke(cli, ["views", str(sample_repo.root)])
    assert result.exit_code == 2 and "leading outside the repository" in result.output
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == before


def test_views_check_leaves_no_index_behind(sample_repo: Repo, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["views", str(sample_repo.root), "--check"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "labnote.db").exists()


def test_serve_on_a_busy_port_says_so_in_one_line(sample_repo: Repo):
    sample_repo.index().close()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", str(sample_repo.db_path), "--port", str(port)])
    assert result.exit_code == 2 and "Serving" not in result.output
    assert f"cannot serve on 127.0.0.1:{port}" in result.output
    assert result.output.strip().count("\n") == 0


# ---- long chains, cycles and copies: linear work, bounded output (speed: bench/scaling.py)


def write_shape(shape: str, root: Path, n: int) -> None:
    from bench.scaling import SHAPES

    SHAPES[shape](root, n)


def test_a_long_reply_cycle_reports_each_member_once(tmp_path: Path):
    write_shape("cycle", tmp_path / "repo", 1500)
    build_index(tmp_path / "repo", tmp_path / "i.db")
    db = sqlite_utils.Database(tmp_path / "i.db")
    members = [f["file"] for f in findings_of(db) if f["check"] == "reply_cycle"]
    assert len(members) == len(set(members)) == 1500


def test_a_long_reply_thread_is_not_a_cycle(tmp_path: Path):
    write_shape("thread", tmp_path / "repo", 1500)
    build_index(tmp_path / "repo", tmp_path / "i.db")
    db = sqlite_utils.Database(tmp_path / "i.db")
    assert [f for f in findings_of(db) if f["check"] == "reply_cycle"] == []


def test_lineage_of_a_1500_long_chain_is_drawn_to_a_bound(tmp_path: Path):
    from labnote_index.format.rules import LINEAGE_DEPTH

    write_shape("derivation", tmp_path / "repo", 1500)
    db = tmp_path / "i.db"
    build_index(tmp_path / "repo", db)
    for fmt in ("json", "text"):
        args = ["lineage", "20250301-ops-p1499", "--db", str(db), "--format", fmt]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    tree = json.loads(CliRunner().invoke(cli, [*args[:-1], "json"]).output)
    deepest, depth = tree["up"][0], 1
    while deepest["children"]:
        deepest, depth = deepest["children"][0], depth + 1
    assert depth == LINEAGE_DEPTH and deepest["more"] == 1
    assert "+1 more, not drawn" in result.output


def test_lineage_page_of_a_long_chain_answers(tmp_path: Path):
    import asyncio

    from labnote_index.web.serve import make_datasette

    write_shape("derivation", tmp_path / "repo", 1500)
    build_index(tmp_path / "repo", tmp_path / "i.db")
    datasette = make_datasette(tmp_path / "i.db")
    node = "registry/packets/2025/20250301-ops-p1499.json"
    response = asyncio.run(datasette.client.get(f"/i/-/lineage?node={node}"))
    assert response.status_code == 200 and "+1 more" in response.text


def test_a_finding_lists_a_bounded_number_of_duplicate_copies(tmp_path: Path):
    write_shape("duplicates", tmp_path / "repo", 300)
    build_index(tmp_path / "repo", tmp_path / "i.db")
    found = [
        f
        for f in findings_of(sqlite_utils.Database(tmp_path / "i.db"))
        if f["check"] == "duplicate_id"
    ]
    assert len(found) == 300
    assert all(f["message"].count(".json") == 5 for f in found)
    assert all("is in 300 files" in f["message"] and "and 295 more" in f["message"] for f in found)


def test_one_record_with_many_tags_names_each_unresolved_one(tmp_path: Path):
    write_shape("tags", tmp_path / "repo", 20000)
    build_index(tmp_path / "repo", tmp_path / "i.db")
    db = sqlite_utils.Database(tmp_path / "i.db")
    assert db["tag_uses"].count == 20000
    assert sum(f["check"] == "tag_unresolved" for f in findings_of(db)) == 20000


# ---- git: a revision cannot hide its own files


def check_json(*args: str | Path) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, ["check", *map(str, args), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_export_ignore_in_the_head_cannot_hide_a_broken_record(history: Repo):
    from .helpers import git

    history.write("registry/packets/2026/20260920-x-broken.json", '{"record_type": "packet"}')
    history.write(".gitattributes", "registry/packets/2026/20260920-x-broken.json export-ignore\n")
    git(history.root, "add", "-A")
    git(history.root, "commit", "-q", "-m", "hide it")
    args = (history.root, "--db", history.db_path)
    _, from_revisions = check_json(*args, "--base", "base", "--head", "HEAD")
    _, working_tree = check_json(history.root, "--db", history.root.parent / "w.db")
    broken = "registry/packets/2026/20260920-x-broken.json"
    assert broken in {f["file"] for f in from_revisions}
    assert {f["file"] for f in working_tree if f["file"] == broken} == {broken}


def test_export_ignore_in_the_base_cannot_hide_a_changed_visit(history: Repo):
    from .helpers import git

    visit = "registry/visits/2026/20260903-maria-ops-retention-question-visit.json"
    history.write(".gitattributes", "registry/visits/** export-ignore\n")
    git(history.root, "add", "-A")
    git(history.root, "commit", "-q", "-m", "ignore visits")
    git(history.root, "tag", "-f", "base")
    history.edit(visit, notes="rewritten later")
    _, found = check_json(history.root, "--db", history.db_path, "--base", "base")
    assert ("visit_changed", visit) in {(f["check"], f["file"]) for f in found}


def test_empty_or_missing_revisions_are_said_before_anything_is_built(history: Repo):
    for base in ("", "no-such-rev"):
        result = CliRunner().invoke(
            cli, ["check", str(history.root), "--db", str(history.db_path), "--base", base]
        )
        assert result.exit_code == 2, result.output
        assert "fatal" not in result.output and "Traceback" not in result.output
        assert not history.db_path.exists()  # nothing was built first
    assert "no revision 'no-such-rev' in" in result.output


def test_a_record_without_an_id_is_neither_added_nor_removed(history: Repo):
    from .helpers import git

    history.write("registry/packets/2026/no-id.json", '{"record_type": "packet"}')
    git(history.root, "add", "-A")
    git(history.root, "commit", "-q", "-m", "a record with no id")
    git(history.root, "tag", "-f", "base")
    history.write("registry/packets/2026/no-id.json", '{"record_type": "packet", "notes": "x"}')
    result = run_diff(history, "--format", "json")
    changes = [(r["change"], r["file"], r["field"]) for r in json.loads(result.stdout)]
    assert changes == [("edited", "registry/packets/2026/no-id.json", "notes")]


def test_diff_names_each_edited_field_and_files_edited_in_a_ready_packet(history: Repo):
    architect = "docs/workflow/roles/architect/reports/retention-policy/packet-v001"
    history.write(f"{architect}/decisions.md", "rewritten after handoff\n")
    history.edit(PACKET, notes="a new note", topic="retention-question-v2")
    result = run_diff(history, "--format", "json")
    rows = json.loads(result.stdout)
    edited = {(r["field"], r["before"], r["after"]) for r in rows if r["change"] == "edited"}
    assert ("notes", '""', '"a new note"') in edited
    assert any(f == "topic" for f, _, _ in edited)
    handoff = [r for r in rows if r["change"] == "handoff edited"]
    assert [(r["record_id"], r["field"]) for r in handoff] == [(architect, "decisions.md")]
    text = (
        CliRunner()
        .invoke(cli, ["diff", str(history.root), "--base", "base", "--db", str(history.db_path)])
        .output
    )
    assert 'edited             packet 20260903-maria-ops-retention-question: notes: "" -> ' in text


def test_a_revision_cannot_inject_git_options(history: Repo, tmp_path: Path):
    planted = tmp_path / "planted"
    for rev in (f"--output={planted}", "-h", "--exec=touch " + str(planted)):
        result = CliRunner().invoke(
            cli, ["diff", str(history.root), "--base", rev, "--db", str(history.db_path)]
        )
        assert result.exit_code == 2, result.output
        assert "no revision" in result.output
    assert not planted.exists()


def test_concurrent_builds_of_one_index_leave_a_whole_index(sample_repo: Repo, tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    db = work / "shared.db"
    command = [sys.executable, "-m", "labnote_index", "build", str(sample_repo.root)]
    builds = [
        subprocess.Popen([*command, "--db", str(db), "--full"], cwd=ROOT, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    for build in builds:
        _, err = build.communicate(timeout=120)
        assert build.returncode == 0, err
    index = sqlite_utils.Database(db)
    assert index.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert index["records"].count == 44
    assert [p.name for p in work.iterdir()] == ["shared.db"]  # no temporary file left


@pytest.mark.parametrize("odd", ["q?x", "h#x", "p%41x", "w?#%20"])
def test_an_index_in_a_directory_named_with_uri_characters_is_that_index(
    history: Repo, tmp_path: Path, odd: str
):
    """A '?', '#' or '%' in the index's directory: every reader opens the index
    itself. Spliced into a SQLite URI as it was, mode=ro was lost, SQLite made an
    empty file at the name's first part, and each build took the index for a
    damaged one; Datasette served that empty file."""
    place = tmp_path / "odd" / odd
    place.mkdir(parents=True)
    db = place / "i.db"
    build_index(history.root, db)
    unchanged = build_index(history.root, db)
    assert (unchanged.incremental, unchanged.rebuilt_because) == (True, None)
    history.edit(PACKET, topic="edited")
    edited = build_index(history.root, db)
    assert (edited.incremental, edited.rebuilt_because, edited.reread) == (True, None, 1)
    assert edited.findings == build_index(history.root, tmp_path / "full.db").findings

    org = place / "org.db"
    assert api.merge([db], org).merged == ["i"]
    assert api.merge([db], org).kept == ["i"]  # read as the index it is, not as a new one
    packets = fetch(db, "/i/packets.json?_shape=array&_size=max")[0]
    assert packets.status_code == 200
    assert "edited" in [p["topic"] for p in packets.json()]
    assert sorted(p.name for p in (tmp_path / "odd").iterdir()) == [odd]  # no file of SQLite's
    assert sorted(p.name for p in place.iterdir()) == ["i.db", "org.db"]


def test_installed_sqlite_utils_plugins_never_touch_an_index(history: Repo, tmp_path: Path):
    """A sqlite-utils plugin's prepare_connection could define SQL functions the
    checks call; no connection to an index is handed to one (build, incremental
    build, check, merge, serve)."""
    from sqlite_utils import hookimpl
    from sqlite_utils.plugins import pm

    handed: list[object] = []

    class Plugin:
        @hookimpl
        def prepare_connection(self, conn):
            handed.append(conn)

    plugin = Plugin()
    pm.register(plugin)
    try:
        sqlite_utils.Database(":memory:")
        assert len(handed) == 1  # the plugin is installed: sqlite-utils' own default runs it
        handed.clear()
        db = tmp_path / "i.db"
        build_index(history.root, db)
        history.edit(PACKET, topic="edited")
        build_index(history.root, db)
        api.check(history.root, db=db, base="base")
        api.merge([db], tmp_path / "org.db")
        assert fetch(db, "/i/packets.json")[0].status_code == 200
    finally:
        pm.unregister(plugin)
    assert handed == []


def test_odd_ids_and_paths_cannot_write_lines_of_their_own(sample_repo: Repo, tmp_path: Path):
    sample_repo.edit(
        PACKET,
        packet_id="20260903-x\n::error file=README.md::forged",
        path="../../../../etc/passwd",
        status="new\x1b[2J",
    )
    db = str(tmp_path / "odd.db")
    for fmt in ("text", "github"):
        out = CliRunner().invoke(cli, ["check", str(sample_repo.root), "--db", db, "--format", fmt])
        assert out.exit_code == 1
        assert not any(
            line.startswith("::error file=README.md") for line in out.stdout.splitlines()
        )
        assert "\x1b" not in out.stdout
    lineage = CliRunner().invoke(cli, ["lineage", PACKET, "--db", db])
    assert "\n::error" not in lineage.stdout and "\x1b" not in lineage.stdout
    artifact = sqlite_utils.Database(db)["artifacts"].get("../../../../etc/passwd")
    assert artifact["status"] == "unsafe" and artifact["body"] is None  # never read


def test_a_revision_with_symlinks_is_read_without_following_them(history: Repo, tmp_path: Path):
    from labnote_index.compare.git import materialize

    from .helpers import git

    (history.root / "registry/packets/2026/outside.json").symlink_to("/etc/hostname")
    (history.root / "registry/packets/2026/alias.json").symlink_to(Path(PACKET).name)
    run = history.root / "tools/run.sh"
    run.parent.mkdir()
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    git(history.root, "add", "-A")
    git(history.root, "commit", "-q", "-m", "links")
    dest = tmp_path / "tree"
    materialize(history.root, "HEAD", dest)
    assert os.readlink(dest / "registry/packets/2026/outside.json") == "/etc/hostname"
    assert (dest / "registry/packets/2026/alias.json").is_symlink()
    assert os.access(dest / "tools/run.sh", os.X_OK)
    assert (dest / PACKET).read_bytes() == (history.root / PACKET).read_bytes()
    _, found = check_json(history.root, "--db", history.db_path, "--base", "HEAD")
    outside = [f for f in found if f["file"] == "registry/packets/2026/outside.json"]
    assert outside and "symlink points outside" in outside[0]["message"]


def test_packet_file_problems_come_and_go_with_incremental_builds(
    sample_repo: Repo, tmp_path: Path
):
    from .helpers import content

    packet = sample_repo.root / ARCHITECT
    os.mkfifo(packet / "pipe")
    sample_repo.index()
    (packet / "pipe").unlink()
    (packet / "pipe").write_text("a file now\n")
    (packet / "decisions.md").write_text("edited\n")
    incremental = sample_repo.index()
    assert errors_by_file(incremental, "file_unreadable").get(f"{ARCHITECT}/pipe") is None
    build_index(sample_repo.root, tmp_path / "full.db", full=True)
    assert content(incremental) == content(sqlite_utils.Database(tmp_path / "full.db"))


def test_a_served_index_stays_whole_while_builds_run_and_are_killed(tmp_path: Path):
    """`serve` answers from an index while builds of it run, some SIGKILLed at
    random points: every answer is 200 and is one whole index's (the previous or
    the new, never a mix), the index on disk stays the previous one when a build
    is killed, and a server started after a completed build answers with its rows."""
    import random
    import urllib.request

    from bench.generate import generate

    repo = tmp_path / "repo"
    generate(repo, packets=400)
    db = tmp_path / "served.db"
    build_index(repo, db)
    command = [sys.executable, "-m", "labnote_index"]

    def served() -> dict[str, str]:
        """Each packet's notes, as the server answers now."""
        url = base + "/packets.json?_shape=array&_col=notes&_size=max"
        with urllib.request.urlopen(url, timeout=30) as answer:
            assert answer.status == 200
            return {row["file"]: row["notes"] for row in json.loads(answer.read())}

    def on_disk() -> dict[str, str]:
        index = sqlite_utils.Database(db)
        assert index.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        notes = dict(index.execute("SELECT file, notes FROM packets").fetchall())
        index.close()
        return notes

    def start() -> tuple[subprocess.Popen, str]:
        server = subprocess.Popen(
            [*command, "serve", str(db), "--port", "0"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = server.stdout.readline() if server.stdout else ""
        return server, line.split(" at ", 1)[1].split(" ", 1)[0]  # http://127.0.0.1:PORT/served

    try:
        packet = sorted((repo / "registry/packets").rglob("*.json"))[3]
        file = packet.relative_to(repo).as_posix()
        seed = int(os.environ.get("LABNOTE_TEST_SEED", "20261201"))  # the same every run
        chance = random.Random(seed)
        # Round 0 is killed while the build starts (it takes longer than 50 ms to
        # import), every other odd round at a random point; even rounds complete.
        kill_after = [0.05] + [chance.uniform(0.05, 2.0) if r % 2 else None for r in range(1, 8)]
        killed_some = completed_some = False
        server, base = start()
        for round_ in range(8):
            before = on_disk()  # what the server opened: it started with this index
            assert served() == before, f"seed {seed}"
            data = json.loads(packet.read_text())
            data["notes"] = f"edit {round_}"
            packet.write_text(json.dumps(data))
            after = before | {file: f"edit {round_}"}
            build = subprocess.Popen(
                [*command, "build", str(repo), "--db", str(db), "--full"],
                cwd=ROOT,
                stderr=subprocess.DEVNULL,
            )
            wait = kill_after[round_]
            deadline = time.monotonic() + (wait if wait is not None else 600)
            while time.monotonic() < deadline and build.poll() is None:
                # Whole, the index this server opened or the one just written: never a mix.
                assert served() in (before, after), f"seed {seed}: a mixed answer"
            if build.poll() is None:
                build.send_signal(signal.SIGKILL)
            build.wait()
            if build.returncode == -signal.SIGKILL:
                killed_some = True
                # The previous index, whole; or, killed after its rename, the new one.
                now = on_disk()
                assert now in (before, after), f"seed {seed}: a killed build left a mix"
                if now == before:
                    continue
            else:
                completed_some = True
                assert build.returncode == 0 and on_disk() == after
            # A running server keeps the index it opened; a new one serves this build.
            server.terminate()
            server.wait(10)
            server, base = start()
            assert served() == after
        assert killed_some and completed_some
    finally:
        server.terminate()
        server.wait(10)


def vm_steps(db_path: Path, work: Callable[[sqlite_utils.Database], object]) -> int:
    """How much SQLite work ``work`` does on an index: virtual machine steps, in
    thousands (a measure of work, not of time: the same on every machine)."""
    conn = sqlite3.connect(db_path)
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 1000)
    work(sqlite_utils.Database(conn))
    conn.close()
    return steps[0]


def check_work(shape: str, n: int, tmp_path: Path, check: str) -> tuple[int, list[dict]]:
    """The work of one check over a shape of size n, and its findings."""
    from labnote_index.checks.catalogue import load_checks

    root, db_path = tmp_path / f"{shape}-{n}", tmp_path / f"{shape}-{n}.db"
    write_shape(shape, root, n)
    build_index(root, db_path)
    (sql,) = [c.sql for c in load_checks("checks") if c.id == check]
    return vm_steps(db_path, lambda db: list(db.query(sql))), [
        f for f in findings_of(sqlite_utils.Database(db_path)) if f["check"] == check
    ]


@pytest.mark.parametrize(
    "shape, check, expected",
    [("locked", "handoff_lock_drift", 1), ("superseded", "handoff_superseded", 0)],
)
def test_handoff_checks_grow_linearly(tmp_path: Path, shape: str, check: str, expected: int):
    """One packet of 4,000 files, 4,000 superseded versions: ten times the
    input is at most twelve times the work (it was 23 and 28 times)."""
    small, found = check_work(shape, 400, tmp_path, check)
    large, found_large = check_work(shape, 4000, tmp_path, check)
    assert len(found) == len(found_large) == expected, found_large
    assert large <= 12 * max(small, 1), (small, large)


def test_a_lineage_is_bounded_in_width(tmp_path: Path):
    """A message with 2,000 replies: 400 records drawn, the rest counted."""
    from bench.scaling import QUERIED
    from labnote_index.queries.lineage import MAX_NODES, branches_in_order, lineage

    QUERIED["replies"](tmp_path / "repo", 2000)
    build_index(tmp_path / "repo", tmp_path / "i.db")
    tree = lineage(sqlite_utils.Database(tmp_path / "i.db"), "20250301-ops-m0", "down")
    drawn = list(branches_in_order(tree["down"]))
    assert len(drawn) <= MAX_NODES + 1 and tree["down_more"] == 2000 - len(drawn)
    args = ["lineage", "20250301-ops-m0", "--db", str(tmp_path / "i.db")]
    text = CliRunner().invoke(cli, args).output
    assert f"+{tree['down_more']} more, not drawn" in text
    (page,) = fetch(tmp_path / "i.db", "/i/-/lineage?node=20250301-ops-m0")
    assert page.status_code == 200 and f"+{tree['down_more']} more" in page.text
    assert len(page.text) < 2_000_000  # it was 10 MB at 10,000 replies


def test_a_story_reads_only_its_own_orphans(tmp_path: Path):
    """The lineage of one packet, with 0 and with 5,000 unresolved references
    elsewhere in the index: the same work (it read every orphan)."""
    from bench.scaling import QUERIED
    from labnote_index.queries.lineage import story

    work = []
    for n in (1, 5000):
        root, db_path = tmp_path / f"r{n}", tmp_path / f"r{n}.db"
        QUERIED["orphans"](root, n)
        build_index(root, db_path)
        work.append(vm_steps(db_path, lambda db: story(db, "20250301-ops-p0")))
    assert work[1] <= 2 * max(work[0], 1), work


def test_duplicated_ids_across_revisions_are_paired_file_by_file(history: Repo):
    """60 copies of one ID at base and at head were 3,540 'moved' pairs: each copy
    is paired with itself alone, and nothing moved."""
    from bench.scaling import duplicates

    duplicates(history.root, 60)
    git(history.root, "add", "-A")
    git(history.root, "commit", "-q", "-m", "copies")
    git(history.root, "tag", "-f", "base")
    result = CliRunner().invoke(
        cli, ["check", str(history.root), "--no-db", "--base", "base", "--format", "json"]
    )
    found = json.loads(result.output)
    assert [f for f in found if f["check"] == "record_moved"] == []
    assert sum(f["check"] == "duplicate_id" for f in found) == 60
    assert run_diff(history).output.count("moved") == 0


@pytest.mark.parametrize("where", ["inside", "outside", "hidden"])
def test_a_symlinked_registry_is_inside_for_every_reader_or_for_none(tmp_path: Path, where: str):
    """One test of containment (paths.real_place): the walk follows a symlinked
    registry, the loader reads it and the views are written into it exactly when
    it leads inside the repository; into a dot-directory is not inside (the walk
    and the views once took it, where the loader refused it)."""
    from labnote_index.errors import ViewPathError
    from labnote_index.index.registry_views import output_directory
    from labnote_index.read.discover import discover
    from labnote_index.read.paths import Sandbox

    root = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    target = {
        "inside": root / "data" / "registry",
        "outside": tmp_path / "elsewhere",
        "hidden": root / ".cache" / "registry",
    }[where]
    target.parent.mkdir(parents=True, exist_ok=True)
    (root / "registry").rename(target)
    (root / "registry").symlink_to(target)
    walked = any(f.path.startswith("registry/packets/") for f in discover(root))
    loaded = Sandbox(root).dir_inside("registry")
    try:
        written = output_directory(root, None) is not None
    except ViewPathError:
        written = False
    assert walked == loaded == written == (where == "inside")


def test_the_links_an_incremental_build_asks_grow_linearly(tmp_path: Path):
    """N copies of one packet, all read again: the records linked to them (each
    a copy of the others' ID), the artifacts they name and their references'
    edges are each row looked at once; ten times the copies is at most twelve
    times the work (a join of copy with copy would be a hundred)."""
    from labnote_index.index.cycles import edges_touching
    from labnote_index.index.files import artifacts_named
    from labnote_index.index.resolve import linked_files

    def work(n: int) -> int:
        root, db_path = tmp_path / f"dups-{n}", tmp_path / f"dups-{n}.db"
        write_shape("duplicates", root, n)
        build_index(root, db_path)
        files = [
            r["file"] for r in sqlite_utils.Database(db_path).query("SELECT file FROM records")
        ]
        assert len(files) >= n

        def asked(db: sqlite_utils.Database) -> None:
            assert len(linked_files(db, files)) == len(files)
            artifacts_named(db, files)
            edges_touching(db, files)

        return vm_steps(db_path, asked)

    small, large = work(300), work(3000)
    assert large <= 12 * max(small, 1), (small, large)
