"""Findings that never mislead (#24): one broken file is one finding on that
file, and a node of the index still, never a cascade of wrong stories.

Tests of: ``checks/suggest.py``, ``checks/positions.py``.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from labnote_index import api
from labnote_index.cli import cli
from labnote_index.errors import InvalidArgument

from .helpers import Repo, fetch, findings_of, run_diff

PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"
PACKET_ID = "20260903-maria-ops-retention-question"


def truncate(repo: Repo, rel: str) -> None:
    path = repo.root / rel
    path.write_bytes(path.read_bytes()[:200])


def test_a_broken_record_is_still_the_record_its_citers_name(history: Repo):
    index = history.index()
    citers = {
        r["source_file"]
        for r in index.query("SELECT source_file FROM refs WHERE target_id = ?", [PACKET_ID])
    }
    assert len(citers) >= 2
    truncate(history, PACKET)
    found = findings_of(history.index())
    on_citers = [f for f in found if f["file"] in citers]
    assert not [f for f in on_citers if f["check"] == "reference_unresolved"], on_citers
    told = [f for f in on_citers if f["check"] == "reference_unreadable"]
    assert {f["file"] for f in told} == citers
    assert all(PACKET in f["message"] and "create the missing" not in f["hint"] for f in told)
    assert [f["check"] for f in found if f["file"] == PACKET] == ["file_unreadable"]
    # Its story is its own: the packet, not MISSING, and not a 404 "Lineage".
    (page,) = fetch(history.db_path, f"/{history.db_path.stem}/-/story?node={PACKET}")
    assert page.status_code == 200 and PACKET_ID in page.text
    # Still there: not removed in a diff, not deleted for --base.
    diff = json.loads(run_diff(history, "--format", "json").output)
    assert [(d["change"], d["file"]) for d in diff if d["record_id"] == PACKET_ID] == [
        ("unreadable", PACKET)
    ]
    args = ["check", str(history.root), "--no-db", "--base", "base", "--format", "json"]
    compared = json.loads(CliRunner().invoke(cli, args).output)
    assert not [f for f in compared if f["check"] == "record_deleted"]


def test_file_arguments_limit_what_is_reported_not_what_is_indexed(
    sample_repo: Repo, tmp_path, monkeypatch
):
    """A valid record named alone is judged with what it cites (it got five
    errors: its citations were not indexed); a broken one named alone gets its
    own findings and no other file's."""
    clean = "registry/responses/2026/20260903-claude-retention-survey.json"
    assert (sample_repo.root / clean).is_file()
    runner = CliRunner()
    db = str(tmp_path / "i.db")

    def reported(*names: str) -> list[dict]:
        args = ["check", str(sample_repo.root), "--db", db, "--format", "json", *names]
        return json.loads(runner.invoke(cli, args).output)

    everything = reported()
    assert [f for f in everything if f["file"] == clean] == []
    assert reported(clean) == []
    broken = next(f["file"] for f in everything if f["check"] == "provenance")
    mine = reported(broken)
    assert mine and {f["file"] for f in mine} == {broken}
    assert mine == [f for f in everything if f["file"] == broken]
    # The repository itself, named "." or by its path: every finding on a file.
    on_files = [f for f in everything if f["file"]]
    assert reported(".") == reported(str(sample_repo.root)) == on_files
    # Named from the current directory, or as a directory, as a shell gives them.
    monkeypatch.chdir(sample_repo.root / "registry")
    assert reported(broken.removeprefix("registry/")) == mine
    assert {f["file"] for f in reported(str(sample_repo.root / "registry/packets"))} == {
        f["file"] for f in everything if f["file"] and f["file"].startswith("registry/packets/")
    }


