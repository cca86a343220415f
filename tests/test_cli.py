"""The command line through click's CliRunner, on real repositories and indexes.

Tests of: ``cli.py``, ``command.py``, ``output/report.py``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index.checks.catalogue import FINDING_KEYS
from labnote_index.cli import cli

from .helpers import BAD_INPUTS, ROOT, SAMPLE_REPO, Repo, git


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_build_prints_summary_and_exits_zero_despite_bad_files(repo: Repo):
    repo.write("registry/packets/2025/broken.json", "{nope")
    result = run("build", repo.root, "--db", repo.db_path)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "12 packets" in result.stderr
    assert "findings: " not in result.stderr and "1 error and 0 warnings in 1 file" in result.stderr
    assert sqlite_utils.Database(repo.db_path)["files"].get("registry/packets/2025/broken.json")


def test_build_without_a_repository_is_a_usage_error(tmp_path: Path):
    result = run("build", tmp_path / "nowhere", "--db", tmp_path / "x.db")
    assert result.exit_code == 2
    assert "not a directory" in result.output
    assert not (tmp_path / "x.db").exists()


def test_check_json_has_exactly_the_documented_keys(tmp_path: Path):
    result = run("check", SAMPLE_REPO, "--db", tmp_path / "s.db", "--format", "json")
    assert result.exit_code == 1
    found = json.loads(result.stdout)
    assert found and all(tuple(f) == FINDING_KEYS for f in found)
    assert found[0]["severity"] == "error"  # errors come first


def test_check_text_groups_by_file(tmp_path: Path):
    result = run("check", SAMPLE_REPO, "--db", tmp_path / "s.db")
    lines = result.stdout.splitlines()
    assert "registry/packets/2026/20260911-codex-web-benchmarks.json" in lines
    assert any(line.startswith("  error [provenance] source_refs:") for line in lines)
    assert lines[-1] == "7 errors and 1 warning in 8 files"


def test_check_github_annotations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The LabNote repository is a subdirectory of a git work tree, checked from elsewhere:
    # GitHub resolves annotation paths against the top of the work tree.
    top = tmp_path / "top"
    shutil.copytree(SAMPLE_REPO, top / "sub" / "lab")
    git(top, "init", "-q")
    monkeypatch.chdir(tmp_path)
    result = run("check", "top/sub/lab", "--db", tmp_path / "s.db", "--format", "github")
    lines = result.stdout.splitlines()
    assert len(lines) == 8
    benchmarks = "sub/lab/registry/packets/2026/20260911-codex-web-benchmarks.json"
    # The line and column of the field's key, as the file has it (source_refs).
    text = (SAMPLE_REPO / benchmarks.removeprefix("sub/lab/")).read_text().splitlines()
    line = next(n for n, t in enumerate(text, 1) if t.lstrip().startswith('"source_refs"'))
    column = text[line - 1].index('"source_refs"') + 1
    expected = f"::error file={benchmarks},line={line},col={column},title=provenance::"
    assert expected in "\n".join(lines)
    assert sum(line.startswith("::warning ") for line in lines) == 1
    again = run("check", "--db", tmp_path / "s.db", "--format", "github")  # the index alone
    assert again.stdout == result.stdout


def test_github_annotation_paths_outside_git_are_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    shutil.copytree(SAMPLE_REPO, tmp_path / "lab")
    monkeypatch.chdir(tmp_path)
    result = run("check", "lab", "--db", tmp_path / "s.db", "--format", "github")
    assert "::error file=lab/registry/packets/2026/20260911-codex-web-benchmarks.json" in (
        result.stdout
    )


def test_fail_on_warning(repo: Repo):
    visit = repo.first("registry/visits/*/*.json")
    data = repo.load(visit)
    data["visitor_family"] = data.pop("session_family")
    repo.save(visit, data)
    assert run("check", repo.root, "--db", repo.db_path).exit_code == 0
    assert run("check", repo.root, "--db", repo.db_path, "--fail-on", "warning").exit_code == 1


def test_clean_repository_exits_zero(repo: Repo):
    result = run("check", repo.root, "--db", repo.db_path, "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


def test_check_existing_index_with_db_only(tmp_path: Path):
    db = tmp_path / "s.db"
    assert run("build", SAMPLE_REPO, "--db", db).exit_code == 0
    result = run("check", "--db", db, "--format", "json")
    assert result.exit_code == 1
    assert len(json.loads(result.stdout)) == 8


def test_check_without_index_says_what_to_do(tmp_path: Path):
    result = run("check", "--db", tmp_path / "missing.db")
    assert result.exit_code == 2
    assert "labnote-index build REPO" in result.output


def test_check_on_a_file_that_is_not_an_index(tmp_path: Path):
    other = tmp_path / "other.db"
    sqlite_utils.Database(other)["t"].insert({"x": 1})
    result = run("check", "--db", other)
    assert result.exit_code == 2
    assert "not a labnote index" in result.output


def test_unwritable_index_location_is_reported_not_raised(repo: Repo, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for command in ("build", "check"):  # exit 2: for check, 1 would mean findings
        result = run(command, repo.root, "--db", blocker / "index.db")
        assert result.exit_code == 2
        assert "cannot write the index" in result.output
        assert "Traceback" not in result.output


def test_orphans_text_json_csv(tmp_path: Path):
    db = tmp_path / "s.db"
    text = run("orphans", SAMPLE_REPO, "--db", db)
    assert text.exit_code == 1
    assert "reply_to (1)" in text.stdout and "tags (1)" in text.stdout
    assert "input_packets (1)" in text.stdout
    assert text.stdout.splitlines()[-1] == "3 orphaned references"
    rows = json.loads(run("orphans", "--db", db, "--format", "json").stdout)
    assert {(r["field"], r["missing_id"], r["expected_type"]) for r in rows} == {
        ("reply_to", "20260911-maria-ops-summary-length", "message"),
        ("tags", "vector-search", "tag"),
        (
            "input_packets",
            "docs/workflow/roles/code-context/reports/retention-policy/packet-v001/"
            "handoff.manifest.json",
            "handoff_manifest",
        ),
    }
    table = list(csv.DictReader(io.StringIO(run("orphans", "--db", db, "--format", "csv").stdout)))
    assert [r["field"] for r in table] == ["input_packets", "reply_to", "tags"]


def test_orphans_on_clean_repository_exit_zero(repo: Repo):
    result = run("orphans", repo.root, "--db", repo.db_path)
    assert result.exit_code == 0
    assert "0 orphaned references" in result.stdout


def help_text(command: str) -> str:
    return " ".join(run(command, "--help").stdout.split())  # unwrapped


def test_help_texts_describe_exit_codes():
    assert "Exit status: 0 when nothing at or above --fail-on was found" in help_text("check")
    assert "Exit 1 when there is at least one orphan" in help_text("orphans")
    assert "--enforce-layout" in help_text("build")


def test_default_database_is_labnote_db_in_current_directory(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run("build", SAMPLE_REPO).exit_code == 0
    assert (tmp_path / "labnote.db").is_file()


def test_every_kind_of_bad_input_at_once_exits_zero_without_traceback(repo: Repo, tmp_path: Path):
    import os

    for name, (content, _) in BAD_INPUTS.items():
        repo.write(f"registry/packets/2025/20250301-bad-{name}.json", content)
    repo.write("registry/packets/2025/20250302-bom.json", b"\xef\xbb\xbf{}")
    repo.write("registry/messages/open/common.json", '{"record_type": "common"}')
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    os.symlink(outside, repo.root / "registry/packets/2025/20250303-link.json")
    with (repo.root / "registry/packets/2025/20250304-huge.json").open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    result = run("build", repo.root, "--db", repo.db_path)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    db = sqlite_utils.Database(repo.db_path)
    assert db["packets"].count_where("valid") == 12  # every good record is still there
    broken = db.execute("SELECT count(*) FROM files WHERE error IS NOT NULL").fetchone()[0]
    assert broken == len(BAD_INPUTS) + 2  # the symlink and the huge file too
    check = run("check", "--db", repo.db_path, "--format", "json")
    assert check.exit_code == 1
    files = {f["file"] for f in json.loads(check.stdout)}
    assert "registry/packets/2025/20250303-link.json" in files
    assert "registry/messages/open/common.json" in files


def test_text_output_cannot_carry_commands_or_escapes_from_records(history: Repo):
    # A line starting "::" in a GitHub Actions log is a workflow command; ESC
    # sequences act on a terminal. Record text must reach neither as it is.
    message = history.first("registry/messages/open/*.json")
    record_id = history.load(message)["message_id"]
    history.edit(
        message,
        status="open\n::warning file=x::injected",
        reply_to="gone\r\n::error::injected\x1b[2J",
    )
    db = history.db_path
    outputs = {
        "check": run("check", history.root, "--db", db),
        "orphans": run("orphans", "--db", db),
        "lineage": run("lineage", "--db", db, record_id),
        "diff": run("diff", history.root, "--db", db, "--base", "base"),
    }
    for command, result in outputs.items():
        assert result.exit_code in (0, 1), (command, result.output)
        assert "injected" in result.output, command  # shown, escaped
        lines = result.output.splitlines()
        assert not [line for line in lines if line.startswith("::")], command
        assert "\x1b" not in result.output and "\r" not in result.output, command
    assert "\\n::warning file=x::injected" in outputs["check"].output


# ---- a CLI that never misleads


def test_missing_index_advice_fits_the_command(tmp_path: Path):
    missing = tmp_path / "missing.db"
    for args in (["lineage", "x", "--db", missing], ["serve", missing]):
        result = run(*args)
        assert result.exit_code == 2 and "no index at" in result.output
        assert "give REPO" not in result.output, result.output
    result = run("check", "--db", missing)
    assert result.exit_code == 2 and "give REPO, or run" in result.output


def test_build_summary_and_check_report_count_the_same_way(tmp_path: Path):
    built = run("build", SAMPLE_REPO, "--db", tmp_path / "s.db")
    checked = run("check", "--db", tmp_path / "s.db")
    phrase = checked.stdout.splitlines()[-1]
    assert phrase == "7 errors and 1 warning in 8 files"
    assert built.stderr.rstrip().endswith(phrase)
    assert "1 files" not in built.stderr


def test_checks_lists_the_transition_checks_too():
    from labnote_index.checks.catalogue import load_checks

    listed = run("checks").stdout
    for c in load_checks("checks/transitions"):
        assert f"{c.id} ({c.severity})" in listed
    assert "Transition checks (check --base)" in listed


@pytest.mark.parametrize("name", ["handoff_lock_drift", "schema_enum", "tag_promotion"])
def test_checks_name_prints_one_checks_whole_documentation(name: str):
    from labnote_index.checks.catalogue import catalogue

    check = next(c for c in catalogue() if c.id == name)
    result = run("checks", name)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith(f"{name} ({check.severity}, {check.scope}-scoped)\n")
    for part in (check.protects, check.repair, check.source, "query (zero rows pass):"):
        assert part in text
    assert "SELECT" in text and "-- protects:" not in text  # the query, not its header again
    assert text.count(f"{name} (") == 1  # one check, not the catalogue
    rows = json.loads(run("checks", name, "--format", "json").stdout)
    assert [r["id"] for r in rows] == [name]


def test_checks_of_an_unknown_name_is_exit_2_with_the_nearest():
    result = run("checks", "markdown_link_mising")
    assert result.exit_code == 2
    assert "no check 'markdown_link_mising': did you mean 'markdown_link_missing'?" in result.output
    assert run("checks", "zzzz").exit_code == 2


def test_check_help_names_every_exit_2_cause():
    text = " ".join(run("check", "--help").stdout.split())
    assert "no index at --db" in text and "130 when interrupted" in text


def test_lineage_accepts_a_path_as_the_shell_completes_it(tmp_path: Path, monkeypatch):
    db = tmp_path / "s.db"
    run("build", SAMPLE_REPO, "--db", db)
    monkeypatch.chdir(SAMPLE_REPO.parent)
    packet = "sample_repo/docs/workflow/roles/implementer/reports/retention-policy/packet-v001"
    result = run("lineage", packet, "--db", db, "--direction", "up")
    assert result.exit_code == 0, result.output
    assert "handoff_packet implementer/retention-policy/packet-v001" in result.stdout
    elsewhere = run("lineage", "registry/nothing.json", "--db", db)
    assert elsewhere.exit_code == 2
    assert "paths are relative to the repository root" in elsewhere.output


def test_sarif_output_validates_as_sarif_2_1_0(tmp_path: Path):
    from sarif_pydantic import Sarif

    result = run("check", SAMPLE_REPO, "--db", tmp_path / "s.db", "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    Sarif.model_validate(log)  # a model made for SARIF, not our own writer
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"provenance", "status_transition"}
    # SARIF's own levels, even for a check that is off by default
    levels = {r["defaultConfiguration"]["level"] for r in rules}
    assert levels <= {"error", "warning", "note", "none"} and "none" in levels
    assert len(run_["results"]) == 8
    for result_ in run_["results"]:
        rule = rules[result_["ruleIndex"]]
        assert rule["id"] == result_["ruleId"] and rule["help"]["text"].startswith("Repair: ")
        uri = result_["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith("sample_repo/")  # relative to the git work tree's top


def test_no_db_leaves_nothing_behind(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("check", SAMPLE_REPO, "--no-db", "--format", "json")
    assert result.exit_code == 1 and len(json.loads(result.stdout)) == 8
    assert list(tmp_path.iterdir()) == []


def test_readme_generated_parts_are_current():
    # The command reference and the check catalogues are made from the code by cog.
    from cogapp import Cog

    assert Cog().main(["cog", "--check", str(SAMPLE_REPO.parent / "README.md")]) == 0


def test_a_gate_pointed_at_the_wrong_place_does_not_pass(sample_repo, tmp_path: Path):
    """One level too deep, or an empty directory: not a LabNote repository, exit 2,
    saying what was looked for (it printed "no findings", exit 0)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for target, hint in (
        (sample_repo.root / "registry", f"did you mean {sample_repo.root}?"),
        (empty, "give the repository's root"),
    ):
        for args in (
            ["check", str(target), "--no-db"],
            ["build", str(target), "--db", str(tmp_path / "x.db")],
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 2, result.output
            assert "is not a LabNote repository" in result.output and hint in result.output
            assert "no registry/ directory and no handoff packet" in result.output
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["checks"],
        ["check", "SAMPLE", "--no-db", "--format", "json"],
        ["checks", "--format", "markdown"],
    ],
)
def test_a_closed_pipe_ends_output_quietly(args: list[str]):
    """`checks | head -1`: no "Broken pipe" error, no traceback, never exit 2."""
    import subprocess
    import sys

    command = [
        sys.executable,
        "-m",
        "labnote_index",
        *[str(SAMPLE_REPO) if a == "SAMPLE" else a for a in args],
    ]
    for _ in range(3):
        reader = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert reader.stdout is not None and reader.stdout.readline()
        reader.stdout.close()  # as head does after its line
        _, err = reader.communicate(timeout=60)
        assert err == b"" and reader.returncode in (0, 1, 141), (reader.returncode, err)


