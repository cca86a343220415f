"""The pre-commit hook in a git work tree, beside the stat walk, in one run.

A generated work tree (bench/generate.py --work-tree; made here unless REPO is
given), the hook's cache primed by one run, then, interleaved, each --repeat
times: one packet edited and the hook run (``check REPO --cache FILE``, a fresh
process as pre-commit starts it), and the stat walk of bench/steps.py (the
floor: every file stat'ed). The medians and their ratio, then where one more
hook run's time goes (LABNOTE_INDEX_PHASES; the rest of its wall time is the
interpreter starting and importing).

    python bench/hook.py [REPO] [--packets 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.benchmark import phases, run, touch_one_record  # noqa: E402
from bench.generate import generate  # noqa: E402

# The console script pre-commit runs (installed beside this Python).
CLI = [str(Path(sys.executable).parent / "labnote-index")]
STEPS = [sys.executable, str(ROOT / "bench" / "steps.py")]


def measure(repo: Path, repeat: int) -> dict[str, object]:
    """The hook after one edit and the stat walk, interleaved; medians, their ratio,
    and the phases of one more hook run."""
    edited = touch_one_record(repo, 0, -1).relative_to(repo)
    hook = [*CLI, "check", str(repo), "--cache", str(edited)]
    run(hook)  # the cache primed (a first run builds it in full)
    walk = [*STEPS, "stat-walk", str(repo)]
    hooks, walks = [], []
    for n in range(repeat):
        touch_one_record(repo, 0, n)
        hooks.append(run(hook).seconds)
        walks.append(run(walk).seconds)
    with tempfile.TemporaryDirectory() as work:
        spent = phases(hook, repo, Path(work))  # after one more edit
    hook_s, walk_s = statistics.median(hooks), statistics.median(walks)
    return {"hook": hook_s, "stat_walk": walk_s, "ratio": hook_s / walk_s, "phases": spent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a work tree (default: generated)")
    parser.add_argument("--packets", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        repo = args.repo
        if repo is None:
            repo = Path(work) / "repo"
            records = generate(repo, args.packets, work_tree=True)
            print(f"generated {records} records (a git work tree)", file=sys.stderr)
        result = measure(repo.resolve(), args.repeat)
    print("| step | median s | x the stat walk |")
    print("| --- | ---: | ---: |")
    print(f"| every file stat'ed (the floor) | {result['stat_walk']:.3f} | 1.00 |")
    print(f"| the hook after one edit | {result['hook']:.3f} | {result['ratio']:.2f} |")
    print()
    print("| phase of one hook run | s |")
    print("| --- | ---: |")
    for phase, seconds in result["phases"].items():  # type: ignore[attr-defined]
        print(f"| {phase} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
