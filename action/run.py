"""The GitHub Action's step: check a LabNote repository against what the event
changed, write the job summary, annotate, and optionally write SARIF, all from
one check (one build and one comparison; --also-write gives the other reports).

Run by action.yml with GitHub's environment (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH,
GITHUB_STEP_SUMMARY, GITHUB_OUTPUT); a test runs it with those set by hand. The
base is chosen as the upstream workflow does: a pull request's base commit; a
push's ``before``; for a new branch (``before`` all zeros) the merge base with
the default branch; otherwise none (the whole repository is checked).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

NO_COMMIT = "0" * 40


def git(repo: Path, *args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def choose_base(repo: Path, event_name: str, event: dict) -> str | None:
    """The revision to compare with, or None to check without one."""
    if event_name in ("pull_request", "pull_request_target"):
        return event.get("pull_request", {}).get("base", {}).get("sha")
    if event_name == "push":
        before = event.get("before") or ""
        if (
            before
            and before != NO_COMMIT
            and git(repo, "cat-file", "-e", f"{before}^{{commit}}") is not None
        ):
            return before
        default = event.get("repository", {}).get("default_branch")
        for ref in (f"origin/{default}", default) if default else ():
            merge_base = git(repo, "merge-base", "HEAD", ref)
            if merge_base:
                return merge_base
    return None


def check(repo: Path, base: str | None, extra: list[str]) -> subprocess.CompletedProcess[str]:
    """One check (one build, one comparison): annotations on stdout, every other
    report written by --also-write as ``extra`` asks."""
    command = [sys.executable, "-m", "labnote_index", "check", str(repo), "--no-db"]
    if base:
        command += ["--base", base]
    return subprocess.run([*command, *extra, "--format", "github"], capture_output=True, text=True)


def main() -> int:
    env = os.environ
    repo = Path(env.get("INPUT_PATH") or ".")
    event_path = env.get("GITHUB_EVENT_PATH")
    event = json.loads(Path(event_path).read_text()) if event_path else {}
    base = env.get("INPUT_BASE") or choose_base(repo, env.get("GITHUB_EVENT_NAME", ""), event)
    extra = []
    if env.get("INPUT_FAIL_ON"):
        extra += ["--fail-on", env["INPUT_FAIL_ON"]]
    if base and env.get("INPUT_NEW_ONLY", "false") == "true":
        extra.append("--new-only")
    print(f"labnote-index: checking {repo}" + (f" against {base}" if base else " (no base)"))
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.md"
        extra += ["--also-write", f"markdown:{summary}"]
        sarif = None
        if env.get("INPUT_SARIF", "false") == "true":
            sarif = Path(env.get("RUNNER_TEMP") or ".") / "labnote-index.sarif"
            extra += ["--also-write", f"sarif:{sarif}"]
        annotations = check(repo, base, extra)
        if annotations.returncode not in (0, 1):  # a usage error, an unreadable repository
            print(annotations.stdout + annotations.stderr, file=sys.stderr)
            return annotations.returncode
        print(annotations.stdout, end="")
        if env.get("GITHUB_STEP_SUMMARY"):
            with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as handle:
                handle.write(summary.read_text(encoding="utf-8") + "\n")
    if sarif is not None and env.get("GITHUB_OUTPUT"):
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as handle:
            handle.write(f"sarif={sarif}\n")
    return annotations.returncode


if __name__ == "__main__":
    sys.exit(main())
