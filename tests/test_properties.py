"""Property-based tests (Hypothesis): random values in every field of every record
type, random small trees of files, directories and symlinks, random graphs.

Bounded for `make test` (a few seconds); LABNOTE_HYPOTHESIS=long runs many more
examples.

Tests of: ``index/cycles.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from labnote_index.api import build as build_index
from labnote_index.cli import cli
from labnote_index.format.rules import RECORD_TYPES
from labnote_index.index.cycles import on_cycles
from labnote_index.read.discover import KINDS
from labnote_index.text import shown

from .helpers import (
    CONFORMANCE,
    SAMPLE_REPO,
    assert_every_problem_is_a_finding,
    facets_of_page,
    plain_datasette,
)

# Exit codes the README documents for check.
CHECK_EXITS = {0, 1}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)

VALID = {
    name: json.loads((CONFORMANCE / "records/valid" / name / "record.json").read_text())
    for name in RECORD_TYPES
}


@st.composite
def damaged_records(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """Every record type's valid record with one field (or a new one) set to a random value."""
    records = {}
    for name, record in VALID.items():
        field = draw(st.sampled_from([*record, "unexpected"]))
        records[name] = record | {field: draw(json_values)}
    return records


@given(records=damaged_records())
def test_random_values_in_any_field_never_escape_as_exceptions(
    records: dict[str, dict[str, Any]],
):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        for name, record in records.items():
            path = root / "registry" / RECORD_TYPES[name].directory / f"{name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record))
        result = CliRunner().invoke(
            cli, ["check", str(root), "--db", str(Path(tmp) / "i.db"), "--format", "json"]
        )
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        assert result.exit_code in CHECK_EXITS, result.output
        json.loads(result.stdout)
        db = sqlite_utils.Database(Path(tmp) / "i.db")
        files = {r["path"] for r in db["files"].rows}
        assert {f"registry/{RECORD_TYPES[n].directory}/{n}.json" for n in records} <= files
        assert_every_problem_is_a_finding(db)


names = st.sampled_from(["a", "b.json", "C.JSON", "x.md", ".hidden", "registry", "packet-v001"])
SECRET = "outside-secret-7f3a"


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    """(kind, path under registry/, payload): files, directories, symlinks."""
    entries = []
    for _ in range(draw(st.integers(1, 8))):
        depth = draw(st.integers(1, 3))
        path = "/".join(draw(names) for _ in range(depth))
        kind = draw(st.sampled_from(["file", "json", "dir", "link"]))
        if kind == "link":
            payload = draw(st.sampled_from(["../outside", "/outside", ".", "..", "a", "../../.."]))
        elif kind == "json":
            payload = json.dumps(draw(json_values))
        else:
            payload = draw(st.text(max_size=30))
        entries.append((kind, path, payload))
    return entries


@given(tree=trees())
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_random_trees_never_escape_the_repository(tree: list[tuple[str, str, str]]):
    with tempfile.TemporaryDirectory() as tmp:
        outside = Path(tmp) / "outside"
        outside.mkdir()
        (outside / "secret.json").write_text(json.dumps({"record_type": "tag", "x": SECRET}))
        (outside / "secret.md").write_text(SECRET)
        before = {p.name: p.stat().st_mtime_ns for p in outside.iterdir()}
        root = Path(tmp) / "repo"
        registry = root / "registry"
        registry.mkdir(parents=True)
        for kind, rel, payload in tree:
            path = registry / rel
            parents = [registry.joinpath(*rel.split("/")[:i]) for i in range(1, rel.count("/") + 1)]
            if any(parent.is_symlink() for parent in parents):
                continue  # the test itself must not write through a link
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                if kind == "dir":
                    path.mkdir(exist_ok=True)
                elif kind == "link":
                    target = str(outside) if payload == "/outside" else payload
                    path.symlink_to(target)
                else:
                    path.write_text(payload)
            except OSError:
                continue  # a name already taken by another kind of entry
        db_path = Path(tmp) / "i.db"
        build_index(root, db_path)
        db = sqlite_utils.Database(db_path)
        text = "\n".join(
            str(v)
            for t in ("record_json", "artifacts", "files")
            for r in db[t].rows
            for v in r.values()
        )
        assert SECRET not in text
        files = {r["path"] for r in db["files"].rows}
        # Every regular file under registry/, in directories reached without a symlink
        # and not hidden, is accounted for.
        for directory, dirs, names_here in os.walk(registry):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in names_here:
                path = Path(directory) / name
                if path.is_file() and not path.is_symlink():
                    assert path.relative_to(root).as_posix() in files
        assert {p.name: p.stat().st_mtime_ns for p in outside.iterdir()} == before
        shutil.rmtree(root)


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20))
def test_cycle_members_are_the_nodes_that_reach_themselves(edges: list[tuple[int, int]]):
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(str(a), set()).add(str(b))

    def reaches_itself(start: str) -> bool:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            node = todo.pop()
            if node == start:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return False

    found = on_cycles((str(a), str(b)) for a, b in edges)
    members = [n for component in found for n in component]
    assert len(members) == len(set(members))
    assert set(members) == {n for n in graph if reaches_itself(n)}


