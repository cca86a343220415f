"""index/organisation.py and `labnote-index merge`: many repositories' indexes in
one file, each repository's rows its own, past the ten databases SQLite attaches.

Tests of: ``cli_sites.py``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

import labnote_index as li
from bench.generate import generate
from labnote_index.cli import cli
from labnote_index.errors import NotAnIndex
from labnote_index.index.organisation import ORGANISATION, index_names, merge_indexes
from labnote_index.web.serve import make_datasette

from .helpers import SAMPLE_REPO

MISSING = "20260911-maria-ops-summary-length"  # the sample's late reply names it; no record has it
REPOSITORIES = 12  # more than the ten databases SQLite attaches at once


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Twelve indexes: the sample, and eleven generated repositories of different
    sizes, the last holding the message the sample's late reply names."""
    root = tmp_path_factory.mktemp("org")
    repos = [root / "r00"]
    shutil.copytree(SAMPLE_REPO, repos[0])
    for n in range(1, REPOSITORIES):
        repos.append(root / f"r{n:02}")
        generate(repos[-1], packets=1 + n % 4, seed=n)
    message = sorted((repos[-1] / "registry/messages").rglob("*.json"))[0]
    data = json.loads(message.read_text())
    data["message_id"] = MISSING
    message.unlink()
    message.with_name(f"{MISSING}.json").write_text(json.dumps(data, indent=2))
    dbs = []
    for repo in repos:
        dbs.append(root / f"{repo.name}.db")
        li.build(repo, dbs[-1])
    return dbs


def _own(db: Path, table: str) -> list[tuple]:
    index = sqlite_utils.Database(db)
    rows = [tuple(r.values()) for r in index.query(f"SELECT * FROM [{table}]")]
    index.close()
    return sorted(rows, key=repr)


def _merged(org: Path, table: str, repository: str) -> list[tuple]:
    index = sqlite_utils.Database(org)
    rows = [
        tuple(v for k, v in r.items() if k not in ("repository", "exists_in"))
        for r in index.query(f"SELECT * FROM [{table}] WHERE repository = ?", [repository])
    ]
    index.close()
    return sorted(rows, key=repr)


def test_each_repository_keeps_exactly_its_own_rows(many: list[Path], tmp_path: Path):
    org = tmp_path / "org.db"
    names = index_names(many)
    result = merge_indexes(list(zip(names, many, strict=True)), org)
    assert result.merged == names and not result.kept
    for name, db in zip(names, many, strict=True):
        for table in ("findings", "records", "refs", "orphans", "open_messages", "lineage_edges"):
            assert _merged(org, table, name) == _own(db, table), (name, table)
    listed = sqlite_utils.Database(org)["repositories"]
    assert [r["repository"] for r in listed.rows] == names
    counts = {r["repository"]: (r["records"], r["errors"]) for r in listed.rows}
    first = li.findings(many[0])
    assert counts[names[0]][1] == sum(f.severity == "error" for f in first)


def test_an_id_another_repository_has_is_still_an_orphan_with_the_hint(
    many: list[Path], tmp_path: Path
):
    org = tmp_path / "org.db"
    names = index_names(many)
    merge_indexes(list(zip(names, many, strict=True)), org)
    rows = list(
        sqlite_utils.Database(org).query(
            "SELECT repository, exists_in FROM orphans WHERE missing_id = ?", [MISSING]
        )
    )
    assert rows == [{"repository": names[0], "exists_in": names[-1]}]
    # The repository's own findings still call it unresolved.
    assert any(f.check == "reference_unresolved" for f in li.findings(many[0]))


def test_a_merge_is_incremental_and_drops_what_is_not_named(many: list[Path], tmp_path: Path):
    org = tmp_path / "org.db"
    sources = list(zip(index_names(many), many, strict=True))
    merge_indexes(sources[:4], org)
    again = merge_indexes(sources[:3], org)
    assert again.kept == [name for name, _ in sources[:3]] and not again.merged
    assert again.dropped == [sources[3][0]]
    left = sqlite_utils.Database(org).execute("SELECT DISTINCT repository FROM records")
    assert sorted(r[0] for r in left) == sorted(name for name, _ in sources[:3])
    copy = tmp_path / "rebuilt.db"  # the same repository, indexed anew: copied again
    shutil.copyfile(sources[1][1], copy)
    changed = merge_indexes([sources[0], (sources[1][0], copy), sources[2]], org)
    assert changed.merged == [sources[1][0]] and len(changed.kept) == 2
    assert _merged(org, "findings", sources[1][0]) == _own(copy, "findings")
    older = sqlite_utils.Database(org)  # an organisation index of another version
    older.execute("UPDATE build_info SET value = '{\"format\": 0}' WHERE key = 'organisation'")
    older.conn.commit()
    older.close()
    anew = merge_indexes(sources[:2], org)  # ours: made anew, every index copied
    assert anew.merged == [name for name, _ in sources[:2]] and not anew.kept


def test_merge_refuses_what_is_not_an_index_and_replaces_nothing_else(
    many: list[Path], tmp_path: Path
):
    mine = tmp_path / "notes.db"
    mine.write_bytes(b"not an index, and not yours to replace")
    with pytest.raises(NotAnIndex):
        merge_indexes([("r", many[0])], mine)
    assert mine.read_bytes() == b"not an index, and not yours to replace"
    before = many[1].read_bytes()
    with pytest.raises(NotAnIndex, match="not an organisation index"):
        merge_indexes([("r", many[0]), ("s", many[1])], many[1])  # a source as --db
    assert many[1].read_bytes() == before
    with pytest.raises(NotAnIndex, match="one repository name"):
        merge_indexes([("r", many[0]), ("r", many[1])], tmp_path / "o.db")
    assert not (tmp_path / "o.db").exists()


def test_the_merge_command(many: list[Path], tmp_path: Path):
    org = tmp_path / "org.db"
    args = ["merge", *map(str, many[:3]), "--db", str(org)]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "Merged into" in first.stderr and "r00, r01, r02" in first.stderr
    again = CliRunner().invoke(cli, args)
    assert "none; 3 kept as they were" in again.stderr
    bad = CliRunner().invoke(cli, ["merge", str(tmp_path / "org.db"), "--db", str(org)])
    assert bad.exit_code == 2 and "an organisation index, not a repository's" in bad.stderr


def test_a_site_of_more_than_ten_answers_every_cross_repository_query(many: list[Path]):
    """Served together, twelve indexes answer every cross-repository query over
    all twelve (Datasette's cross-database queries stopped at ten: HTTP 400)."""
    datasette = make_datasette(many)
    names = index_names(many)

    async def get(path: str):
        await datasette.invoke_startup()
        return await datasette.client.get(path)

    def rows(query: str) -> list[dict]:
        response = asyncio.run(get(f"/{ORGANISATION}/{query}.json?_shape=array&_size=max"))
        assert response.status_code == 200, response.text
        return response.json()

    findings = rows("every_finding")
    assert len(findings) == sum(len(li.findings(db)) for db in many)
    assert {f["repository"] for f in findings} == {
        name for name, db in zip(names, many, strict=True) if li.findings(db)
    }
    messages = rows("every_open_message")
    assert {m["repository"] for m in messages} == set(names)
    orphans = rows("every_orphan")
    assert {"repository": names[0], "exists_in": names[-1]} in [
        {"repository": o["repository"], "exists_in": o["exists_in"]} for o in orphans
    ]
    home = asyncio.run(get("/"))
    assert home.status_code == 200
    assert all(f'href="/{name}"' in home.text for name in names)
    assert f'href="/{ORGANISATION}"' not in home.text.split("Across them all")[0]
