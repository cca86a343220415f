"""Hostile shapes at two sizes, ten times apart: a build + check must grow near-linearly.

Each shape is written into a repository of its own (the rest is empty), then
indexed and checked in a process of its own at size N and 10 N; the ratio of
the two times is reported (near-linear: at most 12 for ten times the input).

- tags        one packet with N tags, none of them a tag record (N findings)
- thread      a reply thread N messages long
- cycle       a reply cycle of N messages
- derivation  a derivative_of chain N packets long
- duplicates  N copies of one packet (each a duplicate_id finding)
- lineage     `lineage` of the last packet of an N-long derivative_of chain
- replies     `lineage` of a message with N replies (drawn to a bound in width)
- locked      one locked handoff packet of N files, one of them drifted
- superseded  N superseded versions of one role's milestone packet, and the newest
- base-dups   `check --base` with N copies of one packet at base and at head
- orphans     the story page of one packet, with N unresolved references elsewhere
- misspelt    N packets of one date and length, each citing a misspelling of another
              (each a "did you mean" hint: near-linear, not all pairs)
- keys        one packet with 10 N unknown keys (each a schema_unknown_field finding)
- inputs      one manifest with 2.5 N input_packets, none of them resolving
- markdown    a README of 60 N bytes of '[a](b' (an unclosed link, again and again)

    python bench/scaling.py [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _packet(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "record_type": "packet",
        "schema_version": 1,
        "packet_id": f"20250301-ops-p{i}",
        "created_at": "2025-03-01T09:00:00Z",
        "created_by": "ops",
        "deposited_by": "ops",
        "content_origin": "operator_authored",
        "source_refs": [],
        "source_note": "",
        "derivative_of": [],
        "provenance_coverage": "record_level",
        "source_session": "ops",
        "target_session": "review",
        "topic": "scaling",
        "status": "new",
        "path": "datadrops/2025/p.md",
        "response_expected": False,
        "response_packet_id": None,
        "tags": [],
        "notes": "",
    } | extra


def _message(i: int, reply_to: str | None) -> dict[str, Any]:
    return {
        "record_type": "message",
        "schema_version": 1,
        "message_id": f"20250301-ops-m{i}",
        "created_at": "2025-03-01T09:00:00Z",
        "from_visitor_id": "ops",
        "to_visitor_id": "review",
        "to_group": None,
        "status": "open",
        "path": "messages/open/m.md",
        "tags": [],
        "reply_to": reply_to,
        "reply_expected": False,
        "response_message_id": None,
        "needs_human_relay": False,
        "related_packet": None,
        "related_response": None,
        "summary": "scaling",
        "notes": "",
    }


def _write(root: Path, rel: str, data: Any) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def tags(root: Path, n: int) -> None:
    slugs = [f"t{i}" for i in range(n)]
    _write(root, "registry/packets/2025/20250301-ops-p0.json", _packet(0, tags=slugs))


def thread(root: Path, n: int, cycle: bool = False) -> None:
    for i in range(n):
        parent = f"20250301-ops-m{i - 1}" if i else (f"20250301-ops-m{n - 1}" if cycle else None)
        _write(root, f"registry/messages/open/20250301-ops-m{i}.json", _message(i, parent))


def derivation(root: Path, n: int) -> None:
    for i in range(n):
        extra: dict[str, Any] = {}
        if i:
            extra = {
                "content_origin": "model_generated",
                "derivative_of": [f"20250301-ops-p{i - 1}"],
            }
        _write(root, f"registry/packets/2025/20250301-ops-p{i}.json", _packet(i, **extra))


def duplicates(root: Path, n: int) -> None:
    for i in range(n):
        _write(root, f"registry/packets/2025/copy-{i}.json", _packet(0))


def replies(root: Path, n: int) -> None:
    _write(root, "registry/messages/open/20250301-ops-m0.json", _message(0, None))
    for i in range(1, n + 1):
        _write(
            root, f"registry/messages/open/20250301-ops-m{i}.json", _message(i, "20250301-ops-m0")
        )


def _manifest(version: int, status: str) -> dict[str, Any]:
    return {
        "schema_version": "0.1",
        "role": "architect",
        "milestone": "m1",
        "packet_version": f"packet-v{version:03d}",
        "status": status,
        "created_at": "2025-03-01",
        "updated_at": "2025-03-01",
        "summary": "scaling",
        "documents": [],
        "input_packets": [],
        "source_scopes": [],
        "handoff_to": [],
        "open_questions": [],
        "blocked": False,
        "required_confirmations": [],
    }


PACKETS = "docs/workflow/roles/architect/reports/m1"


def locked(root: Path, n: int) -> None:
    base = f"{PACKETS}/packet-v001"
    _write(root, f"{base}/handoff.manifest.json", _manifest(1, "ready_for_next_role"))
    manifest = (root / base / "handoff.manifest.json").read_bytes()
    files = [{"path": "handoff.manifest.json", "sha256": hashlib.sha256(manifest).hexdigest()}]
    for i in range(n):
        _write(root, f"{base}/part-{i}.md", f"part {i}\n")
        digest = hashlib.sha256(b"drifted\n" if i == 0 else f"part {i}\n".encode()).hexdigest()
        files.append({"path": f"part-{i}.md", "sha256": digest})
    lock = {k: v for k, v in _manifest(1, "ready_for_next_role").items() if k in LOCK_FIELDS}
    _write(root, f"{base}/packet.lock.json", lock | {"files": files})


LOCK_FIELDS = ("schema_version", "role", "milestone", "packet_version", "status")


def superseded(root: Path, n: int) -> None:
    """N versions (numbered past packet-v999 where N asks for it), each superseded
    by the next, and the newest a draft."""
    for v in range(1, n + 2):
        status = "superseded" if v <= n else "draft"
        _write(root, f"{PACKETS}/packet-v{v:03d}/handoff.manifest.json", _manifest(v, status))


def base_duplicates(root: Path, n: int) -> None:
    duplicates(root, n)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"], ["tag", "base"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=GIT)


GIT = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "HOME": "/nonexistent",
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
}


def orphans(root: Path, n: int) -> None:
    _write(root, "registry/packets/2025/20250301-ops-p0.json", _packet(0))
    for i in range(1, n + 1):
        packet = _packet(i, content_origin="model_generated", derivative_of=[f"gone-{i}"])
        _write(root, f"registry/packets/2025/20250301-ops-p{i}.json", packet)


def misspelt(root: Path, n: int) -> None:
    for i in range(n):
        cited = f"20250301-ops-p{(i + 1) % n}"[:-1] + "x"  # one edit from another's ID
        packet = _packet(i, content_origin="model_generated", derivative_of=[cited])
        _write(root, f"registry/packets/2025/20250301-ops-p{i}.json", packet)


def keys(root: Path, n: int) -> None:
    unknown = {f"unknown_{i}": i for i in range(10 * n)}
    _write(root, "registry/packets/2025/20250301-ops-p0.json", _packet(0) | unknown)


def inputs(root: Path, n: int) -> None:
    entries = [{"manifest": f"m/{i}.json"} for i in range(n * 5 // 2)]
    manifest = _manifest(1, "draft") | {"input_packets": entries}
    _write(root, f"{PACKETS}/packet-v001/handoff.manifest.json", manifest)


def markdown(root: Path, n: int) -> None:
    (root / "registry").mkdir(parents=True)
    _write(root, "registry/README.md", "[a](b" * (12 * n))


SHAPES: dict[str, Callable[[Path, int], None]] = {
    "tags": tags,
    "thread": thread,
    "cycle": lambda root, n: thread(root, n, cycle=True),
    "derivation": derivation,
    "duplicates": duplicates,
    "locked": locked,
    "superseded": superseded,
    "misspelt": misspelt,
    "keys": keys,
    "inputs": inputs,
    "markdown": markdown,
}
# Shapes measured by a command other than a build and check of their own.
QUERIED: dict[str, Callable[[Path, int], None]] = {
    "lineage": derivation,
    "replies": replies,
    "base-dups": base_duplicates,
    "orphans": orphans,
}

STORY = """
import asyncio, sys
from labnote_index.web.serve import make_datasette
page = asyncio.run(make_datasette(sys.argv[1]).client.get(sys.argv[2]))
assert page.status_code == 200, page.status_code
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - start