# Lineage trees as the provenance module makes them: branches in two directions,
# each a record, a repeated record, or a missing one, some cut short ("+N more").
branch_specs = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=60),  # parent: any earlier branch, or the record
        st.sampled_from(["up", "down"]),
        st.sampled_from(["record", "repeated", "missing"]),
        st.text(min_size=1, max_size=60),  # label: anything, markup included
        st.integers(min_value=0, max_value=3),  # more
    ),
    max_size=40,
)


FIELDS = ["reply_to", "derivative_of", "response_packet_id", "source_packet_id", "input_packets"]


def _tree(specs: list) -> tuple[dict, list[dict]]:
    tree: dict = {"node": "start.json", "kind": "packet", "label": "<b>start</b>", "status": None}
    tree["up"], tree["down"] = [], []
    made: list[dict] = []
    for n, (parent, direction, what, label, more) in enumerate(specs):
        # A record reached again is one reached before on its side (or the record).
        before = [b["node"] for b in made if b["direction"] == direction and b["kind"] != "missing"]
        node = "start.json" if not before else ["start.json", *before][parent % (len(before) + 1)]
        branch = {
            "node": None if what == "missing" else node if what == "repeated" else f"n{n}.json",
            "kind": "missing" if what == "missing" else "message",
            "expected": "message",
            "label": label,
            "status": "open",
            # One to five fields: a label of several lines, some cut at the last.
            "via": FIELDS[: 1 + len(label) % len(FIELDS)],
            "repeated": what == "repeated",
            "missing": what == "missing",
            "more": more if what == "record" else 0,
            "children": [],
        }
        owners = [b for b in made if b["direction"] == direction and b["kind"] != "missing"]
        owners = [b for b in owners if not b["repeated"] and not b["more"]]
        if owners and parent % (len(owners) + 1):
            owners[parent % (len(owners) + 1) - 1]["children"].append(branch)
        else:
            tree[direction].append(branch)
        branch["direction"] = direction
        made.append(branch)
    return tree, made


