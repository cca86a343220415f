"""Comparing two revisions of a real git repository: transitions, promotions, immutability.

Tests of: ``compare/git.py``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

import labnote_index as li
from labnote_index.checks.catalogue import load_checks
from labnote_index.cli import cli

from .helpers import SAMPLE_REPO, Repo, fetch, git, run_diff

TRANSITION_CHECKS = {c.id for c in load_checks("checks/transitions")}


def transition_findings(repo: Repo, *extra: str) -> list[dict]:
    result = CliRunner().invoke(
        cli,
        [
            "check",
            str(repo.root),
            "--db",
            str(repo.db_path),
            "--base",
            "base",
            "--format",
            "json",
            *extra,
        ],
    )
    assert result.exit_code in (0, 1), result.output
    return [f for f in json.loads(result.stdout) if f["check"] in TRANSITION_CHECKS]


P1 = "registry/packets/2026/20260903-maria-ops-retention-question.json"
P5 = "registry/packets/2026/20260911-codex-web-benchmarks.json"
P8 = "registry/packets/2026/20260915-maria-ops-archive-policy.json"
R1 = "registry/responses/2026/20260903-claude-retention-survey.json"
R2 = "registry/responses/2026/20260906-gemini-retention-summary.json"
M1 = "registry/messages/answered/20260903-maria-ops-retention-kickoff.json"
M7 = "registry/messages/open/20260912-gemini-late-reply.json"
M8 = "registry/messages/archived/20260915-maria-ops-archive-notice.json"
N1 = "registry/notifications/closed/20260903-claude-retention-relay.json"
N3 = "registry/notifications/open/20260912-gemini-late-reply-relay.json"
OLD = "registry/visitors/claude-20260601-0900-research-01.json"
GEMINI = "registry/visitors/gemini-20260903-0800-summary-01.json"
V1 = "registry/visits/2026/20260903-maria-ops-retention-question-visit.json"
ARCHITECT = "docs/workflow/roles/architect/reports/retention-policy/packet-v001"
RESEARCHER = "docs/workflow/roles/researcher/reports/retention-policy/packet-v002"


def _promote(repo: Repo) -> str:
    data = repo.load("registry/tags/proposed/retention.json")
    data.update(
        status="accepted",
        accepted_by="maria-ops",
        accepted_at="2026-09-20T09:00:00Z",
        acceptance_basis="operator_approved_promotion",
    )
    (repo.root / "registry/tags/proposed/retention.json").unlink()
    repo.save("registry/tags/accepted/retention.json", data)
    return "registry/tags/accepted/retention.json"


def _new_tag(repo: Repo, status: str, basis: str | None) -> str:
    data = repo.load("registry/tags/accepted/evaluation.json")
    data.update(tag_slug="fresh", status=status, acceptance_basis=basis)
    if status != "accepted":
        data.update(accepted_by=None, accepted_at=None)
    rel = f"registry/tags/{status}/fresh.json"
    repo.save(rel, data)
    return rel


def _delete(repo: Repo) -> str:
    (repo.root / M7).unlink()
    return M7


def _edit_frozen_packet(repo: Repo) -> str:
    repo.write(f"{ARCHITECT}/architecture.md", "# Architecture, rewritten after handoff\n")
    return f"{ARCHITECT}/handoff.manifest.json"


def _manifest_status(repo: Repo, packet: str, status: str) -> str:
    return repo.edit(f"{packet}/handoff.manifest.json", status=status)


ILLEGAL: list[tuple[str, Callable[[Repo], str]]] = [
    ("status_transition", lambda r: r.edit(P1, status="new")),
    ("status_transition", lambda r: r.edit(P8, status="new")),
    ("status_transition", lambda r: r.edit(R1, status="pending_review")),
    ("status_transition", lambda r: r.edit(M1, status="open")),
    ("status_transition", lambda r: r.edit(M8, status="open")),
    ("status_transition", lambda r: r.edit(N1, status="needed")),
    ("status_transition", lambda r: r.edit(OLD, status="active")),
    (
        "status_transition",
        lambda r: r.edit("registry/tags/deprecated/legacy-csv.json", status="proposed"),
    ),
    ("tag_promotion", _promote),
    ("tag_created_accepted", lambda r: _new_tag(r, "accepted", "operator_approved_promotion")),
    ("record_deleted", _delete),
    ("record_moved", lambda r: r.move(P5, P5.replace("/2026/", "/2025/"))),
    ("visit_changed", lambda r: r.edit(V1, notes="edited later")),
    ("handoff_immutable", _edit_frozen_packet),
    ("handoff_status_backwards", lambda r: _manifest_status(r, ARCHITECT, "draft")),
    ("config_changed", lambda r: r.write("labnote-index.toml", 'extend-exclude = ["notes"]\n')),
]


@pytest.mark.parametrize(
    "check_id, change", ILLEGAL, ids=[f"{c}-{i}" for i, (c, _) in enumerate(ILLEGAL)]
)
def test_illegal_change_is_reported(history: Repo, check_id: str, change):
    target = change(history)
    found = transition_findings(history)
    assert (check_id, target) in {(f["check"], f["file"]) for f in found}, found


def test_every_transition_check_has_an_illegal_case():
    assert {check_id for check_id, _ in ILLEGAL} == TRANSITION_CHECKS


def test_legal_changes_are_not_reported(history: Repo):
    history.edit(P5, status="in_review")
    history.edit(R2, status="accepted", accepted_by="maria-ops", decision_at="2026-09-07T09:00:00Z")
    history.edit(M7, status="acknowledged")
    history.edit(N3, status="told_to_human")
    history.edit(GEMINI, status="active")
    history.edit("registry/tags/proposed/search-index.json", status="deprecated")
    _new_tag(history, "proposed", None)
    rel = history.move(M1, M1.replace("/answered/", "/closed/"))
    history.edit(rel, status="closed")
    _manifest_status(history, RESEARCHER, "ready_for_next_role")
    history.write(
        "registry/packets/2026/20260925-maria-ops-new-question.json",
        (history.root / P1)
        .read_text()
        .replace("20260903-maria-ops-retention-question", "20260925-maria-ops-new-question"),
    )
    assert transition_findings(history) == []


def test_supplied_tag_may_enter_accepted(history: Repo):
    _new_tag(history, "accepted", "operator_supplied")
    assert transition_findings(history) == []


def test_base_is_read_from_git_objects_without_touching_the_tree(history: Repo):
    history.edit(P1, status="new")
    (history.root / M7).unlink()
    status_before = git(history.root, "status", "--porcelain")
    head_before = git(history.root, "rev-parse", "HEAD")
    found = transition_findings(history)
    assert {f["check"] for f in found} == {"status_transition", "record_deleted"}
    assert git(history.root, "status", "--porcelain") == status_before
    assert git(history.root, "rev-parse", "HEAD") == head_before
    assert not (history.root / M7).exists()


def test_head_revision_instead_of_working_tree(history: Repo):
    history.edit(P1, status="new")
    git(history.root, "commit", "-q", "-am", "reopen a packet")
    history.edit(P1, status="answered")  # the working tree is fine again
    assert transition_findings(history) == []
    found = transition_findings(history, "--head", "HEAD")
    assert [(f["check"], f["file"]) for f in found] == [("status_transition", P1)]


def test_diff_lists_changes_record_by_record(history: Repo):
    history.edit(P5, status="in_review")
    history.edit(R2, tags=["retention"])  # drops the provenance tag
    (history.root / M7).unlink()
    rel = history.move(M1, M1.replace("/answered/", "/closed/"))
    history.edit(rel, status="closed")
    _manifest_status(history, RESEARCHER, "ready_for_next_role")
    result = run_diff(history, "--format", "json")
    assert result.exit_code == 0, result.output
    changes = {
        (r["change"], r["record_id"], r["before"], r["after"]) for r in json.loads(result.stdout)
    }
    assert ("status", "20260911-codex-web-benchmarks", "new", "in_review") in changes
    assert ("removed", "20260912-gemini-late-reply", "open", None) in changes
    assert ("moved", "20260903-maria-ops-retention-kickoff", M1, rel) in changes
    assert ("handoff status", RESEARCHER, "draft", "ready_for_next_role") in changes
    edited = [r for r in json.loads(result.stdout) if r["change"] == "edited"]
    assert [(r["record_id"], r["field"]) for r in edited] == [
        ("20260906-gemini-retention-summary", "tags")
    ]
    assert json.loads(edited[0]["after"]) == ["retention"]
    assert "provenance" in json.loads(edited[0]["before"])
    text = CliRunner().invoke(
        cli, ["diff", str(history.root), "--base", "base", "--db", str(history.db_path)]
    )
    assert "status             packet 20260911-codex-web-benchmarks: new -> in_review" in (
        text.stdout
    )


def test_an_edited_field_is_shown_as_written_non_ascii_kept(history: Repo):
    """The before and after of an edit are the field's JSON, its text as it is
    (no \\u escapes): a reader of the diff sees the words changed."""
    before = history.load(P5)["notes"]
    history.edit(P5, notes="Résumé des données — 数据")
    edited = [
        r for r in json.loads(run_diff(history, "--format", "json").stdout) if r["field"] == "notes"
    ]
    assert [(r["before"], r["after"]) for r in edited] == [
        (json.dumps(before, ensure_ascii=False), '"Résumé des données — 数据"')
    ]


def test_a_field_added_or_dropped_as_null_is_an_edit(history: Repo):
    """A field that was not there and is now null (or the other way round) is an
    edit of that field: absent and null are not the same."""
    history.edit(P5, reviewed_by=None)
    data = history.load(R2)
    data["notes"] = None
    history.save(R2, data)
    nulled = "registry/packets/2026/20260912-maria-ops-search-index.json"
    data = history.load(nulled)
    assert data.pop("response_packet_id") is None  # null at the base, gone now
    history.save(nulled, data)
    rows = json.loads(run_diff(history, "--format", "json").stdout)
    edited = {(r["field"], r["before"], r["after"]) for r in rows if r["change"] == "edited"}
    assert ("reviewed_by", None, "null") in edited
    assert ("response_packet_id", "null", None) in edited
    assert any(f == "notes" and a == "null" and b is not None for f, b, a in edited)


def test_a_record_that_can_no_longer_be_read_is_still_told(history: Repo):
    history.write(P5, '{"record_type": "packet",')
    result = run_diff(history, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = [r for r in json.loads(result.stdout) if r["file"] == P5]
    assert rows and "Traceback" not in result.output


def test_diff_shows_reference_changes(history: Repo):
    history.edit(M7, reply_to="20260903-maria-ops-retention-kickoff")
    result = run_diff(history, "--format", "json")
    changes = {
        (r["change"], r["field"], r["before"], r["after"]) for r in json.loads(result.stdout)
    }
    assert ("reference added", "reply_to", None, "20260903-maria-ops-retention-kickoff") in changes
    assert ("reference removed", "reply_to", "20260911-maria-ops-summary-length", None) in changes


def test_not_a_git_repository_is_a_usage_error(tmp_path: Path):
    root = tmp_path / "plain"
    shutil.copytree(SAMPLE_REPO, root)
    result = CliRunner().invoke(
        cli, ["check", str(root), "--db", str(tmp_path / "x.db"), "--base", "base"]
    )
    assert result.exit_code == 2
    assert "git" in result.output and "Traceback" not in result.output


def test_unknown_revision_is_a_usage_error(history: Repo):
    result = CliRunner().invoke(
        cli, ["check", str(history.root), "--db", str(history.db_path), "--base", "no-such-branch"]
    )
    assert result.exit_code == 2
    assert "no-such-branch" in result.output


def test_a_story_tells_what_changed_since_the_base(history: Repo):
    history.edit(P5, status="in_review", topic="Benchmarks, revised")
    transition_findings(history)  # check --base REV --db: the index keeps the changes
    (page, unchanged) = fetch(
        history.db_path,
        f"/{history.db_path.stem}/-/story?node={P5}",
        f"/{history.db_path.stem}/-/story?node={P1}",
    )
    history_part = page.text[page.text.index("<h2>History</h2>") :]
    assert "Since <code>base</code>" in history_part
    assert "in_review" in history_part and "Benchmarks, revised" in history_part
    assert "Unchanged since <code>base</code>" in unchanged.text
    # A plain build describes one revision again: no history left over.
    result = CliRunner().invoke(cli, ["build", str(history.root), "--db", str(history.db_path)])
    assert result.exit_code == 0, result.output
    (page,) = fetch(history.db_path, f"/{history.db_path.stem}/-/story?node={P5}")
    assert (
        "This index holds one revision" in page.text
        and "Benchmarks, revised" not in (page.text[page.text.index("<h2>History</h2>") :])
    )


def run_check(repo: Repo, *extra: str, env: dict[str, str] | None = None, db: bool = False):
    """``check --base base`` in a process of its own (its environment is the point),
    its index at ``repo.db_path`` (``db``) or a temporary one."""
    import subprocess
    import sys

    where = ["--db", str(repo.db_path)] if db else ["--no-db"]
    command = [sys.executable, "-m", "labnote_index", "check", str(repo.root), *where]
    return subprocess.run(
        [*command, "--base", "base", "--format", "json", *extra],
        capture_output=True,
        text=True,
        env=env,
    )


def test_git_dir_in_the_environment_does_not_redirect_the_base(history: Repo, tmp_path: Path):
    """git sets GIT_DIR for hooks: a comparison must still read REPO's history."""
    import os

    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "x").write_text("x")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "another repository, no tag 'base'")
    _delete(history)
    plain = run_check(history)
    assert plain.returncode == 1 and "record_deleted" in plain.stdout, plain.stderr
    hooked = run_check(history, env={**os.environ, "GIT_DIR": str(other / ".git")})
    assert (hooked.returncode, hooked.stdout) == (plain.returncode, plain.stdout), hooked.stderr


