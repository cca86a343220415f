"""The shapes of the two public repositories the formats come from, written here:
a Code-role-like workflow repository (tests/fixtures/code_role) and the
LabNote repository's own layout rules, Markdown links and the configuration file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index import api
from labnote_index.cli import cli
from labnote_index.errors import ConfigError

from .helpers import ROOT, Repo, findings_of, git

CODE_ROLE = ROOT / "tests" / "fixtures" / "code_role"
TEMPLATE = "docs/workflow/roles/{role}/templates/handoff.manifest.json"
PACKET = "docs/workflow/roles/{role}/reports/search-rollout/packet-v001"


@pytest.fixture
def code_role(tmp_path: Path) -> Repo:
    root = tmp_path / "code_role"
    shutil.copytree(CODE_ROLE, root)
    return Repo(root, tmp_path / "cr.db")


def check(*args: str | Path) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, ["check", *map(str, args), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


# Code-role as it is today


def test_a_code_role_checkout_checks_clean(code_role: Repo):
    code, found = check(code_role.root, "--no-db")
    assert (code, found) == (0, [])
    db = code_role.index()
    # The fixture has what made the false errors: templates, return_to strings,
    # artifact_policy, placeholder dates and <milestone> paths, and links.
    assert db["handoff_templates"].count == 4
    assert db["handoff_packets"].count == 2
    assert db["markdown_links"].count > 20


def test_return_to_string_and_handoff_to_list_both_kept(code_role: Repo):
    db = code_role.index()
    packet = db["handoff_packets"].get(PACKET.format(role="architect"))
    assert (packet["return_to"], packet["handoff_to"]) == ("workflow-orchestrator", None)
    template = db["handoff_templates"].get(TEMPLATE.format(role="researcher"))
    assert (template["return_to"], json.loads(template["handoff_to"])) == (None, ["product"])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.pop("return_to"), "handoff_to (or return_to) is missing"),
        (lambda m: m.update(return_to=["workflow-orchestrator"]), "return_to must be"),
        (lambda m: m.update(handoff_to="reviewer"), "handoff_to must be a JSON array"),
    ],
    ids=["neither", "return_to-list", "handoff_to-string"],
)
def test_where_a_packet_goes_next_is_a_defect_only_when_absent_or_mistyped(
    code_role: Repo, change, message
):
    rel = f"{PACKET.format(role='architect')}/handoff.manifest.json"
    data = code_role.load(rel)
    change(data)
    code_role.save(rel, data)
    found = [f for f in findings_of(code_role.index()) if f["check"] == "handoff_schema"]
    assert [f["file"] for f in found] == [rel]
    assert message in found[0]["message"]


def test_a_template_is_checked_as_a_manifest_never_as_a_packet(code_role: Repo):
    db = code_role.index()
    templates = {r["manifest"] for r in db["handoff_templates"].rows}
    nodes = {r["node"] for r in db.query("SELECT node FROM lineage_nodes")}
    assert templates and not templates & nodes  # never a lineage node
    assert not list(db.query("SELECT * FROM input_packets WHERE consumer LIKE '%/templates'"))
    # A consumer naming a template's manifest does not resolve to it.
    rel = f"{PACKET.format(role='architect')}/handoff.manifest.json"
    data = code_role.load(rel)
    data["input_packets"][0]["manifest"] = TEMPLATE.format(role="researcher")
    code_role.save(rel, data)
    found = findings_of(code_role.index())
    assert "input_packet_unresolved" in {f["check"] for f in found}
    # Its structure is checked: a status, a type, a document path.
    template = TEMPLATE.format(role="reviewer")
    data = code_role.load(template)
    data.update(status="accepted", blocked="no")
    data["documents"][0]["path"] = "../../escape.md"
    code_role.save(template, data)
    found = {(f["check"], f["record_type"]) for f in findings_of(code_role.index())}
    assert {
        ("handoff_status", "handoff_template"),
        ("handoff_schema", "handoff_template"),
        ("handoff_document_path", "handoff_template"),
    } <= found


def test_a_templates_row_says_what_it_says(code_role: Repo):
    """Every field of a template's row, as its manifest gives it (for browsing)."""
    template = TEMPLATE.format(role="architect")
    data = code_role.load(template)
    data.update(return_to="reviewer", handoff_to=["reviewer", "implementer"], priority="high")
    code_role.save(template, data)
    row = code_role.index()["handoff_templates"].get(template)
    assert {k: row[k] for k in ("dir_role", "role", "milestone", "packet_version", "status")} == {
        "dir_role": "architect",
        "role": "architect",
        "milestone": "template",
        "packet_version": "packet-v001",
        "status": "draft",
    }
    assert row["summary"] == data["summary"] and row["schema_version"] == "0.1"
    assert json.loads(row["documents"]) == [d["path"] for d in data["documents"]]
    assert json.loads(row["handoff_to"]) == ["reviewer", "implementer"]
    assert row["return_to"] == "reviewer"
    assert json.loads(row["extra"]) == {"priority": "high"} and row["valid"] == 1
    plain = code_role.index()["handoff_templates"].get(TEMPLATE.format(role="reviewer"))
    assert plain["extra"] is None  # no unknown field: nothing, not "{}"


