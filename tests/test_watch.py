"""serve --watch: a record edited on disk is in the served findings soon after,
without a restart."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .helpers import ROOT, SAMPLE_REPO

PACKET = "registry/packets/2026/20260905-claude-retention-followup.json"
WITHIN = 30  # seconds: the debounce and an incremental build take well under one


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
        return answer.read().decode()


def checks_found(base: str) -> list[str]:
    rows = json.loads(get(base + "/findings.json?_shape=array&_size=max"))
    return sorted(r["check"] for r in rows)


def wait_for(base: str, wanted, what: str) -> list[str]:
    deadline = time.monotonic() + WITHIN
    while time.monotonic() < deadline:
        found = checks_found(base)
        if wanted(found):
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not served within {WITHIN} s (serving {found})")


def test_served_findings_follow_edits_without_a_restart(tmp_path: Path):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    db = tmp_path / "watched.db"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "labnote_index",
            "serve",
            str(db),
            "--watch",
            str(repo),
            "--port",
            "0",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert "Serving" in line, line + (server.stderr.read() if server.poll() else "")
        base = line.split(" at ", 1)[1].split(" ", 1)[0]
        before = checks_found(base)
        assert "Indexed " in get(base)  # the database page says when it was built
        original = (repo / PACKET).read_bytes()
        data = json.loads(original)
        data["tags"] = ["no-such-tag"]
        (repo / PACKET).write_text(json.dumps(data, indent=2))
        after = wait_for(
            base,
            lambda f: f.count("tag_unresolved") > before.count("tag_unresolved"),
            "the new finding",
        )
        (repo / PACKET).write_bytes(original)  # repaired
        wait_for(base, lambda f: f == before, "the repair")
        assert after != before
        # One pin at a time beside the index: each rebuilt index's replaces the last.
        pins = [p for p in tmp_path.iterdir() if p.name.startswith(".labnote-serve-")]
        assert len(pins) == 1
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(20)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo", "watched.db"]