def test_a_repository_git_refuses_is_said_so(history: Repo):
    """Another user's repository: git refuses it (dubious ownership); the base
    cannot be read (exit 2, saying why), and annotation paths are warned about."""
    import os

    if os.geteuid() != 0:
        pytest.skip("making a repository another user's needs root (chown)")
    for path in [history.root, *history.root.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    env = {**os.environ, "HOME": str(history.root.parent)}  # no safe.directory of ours
    refused = run_check(history, env=env)
    assert refused.returncode == 2 and "dubious ownership" in refused.stderr, refused.stderr
    assert "safe.directory" in refused.stderr and "no revision" not in refused.stderr
    import subprocess
    import sys

    command = [sys.executable, "-m", "labnote_index", "check", str(history.root), "--no-db"]
    annotated = subprocess.run(
        [*command, "--format", "github"], capture_output=True, text=True, env=env
    )
    assert annotated.returncode == 1 and "warning: git refuses" in annotated.stderr


def test_a_full_temporary_directory_while_reading_a_revision_is_exit_2(
    history: Repo, tmp_path: Path
):
    """A revision written in part would give invented findings: any error
    writing its files is exit 2, saying so."""
    import os
    import subprocess

    _delete(history)
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr.decode().strip()}")
    try:
        full = run_check(history, env={**os.environ, "TMPDIR": str(small)}, db=True)
        head_too = run_check(history, env={**os.environ, "TMPDIR": str(small)})  # --no-db
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert head_too.returncode == 2 and "the disk is full" in head_too.stderr, head_too.stderr
    assert "cannot read the index" not in head_too.stderr
    assert full.returncode == 2, (full.returncode, full.stdout[:300], full.stderr)
    assert "cannot write the revision's files" in full.stderr, full.stderr
    assert "No space left on device" in full.stderr and "Traceback" not in full.stderr