@given(branch_specs)
# A record met first as a repeat, then whole with branches beyond the drawing:
# its "+1 more" was lost (found by this test in CI).
@example(
    [(0, "up", "record", "0", 0)] * 6
    + [
        (0, "down", "record", "0", 0),
        (0, "down", "record", "0", 1),
        (5, "down", "repeated", "0", 0),
    ]
)
# Then its "+1 more" hung under a box drawn earlier: placed last, it pulled its
# owner over another box (leaves are now placed in tree order).
@example(
    [(0, "up", "record", "0", 0)] * 4
    + [(0, "down", "record", "0", 0), (0, "down", "missing", "0", 0)]
    + [(1, "down", "record", "0", 1), (0, "down", "record", "0", 1)]
    + [(3, "down", "repeated", "0", 0)]
)
# Two ancestors of one record (and edges from the record to itself): igraph's
# layout put their boxes half a slot apart, one over the other.
@example(
    [(0, "up", "record", "0", 0)] * 3
    + [(0, "up", "repeated", "0", 0)] * 2
    + [(1, "up", "record", "0", 0)] * 2
)
def test_a_lineage_picture_is_well_formed_and_no_boxes_overlap(specs: list):
    import xml.etree.ElementTree as ET

    from labnote_index.web.graph import CHAR, lineage_svg

    tree, made = _tree(specs)
    svg = lineage_svg(tree, lambda node: f"/db/-/lineage?node={node}&x=<1>")
    root = ET.fromstring(svg)  # well-formed: no label became markup
    ns = "{http://www.w3.org/2000/svg}"
    rects = [
        tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
        for r in root.iter(f"{ns}rect")
    ]
    # One box a record (a missing one: a box a reference); one reached again has its first.
    assert len(rects) == 1 + sum(not b["repeated"] for b in made)
    # Edge labels (a line each of a label's fields, haloed): where the layout put
    # them, clear of every box and of every other label.
    labels = [t for t in root.iter(f"{ns}text") if t.get("paint-order") == "stroke"]
    assert len(labels) >= sum(1 for b in made if b["via"])
    drawn = rects + [
        (float(t.get("x")) - len(t.text) * CHAR / 2, float(t.get("y")) - 9, len(t.text) * CHAR, 12)
        for t in labels
    ]
    for i, (x, y, w, h) in enumerate(drawn):
        for x2, y2, w2, h2 in drawn[i + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
    titles = [t.text for t in root.iter(f"{ns}title")]
    for b in made:
        tooltip = f"not in the index: {b['label']}" if b["missing"] else b["node"]
        assert shown(tooltip) in titles
    links = [a.get("href") for a in root.iter(f"{ns}a")]
    drawn_more = sum(1 for b in made if b["more"])
    assert len(links) == 1 + sum(not b["missing"] and not b["repeated"] for b in made) + drawn_more
    # Every branch is an edge (to a new box or to the one its record has), none lost.
    edges = [p for p in root.iter(f"{ns}path") if p.get("fill") == "none"]
    assert len(edges) == len(made) + drawn_more
    assert all(link.endswith("&x=<1>") for link in links)  # escaped once, read back whole


# Values as row shaping leaves them: JSON values from records (integers SQLite
# can hold: larger ones are kept as their digits, a str), and paths and messages.
row_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
)


@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), row_values), max_size=20))
def test_prepared_inserts_write_what_sqlite_utils_writes(rows: list[dict]):
    import sqlite_utils

    from labnote_index.index.inserts import Inserts

    ours, theirs = sqlite_utils.Database(memory=True), sqlite_utils.Database(memory=True)
    for db in (ours, theirs):
        db.table("t").create({"id": int, "a": str, "b": int, "c": str}, pk="id")
    Inserts(ours).insert("t", rows)
    theirs.table("t").insert_all(rows)
    read = "SELECT id, a, typeof(a), b, typeof(b), c, typeof(c) FROM t ORDER BY id"
    assert ours.execute(read).fetchall() == theirs.execute(read).fetchall()


def test_prepared_inserts_refuse_a_key_no_column_has():
    import sqlite_utils

    from labnote_index.index.inserts import Inserts

    db = sqlite_utils.Database(memory=True)
    db.table("t").create({"id": int, "a": str}, pk="id")
    with pytest.raises(ValueError, match="no column for"):
        Inserts(db).insert("t", [{"a": "x", "typo": 1}])
    assert db.table("t").count == 0


@st.composite
def record_texts(draw: st.DrawFn) -> bytes:
    """Record-like JSON as people and tools write it: any spacing and escaping,
    with now and then what only the strict parser handles (a repeated key, NaN,
    a number beyond 64 bits, a byte order mark, a lone surrogate escape)."""
    value = draw(st.dictionaries(st.text(max_size=6), json_values, max_size=6))
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 2])),
        separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")])),
    )
    extra = draw(
        st.sampled_from(
            [
                "",
                '"dup": 1, "dup": 2',
                '"n": NaN',
                '"big": 123456789012345678901',
                '"u": 18446744073709551615',
                '"s": "\\ud800"',
                '"x": -0.0',
                '"f": 1e400',
            ]
        )
    )
    if extra:
        text = "{" + extra + ("," + text[1:] if value else "}")
    raw = text.encode()
    return (b"\xef\xbb\xbf" + raw) if draw(st.booleans()) and draw(st.booleans()) else raw


