"""`labnote-index fix`: one planted defect per fixable check on a generated repository,
a dry run that writes nothing, an apply that removes exactly those findings, and
each refusal.

Tests of: ``repair/repairs.py``, ``checks/json_strict.py``,
``checks/legacy_spelling.py``, ``checks/lifecycle_bucket.py``,
``checks/location_filename.py``, ``checks/location_year_dir.py``,
``checks/view_stale.py``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

import labnote_index as li
from labnote_index.api import check_named as api_check_named
from labnote_index.checks.catalogue import _with_fix
from labnote_index.checks.fixing import Repair
from labnote_index.cli import cli
from labnote_index.errors import CheckFileError
from labnote_index.index.registry_views import render_views, write_views
from labnote_index.repair.repairs import planner_of

from .helpers import Repo, cli_as, findings_of, git, open_copy, signals_as_usual


def tree_hash(root: Path) -> str:
    """Every path and every file's bytes below root (symlinks as their targets' text)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def fix(root: Path, *args: str):
    return CliRunner().invoke(cli, ["fix", str(root), *args])


def plant_one_of_each(repo: Repo) -> dict[str, str]:
    """One defect per fixable check; the file each finding names."""
    write_views(render_views(repo.index()), repo.root / "registry")  # views committed
    packets = repo.files("registry/packets/*/*.json")
    planted = {}
    bom = packets[0]
    (repo.root / bom).write_bytes(b"\xef\xbb\xbf" + (repo.root / bom).read_bytes())
    planted["json_strict"] = bom
    renamed = repo.move(packets[1], packets[1].rsplit("/", 1)[0] + "/renamed.json")
    planted["location_filename"] = renamed
    year = packets[2].split("/")
    planted["location_year_dir"] = repo.move(packets[2], f"registry/packets/1999/{year[-1]}")
    visit = repo.first("registry/visits/*/*.json")
    data = repo.load(visit)
    data = {("visitor_family" if k == "session_family" else k): v for k, v in data.items()}
    repo.save(visit, data)
    planted["legacy_spelling"] = visit
    answered = repo.first("registry/messages/answered/*.json")
    planted["lifecycle_bucket"] = repo.edit(answered, status="closed")
    return planted


@pytest.fixture
def planted(repo: Repo) -> dict[str, str]:
    found = plant_one_of_each(repo)
    git(repo.root, "init", "-q")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "planted")
    return found


def test_every_fix_is_planned_beside_its_check():
    """A check's fix is its header's ``-- fix:`` and the module beside its SQL
    (checks/<id>.py, whose plan the fix command runs); one without the other is
    refused when the catalogue is read."""
    fixed = [c for c in li.catalogue() if c.fix]
    assert {c.id for c in fixed} == {
        "json_strict",
        "legacy_spelling",
        "lifecycle_bucket",
        "location_filename",
        "location_year_dir",
        "view_stale",
    }
    for check in fixed:
        assert check.fixer == f"labnote_index.checks.{check.id}"
        assert callable(planner_of(check.fixer))
        assert f"fix checks/{check.id}.py" in check.source
    assert all(not c.fixer for c in li.catalogue() if not c.fix)
    described = api_check_named("location_filename")
    with pytest.raises(CheckFileError, match="no location_filename.py plans it"):
        _with_fix(described, False, "labnote_index.checks")
    plain = api_check_named("duplicate_id")
    with pytest.raises(CheckFileError, match="its header does not describe"):
        _with_fix(plain, True, "labnote_index.checks")
    # Read afresh (the catalogue is read once a process, so its copy says nothing
    # of a change to _with_fix made since): the module is named, the source too.
    bare = dataclasses.replace(described, fixer="", source="checks/location_filename.sql")
    joined = _with_fix(bare, True, "some.package")
    assert joined.fixer == "some.package.location_filename"
    assert joined.source == "checks/location_filename.sql, fix checks/location_filename.py"
    assert dataclasses.replace(joined, fixer="", source=bare.source) == bare
    assert _with_fix(plain, False, "some.package") is plain


def test_dry_run_writes_nothing_and_shows_each_change(repo: Repo, planted: dict[str, str]):
    before = tree_hash(repo.root)
    result = fix(repo.root)
    assert result.exit_code == 1, result.output
    assert tree_hash(repo.root) == before
    out = result.stdout
    assert f"rename {planted['location_filename']} -> " in out
    assert '-  "visitor_family"' in out and '+  "session_family"' in out
    assert "rename registry/messages/answered/" in out and "-> registry/messages/closed/" in out
    assert "rename messages/answered/" in out  # the artifact moves with the record