def _baseline_change(history: Repo) -> tuple[str, str]:
    """One finding introduced (an orphaned tag), one repaired (the late reply's
    reply_to fixed), a record moved (its findings stay the same findings)."""
    new = history.edit(
        "registry/packets/2026/20260905-claude-retention-followup.json", tags=["no-such-tag"]
    )
    late = "registry/messages/open/20260912-gemini-late-reply.json"
    history.edit(late, reply_to=None)
    views = CliRunner().invoke(cli, ["views", str(history.root), "--db", str(history.db_path)])
    assert views.exit_code == 0, views.output  # the views follow: only the two change
    return new, late


def test_new_only_reports_what_the_change_introduced(history: Repo):
    new, _ = _baseline_change(history)
    args = ["check", str(history.root), "--base", "base", "--db", str(history.db_path)]
    everything = CliRunner().invoke(cli, args)
    assert everything.exit_code == 1, everything.output
    only = CliRunner().invoke(cli, [*args, "--new-only", "--format", "json"])
    assert only.exit_code == 1, only.output
    rows = json.loads(only.output)
    assert {(r["check"], r["file"]) for r in rows} == {("tag_unresolved", new)}
    text = CliRunner().invoke(cli, [*args, "--new-only"]).output
    at_base = len(json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)) - 1
    assert f"1 new, {at_base} already at base (not shown: --new-only), 1 repaired" in text
    # Nothing new: the gate passes though the base had errors.
    history.edit(new, tags=[])
    CliRunner().invoke(cli, ["views", str(history.root), "--db", str(history.db_path)])
    passing = CliRunner().invoke(cli, [*args, "--new-only"])
    assert passing.exit_code == 0, passing.output