@given(record_texts())
def test_the_fast_parse_path_answers_as_the_strict_parser(raw: bytes):
    from labnote_index.read.parse import parse_json_bytes

    fast, strict = parse_json_bytes(raw, fast=True), parse_json_bytes(raw, fast=False)
    assert repr(fast) == repr(strict)  # repr tells 1 from 1.0 and -0.0 from 0.0


found_files = st.lists(
    st.builds(
        lambda path, kind, stat: (path, kind, stat),
        st.text(min_size=1, max_size=12),
        st.sampled_from(KINDS),
        st.none()
        | st.tuples(
            st.integers(0, 2**40), st.integers(-(2**62), 2**62), st.booleans(), st.booleans()
        ),
    ),
    max_size=30,
    unique_by=lambda found: found[0],  # a walk finds each path once
)


@given(found_files, st.integers(0, 30), st.integers(0, 30))
def test_found_files_hold_what_they_were_given(files: list, start: int, stop: int):
    import pickle

    from labnote_index.read.discover import DiscoveredFile, FoundFiles
    from labnote_index.read.paths import FileStat

    given_ = [DiscoveredFile(p, k, FileStat(*s) if s else None) for p, k, s in files]
    found = FoundFiles(given_)
    assert list(found) == given_ and len(found) == len(given_)
    assert list(found[start:stop]) == given_[start:stop]
    assert list(pickle.loads(pickle.dumps(found[start:stop]))) == given_[start:stop]
    assert [f.path for f in found.sorted()] == sorted(f.path for f in given_)
    assert sorted(found.sorted()) == sorted(given_)


# File names as repositories hold them: any Unicode (accents, other planes),
# and now and then bytes that are not UTF-8 at all (os.fsdecode's surrogates).
file_names = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="/."),
    min_size=1,
    max_size=8,
) | st.binary(min_size=1, max_size=6).filter(lambda b: b"/" not in b and b"\x00" not in b).map(
    lambda b: os.fsdecode(b + b"\xff")
)


@given(
    st.lists(file_names, min_size=1, max_size=8, unique=True),
    st.lists(file_names, max_size=4, unique=True),
    st.data(),
)
def test_incremental_builds_equal_full_ones_whatever_the_file_names(
    first: list[str], added: list[str], data: st.DataObject
):
    from labnote_index.read.paths import storable

    from .helpers import content

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        folder = root / "registry" / "packets" / "2026"
        folder.mkdir(parents=True)

        def write(name: str, notes: str) -> None:
            record = dict(VALID["packet"], notes=notes)
            with open(os.fsencode(folder) + b"/" + os.fsencode(name + ".json"), "w") as out:
                out.write(json.dumps(record))

        for name in first:
            write(name, "first")
        db_path, full_path = Path(tmp) / "i.db", Path(tmp) / "full.db"
        build_index(root, db_path)
        changes = {name: data.draw(st.sampled_from(["keep", "edit", "remove"])) for name in first}
        for name, change in changes.items():
            if change == "edit":
                write(name, "edited, and longer than before")
            elif change == "remove":
                os.unlink(os.fsencode(folder) + b"/" + os.fsencode(name + ".json"))
        added = [name for name in added if name not in changes]  # new names only
        for name in added:
            write(name, "added")
        again = build_index(root, db_path)
        # What changed is read again, no more (a name that is not UTF-8 is stored
        # escaped, so it never matches its row: it is read again, its row replaced).
        odd = {n for n, change in changes.items() if change != "remove" and not storable(n)}
        edited = {n for n, change in changes.items() if change == "edit"}
        assert again.incremental and again.reread == len(edited | odd) + len(added)
        assert again.removed == sum(c == "remove" for c in changes.values()) + len(odd)
        build_index(root, full_path, full=True)
        index, full = sqlite_utils.Database(db_path), sqlite_utils.Database(full_path)
        assert content(index) == content(full)