def test_unknown_manifest_fields_are_reported_only_when_asked(code_role: Repo):
    assert findings_of(code_role.index()) == []
    (code_role.root / "labnote-index.toml").write_text(
        '[severity]\nhandoff_unknown_field = "warning"\n'
    )
    found = [f for f in findings_of(code_role.index()) if f["check"] == "handoff_unknown_field"]
    assert {(f["field"], f["severity"]) for f in found} == {("artifact_policy", "warning")}
    assert len(found) == 3  # two packets and the implementer's template


# The LabNote repository's own rules


def test_year_directories_are_optional(sample_repo: Repo):
    moved = sample_repo.move(
        "registry/packets/2026/20260903-maria-ops-retention-question.json",
        "registry/packets/20260903-maria-ops-retention-question.json",
    )
    before = {(f["file"], f["check"]) for f in findings_of(sample_repo.index())}
    assert not [f for f in before if f[0] == moved]
    # Filed under a year directory, the year must agree.
    sample_repo.move(moved, "registry/packets/2025/20260903-maria-ops-retention-question.json")
    after = {f["check"] for f in findings_of(sample_repo.index())}
    assert "location_year_dir" in after


def test_a_record_may_sit_anywhere_under_its_bucket(sample_repo: Repo):
    rel = "registry/messages/open/20260917-codex-handoff-status.json"
    deeper = sample_repo.move(rel, "registry/messages/open/2026/20260917-codex-handoff-status.json")
    visitor = sample_repo.move(
        "registry/visitors/chatgpt-20260902-1430-review-01.json",
        "registry/visitors/2026/chatgpt-20260902-1430-review-01.json",
    )
    found = findings_of(sample_repo.index())
    assert not [f for f in found if f["file"] in (deeper, visitor)]
    # A tag must still be a direct child of its status directory.
    tag = sample_repo.move(
        "registry/tags/accepted/evaluation.json", "registry/tags/accepted/x/evaluation.json"
    )
    found = findings_of(sample_repo.index())
    assert ("location_nesting", tag) in {(f["check"], f["file"]) for f in found}


def test_readme_only_at_the_registry_root(sample_repo: Repo):
    stray = sample_repo.write("registry/packets/README.md", "# Packets\n")
    found = {(f["check"], f["file"]) for f in findings_of(sample_repo.index())}
    assert ("stray_file", stray) in found
    assert not [f for f in found if f[1] == "registry/README.md"]


def test_a_deprecated_tag_fails_check(sample_repo: Repo):
    found = findings_of(sample_repo.index())
    deprecated = [f for f in found if f["check"] == "tag_deprecated"]
    assert [f["severity"] for f in deprecated] == ["error"]


# Markdown links