def test_sarif_marks_each_result_new_unchanged_or_absent(history: Repo):
    from sarif_pydantic import Sarif

    new, late = _baseline_change(history)
    args = ["check", str(history.root), "--base", "base", "--format", "sarif", "--no-db"]
    result = CliRunner().invoke(cli, args)
    log = json.loads(result.output)
    Sarif.model_validate(log)
    states = {}
    for r in log["runs"][0]["results"]:
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        states.setdefault(r["baselineState"], set()).add((r["ruleId"], uri))
    assert states["new"] == {("tag_unresolved", new)}
    assert ("reference_unresolved", late) in states["absent"]
    assert states["unchanged"] and not states["unchanged"] & states["new"]
    absent = [r for r in log["runs"][0]["results"] if r["baselineState"] == "absent"]
    assert all(r["kind"] == "pass" and r["level"] == "none" for r in absent)


def test_a_moved_record_keeps_its_findings_unchanged(history: Repo):
    """Matched by check, record and field, not by file or line."""
    late = "registry/messages/open/20260912-gemini-late-reply.json"
    (history.root / late).write_text(json.dumps(history.load(late), indent=8) + "\n")
    args = ["check", str(history.root), "--base", "base", "--no-db", "--new-only"]
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert json.loads(result.output) == [], result.output