table_columns = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.text(min_size=1, max_size=10) | st.sampled_from(["record_id", "_x_"]),
            "sortable": st.booleans(),
            "is_pk": st.booleans(),
            "type": st.sampled_from(["TEXT", "INTEGER", "REAL", ""]),
            "notnull": st.sampled_from([0, 1]),
            "description": st.none() | st.text(max_size=12),
        }
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda column: column["name"],
)


def _between_tags(markup: str) -> str:
    """Markup with the whitespace around tags dropped (Datasette's template indents)."""
    import re

    return re.sub(r"\s*(<[^>]*>)\s*", r"\1", str(markup))


@given(columns=table_columns, data=st.data())
def test_the_plugins_table_markup_is_datasettes(columns: list[dict], data: st.DataObject):
    """Table and row pages' tables, written by the plugin in one pass, are the
    markup Datasette's own template writes (its table.js reads it), for any
    column names, descriptions, values and sort order, but for a header's
    break after an underscore."""
    import asyncio
    from urllib.parse import urlencode

    from datasette.app import Datasette
    from datasette.utils import path_with_replaced_args
    from datasette.utils.asgi import Request
    from markupsafe import Markup

    from labnote_index.web.table import rows_and_columns

    names = [column["name"] for column in columns]
    value = st.text(max_size=12) | st.builds(
        lambda text: Markup('<a href="/x">{}</a>').format(text), st.text(max_size=8)
    )
    cell = st.fixed_dictionaries(
        {"value": value, "value_type": st.sampled_from(["str", "int", "none", "pk"])}
    )
    rows = data.draw(st.lists(st.tuples(*[cell for _ in names]), max_size=3))
    rows = [[dict(c, column=name) for c, name in zip(row, names, strict=True)] for row in rows]
    sort = data.draw(st.none() | st.sampled_from(names))
    sort_desc = None if sort else data.draw(st.none() | st.sampled_from(names))
    arguments = st.lists(
        st.tuples(st.sampled_from(["_sort", "_sort_desc", "_next", "a", "_nocol"]), st.text()),
        max_size=4,
    )
    request = Request.fake("/db/t?" + urlencode(data.draw(arguments)))
    datasette = Datasette(memory=True)
    context = {
        "display_columns": columns,
        "display_rows": rows,
        "request": request,
        "sort": sort,
        "sort_desc": sort_desc,
        "fix_path": datasette.urls.path,
        "path_with_replaced_args": path_with_replaced_args,
    }
    template = datasette.jinja_env.get_template("default:_table.html")
    theirs = asyncio.run(template.render_async(context))
    ours = str(rows_and_columns(datasette.urls.path, columns, rows, request, sort, sort_desc))
    # The one difference made on purpose: a header may break after an underscore
    # (a cell's text is escaped, so every <wbr> is a header's; no rows, no headers).
    assert ours.count("<wbr>") == (sum(name.count("_") for name in names) if rows else 0)
    assert _between_tags(ours.replace("<wbr>", "")) == _between_tags(theirs)


@pytest.fixture(scope="module")
def served_sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """sample_repo's index served twice: as ``serve`` does, and with Datasette's
    own column facets. Module-wide, so the counts kept stay kept across examples."""
    from labnote_index.web.serve import make_datasette

    db_path = tmp_path_factory.mktemp("facets") / "sample.db"
    build_index(SAMPLE_REPO, db_path)
    return make_datasette(db_path), plain_datasette(db_path)


# A column each table's page may sort by.
SORTED_BY = {
    "packets": "topic",
    "messages": "summary",
    "records": "record_id",
    "refs": "source_file",
    "handoff_packets": "milestone",
}


