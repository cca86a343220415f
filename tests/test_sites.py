"""Several repositories' indexes served together: side by side on the home page,
asked all at once, and never resolved across one another.

Tests of: ``web/publish.py``, ``web/serve.py``.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import labnote_index as li
from bench.generate import generate
from labnote_index.cli import cli
from labnote_index.index.organisation import index_names
from labnote_index.web.serve import make_datasette

from .helpers import DEPLOYMENT_FILES, SAMPLE_REPO, fetch

LATE_REPLY = "registry/messages/open/20260912-gemini-late-reply.json"
MISSING = "20260911-maria-ops-summary-length"  # the late reply's reply_to: not in sample


@pytest.fixture
def site(tmp_path: Path):
    """sample_repo as "alpha" and a generated repository as "beta-o-brien-x" (a
    name that is data: quotes and brackets), beta holding the message alpha's
    late reply names."""
    alpha, beta = tmp_path / "alpha", tmp_path / "beta o'brien [x]"
    shutil.copytree(SAMPLE_REPO, alpha)
    generate(beta, packets=5)
    message = sorted((beta / "registry/messages").rglob("*.json"))[0]
    data = json.loads(message.read_text())
    data["message_id"] = MISSING
    moved = message.with_name(f"{MISSING}.json")
    message.unlink()
    moved.write_text(json.dumps(data, indent=2))
    dbs = [tmp_path / "a.db", tmp_path / "b.db"]
    li.build(alpha, dbs[0])
    li.build(beta, dbs[1])
    return dbs


def get(datasette, path: str):
    async def run():
        await datasette.invoke_startup()
        return await datasette.client.get(path)

    return asyncio.run(run())


def test_indexes_are_named_after_their_repositories(site, tmp_path: Path):
    assert index_names(site) == ["alpha", "beta-o-brien-x"]
    shutil.copy(site[0], tmp_path / "again.db")
    assert index_names([site[0], tmp_path / "again.db"]) == ["alpha", "alpha-2"]
    assert index_names([site[0]]) == ["a"]  # one index: its file's name, as ever


def test_the_home_page_shows_every_repository_side_by_side(site):
    datasette = make_datasette(site)
    page = get(datasette, "/")
    rows = re.findall(
        r'<tr><td><a href="([^"]+)">([^<]+)</a></td>((?:<td class="labnote-n[^"]*">\d+</td>)+)',
        page.text,
    )
    seen = {
        html.unescape(name): [int(n) for n in re.findall(r">(\d+)<", cells)]
        for _, name, cells in rows
    }
    assert set(seen) == {"alpha", "beta-o-brien-x"}
    for path, name in zip(site, ["alpha", "beta-o-brien-x"], strict=True):
        found = li.findings(path)
        errors = sum(1 for f in found if f.severity == "error")
        assert seen[name][:2] == [errors, len(found) - errors]
    assert seen["alpha"][0] == 7
    assert get(datasette, rows[0][0]).status_code == 200  # each its own dashboard


def test_cross_repository_queries_answer_for_every_repository(site):
    datasette = make_datasette(site)
    findings = get(datasette, "/organisation/every_finding.json?_shape=array").json()
    assert len(findings) == len(li.findings(site[0])) + len(li.findings(site[1]))
    assert {f["repository"] for f in findings} <= {"alpha", "beta-o-brien-x"}
    open_messages = get(datasette, "/organisation/every_open_message.json?_shape=array").json()
    assert {m["repository"] for m in open_messages} == {"alpha", "beta-o-brien-x"}


def test_a_name_found_only_in_another_repository_is_never_resolved(site):
    datasette = make_datasette(site)
    page = get(datasette, f"/alpha/-/story?node={LATE_REPLY}")
    assert page.status_code == 200
    text = html.unescape(re.sub(r"\s+", " ", page.text))
    assert f"MISSING {MISSING}" in re.sub("<[^>]+>", "", text)
    assert "not in this repository; found in beta-o-brien-x, which it cannot reference" in (
        re.sub("<[^>]+>", "", text)
    )
    # Its own index still calls it an orphan.
    assert any(f.check == "reference_unresolved" for f in li.findings(site[0]))


def test_publish_writes_a_whole_deployment_or_nothing(site, tmp_path: Path):
    from click.testing import CliRunner

    from labnote_index.cli import cli

    out = tmp_path / "deploy"
    result = CliRunner().invoke(cli, ["publish", str(site[0]), str(site[1]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    served = {"alpha.db", "beta-o-brien-x.db", "organisation.db"}
    assert {p.name for p in out.iterdir()} == {*served, *DEPLOYMENT_FILES}
    metadata = json.loads((out / "metadata.json").read_text())
    assert {"alpha", "beta-o-brien-x", "organisation"} <= set(metadata["databases"])
    inspected = json.loads((out / "inspect-data.json").read_text())
    assert inspected["alpha"]["tables"]["packets"]["count"] == 10
    start = (out / "start.sh").read_text()
    assert "--immutable organisation.db" in start and "--crossdb" not in start
    assert "--setting default_cache_ttl 86400" in start
    assert list((out / "wheels").glob("labnote_index-*.whl"))
    # Refused, writing nothing: a directory that is not empty, a file that is not an index.
    for args, where in (
        ([str(site[0])], out),
        ([str(tmp_path / "deploy" / "Dockerfile")], tmp_path / "d2"),
    ):
        before = sorted(p.name for p in tmp_path.iterdir())
        result = CliRunner().invoke(cli, ["publish", *args, "--out", str(where)])
        assert result.exit_code == 2, result.output
        assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_damaged_index_among_several_is_one_line(site, tmp_path: Path):
    """SQLite's report of the damage runs over two lines: the error is one."""
    import shutil

    damaged = tmp_path / "damaged.db"
    shutil.copyfile(site[0], damaged)
    data = bytearray(damaged.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    last = len(data) // size - 1
    data[last * size + 1 : last * size + 3] = b"\x00\x07"  # a free-block pointer gone wrong
    damaged.write_bytes(bytes(data))
    from labnote_index.index.index_file import index_damage

    assert "\n" in (index_damage(damaged) or ""), "not the two-line damage"
    result = CliRunner().invoke(cli, ["serve", str(site[1]), str(damaged), "--port", "0"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "is damaged" in result.output and "build it again with --full" in result.output


def test_an_index_named_memory_is_served_where_it_is_announced(tmp_path: Path):
    """Datasette's own database is _memory: an index of that name answered 404."""
    from labnote_index.index.organisation import index_names

    assert index_names([tmp_path / "_memory.db"]) == ["_memory-2"]
    db = tmp_path / "_memory.db"
    li.build(SAMPLE_REPO, db)
    (page,) = fetch(db, "/_memory-2/findings.json?_shape=array")
    assert page.status_code == 200 and page.json()