def test_baseline_states_are_forgotten_by_the_next_build(history: Repo):
    """A later build without --base (the cache, the same --db) says nothing of a
    base it was not compared with."""
    _baseline_change(history)
    args = ["check", str(history.root), "--db", str(history.db_path)]
    CliRunner().invoke(cli, [*args, "--base", "base"])
    assert {f.baseline for f in li.findings(history.db_path)} >= {"new", "unchanged"}
    compared = sqlite_utils.Database(history.db_path)
    changes = compared.table("changes")
    assert changes.count > 0
    # Its columns as metadata.yml and its page name them, a row an id (the row
    # page's address), and its facets' columns indexed.
    columns = ["id", "change", "record_type", "record_id", "file", "field", "before", "after"]
    assert [c.name for c in changes.columns] == columns and changes.pks == ["id"]
    assert all(isinstance(row["id"], int) for row in changes.rows)
    indexed = {tuple(i.columns) for i in changes.indexes}
    assert indexed == {("file",), ("record_type", "record_id"), ("change",)}
    compared.close()
    history.edit("registry/packets/2026/20260905-claude-retention-followup.json", notes="again")
    CliRunner().invoke(cli, args)
    assert {f.baseline for f in li.findings(history.db_path)} == {None}
    assert li.absent_findings(history.db_path) == []
    index = sqlite_utils.Database(history.db_path)
    assert not index.table("changes").exists()  # its changes went with it
    assert index.table("build_info").count_where("key = 'base'") == 0
    index.close()
    sarif = json.loads(CliRunner().invoke(cli, [*args, "--format", "sarif"]).output)
    assert all("baselineState" not in r for r in sarif["runs"][0]["results"])