def test_contradictions_wrong_words_and_counts(sample_repo, tmp_path: Path):
    runner = CliRunner()
    both = runner.invoke(cli, ["check", str(sample_repo.root), "--no-db", "--db", "x.db"])
    assert both.exit_code == 2 and "--no-db, --cache and --db contradict" in both.output
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    served = runner.invoke(cli, ["serve", str(notes)])
    assert (
        served.exit_code == 2 and "--db" not in served.output and "give another DB" in served.output
    )
    built = runner.invoke(cli, ["build", str(sample_repo.root), "--db", str(tmp_path / "i.db")])
    summary = built.stderr + built.stdout
    assert "4 responses" in summary
    lone = tmp_path / "lone"
    (lone / "registry/responses/2026").mkdir(parents=True)
    (lone / "registry/responses/2026/x.json").write_text(
        (sample_repo.root / sample_repo.first("registry/responses/*/*.json")).read_text()
    )
    one = runner.invoke(cli, ["build", str(lone), "--db", str(tmp_path / "lone.db")])
    assert (
        " 1 response," in one.stderr + one.stdout and "1 responses" not in one.stderr + one.stdout
    )


def test_every_listing_gives_json_and_csv_from_one_writer(sample_repo, tmp_path: Path):
    """check, orphans, diff and checks: the same rows as JSON objects and as CSV."""
    from labnote_index.api import DIFF_KEYS, FINDING_KEYS
    from labnote_index.output.report import CHECK_KEYS, ORPHAN_KEYS

    from .helpers import git

    db = tmp_path / "s.db"
    git(sample_repo.root, "init", "-q", "-b", "main")
    git(sample_repo.root, "add", "-A")
    git(sample_repo.root, "commit", "-q", "-m", "base")
    sample_repo.edit("registry/packets/2026/20260903-maria-ops-retention-question.json", notes="x")
    listings = [
        (["check", str(sample_repo.root), "--db", str(db)], FINDING_KEYS),
        (["orphans", "--db", str(db)], ORPHAN_KEYS),
        (
            ["diff", str(sample_repo.root), "--base", "HEAD", "--db", str(tmp_path / "d.db")],
            DIFF_KEYS,
        ),
        (["checks"], CHECK_KEYS),
    ]
    for args, keys in listings:
        as_json = json.loads(run(*args, "--format", "json").stdout)
        as_csv = list(csv.DictReader(io.StringIO(run(*args, "--format", "csv").stdout)))
        assert as_json, args
        assert [list(r) for r in as_json] == [list(keys)] * len(as_json)
        assert [list(r) for r in as_csv] == [list(keys)] * len(as_csv)
        shown = [{k: "" if v is None else str(v) for k, v in r.items()} for r in as_json]
        assert as_csv == shown, args