def test_file_arguments_that_name_nothing_are_refused_before_the_build(
    sample_repo: Repo, tmp_path, monkeypatch
):
    """A mistyped FILES path reported no findings and passed: now it is a usage
    error naming each such path once, and no index is built. A file outside
    the repository, a dangling symlink in it and a path from the current
    directory are all there, and are not refused."""
    runner = CliRunner()
    db = tmp_path / "i.db"
    real = "registry/responses/2026/20260903-claude-retention-survey.json"
    typo = "registry/packet/20260911-codex-web-benchmarks.json"
    args = ["check", str(sample_repo.root), "--db", str(db), real, typo, "nope/", typo]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.output.count(repr(typo)) == 1 and repr("nope/") in result.output
    assert repr(real) not in result.output and "check the path" in result.output
    assert not db.exists()  # refused before anything was built
    with pytest.raises(InvalidArgument, match="nothing is at"):
        api.check(sample_repo.root, files=[typo])
    # Legal look-alikes: each is somewhere, so the check runs and says what it finds.
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    os.symlink("no-such-target.md", sample_repo.root / "datadrops" / "dangling.md")
    monkeypatch.chdir(sample_repo.root / "registry")
    named = [str(outside), "datadrops/dangling.md", real.removeprefix("registry/")]
    result = runner.invoke(cli, ["check", str(sample_repo.root), "--db", str(db), *named])
    assert result.exit_code in (0, 1), result.output
    assert "nothing is at" not in result.output


def test_findings_carry_the_line_and_column_where_they_are_known(sample_repo: Repo, tmp_path):
    """A JSON syntax error's position, a field's key: in JSON, text, GitHub
    annotations and SARIF (it was startLine 1 everywhere)."""
    truncate(sample_repo, PACKET)
    db = str(tmp_path / "i.db")
    runner = CliRunner()
    found = json.loads(
        runner.invoke(cli, ["check", str(sample_repo.root), "--db", db, "--format", "json"]).output
    )
    (broken,) = [f for f in found if f["file"] == PACKET]
    assert f"at line {broken['line']} column {broken['column']}" in broken["message"]
    field = next(f for f in found if f["check"] == "provenance")
    text = (sample_repo.root / field["file"]).read_text().splitlines()
    key = f'"{field["field"]}"'
    assert text[field["line"] - 1].index(key) + 1 == field["column"]
    shown = runner.invoke(cli, ["check", "--db", db]).output
    assert f"at {field['file']}:{field['line']}:{field['column']}" in shown
    sarif = json.loads(runner.invoke(cli, ["check", "--db", db, "--format", "sarif"]).output)
    regions = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0][
            "physicalLocation"
        ]["region"]
        for r in sarif["runs"][0]["results"]
    }
    (region,) = [r for uri, r in regions.items() if uri.endswith(PACKET)]  # uri: from the cwd
    assert region == {"startLine": broken["line"], "startColumn": broken["column"]}


def test_an_id_that_names_nothing_is_told_the_one_it_nearly_names(sample_repo: Repo, tmp_path):
    """Case, whitespace, a confusable letter, one or two edits: the hint names the
    ID (it said only "create the missing record"); so do lineage and the story page."""
    from labnote_index.checks.suggest import Names

    names = Names([PACKET_ID, "20260901-other-thing", "retention"])
    assert names.nearest(PACKET_ID.upper()) == PACKET_ID
    assert names.nearest(f" {PACKET_ID}\n") == PACKET_ID
    assert names.nearest(PACKET_ID.replace("retention", "retent1on")) == PACKET_ID
    assert names.nearest(PACKET_ID.replace("question", "questoin")) == PACKET_ID  # two edits
    assert names.nearest(PACKET_ID.replace("question", "qstn")) is None  # four: not near
    assert names.nearest("20261231-unrelated-name") is None
    misspelt = PACKET_ID.replace("question", "questio")
    response = sample_repo.first("registry/responses/*/*.json")
    sample_repo.edit(response, source_packet_id=misspelt)
    db = tmp_path / "i.db"
    args = ["check", str(sample_repo.root), "--db", str(db), "--format", "json"]
    found = json.loads(CliRunner().invoke(cli, args).output)
    (told,) = [f for f in found if f["file"] == response and f["check"] == "reference_unresolved"]
    assert told["hint"].startswith(f"did you mean {PACKET_ID!r}?")
    lineage = CliRunner().invoke(cli, ["lineage", misspelt, "--db", str(db)])
    assert lineage.exit_code == 2 and f"did you mean {PACKET_ID!r}?" in lineage.output
    (page,) = fetch(db, f"/i/-/story?node={misspelt}")
    assert page.status_code == 404 and "<h1>Story</h1>" in page.text
    assert "Did you mean" in page.text and f"node={PACKET_ID}" in page.text