def test_markdown_links_are_indexed_and_checked(code_role: Repo):
    readme = "docs/workflow/roles/README.md"
    text = (code_role.root / readme).read_text()
    code_role.write(
        readme,
        text + "\nSee [gone](gone.md), [up](../../../../outside.md), [abs](/etc/passwd),\n"
        "[escape](link/x.md), [code](<./researcher/ROLE.md#top>), ![img](nope.png).\n",
    )
    (code_role.root / "docs/workflow/roles/link").symlink_to("/etc")
    found = [
        (f["check"], f["file"], f["message"])
        for f in findings_of(code_role.index())
        if f["check"].startswith("markdown_link")
    ]
    missing = sorted(m for c, _, m in found if c == "markdown_link_missing")
    outside = sorted(m for c, _, m in found if c == "markdown_link_outside")
    assert {file for _, file, _ in found} == {readme}
    assert len(missing) == 2 and any("'gone.md'" in m and "does not exist" in m for m in missing)
    assert any(
        "'link/x.md'" in m and "outside the repository through a symlink" in m for m in missing
    )
    assert len(outside) == 2 and all("leaves the repository" in m for m in outside)
    line = text.count("\n") + 2  # the first added line; the escape is on the next
    assert sorted(int(m.split(":")[0].split()[1]) for m in missing + outside) == [
        line,
        line,
        line,
        line + 1,
    ]


def test_a_link_follows_its_target_on_incremental_builds(code_role: Repo):
    assert findings_of(code_role.index()) == []
    (code_role.root / "LICENSE").unlink()  # README.md links to it, and is unchanged
    found = findings_of(code_role.index())
    assert [(f["check"], f["file"]) for f in found] == [("markdown_link_missing", "README.md")]
    (code_role.root / "LICENSE").write_text("back\n")
    assert findings_of(code_role.index()) == []


def test_an_artifact_linking_to_another_records_artifact_is_in_its_story(sample_repo: Repo):
    source = "datadrops/2026/20260917-claude-handoff-overview.md"
    text = (sample_repo.root / source).read_text()
    sample_repo.write(
        source, text + "\nBuilt on [the brief](20260908-gemini-retention-brief.md).\n"
    )
    db = sample_repo.index()
    links = list(db.query("SELECT source_id, target_id FROM record_links"))
    assert links == [
        {
            "source_id": "20260917-claude-handoff-overview",
            "target_id": "20260908-gemini-retention-brief",
        }
    ]


# The configuration file


def test_configuration_from_pyproject_and_its_own_file(code_role: Repo, tmp_path: Path):
    readme = code_role.write("examples/README.md", "[broken](nowhere.md)\n")
    code, found = check(code_role.root, "--no-db")
    assert code == 1 and {f["file"] for f in found} == {readme}
    (code_role.root / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.labnote-index]\nextend-exclude = ["examples"]\n'
    )
    assert check(code_role.root, "--no-db") == (0, [])
    # The tool's own file wins over pyproject.toml.
    (code_role.root / "labnote-index.toml").write_text(
        '[per-file-ignores]\n"docs/*" = ["markdown_link_missing"]\n'
    )
    code, found = check(code_role.root, "--no-db")
    assert code == 1 and {f["file"] for f in found} == {readme}
    (code_role.root / "labnote-index.toml").write_text(
        'fail-on = "error"\n[severity]\nmarkdown_link_missing = "warning"\n'
    )
    code, found = check(code_role.root, "--no-db")
    assert code == 0 and [f["severity"] for f in found] == ["warning"]
    # Command-line options win; --isolated ignores the file.
    assert check(code_role.root, "--no-db", "--fail-on", "warning")[0] == 1
    code, found = check(code_role.root, "--no-db", "--isolated")
    assert code == 1 and [f["severity"] for f in found] == ["error"]


