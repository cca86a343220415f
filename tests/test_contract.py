"""The repository's own contract: committed registry/schemas/*.schema.json govern
where they say something other than the packaged Registry Contract v1.

Tests of: ``read/schemas.py``.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from labnote_index import api
from labnote_index.cli import cli

from .helpers import Repo

PACKAGED = Path(str(resources.files("labnote_index.format").joinpath("schemas")))
SCHEMAS = "registry/schemas"


def commit_schemas(repo: Repo) -> None:
    """The packaged schemas committed, as the LabNote repository commits its own."""
    (repo.root / SCHEMAS).mkdir(parents=True, exist_ok=True)
    for schema in PACKAGED.glob("*.schema.json"):
        shutil.copy(schema, repo.root / SCHEMAS / schema.name)


def schema(repo: Repo, name: str) -> dict:
    return json.loads((repo.root / SCHEMAS / f"{name}.schema.json").read_text())


def save_schema(repo: Repo, name: str, value: object) -> None:
    (repo.root / SCHEMAS / f"{name}.schema.json").write_text(json.dumps(value, indent=2))


def found(repo: Repo, **kwargs: object) -> list[tuple[str, str | None, str, str]]:
    return sorted(
        (f.check, f.file, f.field or "", f.message) for f in api.check(repo.root, **kwargs)
    )


def test_committed_schemas_equal_to_the_packaged_change_nothing(repo: Repo):
    before = found(repo)
    commit_schemas(repo)
    # Reformatted, the same JSON: still the packaged contract's (and its messages).
    save_schema(repo, "tag", schema(repo, "tag"))
    assert found(repo) == before == []
    assert api.governing_schemas(repo.root).startswith("schemas: the packaged")


def test_an_older_committed_slug_pattern_governs_the_tags(repo: Repo):
    commit_schemas(repo)
    tags = sorted(repo.files("registry/tags/*/*.json"))
    slugs = [repo.load(t)["tag_slug"] for t in tags]
    assert any("-" in s for s in slugs) and any("-" not in s for s in slugs)
    older = schema(repo, "tag")
    older["properties"]["tag_slug"] = {"type": "string", "pattern": "^[a-z]+$"}
    save_schema(repo, "tag", older)
    got = found(repo)
    hyphenated = [t for t, s in zip(tags, slugs, strict=True) if "-" in s]
    assert [(c, f, fld) for c, f, fld, _ in got] == [
        ("slug_grammar", t, "tag_slug") for t in hyphenated
    ]
    assert all('does not match "^[a-z]+$"' in m for *_, m in got)
    assert api.governing_schemas(repo.root) == (
        "schemas: registry/schemas/ governs tag; the packaged Registry Contract v1, "
        "message, notification, packet, response, visit, visitor"
    )


def test_a_field_the_committed_schema_adds_is_no_unknown_field(repo: Repo):
    packet = repo.first("registry/packets/*/*.json")
    repo.edit(packet, reviewed_by="operator")
    assert [(c, fld) for c, _, fld, _ in found(repo)] == [("schema_unknown_field", "reviewed_by")]
    commit_schemas(repo)
    assert [c for c, *_ in found(repo)] == ["schema_unknown_field"]  # same contract
    widened = schema(repo, "packet")
    widened["properties"]["reviewed_by"] = {"type": "string"}
    save_schema(repo, "packet", widened)
    assert found(repo) == []
    repo.edit(packet, reviewed_by=7, colour="red")  # its type, and a field it still lacks
    assert [(c, fld) for c, _, fld, _ in found(repo)] == [
        ("schema_type", "reviewed_by"),
        ("schema_unknown_field", "colour"),
    ]


def test_committed_schema_findings_take_the_packaged_checks(repo: Repo):
    commit_schemas(repo)
    widened = schema(repo, "packet")
    widened["properties"]["reviewed_by"] = {"type": "string", "pattern": "^[A-Z]"}
    save_schema(repo, "packet", widened)
    packet = repo.first("registry/packets/*/*.json")
    data = repo.load(packet)
    del data["notes"]
    data.update(status="lost", created_at="yesterday", reviewed_by="operator")
    repo.save(packet, data)
    got = [(c, fld) for c, f, fld, _ in found(repo) if f == packet]
    assert sorted(got) == [
        ("schema_enum", "status"),
        ("schema_pattern", "reviewed_by"),
        ("schema_required", "notes"),
        ("timestamp_format", "created_at"),
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "cannot be read as JSON"),
        ('{"type": 5}', "is not a valid JSON Schema: at type:"),
        ('{"properties": {"tag_slug": {"type": 5}}}', "JSON Schema: at properties/tag_slug/type: "),
        ('{"$ref": "https://example.org/tag.json"}', "never fetched"),
        ('{"$ref": "#/$defs/nowhere"}', "is not a valid JSON Schema"),
        ('{"properties": {"tag_slug": {"pattern": "(unclosed"}}}', "is not a valid JSON Schema"),
        ("[1, 2]", "not an object"),
        ('{"not": ' * 80 + "{}" + "}" * 80, "nested more than 64 levels"),  # the reader's limit
    ],
)
def test_a_committed_schema_that_cannot_govern_is_reported_and_the_packaged_governs(
    repo: Repo, text: str, says: str
):
    commit_schemas(repo)
    tag = repo.first("registry/tags/*/*.json")
    repo.edit(tag, status="lost")  # a defect the packaged contract finds
    (repo.root / SCHEMAS / "tag.schema.json").write_text(text)
    got = found(repo)
    assert [(c, f) for c, f, *_ in got] == [
        ("committed_schema", f"{SCHEMAS}/tag.schema.json"),
        ("schema_enum", tag),
    ]
    assert says in got[0][3] and "the packaged Registry Contract v1 governs" in got[0][3]
    assert api.governing_schemas(repo.root).startswith("schemas: the packaged")


def test_a_symlinked_schema_is_never_followed(repo: Repo, tmp_path: Path):
    commit_schemas(repo)
    outside = tmp_path / "outside.schema.json"
    outside.write_text('{"properties": {"tag_slug": {"pattern": "^x$"}}}')
    (repo.root / SCHEMAS / "tag.schema.json").unlink()
    (repo.root / SCHEMAS / "tag.schema.json").symlink_to(outside)
    got = found(repo)
    assert [(c, f) for c, f, *_ in got] == [("file_unreadable", f"{SCHEMAS}/tag.schema.json")]
    assert "symlink points outside the repository" in got[0][3]
    assert api.governing_schemas(repo.root).startswith("schemas: the packaged")


def test_a_committed_common_schema_governs_the_types_that_refer_to_it(repo: Repo):
    commit_schemas(repo)
    common = schema(repo, "common")
    common["$defs"]["slug"]["pattern"] = "^[a-z]+$"
    save_schema(repo, "common", common)
    (repo.root / SCHEMAS / "visit.schema.json").unlink()  # the packaged governs visits
    governing = api.governing_schemas(repo.root)
    assert "governs message, notification, packet, response, tag, visitor;" in governing
    assert governing.endswith("Registry Contract v1, visit")
    assert {c for c, *_ in found(repo)} == {"slug_grammar"}


def test_the_index_says_which_schemas_governed_and_a_schema_edit_rebuilds(repo: Repo):
    commit_schemas(repo)
    first = api.build(repo.root, repo.db_path)
    db = sqlite_utils.Database(repo.db_path)
    governing = json.loads(db["build_info"].get("contract")["value"])["governing"]
    assert set(governing.values()) == {"packaged Registry Contract v1"}
    assert first.findings["error"] == 0
    older = schema(repo, "tag")
    older["properties"]["tag_slug"] = {"type": "string", "pattern": "^[a-z]+$"}
    save_schema(repo, "tag", older)
    again = api.build(repo.root, repo.db_path)  # the records are unchanged
    assert not again.incremental and again.findings["error"] > 0
    assert again.findings == api.build(repo.root, repo.db_path, full=True).findings
    db = sqlite_utils.Database(repo.db_path)
    governing = json.loads(db["build_info"].get("contract")["value"])["governing"]
    assert governing["tag"] == f"{SCHEMAS}/tag.schema.json"
    result = CliRunner().invoke(cli, ["check", "--db", str(repo.db_path), "--show-settings"])
    assert result.output.splitlines()[-1].startswith("schemas: registry/schemas/ governs tag;")
    result = CliRunner().invoke(cli, ["check", str(repo.root), "--show-settings"])
    assert result.output.splitlines()[-1].startswith("schemas: registry/schemas/ governs tag;")


def test_workers_validate_against_the_committed_schema(repo: Repo, monkeypatch: pytest.MonkeyPatch):
    from labnote_index.index import parallel

    monkeypatch.setattr(parallel, "MIN_PART", 5)
    commit_schemas(repo)
    older = schema(repo, "packet")
    older["required"] = [*older["required"], "reviewed_by"]
    older["properties"]["reviewed_by"] = {"type": "string"}
    save_schema(repo, "packet", older)
    packets = repo.files("registry/packets/*/*.json")
    one = api.build(repo.root, repo.db_path, jobs=1).findings
    several = api.build(repo.root, repo.db_path, jobs=3, full=True).findings
    assert one == several and one["error"] == len(packets)


def test_when_the_committed_schemas_govern_every_type_the_line_says_so(repo: Repo):
    commit_schemas(repo)
    for name in ("message", "notification", "packet", "response", "tag", "visit", "visitor"):
        widened = schema(repo, name)
        widened["properties"]["reviewed_by"] = {"type": "string"}
        save_schema(repo, name, widened)
    assert api.governing_schemas(repo.root) == (
        "schemas: registry/schemas/ governs message, notification, packet, response, tag, "
        "visit, visitor"
    )
    assert found(repo) == []


def test_a_committed_pattern_that_backtracks_is_bounded(repo: Repo):
    """A hostile pattern (a lookahead before nested repetition, which a
    backtracking engine takes exponential time over) ends in a finding, not a
    hang: the schema engine bounds its backtracking."""
    commit_schemas(repo)
    hostile = schema(repo, "packet")
    hostile["properties"]["notes"] = {"type": "string", "pattern": "^(?=a)(a+)+$"}
    save_schema(repo, "packet", hostile)
    packet = repo.first("registry/packets/*/*.json")
    repo.edit(packet, notes="a" * 40 + "!")
    got = [(c, fld) for c, f, fld, _ in found(repo) if f == packet]
    assert got and all(fld == "notes" for _, fld in got)
