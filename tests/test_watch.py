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

from .helpers import ROOT, SAMPLE_REPO, signals_as_usual

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
        preexec_fn=signals_as_usual,
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


def test_a_storm_of_edits_is_one_rebuild(tmp_path: Path):
    """Three seconds of edits, one every 0.05 s (eight times quicker than the 0.4 s
    quiet period that ends a burst): one rebuild for the storm (two at most,
    when the last edits land while it runs), not one every 0.18 s."""
    import threading

    from labnote_index import api
    from labnote_index.watch import watch_repository

    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    db = tmp_path / "watched.db"
    api.build(repo, db)
    builds: list[object] = []
    stop = threading.Event()
    watcher = threading.Thread(
        target=watch_repository,
        args=(api.build, repo, db, builds.append, lambda: None, stop),
        daemon=True,
    )
    watcher.start()
    time.sleep(0.5)  # the watcher is watching
    path = repo / PACKET
    data = json.loads(path.read_text())
    storm_ends = time.monotonic() + 3
    n = 0
    while time.monotonic() < storm_ends:
        n += 1
        data["notes"] = f"edit {n}"
        path.write_text(json.dumps(data, indent=2))
        time.sleep(0.05)
    deadline = time.monotonic() + WITHIN
    while not builds and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # quiet: any rebuild still owed has come
    stop.set()
    watcher.join(10)
    assert n >= 30 and 1 <= len(builds) <= 2, (n, builds)
    assert all(not isinstance(b, Exception) for b in builds), builds
    from labnote_index.api import open_index

    row = open_index(db).execute("SELECT json FROM record_json WHERE file = ?", [PACKET])
    assert json.loads(row.fetchone()[0])["notes"] == f"edit {n}"  # the last edit is served