@given(
    table=st.sampled_from(sorted(SORTED_BY)),
    arguments=st.lists(st.tuples(st.sampled_from(["_x", "_y"]), st.text()), max_size=3),
    sort=st.booleans(),
)
def test_counted_facets_link_as_datasettes_whatever_the_pages_arguments(
    served_sample: tuple[Any, Any], table: str, arguments: list[tuple[str, str]], sort: bool
):
    """The kept counts' links carry the page's other arguments as Datasette's
    column facet writes them, for any text in them (it is a URL's query)."""
    from urllib.parse import urlencode

    ours, theirs = served_sample
    arguments = [("_extra", "facet_results"), *arguments]
    if sort:
        arguments.append(("_sort", SORTED_BY[table]))
    path = f"/sample/{table}.json?" + urlencode(arguments)
    assert facets_of_page(ours, path) == facets_of_page(theirs, path)


GRAMMARS = [  # (record type, field, a strategy of valid values)
    ("packet", "packet_id", st.from_regex(r"[0-9]{8}-[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)),
    ("packet", "topic", st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)),
    (
        "packet",
        "path",
        st.from_regex(r"[A-Za-z0-9_-]{1,10}(/[A-Za-z0-9_-]{1,10}){0,3}\.md", fullmatch=True),
    ),
    (
        "packet",
        "created_at",
        st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2999, 12, 31)).map(
            lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
        ),
    ),
    (
        "visitor",
        "visitor_id",
        st.from_regex(
            r"[a-z][a-z0-9]{0,6}-[0-9]{8}-[0-9]{4}-[a-z0-9]{1,6}-[0-9]{2}", fullmatch=True
        ),
    ),
]


@pytest.mark.parametrize("record_type, field, values", GRAMMARS, ids=[g[1] for g in GRAMMARS])
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_grammar_matches_whole_values(record_type: str, field: str, values: Any, data: Any):
    """A valid value passes; the same with a trailing newline, tab or space does
    not ("$" in a pattern accepts a trailing newline)."""
    from labnote_index.format.models import validate

    from .helpers import CONFORMANCE

    record = json.loads((CONFORMANCE / "records/valid" / record_type / "record.json").read_text())
    value = data.draw(values)
    assert [p for p in validate(record_type, record | {field: value}) if p.field == field] == []
    for suffix in ("\n", "\t", " "):
        problems = validate(record_type, record | {field: value + suffix})
        assert [p for p in problems if p.field == field], (value + suffix, problems)


# Characters that act on a terminal or reorder what a reader sees (Trojan Source):
# C0 and C1 controls, line and paragraph separators, bidirectional embeddings,
# overrides and isolates.
ACTING = (
    [chr(c) for c in range(0x20)]
    + [chr(c) for c in range(0x7F, 0xA0)]
    + ["\u2028", "\u2029"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)


@given(st.lists(st.one_of(st.sampled_from(ACTING), st.text(max_size=3)), max_size=12))
def test_shown_text_holds_no_character_that_acts(pieces: list[str]):
    text = "".join(pieces)
    out = shown(text)
    assert not any(c in out for c in ACTING)
    # Every acting character is written as its escape, in its place.
    assert out == "".join(c.encode("unicode_escape").decode() if c in ACTING else c for c in text)


def test_a_bidi_override_in_an_id_reaches_no_report_raw(sample_repo):
    """An ID that reverses the text after it (U+202E) or isolates it (U+2066):
    every text report shows the escape, never the character."""
    packet = "registry/packets/2026/20260903-maria-ops-retention-question.json"
    sample_repo.edit(packet, packet_id="20260903-maria\u202eevil\u2066x")
    for fmt in ("text", "github"):
        result = CliRunner().invoke(cli, ["check", str(sample_repo.root), "--format", fmt])
        assert result.exit_code == 1, result.output
        assert "\u202e" not in result.output and "\u2066" not in result.output
        assert "\\u202e" in result.output and "\\u2066" in result.output


LISTING_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(LISTING_VALUES)
def test_listing_json_is_exactly_what_json_dumps_writes(value):
    """The fast writer of --format json gives json.dumps(indent=2)'s bytes:
    non-ASCII escaped (no raw bidirectional override), the same indentation."""
    import json

    from labnote_index.output.report import json_text

    assert json_text(value) == json.dumps(value, indent=2)
