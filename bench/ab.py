"""A/B: two revisions of labnote-index timed side by side, in one run, on one
generated repository, so that a slower build is seen before it lands.

Each revision is checked out into a git worktree of its own (``git worktree
add``, no network), and every step runs as ``python -m labnote_index`` from
it, the two revisions alternating run by run (A, B, B, A, A, B, ...) so that
the machine's drift falls on both alike. Steps: a full check (build + checks, one
process, then again with the default number of processes), an incremental
build after one record changed, a build with nothing changed, and a check
into a temporary index (``--no-db``, a CI job's or a hook's first run). The
median of each is reported, with B's ratio to A.

    python bench/ab.py --base d3236aa [--head HEAD] [--packets 10000] [--repeat 5]
                       [--no-work-tree]

The repository is a git work tree with every file committed (as a real one is:
git's answers cost what they cost there), unless ``--no-work-tree``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.generate import generate  # noqa: E402


def worktree(rev: str, into: Path) -> Path:
    """A checkout of ``rev`` in a worktree of its own."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(into), rev], check=True
    )
    return into


def timed(tree: Path, *args: str) -> float:
    # Bytecode is cached, as in an installed tool: PYTHONDONTWRITEBYTECODE would
    # have each run compile every module of its revision again (bench/small.py too).
    dropped = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPATH"] = str(tree)  # this revision's package, not the installed one
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "labnote_index", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree.name}: {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="revision A (the release before)")
    parser.add_argument("--head", default="HEAD", help="revision B (default: HEAD)")
    parser.add_argument("--packets", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--work-tree",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the repository is a git work tree, all committed, as real ones are (default)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="labnote-ab-"))
    trees = {}
    try:
        for name, rev in (("A", args.base), ("B", args.head)):
            trees[name] = worktree(rev, work / name)
        repo = work / "repo"
        records = generate(repo, packets=args.packets, work_tree=args.work_tree)
        packets = sorted((repo / "registry" / "packets").rglob("*.json"))
        times: dict[tuple[str, str], list[float]] = {}
        for n in range(args.repeat):
            # A then B, then B then A: neither always runs after the other.
            for name, tree in list(trees.items())[:: 1 if n % 2 == 0 else -1]:
                db = work / f"{name}.db"
                db.unlink(missing_ok=True)
                full = timed(tree, "check", str(repo), "--db", str(db), "--full", "--jobs", "1")
                times.setdefault((name, "full check"), []).append(full)
                full = timed(tree, "check", str(repo), "--db", str(db), "--full")
                times.setdefault((name, "full check, default processes"), []).append(full)
                edited = packets[n % len(packets)]
                data = json.loads(edited.read_text())
                data["notes"] = f"edit {n} {name}"
                edited.write_text(json.dumps(data, indent=2))
                step = timed(tree, "build", str(repo), "--db", str(db))
                times.setdefault((name, "incremental build after one edit"), []).append(step)
                step = timed(tree, "build", str(repo), "--db", str(db))
                times.setdefault((name, "build with nothing changed"), []).append(step)
                step = timed(tree, "check", str(repo), "--no-db", "--jobs", "1")
                times.setdefault((name, "check --no-db (a temporary index)"), []).append(step)
        where = "a git work tree" if args.work_tree else "a plain directory"
        print(
            f"A = {args.base}, B = {args.head}; {records} records in {where}; "
            f"median of {args.repeat}\n"
        )
        print("| step | A (s) | B (s) | B / A |")
        print("| --- | ---: | ---: | ---: |")
        steps = (
            "full check",
            "full check, default processes",
            "incremental build after one edit",
            "build with nothing changed",
            "check --no-db (a temporary index)",
        )
        for step in steps:
            a = statistics.median(times[("A", step)])
            b = statistics.median(times[("B", step)])
            print(f"| {step} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    finally:
        for tree in trees.values():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
