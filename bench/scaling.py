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

    python bench/scaling.py [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import json
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


SHAPES: dict[str, Callable[[Path, int], None]] = {
    "tags": tags,
    "thread": thread,
    "cycle": lambda root, n: thread(root, n, cycle=True),
    "derivation": derivation,
    "duplicates": duplicates,
}


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - start


def measure(shape: str, n: int, work: Path) -> float:
    root = work / f"{shape}-{n}"
    (SHAPES["derivation"] if shape == "lineage" else SHAPES[shape])(root, n)
    db = str(work / f"{shape}-{n}.db")
    cli = [sys.executable, "-m", "labnote_index"]
    if shape == "lineage":
        subprocess.run([*cli, "build", str(root), "--db", db], cwd=ROOT, capture_output=True)
        return timed([*cli, "lineage", f"20250301-ops-p{n - 1}", "--db", db, "--format", "json"])
    return timed([*cli, "check", str(root), "--db", db, "--jobs", "1", "--format", "json"])


def table(small: int, large: int) -> str:
    """The markdown table of every shape at both sizes, with the ratio."""
    lines = [
        f"| shape | {small} (s) | {large} (s) | ratio (≤ {12 * large // small // 10}) |",
        "| --- | ---: | ---: | ---: |",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in [*SHAPES, "lineage"]:
            a, b = measure(shape, small, Path(tmp)), measure(shape, large, Path(tmp))
            lines.append(f"| {shape} | {a:.2f} | {b:.2f} | {b / a:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[1000, 10000])
    args = parser.parse_args()
    print(table(*args.sizes))


if __name__ == "__main__":
    main()
