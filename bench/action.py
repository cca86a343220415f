"""The GitHub Action on a pull request, beside one ``check --base``, in one run.

A generated work tree (bench/generate.py --work-tree; made here unless REPO is
given, and then copied, never changed), a pull request made on it: a commit
that edits --edits packets and has one response answer a packet that is not
there (a new finding). Then, interleaved, each --repeat times: the Action's
step (``action/run.py`` with the environment GitHub gives it for a
``pull_request`` event: the event file, the job summary, GITHUB_OUTPUT, SARIF
asked for), and one ``labnote-index check REPO --no-db --base BASE``, the
command the Action runs once; each run after every file is read once (warm).
The medians and their ratio (the issue's target:
at most 1.3).

    python bench/action.py [REPO] [--packets 10000] [--repeat 5] [--edits 20]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.benchmark import run, touch_one_record, warm  # noqa: E402
from bench.generate import generate  # noqa: E402

CLI = [str(Path(sys.executable).parent / "labnote-index")]
WHO = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return done.stdout.decode().strip()


def pull_request(repo: Path, edits: int) -> str:
    """Commit a pull request's change on ``repo``: ``edits`` packets edited and
    one response's packet one that does not exist. Return the base commit."""
    base = git(repo, "rev-parse", "HEAD")
    for n in range(edits):
        touch_one_record(repo, n, 0)
    # One response answers a packet that is not there: a finding the change made.
    response = sorted((repo / "registry" / "responses").rglob("*.json"))[0]
    record = json.loads(response.read_text())
    record["source_packet_id"] = "20250301-chatgpt-nowhere-at-all"
    response.write_text(json.dumps(record, indent=2) + "\n")
    git(repo, "add", "-A")
    git(repo, *WHO, "commit", "-q", "-m", "a pull request")
    return base


def measure(repo: Path, base: str, repeat: int, work: Path) -> dict[str, float]:
    """The Action's step and one check --base, interleaved; their medians and ratio."""
    event = work / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}))
    summary, output = work / "summary.md", work / "output.txt"
    env = {
        **os.environ,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(work),
        "INPUT_PATH": str(repo),
        "INPUT_SARIF": "true",
    }
    action = [sys.executable, str(ROOT / "action" / "run.py")]
    check = [*CLI, "check", str(repo), "--no-db", "--base", base]
    first = subprocess.run(action, env=env, capture_output=True, text=True)
    if first.returncode != 1 or "::error" not in first.stdout:  # the response's finding
        raise SystemExit(f"the Action did not report the pull request's finding:\n{first}")
    if not summary.read_text().strip() or not (work / "labnote-index.sarif").exists():
        raise SystemExit("the Action wrote no job summary or no SARIF")
    run(check)  # both warmed once
    actions, checks = [], []
    for _ in range(repeat):
        warm(repo)
        actions.append(run(action, env=env).seconds)
        warm(repo)
        checks.append(run(check).seconds)
    action_s, check_s = statistics.median(actions), statistics.median(checks)
    return {"action": action_s, "check": check_s, "ratio": action_s / check_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a work tree (default: generated)")
    parser.add_argument("--packets", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    # Bytecode cached, as an installed tool has it (this machine's shell sets this).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as work:
        repo = Path(work) / "repo"
        if args.repo is None:
            records = generate(repo, args.packets, work_tree=True)
            print(f"generated {records} records (a git work tree)", file=sys.stderr)
        else:
            shutil.copytree(args.repo, repo, symlinks=True)
        base = pull_request(repo, args.edits)
        result = measure(repo, base, args.repeat, Path(work))
    print("| step | median s | x one check --base | target |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| check --no-db --base (one check) | {result['check']:.2f} | 1.00 | |")
    print(f"| the Action's step (summary, annotations, SARIF) | {result['action']:.2f} ", end="")
    print(f"| {result['ratio']:.2f} | 1.3 |")


if __name__ == "__main__":
    main()