def measure(shape: str, n: int, work: Path) -> float:
    root = work / f"{shape}-{n}"
    (SHAPES.get(shape) or QUERIED[shape])(root, n)
    db = str(work / f"{shape}-{n}.db")
    cli = [sys.executable, "-m", "labnote_index"]
    check = [*cli, "check", str(root), "--db", db, "--jobs", "1", "--format", "json"]
    if shape in SHAPES:
        return timed(check)
    if shape == "base-dups":
        return timed([*check, "--base", "base"])
    subprocess.run([*cli, "build", str(root), "--db", db], cwd=ROOT, capture_output=True)
    if shape == "orphans":
        page = f"/{Path(db).stem}/-/story?node=registry/packets/2025/20250301-ops-p0.json"
        return timed([sys.executable, "-c", STORY, db, page])
    start = f"20250301-ops-p{n - 1}" if shape == "lineage" else "20250301-ops-m0"
    return timed([*cli, "lineage", start, "--db", db, "--format", "json"])


def table(small: int, large: int, only: list[str] | None = None) -> str:
    """The markdown table of every shape (or of ``only``) at both sizes, with the ratio."""
    lines = [
        f"| shape | {small} (s) | {large} (s) | ratio (≤ {12 * large // small // 10}) |",
        "| --- | ---: | ---: | ---: |",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in only or [*SHAPES, *QUERIED]:
            a, b = measure(shape, small, Path(tmp)), measure(shape, large, Path(tmp))
            lines.append(f"| {shape} | {a:.2f} | {b:.2f} | {b / a:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[1000, 10000])
    parser.add_argument("--shapes", nargs="+", choices=[*SHAPES, *QUERIED], help="only these")
    args = parser.parse_args()
    print(table(*args.sizes, only=args.shapes))


if __name__ == "__main__":
    main()
