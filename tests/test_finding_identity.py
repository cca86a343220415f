"""A finding's identity: one definition that finds the same finding again (a second
run, a base revision) and tells two findings apart (GitLab, SARIF, --new-only)."""

from __future__ import annotations

import json

from click.testing import CliRunner

import labnote_index as li
from labnote_index.cli import cli

from .helpers import Repo, git

README = "registry/README.md"
ARTIFACT = "datadrops/2026/20260903-maria-ops-retention-question.md"
ARCHITECT = "docs/workflow/roles/architect/reports/retention-policy/packet-v001"


def _json(*args: object) -> list[dict]:
    result = CliRunner().invoke(cli, [str(a) for a in args] + ["--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _commit(repo: Repo, message: str = "base") -> None:
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", message)
    git(repo.root, "tag", "-f", "base")


def test_a_second_check_base_on_the_same_index_gives_the_same_findings(history: Repo):
    """The issue's case: a promoted tag, a deleted record, a configuration change
    and an edited locked packet file; each run 12, then 16, then 20 'new'."""
    data = history.load("registry/tags/proposed/retention.json")
    data.update(status="accepted", accepted_by="maria-ops", accepted_at="2026-09-20T09:00:00Z")
    (history.root / "registry/tags/proposed/retention.json").unlink()
    history.save("registry/tags/accepted/retention.json", data)
    (history.root / "registry/messages/open/20260912-gemini-late-reply.json").unlink()
    history.write("labnote-index.toml", 'extend-exclude = ["notes"]\n')
    history.write(f"{ARCHITECT}/architecture.md", "# rewritten after handoff\n")
    args = ("check", history.root, "--base", "base", "--db", history.db_path)
    runs, states = [], []
    for _ in range(3):
        runs.append(_json(*args))
        states.append(sorted((f.identity, f.baseline) for f in li.findings(history.db_path)))
    assert runs[0] == runs[1] == runs[2]
    assert states[0] == states[1] == states[2]
    assert sum(baseline == "new" for _, baseline in states[0]) >= 4
    rows = list(
        li.open_index(history.db_path).query(
            "SELECT [check], count(*) AS n FROM findings GROUP BY 1"
        )
    )
    assert all(r["n"] == sum(f["check"] == r["check"] for f in runs[0]) for r in rows)
    identities = [f["identity"] for f in runs[0]]
    assert len(identities) == len(set(identities))


def test_a_finding_on_no_record_is_unchanged_at_the_base(history: Repo):
    """A stray file and a broken README link have no record type: their identity
    holds no NULL, so a legacy repository's debt is 'unchanged', not new each run."""
    history.write("registry/notes.txt", "a stray file\n")
    history.write(README, (history.root / README).read_text() + "\n[gone](missing.md)\n")
    _commit(history)
    found = li.check(history.root, base="base")
    legacy = [f for f in found if f.record_type is None]
    assert {f.check for f in legacy} >= {"stray_file", "markdown_link_missing"}
    assert {f.baseline for f in found} == {"unchanged"}
    assert _json("check", history.root, "--base", "base", "--no-db", "--new-only") == []
    sarif = CliRunner().invoke(
        cli, ["check", str(history.root), "--base", "base", "--no-db", "--format", "sarif"]
    )
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    prints = [r["partialFingerprints"]["labnoteIdentity/v1"] for r in results]
    assert len(prints) == len(set(prints))  # none both new and absent


def test_a_second_broken_link_in_one_file_is_new(history: Repo):
    """Two links of one file are two findings: the key is not (check, file, field)."""
    text = (history.root / ARTIFACT).read_text()
    history.write(ARTIFACT, text + "\nSee [one](missing-one.md).\n")
    _commit(history)
    history.write(ARTIFACT, text + "\nSee [one](missing-one.md).\n\nAnd [two](missing-two.md).\n")
    new = _json("check", history.root, "--base", "base", "--no-db", "--new-only")
    assert [(f["check"], f["file"]) for f in new] == [("markdown_link_missing", ARTIFACT)]
    assert "missing-two.md" in new[0]["message"]


def test_gitlab_fingerprints_are_one_per_finding(sample_repo: Repo, tmp_path):
    """Two broken links on one line, two findings alike but for their message:
    every issue has a fingerprint of its own (GitLab merges issues that share one)."""
    sample_repo.write(ARTIFACT, "[a](gone.md) [a](gone.md) [b](also-gone.md)\n")
    sample_repo.edit(
        "registry/packets/2026/20260912-maria-ops-search-index.json",
        tags=["vector-search", "no-such", "vector-search"],
    )
    result = CliRunner().invoke(
        cli, ["check", str(sample_repo.root), "--no-db", "--format", "gitlab"]
    )
    issues = json.loads(result.stdout)
    prints = [i["fingerprint"] for i in issues]
    assert len(issues) >= 12 and len(prints) == len(set(prints))
    links = [i for i in issues if i["check_name"] == "markdown_link_missing"]
    assert len(links) == 3
    # The same finding keeps its fingerprint from one run to the next.
    again = CliRunner().invoke(
        cli, ["check", str(sample_repo.root), "--no-db", "--format", "gitlab"]
    )
    assert [i["fingerprint"] for i in json.loads(again.stdout)] == prints


def test_a_markdown_link_finding_has_its_line_and_column(sample_repo: Repo):
    sample_repo.write(ARTIFACT, "# Title\n\nText and [x](nowhere.md)\n")
    found = _json("check", sample_repo.root, "--no-db")
    link = next(f for f in found if f["check"] == "markdown_link_missing")
    assert (link["line"], link["column"]) == (3, 10)


def test_a_duplicated_key_is_located_at_its_last_value(sample_repo: Repo):
    """The last of two equal keys is the value indexed and judged: the finding
    points there, not at the first, valid one."""
    rel = "registry/packets/2026/20260912-maria-ops-search-index.json"
    data = sample_repo.load(rel)
    data.pop("tags")
    body = json.dumps(data, indent=2)
    body = '{\n  "tags": ["evaluation"],' + body[1:-2] + ',\n  "tags": ["vector-search"]\n}\n'
    (sample_repo.root / rel).write_text(body)
    found = _json("check", sample_repo.root, "--no-db")
    tag = next(f for f in found if f["check"] == "tag_unresolved" and f["file"] == rel)
    last_line = body[: body.rindex('"tags"')].count("\n") + 1
    assert last_line > 2 and tag["line"] == last_line, (tag, last_line)