def test_a_directory_holding_repositories_is_not_one(sample_repo, tmp_path: Path):
    """`check /tmp` was one repository because projects deep inside it have handoff
    packets: it reported their findings and wrote a 54 MB index. It is exit 2,
    naming the repositories below, before anything is read."""
    import shutil

    holder = tmp_path / "holder"
    deep = holder / "projects" / "code-role"
    shutil.copytree(ROOT / "tests" / "fixtures" / "code_role", deep)
    shutil.copytree(sample_repo.root, holder / "lab")
    result = CliRunner().invoke(cli, ["check", str(holder), "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 2, result.output
    assert "is not a LabNote repository" in result.output
    assert f"repositories below it: {holder / 'lab'}, {deep}" in result.output
    assert not (tmp_path / "x.db").exists()
    assert CliRunner().invoke(cli, ["check", str(deep)]).exit_code == 0  # each is one


def test_a_check_without_db_writes_nothing_into_the_work_tree(sample_repo, monkeypatch):
    """check REPO and diff, run inside the repository, left labnote.db there."""
    git(sample_repo.root, "init", "-q", "-b", "main")
    git(sample_repo.root, "add", "-A")
    git(sample_repo.root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(sample_repo.root)
    assert CliRunner().invoke(cli, ["check", "."]).exit_code == 1
    assert CliRunner().invoke(cli, ["check", ".", "--base", "HEAD"]).exit_code == 1
    assert CliRunner().invoke(cli, ["diff", ".", "--base", "HEAD"]).exit_code == 0
    assert git(sample_repo.root, "status", "--porcelain", "--ignored") == ""


@pytest.mark.parametrize("setting", [None, ""], ids=["unset", "empty: every plugin"])
def test_the_program_runs_no_pydantic_plugin_on_its_models(tmp_path: Path, setting: str | None):
    """A pydantic plugin installed beside the program (an entry point of the
    `pydantic` group) is not loaded when the program validates records, as no
    sqlite-utils plugin is run on an index; a user who sets
    PYDANTIC_DISABLE_PLUGINS (here empty: disable none) has it their way."""
    site = tmp_path / "site"
    (site / "spy_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "spy_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n"
    )
    (site / "spy_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[pydantic]\nspy = spy_plugin:plugin\n"
    )
    loaded = tmp_path / "loaded"
    (site / "spy_plugin.py").write_text(
        f"from pathlib import Path\nPath({str(loaded)!r}).write_text('loaded')\n"
        "class _Plugin:\n    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\nplugin = _Plugin()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo, ignore=shutil.ignore_patterns(".labnote-index-cache"))
    run_ = subprocess.run(
        [sys.executable, "-m", "labnote_index", "check", str(repo), "--no-db", "--jobs", "1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run_.returncode == 1, run_.stderr  # sample_repo's errors, found all the same
    assert loaded.exists() == (setting is not None)