def test_a_comparison_is_forgotten_by_a_check_of_the_same_unchanged_files(history: Repo):
    """Nothing changed since a check --base: the next check without it still
    writes the index (the comparison describes that check, not this one), while
    a check of an index never compared, nothing changed, leaves it as it is."""
    _baseline_change(history)
    args = ["check", str(history.root), "--db", str(history.db_path), "--format", "json"]
    CliRunner().invoke(cli, [*args, "--base", "base"])
    assert sqlite_utils.Database(history.db_path).table("changes").exists()
    forgot = CliRunner().invoke(cli, args)
    assert "note:" not in forgot.stderr  # forgotten by an incremental build, not rebuilt
    index = sqlite_utils.Database(history.db_path)
    assert not index.table("changes").exists()
    assert index.table("build_info").count_where("key = 'base'") == 0
    # What the index says of itself is all there still, the base alone gone.
    kept = {row["key"] for row in index.table("build_info").rows}
    index.close()
    fresh = history.db_path.with_name("fresh.db")
    CliRunner().invoke(cli, ["check", str(history.root), "--db", str(fresh)])
    assert kept == {row["key"] for row in sqlite_utils.Database(fresh).table("build_info").rows}
    before = _written(history.db_path)
    again = CliRunner().invoke(cli, args)
    assert again.exit_code in (0, 1) and _written(history.db_path) == before


def _written(db_path: Path) -> tuple[int, int]:
    st = db_path.stat()
    return st.st_ino, st.st_mtime_ns


def test_base_of_a_repository_in_a_sub_directory_of_the_work_tree(tmp_path: Path, monkeypatch):
    """The Action with `path: lab`: the base is lab/ of the base revision, and so
    is its configuration; an unchanged tree has no new finding and no change."""
    top = tmp_path / "work"
    shutil.copytree(SAMPLE_REPO, top / "lab")
    (top / "README.md").write_text("# Another project\n\n[x](missing.md)\n")
    (top / "labnote-index.toml").write_text('severity = {stray_file = "off"}\n')
    (top / "lab" / "labnote-index.toml").write_text('severity = {legacy_spelling = "off"}\n')
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "base")
    lab = top / "lab"
    plain = li.check(lab)
    for cwd in (top, lab, lab / "registry"):
        monkeypatch.chdir(cwd)
        found = li.check(lab, base="HEAD")
        assert [f.identity for f in found] == [f.identity for f in plain]
        assert {f.baseline for f in found} == {"unchanged"}
        assert not any(f.check == "legacy_spelling" for f in found)  # lab's configuration
        assert li.diff(lab, "HEAD") == []
    (lab / "registry/packets/2026/20260903-maria-ops-retention-question.json").unlink()
    deleted = [f for f in li.check(lab, base="HEAD") if f.baseline == "new"]
    assert {f.check for f in deleted} >= {"record_deleted"}
    changes = li.diff(lab, "HEAD")
    assert [(c.change, c.record_id) for c in changes if c.change == "removed"] == [
        ("removed", "20260903-maria-ops-retention-question")
    ]


