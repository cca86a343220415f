"""Generated views against expected files written by hand, and the staleness checks.

Every test here runs both ways the views are made: from the files themselves
(``views`` without ``--db``: ``read/records.py``, no index) and from an index
(``--db``); the two are also compared directly on awkward repositories.

Tests of: ``index/registry_views.py`` and ``read/records.py``.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labnote_index.cli import cli
from labnote_index.format.rules import RECORD_TYPES

from .helpers import SAMPLE_REPO, Repo, findings_of

MADE_FROM = "index"


@pytest.fixture(params=["files", "index"])
def made_from(request: pytest.FixtureRequest) -> str:
    """Which way ``views`` below makes them: without --db, or into an index."""
    global MADE_FROM
    MADE_FROM = request.param
    return request.param


# The tests of what views makes and says, run both ways.
both_ways = pytest.mark.usefixtures("made_from")


def views(repo: Path, db: Path, *args: str):
    index = ["--db", str(db)] if MADE_FROM == "index" else []
    return CliRunner().invoke(cli, ["views", str(repo), *index, *args])


def write(root: Path, rel: str, data: dict) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@both_ways
def test_tricky_cells_byte_for_byte(tmp_path: Path):
    root = tmp_path / "repo"
    base = {
        "schema_version": 1,
        "created_by": "op",
        "deposited_by": "op",
        "content_origin": "operator_authored",
        "source_refs": [],
        "source_note": "",
        "derivative_of": [],
        "provenance_coverage": "record_level",
        "source_session": "a",
        "target_session": "b",
        "status": "new",
        "response_expected": False,
        "response_packet_id": None,
    }
    # Written out of ID order: rows must come back sorted by packet_id.
    write(
        root,
        "registry/packets/2026/20260902-op-zeta.json",
        {
            "record_type": "packet",
            **base,
            "packet_id": "20260902-op-zeta",
            "created_at": "2026-09-02T08:00:00Z",
            "topic": "zeta",
            "path": "datadrops/z.md",
            "tags": ["a", "b"],
            "notes": 'He said "hi", then left\nfor good',
        },
    )
    write(
        root,
        "registry/packets/2026/20260901-op-alpha.json",
        {
            "record_type": "packet",
            **base,
            "packet_id": "20260901-op-alpha",
            "created_at": "2026-09-01T23:59:59+02:00",
            "topic": "alpha",
            "path": "datadrops/a.md",
            "response_expected": True,
            "tags": [],
            "notes": "plain",
        },
    )
    # Not canonical: a message directory holding a packet, and a record with no record_type.
    write(
        root,
        "registry/messages/open/20260903-op-stray.json",
        {
            "record_type": "packet",
            **base,
            "packet_id": "20260903-op-stray",
            "created_at": "2026-09-03T08:00:00Z",
            "topic": "stray",
            "path": "x.md",
            "tags": [],
            "notes": "",
        },
    )
    write(
        root,
        "registry/packets/2026/20260904-op-legacy.json",
        {
            **base,
            "packet_id": "20260904-op-legacy",
            "created_at": "2026-09-04T08:00:00Z",
            "topic": "legacy",
            "path": "x.md",
            "tags": [],
            "notes": "",
        },
    )
    write(
        root,
        "registry/tags/accepted/pipes.json",
        {
            "record_type": "tag",
            "schema_version": 1,
            "tag_slug": "pipes",
            "created_at": "2026-09-01T00:00:00Z",
            "display_name": "Pipes",
            "status": "accepted",
            "scope": "registry",
            "description": "a | b | c",
            "created_by": "op",
            "accepted_by": "op",
            "accepted_at": "2026-09-01T00:00:00Z",
            "acceptance_basis": "operator_supplied",
            "notes": "",
        },
    )
    result = views(root, tmp_path / "v.db")
    assert result.exit_code == 0, result.output
    assert (root / "registry/packet_registry.csv").read_bytes() == (
        b"packet_id,date,created_at,created_by,deposited_by,content_origin,source_note,"
        b"source_session,target_session,topic,status,path,response_expected,"
        b"response_packet_id,tags,notes\n"
        b"20260901-op-alpha,2026-09-01,2026-09-01T23:59:59+02:00,op,op,operator_authored,,"
        b"a,b,alpha,new,datadrops/a.md,true,,,plain\n"
        b"20260902-op-zeta,2026-09-02,2026-09-02T08:00:00Z,op,op,operator_authored,,"
        b'a,b,zeta,new,datadrops/z.md,false,,a|b,"He said ""hi"", then left\nfor good"\n'
    )
    assert (root / "registry/message_registry.csv").read_text() == (
        "message_id,date,created_at,from_visitor_id,to_visitor_id,to_group,status,path,"
        "reply_to,reply_expected,response_message_id,needs_human_relay,related_packet,"
        "related_response,summary,tags,notes\n"
    )
    index = (root / "registry/INDEX.md").read_text()
    assert index == (
        "# Registry Index\n\n"
        "> Generated from canonical JSON records by scripts/generate_registry_views.py;"
        " do not edit manually.\n\n"
        "## Record Counts\n\n"
        "| Record type | Count |\n| --- | ---: |\n"
        "| packet | 2 |\n| response | 0 |\n| message | 0 |\n| notification | 0 |\n"
        "| visit | 0 |\n| visitor | 0 |\n| tag | 1 |\n\n"
        "## Tags\n\n"
        "| Tag | Status | Scope | Description |\n| --- | --- | --- | --- |\n"
        "| pipes | accepted | registry | a \\| b \\| c |\n"
    )


# An independent rendering, straight from the files, for whole repositories.
def expected_csv(
    root: Path, directory: str, record_type: str, id_field: str, columns: list[str]
) -> str:
    records = []
    for path in (root / "registry" / directory).rglob("*.json"):
        data = json.loads(path.read_text())
        if data.get("record_type") == record_type:
            records.append(data)
    records.sort(key=lambda d: d[id_field])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)

    def show(value):
        if value is None:
            return ""
        if value is True or value is False:
            return "true" if value else "false"
        if isinstance(value, list):
            return "|".join(value)
        return str(value)

    for d in records:
        writer.writerow([d["created_at"][:10] if c == "date" else show(d.get(c)) for c in columns])
    return out.getvalue()


def header(root: Path, name: str) -> list[str]:
    return (root / "registry" / name).read_text().splitlines()[0].split(",")


def check_whole_repository(root: Path, db: Path) -> None:
    result = views(root, db)
    assert result.exit_code == 0, result.output
    for directory, record_type, id_field in [
        ("packets", "packet", "packet_id"),
        ("responses", "response", "response_id"),
        ("messages", "message", "message_id"),
        ("notifications", "notification", "notification_id"),
        ("visits", "visit", "visit_id"),
        ("visitors", "visitor", "visitor_id"),
    ]:
        name = f"{record_type}_registry.csv"
        expected = expected_csv(root, directory, record_type, id_field, header(root, name))
        assert (root / "registry" / name).read_text() == expected, name


@both_ways
def test_sample_repo_views(sample_repo: Repo, tmp_path: Path):
    check_whole_repository(sample_repo.root, tmp_path / "s.db")


@both_ways
def test_generated_repository_views(repo: Repo, tmp_path: Path):
    check_whole_repository(repo.root, tmp_path / "g.db")
    lines = (repo.root / "registry/packet_registry.csv").read_text().splitlines()
    assert len(lines) == 13  # header + 12 packets


@both_ways
def test_committed_sample_views_are_current(tmp_path: Path):
    result = views(SAMPLE_REPO, tmp_path / "s.db", "--check")
    assert result.exit_code == 0, result.output
    assert "7 views are current" in result.output


@both_ways
def test_check_passes_after_views_and_fails_after_an_edit(repo: Repo, tmp_path: Path):
    db = tmp_path / "v.db"
    assert views(repo.root, db).exit_code == 0
    before = {p.name: p.read_bytes() for p in (repo.root / "registry").glob("*_registry.csv")}
    assert views(repo.root, db, "--check").exit_code == 0
    packet = repo.first("registry/packets/*/*.json")
    repo.edit(packet, status="archived")
    result = views(repo.root, db, "--check")
    assert result.exit_code == 1
    assert "stale: " in result.output and "packet_registry.csv" in result.output
    assert "+" in result.output and ",archived," in result.output
    after = {p.name: p.read_bytes() for p in (repo.root / "registry").glob("*_registry.csv")}
    assert before == after  # --check writes nothing


@both_ways
def test_views_to_another_directory(repo: Repo, tmp_path: Path):
    out = tmp_path / "out"
    assert views(repo.root, tmp_path / "v.db", "--out", str(out)).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "INDEX.md",
            "message_registry.csv",
            "notification_registry.csv",
            "packet_registry.csv",
            "response_registry.csv",
            "visit_registry.csv",
            "visitor_registry.csv",
        ]
    )
    assert not (repo.root / "registry/INDEX.md").exists()


def test_stale_view_is_an_error_that_fails_check(repo: Repo, tmp_path: Path):
    views(repo.root, tmp_path / "v.db")
    assert findings_of(repo.index()) == []
    (repo.root / "registry/INDEX.md").write_text("# edited by hand\n")
    found = findings_of(repo.index())
    assert [(f["check"], f["severity"], f["file"]) for f in found] == [
        ("view_stale", "error", "registry/INDEX.md")
    ]
    # Upstream CI fails on any difference: so does a plain check.
    result = CliRunner().invoke(cli, ["check", str(repo.root), "--no-db"])
    assert result.exit_code == 1, result.output


@both_ways
def test_a_windows_checkout_of_current_views_is_current(repo: Repo, tmp_path: Path):
    views(repo.root, tmp_path / "v.db")
    committed = sorted((repo.root / "registry").glob("*_registry.csv")) + [
        repo.root / "registry/INDEX.md"
    ]
    for path in committed:
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert findings_of(repo.index()) == []
    result = views(repo.root, tmp_path / "v.db", "--check")
    assert result.exit_code == 0, result.output
    assert "views are current" in result.output


@both_ways
def test_a_view_diff_shows_every_control_character(repo: Repo, tmp_path: Path):
    views(repo.root, tmp_path / "v.db")
    index = repo.root / "registry/INDEX.md"
    lines = index.read_bytes().split(b"\n")
    lines[2] = lines[2] + b" edited\x0c\x1b[31m\x0b"  # a lone CR would be a newline
    index.write_bytes(b"\n".join(lines))
    result = views(repo.root, tmp_path / "v.db", "--check")
    assert result.exit_code == 1
    edited = [line for line in result.output.splitlines() if "edited" in line]
    assert edited and edited[0].endswith("edited\\x0c\\x1b[31m\\x0b"), result.output
    assert not {"\x1b", "\x0c", "\x0b"} & set(result.output)


def test_views_are_worked_out_again_only_when_a_record_changed(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import importlib

    registry_views = importlib.import_module("labnote_index.index.registry_views")
    views(repo.root, tmp_path / "v.db")  # commits them
    repo.index()
    rendered: list[int] = []
    real = registry_views.store_views
    monkeypatch.setattr(
        registry_views, "store_views", lambda db, sandbox: rendered.append(1) or real(db, sandbox)
    )
    artifact = repo.load(repo.first("registry/packets/*/*.json"))["path"]
    repo.write(artifact, "# Only the artifact changed\n")
    repo.index()
    assert rendered == []  # an artifact feeds no view
    repo.edit(repo.first("registry/packets/*/*.json"), status="archived")
    assert findings_of(repo.index())[0]["check"] == "view_stale"
    assert rendered == [1]


@both_ways
def test_views_are_never_written_while_a_record_cannot_be_read(sample_repo: Repo):
    """A truncated packet: views and views --check exit 2 naming it (views
    dropped its row, exit 0), and fix leaves the committed views as they are,
    saying why and what remains in all."""
    from click.testing import CliRunner

    from labnote_index.cli import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["views", str(sample_repo.root)]).exit_code == 0
    registry = sample_repo.root / "registry/packet_registry.csv"
    before = registry.read_bytes()
    packet = sample_repo.first("registry/packets/*/*.json")
    path = sample_repo.root / packet
    path.write_bytes(path.read_bytes()[:200])  # truncated: malformed JSON
    for args in ((), ("--check",)):
        result = views(sample_repo.root, sample_repo.db_path, *args)
        assert result.exit_code == 2, result.output
        assert packet in result.output and "cannot be read" in result.output
    assert registry.read_bytes() == before
    fixed = runner.invoke(cli, ["fix", str(sample_repo.root), "--apply"])
    assert fixed.exit_code == 1 and registry.read_bytes() == before
    assert "not fixed [view_stale]" in fixed.output and packet in fixed.output
    assert "in all: " in fixed.output and " remain" in fixed.output


def test_a_killed_view_writers_leftovers_are_cleared_and_never_a_finding(repo: Repo):
    """Views are written through a private directory beside them (the one atomic
    writer, ``replace_file``): what a killed writer left there is removed by the
    next, and never shows up as a stray file (it once was
    ``registry/.packet_registry.csv.<pid>.tmp``, an error)."""
    import subprocess
    import sys

    registry = repo.root / "registry"
    code = (
        "import sys; from labnote_index.index.tempfiles import new_directory; "
        "d = new_directory('tmp', sys.argv[1]); (d / 'packet_registry.csv').write_text('half')"
    )
    subprocess.run([sys.executable, "-c", code, str(registry)], check=True)  # then it is gone
    (left,) = [p for p in registry.iterdir() if p.name.startswith(".labnote-")]
    assert [f for f in findings_of(repo.index()) if f["check"] == "stray_file"] == []
    result = CliRunner().invoke(cli, ["views", str(repo.root), "--db", str(repo.db_path)])
    assert result.exit_code == 0, result.output
    assert not left.exists()
    assert sorted(p.name for p in registry.iterdir() if p.name.startswith(".")) == []
    assert [
        f for f in findings_of(repo.index()) if f["check"] in ("stray_file", "view_stale")
    ] == []


@both_ways
def test_check_says_missing_for_a_view_that_is_not_there(repo: Repo, tmp_path: Path):
    db = tmp_path / "v.db"
    assert views(repo.root, db).exit_code == 0
    (repo.root / "registry" / "visit_registry.csv").unlink()
    repo.edit(repo.first("registry/packets/*/*.json"), status="archived")
    result = views(repo.root, db, "--check")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith("missing: ") and "visit_registry.csv" in line for line in lines)
    assert not any(line.startswith("stale: ") and "visit_registry.csv" in line for line in lines)
    assert any(line.startswith("stale: ") and "packet_registry.csv" in line for line in lines)


# Records in the shapes where reading them directly could differ from an index:
# the views' order (IDs missing, not text, repeated, beyond ASCII), records filed
# where their type does not say, legacy spellings, and what no view holds.
def _awkward_repository(root: Path) -> None:
    def packet(rel: str, **fields: object) -> None:
        data = {"record_type": "packet", "created_at": "2026-01-02T03:04:05Z", **fields}
        write(root, f"registry/packets/{rel}", data)

    packet("inbox/a.json", packet_id="pkt-b", status="open")
    packet("inbox/b.json", packet_id="pkt-b", status="second copy")  # the same ID: by file
    packet("inbox-2/z.json", packet_id="pkt-b", status="first copy")  # "-" sorts before "/"
    packet("inbox/c.json", status="no ID")  # NULL first
    packet("inbox/d.json", packet_id=7)  # not text: JSON text "7"
    packet("inbox/e.json", packet_id=["pkt-list"])
    packet("inbox/f.json", packet_id="pkt-é")
    packet("inbox/g.json", packet_id="pkt-Z")
    packet("inbox/h.json", packet_id="pkt-\U0001f600")
    packet("2026/deep/i.json", packet_id="pkt-a", source_ai="legacy-spelling")
    packet("inbox/j.json", packet_id="pkt-big", size=10**30)
    write(root, "registry/responses/inbox/k.json", {"record_type": "packet", "packet_id": "p-x"})
    write(root, "registry/packets/inbox/l.json", {"packet_id": "pkt-legacy"})  # no record_type
    write(root, "registry/packets/inbox/m.json", {"record_type": "nothing", "packet_id": "n"})
    write(root, "registry/loose.json", {"record_type": "packet", "packet_id": "pkt-loose"})
    write(root, "registry/packets-old/p.json", {"record_type": "packet", "packet_id": "old"})
    write(root, "elsewhere/n.json", {"record_type": "packet", "packet_id": "pkt-outside"})
    (root / "registry/packets/inbox/o.json").write_text(
        '{"record_type": "packet", "packet_id": "pkt-s", "notes": "\\ud800"}'
    )
    write(root, "registry/tags/t1.json", {"record_type": "tag", "tag_slug": "b", "status": "x"})
    write(root, "registry/tags/t2.json", {"record_type": "tag", "tag_slug": "a|b"})
    write(root, "registry/skipped/q.json", {"record_type": "packet", "packet_id": "pkt-q"})
    write(root, "registry/packets/skipped/r.json", {"record_type": "packet", "packet_id": "r"})


def _both_ways(root: Path, db: Path) -> tuple[object, object]:
    """What each way of making the views gives: the views, or the refusal."""
    from labnote_index import api
    from labnote_index.configuration import configuration
    from labnote_index.errors import RecordsUnreadable
    from labnote_index.index.registry_views import repository_views

    made = []
    for make in (
        lambda: repository_views(root, configuration(root).excluded()),
        lambda: (api.build(root, db, full=True), api.views(db))[1],
    ):
        try:
            made.append(make())
        except RecordsUnreadable as exc:
            made.append(str(exc))
    return made[0], made[1]


def test_views_from_the_files_are_the_views_of_an_index(tmp_path: Path):
    root = tmp_path / "repo"
    _awkward_repository(root)
    (root / "labnote-index.toml").write_text('exclude = ["registry/packets/skipped"]\n')
    direct, indexed = _both_ways(root, tmp_path / "i.db")
    assert isinstance(direct, dict) and direct == indexed
    lines = direct["registry/packet_registry.csv"].splitlines()
    status = lines[0].split(",").index("status")
    rows = [(row[0], row[status]) for row in csv.reader(lines[1:])]
    # By ID as the index orders it (binary UTF-8; a list by its JSON text), then file.
    assert [i for i, _ in rows] == [
        "",
        "7",
        "pkt-list",
        "pkt-Z",
        "pkt-a",
        "pkt-b",
        "pkt-b",
        "pkt-b",
        "pkt-big",
        "pkt-s",
        "pkt-é",
        "pkt-\U0001f600",
    ]
    assert rows[5:8] == [("pkt-b", "first copy"), ("pkt-b", "open"), ("pkt-b", "second copy")]
    # Not in it: a legacy record, another type's directory, outside registry/<dir>/,
    # an unknown type, and what the configuration excludes.
    assert "| a|b |  |  |  |\n| b | x |  |  |\n" in direct["registry/INDEX.md"]


def test_records_that_cannot_be_read_are_refused_alike_both_ways(tmp_path: Path):
    """Each shape of a record file no view can be made without: both ways refuse,
    naming the same files; a record with a byte order mark (a problem, not an
    unreadable file) is read both ways."""
    import os

    root = tmp_path / "repo"
    _awkward_repository(root)
    packets = root / "registry/packets/inbox"
    (packets / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"packet_id": "x"}).encode())
    assert isinstance(_both_ways(root, tmp_path / "0.db")[0], dict)
    (packets / "truncated.json").write_text('{"record_type": "packet", "packet_id": ')
    (packets / "list.json").write_text("[1, 2]")
    (packets / "empty.json").write_text("")
    (packets / "latin1.json").write_bytes(b'{"packet_id": "\xe9"}')
    (packets / "dir.json").mkdir()  # a directory: walked into, no record file
    os.symlink(tmp_path / "nowhere.json", packets / "dangling.json")
    (tmp_path / "outside.json").write_text('{"record_type": "packet", "packet_id": "o"}')
    os.symlink(tmp_path / "outside.json", packets / "outside.json")
    os.link(packets / "a.json", packets / "second-name.json")
    os.symlink("b.json", packets / "inside-link.json")  # read: it leads inside
    (root / os.fsdecode(b"registry/packets/inbox/\xff.json")).write_text("{}")
    direct, indexed = _both_ways(root, tmp_path / "1.db")
    assert isinstance(direct, str) and direct == indexed
    from labnote_index.index.registry_views import refusal

    names = "\\xff a dangling empty latin1 list outside second-name truncated"
    # Both names of a hard-linked record (either could be a file outside).
    unreadable = sorted(f"registry/packets/inbox/{n}.json" for n in names.split())
    assert direct == refusal(unreadable)


_DIRECTORIES = ["packets", "responses", "messages", "visitors", "tags", "loose"]
_IDS = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.text(alphabet='aZé_-\U0001f600\u00a0|,"\n', max_size=4),
    st.lists(st.text(alphabet="ab", max_size=2), max_size=2),
)


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_DIRECTORIES),
            st.sampled_from(["", "inbox/", "2026/deep/"]),
            st.sampled_from([None, "packet", "response", "message", "visitor", "tag", "x"]),
            _IDS,
            st.one_of(st.none(), st.text(max_size=12), st.booleans()),
        ),
        max_size=12,
    )
)
def test_any_records_make_the_same_views_both_ways(records: list[tuple]):
    with tempfile.TemporaryDirectory() as work:
        root = Path(work) / "repo"
        (root / "registry").mkdir(parents=True)
        for n, (directory, sub, record_type, record_id, created_at) in enumerate(records):
            data: dict[str, object] = {"created_at": created_at, "status": record_id}
            if record_type is not None:
                data["record_type"] = record_type
            for rt in RECORD_TYPES.values():  # the ID under every type's field
                data[rt.id_field] = record_id
            place = "registry" if directory == "loose" else f"registry/{directory}/{sub}"
            write(root, f"{place.rstrip('/')}/r{n}.json", data)
        direct, indexed = _both_ways(root, Path(work) / "i.db")
        assert direct == indexed


def test_a_record_replaced_by_a_symlink_since_the_walk_is_not_read(tmp_path: Path):
    """The walk saw a regular file; a symlink put in its place since (even one
    leading inside) is never read through, as the index's loader does."""
    import os

    from labnote_index.read.discover import discover
    from labnote_index.read.paths import Sandbox
    from labnote_index.read.records import registry_records

    root = tmp_path / "repo"
    write(root, "registry/packets/a.json", {"record_type": "packet", "packet_id": "a"})
    write(root, "registry/packets/b.json", {"record_type": "packet", "packet_id": "b"})
    sandbox = Sandbox(root)
    found = discover(root, sandbox.entered)
    assert [r[2] for r in registry_records(sandbox, found).records] == ["a", "b"]
    (root / "registry/packets/a.json").unlink()
    os.symlink("b.json", root / "registry/packets/a.json")
    read = registry_records(sandbox, found)
    assert read.unreadable == ["registry/packets/a.json"]
    assert [r[2] for r in read.records] == ["b"]


def test_reading_the_records_says_how_far_it_is(tmp_path: Path):
    """A long views run without an index shows a progress bar (on a terminal),
    told of every record file, in batches."""
    from labnote_index.index.registry_views import repository_views

    from .helpers import Calls

    root = tmp_path / "repo"
    for n in range(2001):
        write(root, f"registry/tags/t{n}.json", {"record_type": "tag", "tag_slug": f"t{n}"})
    write(root, "registry/INDEX.md", "not a record")
    advances: list[int] = []
    progress = Calls(advances.append)
    views = repository_views(root, None, progress)
    assert progress.totals == [2001] and advances == [1000, 1000, 1]
    assert "| t999 |" in views["registry/INDEX.md"]