def test_a_manifest_finding_is_located_at_its_input_packet_entry(sample_repo: Repo, tmp_path):
    args = ["check", str(sample_repo.root), "--db", str(tmp_path / "i.db"), "--format", "json"]
    found = json.loads(CliRunner().invoke(cli, args).output)
    (entry,) = [f for f in found if f["check"] == "input_packet_unresolved"]
    assert entry["field"].startswith("input_packets[")
    index = int(entry["field"].split("[", 1)[1].split("]", 1)[0])
    text = (sample_repo.root / entry["file"]).read_text()
    data_line = text.splitlines()[entry["line"] - 1]
    # The entry's own opening brace, at that line and column: the index-th of the array.
    assert data_line[entry["column"] - 1] == "{"
    before = (
        "\n".join(text.splitlines()[: entry["line"] - 1]) + "\n" + data_line[: entry["column"] - 1]
    )
    array = before[before.index('"input_packets"') :]
    assert array.count("{") == array.count("}") == index  # the entries before it, closed


def _slip_by_definition(a: str, b: str) -> bool:
    """The slip, read off its definition by trying every window: a and b are not
    the same, and some common beginning and common end (not overlapping in
    either) leave at most two characters of the longer between them."""
    if a == b:
        return False
    for p in range(min(len(a), len(b)) + 1):
        if a[:p] != b[:p]:
            break
        for q in range(min(len(a), len(b)) - p + 1):
            if q and a[-q:] != b[-q:]:
                break
            if max(len(a), len(b)) - p - q <= 2:
                return True
    return False


@given(st.text("ab", max_size=7), st.text("ab", max_size=7))
@example("abc", "abc")  # the same: no slip
@example("abcdef", "abcdefgh")  # two more at the end: a slip
@example("abcdef", "abcdefghi")  # three more: none
@example("abcd", "abc")  # one a prefix of the other
@example("xabcdefq", "yabcdefr")  # different at both ends: none
@example("abXdefgh", "abYdefgh")
@example("a", "aaa")  # the common end may not overlap the common beginning: in the shorter
@example("aaa", "a")  # nor in the longer
@example("aa", "baba")  # the common end counted a character at a time
def test_a_slip_is_one_window_of_at_most_two_characters(a: str, b: str):
    from labnote_index.checks.suggest import _slip

    assert _slip(a, b) == _slip_by_definition(a, b)


def test_a_slip_at_the_start_is_found_among_many_names_that_sort_between():
    """A first letter wrong puts the name far from the one it meant in plain
    order (here twenty names sort between them): it is found by the order of
    reversed names, where the two are neighbours."""
    from labnote_index.checks.suggest import NEIGHBOURS, Names

    fillers = [f"m-zzzzzz-abc{c}" for c in "abcdefghij"]
    fillers += [f"n-aaaaaa-abc{c}" for c in "abcdefghij"]
    assert len(fillers) > 2 * NEIGHBOURS
    names = Names(["m-report-abcd", *fillers])
    assert names.nearest("n-report-abcd") == "m-report-abcd"
    assert names.nearest("m-report-abce") == "m-report-abcd"  # a slip at the end: plain order


def test_a_name_that_exists_is_no_slip_and_a_tag_is_suggested_only_a_tag(tmp_path):
    """An ID spelt as it exists names no other; a tag that names nothing is told
    the nearest tag, never a record of another type spelt alike (and a finding
    whose message quotes nothing gets no hint)."""
    import sqlite_utils

    from labnote_index.checks.suggest import Names, record_names, suggest

    assert Names([PACKET_ID]).nearest(PACKET_ID) is None
    db = sqlite_utils.Database(tmp_path / "i.db")
    db["records"].insert_all(
        [
            {"record_id": "retention-policy", "record_type": "packet"},
            {"record_id": "registry-ops", "record_type": "tag"},
            {"record_id": None, "record_type": "tag"},
        ]
    )
    assert list(record_names(db, tags_only=True).by_normal.values()) == ["registry-ops"]
    assert set(record_names(db).by_normal.values()) == {"retention-policy", "registry-ops"}
    hint = "create the tag"
    db["records"].insert({"record_id": "o'briens", "record_type": "visitor"})
    findings = [
        {"check": "reference_unresolved", "message": "no quoted name", "hint": hint},
        {"check": "reference_unresolved", "message": "'o''brien' is missing", "hint": hint},
        {"check": "tag_unresolved", "message": "tag 'retention-polcy' is unknown", "hint": hint},
        {"check": "tag_unresolved", "message": "tag 'registry-op' is unknown", "hint": hint},
        {"check": "reference_unresolved", "message": "'retention-polcy' is missing", "hint": hint},
        {"check": "reference_unresolved", "message": "no quoted name", "hint": hint},
    ]
    suggest(db, findings)
    assert [f["hint"] for f in findings] == [
        hint,
        f'did you mean "o\'briens"? correct the ID; otherwise: {hint}',
        hint,
        f"did you mean 'registry-ops'? correct the ID; otherwise: {hint}",
        f"did you mean 'retention-policy'? correct the ID; otherwise: {hint}",
        hint,
    ]


