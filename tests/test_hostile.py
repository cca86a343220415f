"""The adversarial suite: repositories written carelessly or with intent to harm.

Each case is a promise of the README: a bad file becomes a finding naming it,
every other record is still indexed, nothing outside the repository is read or
written, and exit codes mean what they say.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import sqlite_utils

from labnote_index.importer import build_index
from labnote_index.parse import MAX_DEPTH

from .conftest import SAMPLE_REPO, Repo, cli_as, findings_of, open_copy

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
    assert db["records"].count == 43  # every record but the unreadable one


def test_a_file_that_vanishes_between_listing_and_reading_is_reported_missing(sample_repo: Repo):
    doomed = sample_repo.root / LATE_REPLY

    def remove_it(_: int) -> None:  # the build calls this after each file it reads
        doomed.unlink(missing_ok=True)

    result = build_index(sample_repo.root, sample_repo.db_path, progress=remove_it, jobs=1)
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
    assert f"nested more than {MAX_DEPTH} levels" in errors_by_file(db, "file_unreadable")[PACKET]
    assert db["records"].count == 43


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
