"""Findings that never mislead (#24): one broken file is one finding on that
file, and a node of the index still, never a cascade of wrong stories."""

from __future__ import annotations

import json

from click.testing import CliRunner

from labnote_index.cli import cli

from .conftest import Repo, fetch, findings_of, run_diff

PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"
PACKET_ID = "20260903-maria-ops-retention-question"


def truncate(repo: Repo, rel: str) -> None:
    path = repo.root / rel
    path.write_bytes(path.read_bytes()[:200])


def test_a_broken_record_is_still_the_record_its_citers_name(history: Repo):
    index = history.index()
    citers = {
        r["source_file"]
        for r in index.query("SELECT source_file FROM refs WHERE target_id = ?", [PACKET_ID])
    }
    assert len(citers) >= 2
    truncate(history, PACKET)
    found = findings_of(history.index())
    on_citers = [f for f in found if f["file"] in citers]
    assert not [f for f in on_citers if f["check"] == "reference_unresolved"], on_citers
    told = [f for f in on_citers if f["check"] == "reference_unreadable"]
    assert {f["file"] for f in told} == citers
    assert all(PACKET in f["message"] and "create the missing" not in f["hint"] for f in told)
    assert [f["check"] for f in found if f["file"] == PACKET] == ["file_unreadable"]
    # Its story is its own: the packet, not MISSING, and not a 404 "Lineage".
    (page,) = fetch(history.db_path, f"/{history.db_path.stem}/-/story?node={PACKET}")
    assert page.status_code == 200 and PACKET_ID in page.text
    # Still there: not removed in a diff, not deleted for --base.
    diff = json.loads(run_diff(history, "--format", "json").output)
    assert [(d["change"], d["file"]) for d in diff if d["record_id"] == PACKET_ID] == [
        ("unreadable", PACKET)
    ]
    args = ["check", str(history.root), "--no-db", "--base", "base", "--format", "json"]
    compared = json.loads(CliRunner().invoke(cli, args).output)
    assert not [f for f in compared if f["check"] == "record_deleted"]