def test_the_nearest_name_of_the_same_length_is_told_first():
    """Two names a slip away, one of the wanted name's length (a letter wrong) and
    one two letters shorter: the one of its length is told, then the nearer
    lengths before the further."""
    from labnote_index.checks.suggest import Names

    assert Names(["report-ab", "report-abce"]).nearest("report-abcd") == "report-abce"
    assert Names(["report-ab", "report-abc"]).nearest("report-abcd") == "report-abc"
    assert Names(["report-abcdef", "report-abc"]).nearest("report-abcd") == "report-abc"


def test_a_finding_is_placed_at_its_key_its_entry_or_its_syntax_error(tmp_path):
    """positions.locate over an index of its own: a field's key (its last
    writing, where a key is written twice), an array entry's start, an entry
    past the array's end or an index of seven digits at its key, a nested field
    at its top key; a handoff file's keys too; a syntax error's place read from
    file_unreadable's message only; a line a check gave kept; a finding on no
    field, or on a file the index holds no text of, placed nowhere. Files are
    looked up 500 at a time: the 501st is placed like the first."""
    import sqlite_utils

    from labnote_index.checks.positions import locate

    db = sqlite_utils.Database(tmp_path / "i.db")
    record = '{\n  "id": "a",\n  "tags": ["x",\n    "y"],\n  "id": "b"\n}'
    lock = '{"input_packets": [\n  {"manifest": "m"}]}'
    db["record_json"].insert_all(
        [{"file": "r.json", "json": record}]
        + [{"file": f"many/{n:03}.json", "json": '{"k": 1}'} for n in range(501)]
    )
    db["handoff_json"].insert({"file": "h.json", "json": lock})
    db["record_json"].insert({"file": "0.json", "json": '{"k": 1}'})  # the first looked up
    found = [
        {"check": "c", "file": "0.json", "field": "k"},
        {"check": "c", "file": None, "field": "k"},  # a finding on no file
        {"check": "c", "file": "r.json", "field": "id"},
        {"check": "c", "file": "r.json", "field": "tags[1]"},
        {"check": "c", "file": "r.json", "field": "tags[2]"},
        {"check": "c", "file": "r.json", "field": "tags[1000000]"},
        {"check": "c", "file": "r.json", "field": "tags.x"},
        {"check": "c", "file": "h.json", "field": "input_packets[0].manifest"},
        {"check": "file_unreadable", "file": "x.json", "message": "bad at line 29 column 4"},
        {"check": "other", "file": "x.json", "field": "", "message": "bad at line 29 column 4"},
        {"check": "c", "file": "r.json", "field": "id", "line": 7, "column": 2},
        {"check": "c", "file": "r.json", "field": ""},
        {"check": "c", "file": "gone.json", "field": "id"},
    ]
    many = [{"check": "c", "file": f"many/{n:03}.json", "field": "k"} for n in range(501)]
    locate(db, found + many)
    assert [(f["line"], f["column"]) for f in found] == [
        (1, 2),
        (None, None),
        (5, 3),  # the second "id"
        (4, 5),
        (3, 3),  # no third entry: the key
        (3, 3),
        (3, 3),
        (2, 3),
        (29, 4),
        (None, None),
        (7, 2),
        (None, None),
        (None, None),
    ]
    assert {(f["line"], f["column"]) for f in many} == {(1, 2)}