def test_the_configuration_narrows_the_transition_checks_too(history: Repo):
    """severity and per-file-ignores govern a transition check as any other: off
    removes its findings, an ignore of its file removes them there only."""
    from labnote_index.read.settings import Settings

    promoted = _promote(history)

    def transitions(settings: Settings | None) -> list[tuple[str, str | None]]:
        found = li.check(history.root, base="base", settings=settings)
        return [(f.check, f.file) for f in found if f.check == "tag_promotion"]

    assert transitions(Settings()) == [("tag_promotion", promoted)]
    assert transitions(Settings(severity={"tag_promotion": "off"})) == []
    assert transitions(Settings(per_file_ignores={promoted: ("tag_promotion",)})) == []
    assert transitions(Settings(per_file_ignores={"elsewhere/*": ("tag_promotion",)})) == [
        ("tag_promotion", promoted)
    ]
    warned = li.check(
        history.root, base="base", settings=Settings(severity={"tag_promotion": "warning"})
    )
    assert {f.severity for f in warned if f.check == "tag_promotion"} == {"warning"}


def _object(root: Path, kind: str, data: bytes) -> str:
    """Write a git object as given (a tree git itself would never make, too)."""
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-t", kind, "--literally", "-w", "--stdin"],
        input=data,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def _tree(root: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree of (mode, name, object id) entries, in the order given."""
    raw = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    return _object(root, "tree", raw)


def test_a_tree_naming_a_path_twice_is_written_with_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A tree git would never make (a name twice, a file and a directory of one
    name, a symlink and a file of one name) is written as its first entry says,
    nothing through a link; a deep tree and a directory gone back to after one
    below it are written whole."""
    import os

    from labnote_index.compare.git import materialize

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    first, second = _object(repo, "blob", b"first\n"), _object(repo, "blob", b"second\n")
    inner = _tree(repo, [("100644", "b", second)])
    deep = inner
    for _ in range(60):
        deep = _tree(repo, [("40000", "level", deep)])
    # "p" holds a directory "q" and then a file "s": written after q's files.
    p = _tree(repo, [("40000", "q", inner), ("100644", "s", first)])
    top = _tree(
        repo,
        [
            ("100644", "a", first),  # a file, then a directory "a": the file stands
            ("40000", "a", inner),
            ("40000", "d", inner),  # a directory, then a file "d": the directory stands
            ("100644", "d", second),
            ("100644", "c", first),  # a file twice: the first stands
            ("100644", "c", second),
            ("120000", "e", _object(repo, "blob", b"c")),  # symlinks come last:
            ("100644", "e", second),  # the file "e" stands
            ("120000", "f", _object(repo, "blob", b"/etc")),  # a link, then files
            ("40000", "f", inner),  # below its name: the directory stands, real
            ("40000", "deep", deep),
            ("40000", "p", p),
        ],
    )
    commit = git(repo, "commit-tree", top, "-m", "odd").strip()
    dest = tmp_path / "tree"
    elsewhere = tmp_path / "cwd"  # nothing is written by a name relative to it
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    open_before = len(os.listdir("/proc/self/fd"))
    materialize(repo, commit, dest)
    assert len(os.listdir("/proc/self/fd")) == open_before  # every directory closed
    assert list(elsewhere.iterdir()) == []
    assert (dest / "a").read_bytes() == b"first\n" and not (dest / "a").is_symlink()
    assert (dest / "d").is_dir() and (dest / "d/b").read_bytes() == b"second\n"
    assert (dest / "c").read_bytes() == b"first\n"
    assert not (dest / "e").is_symlink() and (dest / "e").read_bytes() == b"second\n"
    assert not (dest / "f").is_symlink() and (dest / "f/b").read_bytes() == b"second\n"
    assert (dest.joinpath("deep", *["level"] * 60, "b")).read_bytes() == b"second\n"
    assert (dest / "p/q/b").read_bytes() == b"second\n"
    assert (dest / "p/s").read_bytes() == b"first\n"
    written = sorted(
        os.path.relpath(os.path.join(top_, name), dest)
        for top_, _, names in os.walk(dest)
        for name in names
    )
    assert written == ["a", "c", "d/b", "deep/" + "level/" * 60 + "b", "e", "f/b", "p/q/b", "p/s"]