def test_apply_removes_exactly_the_planted_findings(repo: Repo, planted: dict[str, str]):
    before = {(f.check, f.file) for f in li.check(repo.root)}
    assert {(check, file) for check, file in planted.items()} <= before
    answered = planted["lifecycle_bucket"]
    notes_before = repo.load(answered)["summary"], repo.load(answered)["notes"]
    result = fix(repo.root, "--apply", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["appeared"] == [] and report["remaining"] == []
    assert li.check(repo.root) == []  # the generated repository was clean but for these
    gone = {(f["check"], f["file"]) for f in report["gone"]}
    assert gone == before
    # Only the files of the fixed records (their artifacts, and the views) changed.
    expected = set(planted.values())
    for repair in report["repairs"]:
        expected |= {repair["file"], repair["final"]} | {
            p for move in repair["moves"] for p in move
        }
    changed = set()
    for line in git(repo.root, "status", "--porcelain", "-uall").splitlines():
        changed |= set(line[3:].split(" -> "))
    assert changed and changed <= expected
    assert all(
        r["check"] != "view_stale" or r["file"].startswith("registry/") for r in report["repairs"]
    )
    closed = answered.replace("/answered/", "/closed/")
    assert (repo.load(closed)["summary"], repo.load(closed)["notes"]) == notes_before
    assert (repo.root / repo.load(closed)["path"]).is_file()
    again = fix(repo.root, "--apply")
    assert again.exit_code == 0 and "0 fixes to make (nothing to do)" in again.stdout


def test_check_limits_the_fixes(repo: Repo, planted: dict[str, str]):
    result = fix(repo.root, "--check", "json_strict", "--format", "json")
    report = json.loads(result.stdout)
    assert [r["check"] for r in report["repairs"]] == ["json_strict"]
    assert fix(repo.root, "--check", "provenance").exit_code == 2  # not a fixable check


def test_two_fixes_for_one_file_do_neither(repo: Repo):
    answered = repo.first("registry/messages/answered/*.json")
    repo.edit(answered, status="closed")
    repo.move(answered, answered.rsplit("/", 1)[0] + "/not-its-id.json")
    report = json.loads(fix(repo.root, "--format", "json").stdout)
    assert report["repairs"] == []
    assert {r["check"] for r in report["refusals"]} == {"lifecycle_bucket", "location_filename"}
    assert all("more than one fix" in r["reason"] for r in report["refusals"])


def test_a_symlinked_record_is_never_followed_or_replaced(repo: Repo, tmp_path: Path):
    outside = tmp_path / "outside.json"
    packet = repo.first("registry/packets/*/*.json")
    outside.write_bytes(b"\xef\xbb\xbf" + (repo.root / packet).read_bytes())
    (repo.root / packet).unlink()
    (repo.root / packet).symlink_to(outside)
    before = outside.read_bytes()
    fix(repo.root, "--apply")
    assert outside.read_bytes() == before and (repo.root / packet).is_symlink()


def test_nothing_in_a_handoff_packet_is_touched(repo: Repo):
    plant_one_of_each(repo)
    manifest = {"status": "ready_for_next_role", "role": "x", "milestone": "y"}
    (repo.root / "handoff.manifest.json").write_text(json.dumps(manifest))
    before = tree_hash(repo.root)
    report = json.loads(fix(repo.root, "--apply", "--format", "json").stdout)
    assert report["repairs"] == [] and report["refusals"]
    assert all("handoff packet" in r["reason"] for r in report["refusals"])
    assert tree_hash(repo.root) == before


def test_an_id_that_is_not_a_file_name_is_not_used_as_one(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    repo.edit(packet, packet_id="../../escape")
    report = json.loads(fix(repo.root, "--format", "json").stdout)
    refused = [r for r in report["refusals"] if r["check"] == "location_filename"]
    assert refused and "cannot be a file name" in refused[0]["reason"]


def test_legacy_values_that_cannot_be_derived_are_left_and_reported(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    data = repo.load(packet)
    del data["created_at"]
    data["date"] = "2025-03-01"  # a CSV-style date: no timestamp can be derived from it
    data["source_ai"] = data.pop("source_session")
    repo.save(packet, data)
    result = fix(repo.root, "--apply")
    fixed = repo.load(packet)
    assert fixed["source_session"] == data["source_ai"] and "source_ai" not in fixed
    assert fixed["date"] == "2025-03-01"  # left, never invented
    assert "date: '2025-03-01' is not an RFC 3339 timestamp" in result.stdout


def test_a_fix_that_fails_half_way_leaves_its_files_as_they_were(unprivileged):
    work, as_nobody = unprivileged
    from bench.generate import generate

    generate(work / "template", packets=12)
    root = open_copy(work / "template", work / "repo")
    shutil.rmtree(work / "template")
    answered = sorted((root / "registry/messages/answered").glob("*.json"))[0]
    data = json.loads(answered.read_text())
    data["status"] = "closed"
    answered.write_text(json.dumps(data, indent=2))
    artifact = root / data["path"]
    (root / "registry/messages/closed").mkdir(exist_ok=True)
    (root / "registry/messages/closed").chmod(0o555)  # the record cannot move in
    before = tree_hash(root)
    done = cli_as(as_nobody, "fix", root, "--apply", "--check", "lifecycle_bucket")
    (root / "registry/messages/closed").chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert "failed:" in done.stdout and "as they were" in done.stdout
    assert tree_hash(root) == before and artifact.is_file()


def test_a_record_without_record_type_gets_the_one_its_directory_names(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    data = repo.load(packet)
    del data["record_type"], data["schema_version"]
    repo.save(packet, data)
    assert fix(repo.root, "--apply").exit_code == 0
    fixed = repo.load(packet)
    assert list(fixed)[:2] == ["record_type", "schema_version"]
    assert (fixed["record_type"], fixed["schema_version"]) == ("packet", 1)
    assert {k: v for k, v in fixed.items() if k in data} == data  # nothing else changed


def test_datasette_shows_which_findings_are_fixable(repo: Repo):
    import asyncio

    from labnote_index.web.serve import make_datasette

    plant_one_of_each(repo)
    li.check(repo.root, db=repo.db_path)
    datasette = make_datasette(repo.db_path)
    response = asyncio.run(
        datasette.client.get(f"/{repo.db_path.stem}/findings.json?_shape=array&fixable=1")
    )
    assert {row["check"] for row in response.json()} >= {"json_strict", "lifecycle_bucket"}


def test_an_id_too_long_for_a_file_name_is_refused_and_the_rest_repaired(repo: Repo):
    packets = repo.files("registry/packets/*/*.json")
    long_id = "x" * 300  # renaming to it would fail with "File name too long"
    repo.edit(packets[0], packet_id=long_id)
    renamed = repo.move(packets[1], packets[1].rsplit("/", 1)[0] + "/renamed.json")
    for args in ((), ("--apply",)):
        report = json.loads(fix(repo.root, *args, "--format", "json").stdout)
        refused = {r["file"]: r["reason"] for r in report["refusals"]}
        assert "too long for a file name" in refused[packets[0]]
        assert renamed in {r["file"] for r in report["repairs"]}
    assert not (repo.root / renamed).exists() and (repo.root / packets[1]).is_file()


def test_a_fix_edits_only_the_token_it_repairs(repo: Repo):
    """The artifact path written with \\/ escapes and its text again in notes: the
    path is retargeted, notes untouched; a number written 1e400 stays 1e400."""
    answered = repo.first("registry/messages/answered/*.json")
    data = repo.load(answered)
    data["status"] = "closed"
    artifact = data["path"]
    data["notes"] = artifact  # the same text, in a field no fix may touch
    text = json.dumps(data, indent=2).replace(
        f'"path": {json.dumps(artifact)}', '"path": "' + artifact.replace("/", "\\/") + '"'
    )
    assert "\\/" in text
    repo.write(answered, text)
    visit = repo.first("registry/visits/*/*.json")
    data = repo.load(visit)
    data = {("visitor_family" if k == "session_family" else k): v for k, v in data.items()}
    raw = json.dumps(data, indent=4)[:-1] + ',\n    "weight": 1e400\n}'
    repo.write(visit, raw)
    result = fix(repo.root, "--apply")
    assert result.exit_code == 0, result.output
    moved = answered.replace("/answered/", "/closed/")
    fixed = repo.load(moved)
    assert fixed["notes"] == artifact  # untouched
    assert fixed["path"] != artifact and (repo.root / fixed["path"]).is_file()
    assert not (repo.root / artifact).exists()
    after = (repo.root / visit).read_text()
    assert '"weight": 1e400' in after and "Infinity" not in after
    assert after == raw.replace('"visitor_family"', '"session_family"')  # one token changed
    left = {f["check"] for f in findings_of(repo.index()) if f["file"] == visit}
    assert not left & {"legacy_spelling", "file_unreadable", "json_strict"}, left


def close_answered(root: Path) -> list[tuple[Path, Path]]:
    """Every answered message marked closed (lifecycle_bucket: record and artifact
    move together); each record and its artifact, as they are now."""
    pairs = []
    for record in sorted((root / "registry/messages/answered").glob("*.json")):
        data = json.loads(record.read_text())
        data["status"] = "closed"
        record.write_text(json.dumps(data, indent=2))
        pairs.append((record, root / data["path"]))
    return pairs


def test_a_directory_swapped_for_a_symlink_after_planning_is_never_followed(
    repo: Repo, tmp_path: Path
):
    from labnote_index.repair import repairs as fixes

    close_answered(repo.root)
    planned = fixes.plan(repo.index(), repo.root, {"lifecycle_bucket"})
    assert planned.repairs
    outside = tmp_path / "outside"
    outside.mkdir()
    closed = repo.root / "registry/messages/closed"
    closed.mkdir(exist_ok=True)
    closed.rmdir()
    closed.symlink_to(outside, target_is_directory=True)  # after the plan's checks
    fixes.apply(planned, repo.root)
    assert list(outside.iterdir()) == []  # nothing went out through it
    assert all(r.status.startswith("failed:") and "symlink" in r.status for r in planned.repairs)
    assert all(r.file in repo.files("registry/messages/answered/*.json") for r in planned.repairs)
    artifacts = [repo.load(r.file)["path"] for r in planned.repairs]
    assert all((repo.root / a).is_file() for a in artifacts)  # moves undone


def test_sigterm_during_apply_leaves_whole_repairs_and_says_which(tmp_path: Path):
    """Each repair (record and artifact together) is made or not; no temporary
    file stays; what the message says was repaired is what was."""
    import signal
    import subprocess
    import sys

    from bench.generate import generate

    # The moment is a window (between the first repair and the last): a signal
    # that lands outside it is tried again on a fresh repository.
    for attempt in range(5):
        root = tmp_path / f"repo-{attempt}"
        generate(root, packets=300)
        pairs = close_answered(root)
        db = tmp_path / f"index-{attempt}.db"
        assert li.build(root, db).findings["error"] >= len(pairs)
        command = [sys.executable, "-m", "labnote_index", "fix", str(root), "--apply"]
        fixing = subprocess.Popen(
            [*command, "--check", "lifecycle_bucket", "--db", str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=signals_as_usual,
        )
        while fixing.poll() is None and all(record.exists() for record, _ in pairs):
            pass  # the first repair is being made
        fixing.send_signal(signal.SIGTERM)
        _, err = fixing.communicate(timeout=60)
        moved = {r for r, a in pairs if not r.exists()}
        if fixing.returncode == 143 and 0 < len(moved) < len(pairs):
            break
        assert fixing.returncode in (0, 1, 143), err  # finished first: never killed by it
    else:
        pytest.fail("the signal never landed while repairs were made")
    for record, artifact in pairs:
        closed = record.parent.parent / "closed" / record.name
        if record in moved:  # record and artifact both moved, the record naming its artifact
            assert closed.is_file() and not artifact.exists()
            assert (root / json.loads(closed.read_text())["path"]).is_file()
        else:
            assert record.is_file() and artifact.is_file() and not closed.exists()
        said = f"repaired {record.relative_to(root).as_posix()} [lifecycle_bucket]"
        assert (said in err) == (record in moved), err
    assert [p.name for p in root.iterdir() if p.name.startswith(".labnote")] == []


def test_a_killed_fixs_private_directory_is_removed_by_the_next(repo: Repo):
    import subprocess

    from labnote_index.index.tempfiles import MARKER, temp_name

    ghost = subprocess.Popen(["true"])
    ghost.wait()
    left = repo.root / temp_name("fix").replace(str(os.getpid()), str(ghost.pid))
    left.mkdir()
    (left / MARKER).write_text(left.name + "\n")
    (left / "half-written").write_text("{")
    repo.move(repo.first("registry/packets/*/*.json"), "registry/packets/2025/renamed.json")
    assert fix(repo.root, "--apply").exit_code == 0  # a move only: no private directory made
    assert not left.exists()


def test_the_dry_run_and_the_apply_count_the_same_fixes(repo: Repo, planted: dict[str, str]):
    """The views written anew after the other fixes are announced by the dry run
    and counted apart by the apply (it said 6 fixes to make, then 7 applied)."""
    import re

    dry = fix(repo.root).output
    planned = int(re.search(r"(\d+) fix(?:es)? to make", dry).group(1))
    assert "then writes anew the committed views they change" in dry
    done = fix(repo.root, "--apply").output
    match = re.search(r"(\d+) fix(?:es)? applied \(with (\d+) views? written anew", done)
    assert match, done
    assert int(match.group(1)) == planned + int(match.group(2))


def test_a_record_is_not_moved_on_a_date_in_dispute(repo: Repo):
    """created_at says 2024, the ID's date says 2025 (location_id_date): which is
    wrong is for a person; moving the record to 2024/ would bury the question."""
    packet = repo.first("registry/packets/2025/*.json")
    repo.edit(packet, created_at="2024-06-01T09:00:00Z")
    found = {f["check"] for f in findings_of(repo.index()) if f["file"] == packet}
    assert {"location_id_date", "location_year_dir"} <= found
    result = li.fix(repo.root, apply=True, checks=["location_year_dir"])
    assert [r.file for r in result.plan.repairs] == []
    (refusal,) = [r for r in result.plan.refusals if r.file == packet]
    assert "location_id_date" in refusal.reason and "not moved" in refusal.reason
    assert (repo.root / packet).is_file()
    # Undisputed: the ID's date and created_at agree, the directory does not.
    repo.edit(packet, created_at=repo.load(packet)["packet_id"][:4] + "-03-01T09:00:00Z")
    moved = repo.move(packet, packet.replace("/2025/", "/1999/"))
    result = li.fix(repo.root, apply=True, checks=["location_year_dir"])
    assert [r.file for r in result.plan.repairs] == [moved]


def test_location_year_dir_plans_each_of_its_findings_once(tmp_path: Path):
    """Over an index holding only what its query reads: every disputed record is
    refused (not only the first), one outside a year directory is refused as
    such, each refusal named as the check's, a finding reported twice planned
    once, and the rest moved to created_at's year."""
    from labnote_index.checks import location_year_dir

    db = sqlite_utils.Database(tmp_path / "index.db")
    records = [
        ("registry/packets/2024/20250101-a-disputed.json", "2024-01-01T00:00:00Z"),
        ("registry/packets/2024/20250102-a-disputed.json", "2024-01-02T00:00:00Z"),
        ("registry/packets/20260101-a-flat.json", "2026-01-01T00:00:00Z"),
        ("registry/packets/2025/20260102-a-moved.json", "2026-01-02T00:00:00Z"),
        ("registry/packets/2031/20320101-a-late.json", "2032-01-01T00:00:00Z"),
    ]
    db["records"].insert_all({"file": f, "created_at": c} for f, c in records)
    findings = [(f, "location_year_dir") for f, _ in records]
    findings += [(records[3][0], "location_year_dir")]  # reported twice
    findings += [(records[0][0], "location_id_date"), (records[1][0], "location_id_date")]
    db["findings"].insert_all({"file": f, "check": c} for f, c in findings)
    planned = list(location_year_dir.plan(db, tmp_path))
    assert [(type(p).__name__, p.check, p.file) for p in planned] == [
        ("Refusal", "location_year_dir", records[0][0]),
        ("Refusal", "location_year_dir", records[1][0]),
        ("Repair", "location_year_dir", records[3][0]),
        ("Refusal", "location_year_dir", records[2][0]),
        ("Repair", "location_year_dir", records[4][0]),
    ]
    assert (
        planned[0].reason
        == planned[1].reason
        == (
            "its created_at disagrees with its ID's date (location_id_date): correct "
            "whichever is wrong first; the record is not moved on a date in dispute"
        )
    )
    assert planned[4].final == "registry/packets/2032/20320101-a-late.json"
    assert planned[2].final == "registry/packets/2026/20260102-a-moved.json"
    assert planned[3].reason == "not in a year directory: move it by hand"


def _answered_messages(root: Path, records: dict[str, str | None]) -> sqlite_utils.Database:
    """An index holding only what lifecycle_bucket's query reads: messages, each
    answered (its bucket answered/), with a finding, and on disk each record
    (its path field) and its artifact."""
    db = sqlite_utils.Database(root / "index.db")
    db["record_types"].insert(
        {
            "record_type": "message",
            "directory": "messages",
            "artifact_prefix": "messages/{bucket}/",
            "artifact_field": "path",
        }
    )
    db["status_buckets"].insert(
        {"record_type": "message", "status": "answered", "bucket": "answered"}
    )
    for file, artifact in records.items():
        db["records"].insert(
            {
                "file": file,
                "record_type": "message",
                "status": "answered",
                "artifact_path": artifact,
            }
        )
        db["findings"].insert({"file": file, "check": "lifecycle_bucket"})
        (root / file).parent.mkdir(parents=True, exist_ok=True)
        (root / file).write_text(json.dumps({"path": artifact}))
        if artifact:
            (root / artifact).parent.mkdir(parents=True, exist_ok=True)
            (root / artifact).write_text("# x\n")
    return db


def test_lifecycle_bucket_plans_each_of_its_findings(tmp_path: Path):
    """Over an index holding only what its query reads: a record outside its
    type's directory, or not four parts deep, is refused (each one, not only the
    first); an artifact whose bucket's place is taken is refused; the rest move
    with their artifact (a nested path keeps its inside) or without one."""
    from labnote_index.checks import lifecycle_bucket

    records = {
        "registry/messages/open/deep/a.json": None,  # five parts
        "registry/other/open/b.json": None,  # another type's directory
        "registry/messages/open/c.json": "messages/open/c.md",  # its place is taken
        "registry/messages/open/d.json": "messages/open/sub/d.md",
        "registry/messages/open/e.json": None,  # no artifact
        "registry/messages/open/f.json": "messages/f.md",  # its artifact in no bucket
    }
    db = _answered_messages(tmp_path, records)
    (tmp_path / "messages/answered").mkdir(parents=True)
    (tmp_path / "messages/answered/c.md").write_text("taken\n")
    planned = list(lifecycle_bucket.plan(db, tmp_path))
    assert [(type(p).__name__, p.check, p.file) for p in planned] == [
        ("Refusal", "lifecycle_bucket", "registry/messages/open/c.json"),
        ("Repair", "lifecycle_bucket", "registry/messages/open/d.json"),
        ("Refusal", "lifecycle_bucket", "registry/messages/open/deep/a.json"),
        ("Repair", "lifecycle_bucket", "registry/messages/open/e.json"),
        ("Repair", "lifecycle_bucket", "registry/messages/open/f.json"),
        ("Refusal", "lifecycle_bucket", "registry/other/open/b.json"),
    ]
    assert planned[0].reason == "messages/answered/c.md exists already"
    assert planned[1].final == "registry/messages/answered/d.json"
    assert planned[1].also == [("messages/open/sub/d.md", "messages/answered/sub/d.md")]
    assert json.loads(planned[1].content) == {"path": "messages/answered/sub/d.md"}
    outside = "not in a bucket directory of registry/messages/: move it by hand"
    assert planned[2].reason == planned[5].reason == outside
    assert (planned[4].final, planned[4].also) == ("registry/messages/answered/f.json", [])
    assert (planned[3].final, planned[3].also, planned[3].content) == (
        "registry/messages/answered/e.json",
        [],
        None,
    )


def test_legacy_spelling_plans_each_file_its_legacy_fields_name(tmp_path: Path):
    """Over an index holding only what its query reads: each file with a legacy
    field once (two fields, one plan), renamed in place, in file order."""
    from labnote_index.checks import legacy_spelling

    db = sqlite_utils.Database(tmp_path / "index.db")
    files = ["registry/packets/2026/b.json", "registry/packets/2026/a.json"]
    for file in files:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_bytes(
            b'{"record_type": "packet", "source_ai": "x", "target_ai": "y"}'
        )
        db["legacy_fields"].insert_all(
            [{"file": file, "field": "source_ai"}, {"file": file, "field": "target_ai"}]
        )
    planned = list(legacy_spelling.plan(db, tmp_path))
    assert [(type(p).__name__, p.file, p.final) for p in planned] == [
        ("Repair", files[1], files[1]),
        ("Repair", files[0], files[0]),
    ]
    assert planned[0].content == (
        b'{"record_type": "packet", "source_session": "x", "target_session": "y"}'
    )


def test_lifecycle_bucket_refuses_what_it_cannot_move_and_goes_on(tmp_path: Path):
    """Over an index holding only what its query reads, each refusal followed by
    a record still planned: a record in its bucket whose artifact is in none
    (refused) or in another bucket (the artifact moved, the record not); a record
    whose place in its bucket is taken; one that is not UTF-8, whose path field
    cannot be rewritten."""
    from labnote_index.checks import lifecycle_bucket

    records = {
        "registry/messages/answered/g.json": "messages/g.md",
        "registry/messages/answered/h.json": "messages/open/h.md",
        "registry/messages/open/i.json": None,
        "registry/messages/open/j.json": "messages/open/j.md",
        "registry/messages/open/k.json": None,
    }
    db = _answered_messages(tmp_path, records)
    (tmp_path / "registry/messages/answered/i.json").write_text("{}")  # i's place, taken
    (tmp_path / "registry/messages/open/j.json").write_bytes(b'{"path": "messages/open/j.md"\xff}')
    planned = list(lifecycle_bucket.plan(db, tmp_path))
    assert [(type(p).__name__, p.check, p.file) for p in planned] == [
        ("Refusal", "lifecycle_bucket", "registry/messages/answered/g.json"),
        ("Repair", "lifecycle_bucket", "registry/messages/answered/h.json"),
        ("Refusal", "lifecycle_bucket", "registry/messages/open/i.json"),
        ("Refusal", "lifecycle_bucket", "registry/messages/open/j.json"),
        ("Repair", "lifecycle_bucket", "registry/messages/open/k.json"),
    ]
    assert planned[0].reason == (
        "its artifact messages/g.md is not in a bucket directory that can be moved"
    )
    h = planned[1]
    assert (h.final, h.also) == (
        "registry/messages/answered/h.json",
        [("messages/open/h.md", "messages/answered/h.md")],
    )
    assert h.content == b'{"path": "messages/answered/h.md"}'
    assert planned[2].reason == "registry/messages/answered/i.json exists already"
    assert planned[3].reason == "path: not valid UTF-8; fix it by hand"
    assert planned[4].final == "registry/messages/answered/k.json"


def test_legacy_spelling_plans_what_each_file_lets_it_derive_and_refuses_the_rest(
    tmp_path: Path,
):
    """Over an index holding only what its query reads, each way a plan can go:
    record_type (and schema_version, unless there) added where the directory
    says which, at two depths and not at one; a legacy field renamed only for
    the record types it belongs to; a timestamp that is not one, or a canonical
    field already there, left with a note (the whole file refused when nothing
    else is left); a file that cannot be rewritten safely refused, naming every
    reason."""
    from labnote_index.checks import legacy_spelling

    db = sqlite_utils.Database(tmp_path / "index.db")
    files = {
        "registry/packets/2026/a.json": b'{"source_ai": "x", "date": "2026-01-02T03:04:05Z"}',
        "registry/packets/2026/b.json": b'{"schema_version": 2, "source_ai": "x"}',
        "registry/unknown/c.json": b'{"source_ai": "x"}',
        "d.json": b'{"record_type": "packet", "source_ai": "x", "source_session": "y"}',
        "registry/packets/2026/e.json": (
            b'{"record_type": "packet", "date": "then", "source_ai": 1}'
        ),
        "registry/packets/2026/f.json": (
            b'{"record_type": "packet", "source_ai": 1, "source_ai": 2}'
        ),
        "registry/packets/2026/g.json": b"[1]",
        "registry/packets/2026/n.json": (
            b'{"record_type": "packet", "source_ai": 1, "source_session": 2, "date": "then"}'
        ),
        "registry/packets/2026/h.json": b'{"record_type":',
        "registry/packets/2026/i.json": (
            b'{"source_ai": "x", "n": 123456789012345678901234567890, "s": "\\udc00"}'
        ),
        "registry/visits/2026/j.json": b'{"record_type": 7, "visitor_family": "x"}',
        "registry/visitors/k.json": b'{"record_type": "visitor", "visitor_family": "x"}',
        "registry/visitors/m.json": b'{"visitor_family": "x"}',
        "registry/notifications": b'{"status": "open"}',
        "registry/responses/2026/l.json": b'{"record_type": "response", "source_ai": 1, "date": 5}',
    }
    for file, raw in files.items():
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_bytes(raw)
        db["legacy_fields"].insert({"file": file, "field": "any"})
    planned = {p.file: p for p in legacy_spelling.plan(db, tmp_path)}
    assert list(planned) == sorted(files)
    repaired = {
        f: (p.final, p.content, p.before, p.notes)
        for f, p in planned.items()
        if isinstance(p, Repair)
    }
    assert {p.check for p in planned.values()} == {"legacy_spelling"}
    unsafe = "cannot be rewritten safely "
    assert repaired == {
        "registry/packets/2026/a.json": (
            "registry/packets/2026/a.json",
            b'{"record_type": "packet", "schema_version": 1, "source_session": "x", '
            b'"created_at": "2026-01-02T03:04:05Z"}',
            files["registry/packets/2026/a.json"],
            [],
        ),
        "registry/packets/2026/b.json": (
            "registry/packets/2026/b.json",
            b'{"record_type": "packet", "schema_version": 2, "source_session": "x"}',
            files["registry/packets/2026/b.json"],
            [],
        ),
        "registry/packets/2026/e.json": (
            "registry/packets/2026/e.json",
            b'{"record_type": "packet", "date": "then", "source_session": 1}',
            files["registry/packets/2026/e.json"],
            ["date: 'then' is not an RFC 3339 timestamp for created_at"],
        ),
        "registry/visitors/k.json": (
            "registry/visitors/k.json",
            b'{"record_type": "visitor", "session_family": "x"}',
            files["registry/visitors/k.json"],
            [],
        ),
        "registry/visitors/m.json": (
            "registry/visitors/m.json",
            b'{"record_type": "visitor", "schema_version": 1, "session_family": "x"}',
            files["registry/visitors/m.json"],
            [],
        ),
    }
    refused = {f: (p.check, p.reason) for f, p in planned.items() if not isinstance(p, Repair)}
    no_type = "record_type: the directory does not say which; add it by hand"
    assert refused == {
        "d.json": (
            "legacy_spelling",
            "source_ai: source_session is there too; which one stands is a person's call",
        ),
        "registry/notifications": ("legacy_spelling", no_type),
        "registry/packets/2026/f.json": ("legacy_spelling", unsafe + "(duplicate_key)"),
        "registry/packets/2026/g.json": ("legacy_spelling", unsafe + "(not one JSON object)"),
        "registry/packets/2026/h.json": (
            "legacy_spelling",
            unsafe + "(malformed JSON at line 1 column 16: Expecting value)",
        ),
        "registry/packets/2026/i.json": (
            "legacy_spelling",
            unsafe + "(lone_surrogate, number_out_of_range)",
        ),
        "registry/packets/2026/n.json": (
            "legacy_spelling",
            "source_ai: source_session is there too; which one stands is a person's call; "
            "date: 'then' is not an RFC 3339 timestamp for created_at",
        ),
        "registry/responses/2026/l.json": (
            "legacy_spelling",
            "date: 5 is not an RFC 3339 timestamp for created_at",
        ),
        "registry/unknown/c.json": ("legacy_spelling", no_type),
        "registry/visits/2026/j.json": ("legacy_spelling", "nothing to derive"),
    }


def test_location_filename_plans_each_renaming_and_refuses_an_id_no_file_can_hold(
    tmp_path: Path,
):
    """Over an index holding only what its query reads: a finding reported twice
    planned once; a file at the top named after its ID there; an ID of 250
    characters renamed, of 251 refused as too long, one with a separator (of 250
    characters too) or none at all refused as no file name; a name that is
    taken refused."""
    from labnote_index.checks import location_filename

    db = sqlite_utils.Database(tmp_path / "index.db")
    longest, too_long = "a" * 250, "b" * 251
    records = {
        "registry/packets/2026/a.json": "20260101-a-moved",
        "registry/packets/2026/b.json": longest,
        "registry/packets/2026/c.json": too_long,
        "registry/packets/2026/d.json": "x/y",
        "registry/packets/2026/e.json": None,
        "registry/packets/2026/f.json": "20260102-taken",
        "registry/packets/2026/g.json": "x/" + "c" * 248,  # 250, not too long: no name
        "top.json": "20260103-top",
    }
    db["records"].insert_all({"file": f, "record_id": r} for f, r in records.items())
    files = [*records, "registry/packets/2026/a.json"]  # reported twice
    db["findings"].insert_all({"file": f, "check": "location_filename"} for f in files)
    db["findings"].insert({"file": "registry/packets/2026/a.json", "check": "other"})
    (tmp_path / "registry/packets/2026").mkdir(parents=True)
    (tmp_path / "registry/packets/2026/20260102-taken.json").write_text("{}")
    planned = list(location_filename.plan(db, tmp_path))
    shown = [(type(p).__name__, p.check, p.file) for p in planned]
    assert shown == [
        ("Repair", "location_filename", "registry/packets/2026/a.json"),
        ("Repair", "location_filename", "registry/packets/2026/b.json"),
        ("Refusal", "location_filename", "registry/packets/2026/c.json"),
        ("Refusal", "location_filename", "registry/packets/2026/d.json"),
        ("Refusal", "location_filename", "registry/packets/2026/e.json"),
        ("Refusal", "location_filename", "registry/packets/2026/f.json"),
        ("Refusal", "location_filename", "registry/packets/2026/g.json"),
        ("Repair", "location_filename", "top.json"),
    ]
    assert planned[0].final == "registry/packets/2026/20260101-a-moved.json"
    assert planned[1].final == f"registry/packets/2026/{longest}.json"
    assert planned[2].reason == f"{too_long!r} is too long for a file name"
    assert planned[3].reason == "'x/y' cannot be a file name"
    assert planned[4].reason == "None cannot be a file name"
    assert planned[5].reason == "registry/packets/2026/20260102-taken.json exists already"
    assert planned[6].reason == f"{'x/' + 'c' * 248!r} cannot be a file name"
    assert planned[7].final == "20260103-top.json"


def test_view_stale_plans_each_stale_view_with_what_it_replaces(tmp_path: Path):
    """Over an index holding only what its query reads: each stale view once, in
    path order, with the bytes it replaces (none for a view not there, nor for a
    symlink in its place, which is never read); refused as a whole, naming the
    registry, while a record cannot be read in a repository that commits views."""
    from labnote_index.checks import view_stale

    db = sqlite_utils.Database(tmp_path / "index.db")
    views = {"views/b.csv": "b,new\n", "views/a.csv": "a,new\n", "views/c.csv": "c,new\n"}
    db["generated_views"].insert_all({"path": p, "content": c} for p, c in views.items())
    files = [*views, "views/a.csv"]  # reported twice
    db["findings"].insert_all({"file": f, "check": "view_stale"} for f in files)
    db["findings"].insert({"file": "views/b.csv", "check": "other"})
    db["files"].insert_all(
        [
            {"path": "views/a.csv", "kind": "view", "error": None},
            {"path": "registry/x.json", "kind": "record", "error": None},
        ]
    )
    (tmp_path / "views").mkdir()
    (tmp_path / "views/a.csv").write_text("a,old\n")
    (tmp_path / "elsewhere.csv").write_text("not ours\n")
    (tmp_path / "views/c.csv").symlink_to(tmp_path / "elsewhere.csv")
    planned = list(view_stale.plan(db, tmp_path))
    assert [(type(p).__name__, p.check, p.file, p.final) for p in planned] == [
        ("Repair", "view_stale", "views/a.csv", "views/a.csv"),
        ("Repair", "view_stale", "views/b.csv", "views/b.csv"),
        ("Repair", "view_stale", "views/c.csv", "views/c.csv"),
    ]
    assert [(p.content, p.before) for p in planned] == [
        (b"a,new\n", b"a,old\n"),
        (b"b,new\n", None),
        (b"c,new\n", None),
    ]
    db["files"].insert({"path": "registry/y.json", "kind": "record", "error": "not JSON"})
    (refused,) = view_stale.plan(db, tmp_path)
    assert (type(refused).__name__, refused.check, refused.file) == (
        "Refusal",
        "view_stale",
        "registry/",
    )
    assert "(registry/y.json)" in refused.reason