def test_show_settings_says_where_each_came_from(code_role: Repo):
    (code_role.root / "labnote-index.toml").write_text('exclude = ["examples/**"]\n')
    result = CliRunner().invoke(
        cli, ["check", str(code_role.root), "--show-settings", "--fail-on", "warning"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "configuration file: labnote-index.toml (working tree)"
    assert 'exclude = ["examples/**"]  # labnote-index.toml' in lines
    assert 'fail-on = "warning"  # command line' in lines
    assert "enforce-layout = false  # default" in lines
    (code_role.root / "labnote-index.toml").unlink()
    alone = CliRunner().invoke(cli, ["check", str(code_role.root), "--show-settings"])
    assert alone.output.splitlines()[0] == "configuration file: (none) (working tree)"


@pytest.mark.parametrize(
    "text, named",
    [
        ("exclud = []\n", "'exclud'"),
        ('[severity]\nno_such_check = "off"\n', "'no_such_check'"),
        ('[severity]\nstray_file = "loud"\n', "'loud'"),
        ('[per-file-ignores]\n"x" = ["nope"]\n', "'nope'"),
        ('fail-on = "off"\n', "'off'"),
        ("exclude = [\n", "not valid TOML"),
    ],
)
def test_a_configuration_that_cannot_be_followed_is_exit_2(code_role: Repo, text: str, named):
    (code_role.root / "labnote-index.toml").write_text(text)
    result = CliRunner().invoke(cli, ["check", str(code_role.root), "--no-db"])
    assert result.exit_code == 2
    assert "labnote-index.toml" in result.output and named in result.output
    with pytest.raises(ConfigError):
        api.check(code_role.root, db=code_role.db_path)


def test_settings_are_part_of_the_index_fingerprint(code_role: Repo):
    code_role.write("examples/README.md", "[broken](nowhere.md)\n")
    assert len(findings_of(code_role.index())) == 1
    (code_role.root / "labnote-index.toml").write_text(
        '[severity]\nmarkdown_link_missing = "off"\n'
    )
    result = api.build(code_role.root, code_role.db_path)
    assert result.incremental and findings_of(code_role.index()) == []
    (code_role.root / "labnote-index.toml").write_text('exclude = ["examples"]\n')
    assert not api.build(code_role.root, code_role.db_path).incremental  # another walk


def test_check_of_an_index_keeps_the_settings_it_was_built_under(code_role: Repo):
    code_role.write("examples/README.md", "[broken](nowhere.md)\n")
    (code_role.root / "labnote-index.toml").write_text(
        '[severity]\nmarkdown_link_missing = "warning"\n'
    )
    code_role.index()
    code, found = check("--db", code_role.db_path)
    assert code == 0 and [f["severity"] for f in found] == ["warning"]


def test_with_base_the_base_configuration_governs_and_a_change_is_reported(code_role: Repo):
    root = code_role.root
    code_role.write("examples/README.md", "[broken](nowhere.md)\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    # The pull request switches the failing check off, and breaks another link.
    (root / "labnote-index.toml").write_text('[severity]\nmarkdown_link_missing = "off"\n')
    code_role.write("docs/workflow/README.md", "[gone](gone.md)\n")
    assert check(root, "--no-db")[0] == 0  # on its own, the change passes
    code, found = check(root, "--no-db", "--base", "main")
    assert code == 1
    checks = sorted((f["check"], f["file"]) for f in found)
    assert ("markdown_link_missing", "docs/workflow/README.md") in checks
    assert ("markdown_link_missing", "examples/README.md") in checks
    changed = [f for f in found if f["check"] == "config_changed"]
    assert [(f["file"], f["field"], f["severity"]) for f in changed] == [
        ("labnote-index.toml", "severity", "warning")
    ]
    assert "markdown_link_missing" in changed[0]["message"]
    subprocess.run(["git", "-C", str(root), "stash", "-q", "-u"], check=True)
    code, found = check(root, "--no-db", "--base", "main")
    assert "config_changed" not in {f["check"] for f in found}


def test_a_labnote_shaped_checkout_checks_clean(repo: Repo, tmp_path: Path):
    """The LabNote repository's own habits together: its contract committed in
    registry/schemas/, views committed from a Windows checkout, year-less and
    nested records, a registry README with links, artifacts linking to each other."""
    from importlib import resources

    runner = CliRunner()
    packaged = resources.files("labnote_index.format").joinpath("schemas")
    for schema in packaged.iterdir():
        if schema.name.endswith(".schema.json"):
            repo.write(f"registry/schemas/{schema.name}", schema.read_text())
    packets = repo.files("registry/packets/*/*.json")
    repo.move(packets[0], "registry/packets/" + packets[0].rsplit("/", 1)[1])
    message = repo.first("registry/messages/open/*.json")
    repo.move(message, message.replace("/open/", "/open/2025/"))
    repo.write(
        "registry/README.md",
        "# Registry\n\nViews: [packets](packet_registry.csv), [index](INDEX.md),\n"
        "[schemas](../docs/format.md). Contract: [v1](https://example.org/v1).\n",
    )
    repo.write("docs/format.md", "# Format\n\nBack to [the registry](../registry/README.md).\n")
    first, second = (repo.load(p)["path"] for p in packets[1:3])
    body = (repo.root / first).read_text()
    repo.write(first, body + f"\nFollows [the earlier drop]({second.rsplit('/', 1)[1]}).\n")
    assert runner.invoke(cli, ["views", str(repo.root)]).exit_code == 0
    for view in repo.files("registry/*_registry.csv") + ["registry/INDEX.md"]:
        path = repo.root / view
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    code, found = check(repo.root, "--no-db")
    assert (code, found) == (0, [])
    assert api.check(repo.root) == []


def test_an_artifact_is_read_once_for_its_body_and_its_links(
    sample_repo: Repo, monkeypatch: pytest.MonkeyPatch
):
    import labnote_index.index.files as files_module
    import labnote_index.index.markdown_files as markdown_module
    import labnote_index.index.rows as rows_module

    source = "datadrops/2026/20260917-claude-handoff-overview.md"
    sample_repo.write(source, "# Overview\n\nSee [gone](gone.md).\n")
    read: list[str] = []
    # Every module that hashes a file: the loader, the Markdown reader, the artifacts.
    for module in (files_module, markdown_module, rows_module):
        real = module.hash_file

        def counted(path, *args, real=real, **kwargs):
            read.append(str(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(module, "hash_file", counted)
    db = api.build(sample_repo.root, sample_repo.db_path, jobs=1)
    assert read.count(str(sample_repo.root / source)) == 1
    assert db.findings["error"] == 8  # the planted seven, and the broken link
    index = sqlite_utils.Database(sample_repo.db_path)
    links = index.query("SELECT * FROM markdown_links WHERE source_file = ?", [source])
    assert [(r["line"], r["raw_target"]) for r in links] == [(3, "gone.md")]


def test_links_of_a_large_or_hard_linked_markdown_file(code_role: Repo, tmp_path: Path):
    big = code_role.write("docs/big.md", "x" * (2 * 1024 * 1024) + "\n[gone](gone.md)\n")
    outside = tmp_path / "outside.md"
    outside.write_text("[secret](not-here.md)\n")
    (code_role.root / "docs/linked.md").hardlink_to(outside)
    db = code_role.index()
    found = [(f["check"], f["file"]) for f in findings_of(db)]
    assert found == [("markdown_link_missing", big)]  # the hard link's links are never read
    assert db["files"].get("docs/linked.md")["sha256"]  # accounted for, hashed


# Markdown as CommonMark reads it


COMMONMARK_LEGAL = """# Legal links

A [title](README.md "its title"), [parentheses](file_(1).md), an
[escape](my%20file.md), [brackets](<my file.md>), a [fragment](README.md#top),
[a line
break](README.md), [mail](mailto:x@example.org), [ftp](ftp://example.org/x).

```
[fenced](fenced-missing.md)
```

~~~
[tilde](tilde-missing.md)
~~~

    [indented](indented-missing.md)

An inline `[span](span-missing.md)` and ``[double](double-missing.md)``.

[used][spec], [spec], [spec][].

[spec]: README.md
"""


def test_legal_commonmark_gives_no_false_link_finding(code_role: Repo):
    code_role.write("docs/file_(1).md", "x\n")
    code_role.write("docs/my file.md", "x\n")
    code_role.write("docs/README.md", "x\n")
    code_role.write("docs/legal.md", COMMONMARK_LEGAL)
    assert findings_of(code_role.index()) == []


def test_a_reference_definition_naming_a_missing_file_is_reported_once(code_role: Repo):
    """Once, at the definition, for the two links that use it. A definition no
    link uses renders as nothing in CommonMark: no link, no finding."""
    code_role.write(
        "docs/refs.md",
        "Read [the spec][spec] and [spec].\n\n[spec]: missing.md\n[unused]: gone.md\n",
    )
    found = [f for f in findings_of(code_role.index()) if f["file"] == "docs/refs.md"]
    assert sorted((f["line"], f["column"], f["subject"]) for f in found) == [
        (3, 1, "missing.md"),
    ]


def test_a_link_into_dot_git_is_reported(code_role: Repo):
    (code_role.root / ".git").mkdir(exist_ok=True)
    (code_role.root / ".git" / "config").write_text("[core]\n")
    code_role.write("docs/git.md", "[config](../.git/config) and [dir](../.GIT/)\n")
    found = [f for f in findings_of(code_role.index()) if f["file"] == "docs/git.md"]
    assert len(found) == 2 and all(".git" in f["message"] for f in found)
    assert all(f["check"] == "markdown_link_missing" for f in found)


def test_a_symlinked_configuration_file_is_refused_naming_it(code_role: Repo, tmp_path: Path):
    """It was silently ignored (--show-settings said '(none)'): refused, exit 2,
    in the working tree and in a base revision alike."""
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text('severity = {markdown_link_missing = "off"}\n')
    (code_role.root / "labnote-index.toml").symlink_to(elsewhere)
    for args in (["--show-settings"], ["--no-db"]):
        result = CliRunner().invoke(cli, ["check", str(code_role.root), *args])
        assert result.exit_code == 2, result.output
        assert "labnote-index.toml is a symlink" in result.output
        said = result.output.strip().splitlines()[-1]
        assert said.endswith(
            "only from a regular file at the repository's root (a link could lead "
            "anywhere): put the file itself there"
        )
    git(code_role.root, "init", "-q", "-b", "main")
    git(code_role.root, "add", "-A")
    git(code_role.root, "commit", "-q", "-m", "linked configuration")
    (code_role.root / "labnote-index.toml").unlink()
    based = CliRunner().invoke(cli, ["check", str(code_role.root), "--no-db", "--base", "HEAD"])
    assert based.exit_code == 2 and "labnote-index.toml is a symlink" in based.output


def test_a_configuration_file_of_comments_only_says_nothing(code_role: Repo):
    """'The first that says anything wins': a labnote-index.toml of comments
    leaves [tool.labnote-index] in pyproject.toml in force."""
    code_role.write("examples/README.md", "[broken](nowhere.md)\n")
    (code_role.root / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.labnote-index]\nextend-exclude = ["examples"]\n'
    )
    (code_role.root / "labnote-index.toml").write_text("# our settings live in pyproject\n\n")
    assert check(code_role.root, "--no-db") == (0, [])
    shown = CliRunner().invoke(cli, ["check", str(code_role.root), "--show-settings"]).output
    assert "configuration file: pyproject.toml [tool.labnote-index]" in shown
    (code_role.root / "labnote-index.toml").write_text("extend-exclude = []\n")  # says something
    assert check(code_role.root, "--no-db")[0] == 1


def test_markdown_under_dot_github_is_checked_not_under_other_dot_directories(code_role: Repo):
    """The upstream link check reads .github/'s pull-request template too; .git,
    .venv and every other dot-directory stay unread."""
    code_role.write(".github/PULL_REQUEST_TEMPLATE.md", "See [the guide](../docs/gone.md).\n")
    code_role.write(".github/ISSUE_TEMPLATE/bug.md", "[ok](../../README.md)\n")
    code_role.write(".venv/lib/README.md", "[x](missing.md)\n")
    code_role.write(".git/description.md", "[x](missing.md)\n")
    found = [(f["check"], f["file"]) for f in findings_of(code_role.index())]
    assert found == [("markdown_link_missing", ".github/PULL_REQUEST_TEMPLATE.md")]
