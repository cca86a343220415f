"""The GitHub Action (action.yml, action/run.py), run as GitHub would run its
step: a real git repository, GitHub's environment variables set by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from .helpers import ROOT, Repo, git

SCRIPT = ROOT / "action" / "run.py"
NEW = "registry/packets/2026/20260905-claude-retention-followup.json"


def changed(history: Repo) -> tuple[str, str]:
    """(base commit, head commit): the head adds one finding (an unknown tag)."""
    base = git(history.root, "rev-parse", "HEAD").strip()
    git(history.root, "checkout", "-q", "-b", "feature")
    history.edit(NEW, tags=["no-such-tag"])
    subprocess.run(
        [
            sys.executable,
            "-m",
            "labnote_index",
            "views",
            str(history.root),
            "--db",
            str(history.db_path),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    git(history.root, "commit", "-q", "-am", "a change")
    return base, git(history.root, "rev-parse", "HEAD").strip()


def run_action(history: Repo, event_name: str, event: dict, **inputs: str):
    work = history.root.parent
    (work / "event.json").write_text(json.dumps(event))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(work / "event.json"),
        "GITHUB_STEP_SUMMARY": str(work / "summary.md"),
        "GITHUB_OUTPUT": str(work / "output.txt"),
        "RUNNER_TEMP": str(work),
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    for name in ("summary.md", "output.txt"):
        (work / name).write_text("")
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=history.root, env=env, capture_output=True, text=True
    )
    return done, (work / "summary.md").read_text(), (work / "output.txt").read_text()


def test_a_pull_request_is_checked_against_its_base(history: Repo):
    base, _ = changed(history)
    event = {"pull_request": {"base": {"sha": base}}}
    done, summary, _ = run_action(history, "pull_request", event)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"against {base}" in done.stdout
    assert "::error file=" in done.stdout and "title=tag_unresolved" in done.stdout
    assert summary.startswith("## labnote") and "1 new" in summary
    only_new, _, _ = run_action(history, "pull_request", event, new_only="true")
    errors = [line for line in only_new.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "tag_unresolved" in errors[0]


def test_a_push_is_checked_against_before_or_the_merge_base(history: Repo):
    base, head = changed(history)
    done, _, _ = run_action(history, "push", {"before": base, "after": head})
    assert f"against {base}" in done.stdout
    new_branch = {"before": "0" * 40, "after": head, "repository": {"default_branch": "main"}}
    done, _, _ = run_action(history, "push", new_branch)
    assert f"against {base}" in done.stdout  # the merge base with main
    unknown = {"before": "0" * 40, "repository": {"default_branch": "nowhere"}}
    done, _, _ = run_action(history, "push", unknown)
    assert "(no base)" in done.stdout and done.returncode == 1


def test_sarif_is_written_with_baseline_states_and_named_as_an_output(history: Repo):
    base, _ = changed(history)
    done, _, output = run_action(
        history, "pull_request", {"pull_request": {"base": {"sha": base}}}, sarif="true"
    )
    (line,) = output.splitlines()
    assert line.startswith("sarif=")
    log = json.loads(Path(line.removeprefix("sarif=")).read_text())
    states = {r["baselineState"] for r in log["runs"][0]["results"]}
    assert "new" in states and "unchanged" in states


def test_the_action_runs_the_script_with_the_inputs_it_declares():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    assert "action/run.py" in step["run"] and SCRIPT.is_file()
    declared = {name.upper().replace("-", "_") for name in action["inputs"]}
    given = {k.removeprefix("INPUT_") for k in step["env"]}
    assert declared == given
    source = SCRIPT.read_text()
    assert all(f"INPUT_{name}" in source for name in declared)
