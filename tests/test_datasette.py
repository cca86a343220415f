"""Datasette over a real index, through Datasette's own test client.

Tests of: ``web/__init__.py``, ``web/pages.py``, ``web/dashboard.py``, ``web/table.py``,
``web/facets.py``, ``web/links.py``, ``web/state.py``, ``index/metadata.py``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from labnote_index.api import build as build_index
from labnote_index.index.registry_views import render_views, write_views
from labnote_index.web.serve import load_metadata

from .helpers import (
    ROOT,
    SAMPLE_REPO,
    Repo,
    described_tables,
    facets_of_page,
    fetch,
    findings_of,
    plain_datasette,
)

XSS = "<script>alert(1)</script>"
XSS_ID = "20260920-mallory-xss-probe"
PHISH = "https://evil.example/login?next=/sample"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample_repo plus one message whose text is hostile markup."""
    root = tmp_path_factory.mktemp("ds") / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    (root / "messages/open").mkdir(parents=True, exist_ok=True)
    (root / f"messages/open/{XSS_ID}.md").write_text(f"# Probe\n\n{XSS}\n")
    record = json.loads(
        (root / "registry/messages/open/20260912-gemini-late-reply.json").read_text()
    )
    record.update(
        message_id=XSS_ID,
        created_at="2026-09-20T10:00:00Z",
        path=f"messages/open/{XSS_ID}.md",
        reply_to=None,
        summary=XSS,
        notes='<img src=x onerror="alert(2)">',
        to_group=PHISH,
    )
    (root / f"registry/messages/open/{XSS_ID}.json").write_text(json.dumps(record))
    db_path = root.parent / "sample.db"
    build_index(root, db_path)
    # keep the committed views current with the added message
    write_views(render_views(sqlite_utils.Database(db_path)), root / "registry")
    build_index(root, db_path)
    return db_path


def query(db_path: Path, name: str, **params: str) -> list[dict[str, Any]]:
    args = "&".join(f"{k}={v}" for k, v in params.items())
    (response,) = fetch(db_path, f"/sample/{name}.json?_shape=array&{args}")
    assert response.status_code == 200, response.text
    return response.json()


def test_orphaned_references(index: Path):
    rows = query(index, "orphaned_references")
    assert [r["field"] for r in rows] == ["input_packets", "reply_to", "tags"]
    assert rows[2]["missing_id"] == "vector-search" and rows[2]["expected_type"] == "tag"


def test_provenance_lineage(index: Path):
    rows = query(index, "provenance_lineage", node="20260906-gemini-retention-summary")
    got = {(r["direction"], r["label"], r["depth"]) for r in rows}
    assert got == {
        ("ancestor", "20260905-claude-retention-followup", 1),
        ("ancestor", "20260903-claude-retention-survey", 1),
        ("ancestor", "20260903-maria-ops-retention-question", 2),
        ("descendant", "20260908-gemini-retention-brief", 1),
    }


def test_provenance_lineage_of_a_handoff_packet(index: Path):
    manifest = (
        "docs/workflow/roles/implementer/reports/retention-policy/packet-v001/handoff.manifest.json"
    )
    rows = query(index, "provenance_lineage", node=manifest)
    found = [r for r in rows if r["direction"] == "ancestor"]
    assert [(r["label"].split("/")[0], r["depth"]) for r in found] == [
        ("architect", 1),
        ("product-prd", 2),
        ("researcher", 3),
    ]
    # The input that was never written is part of the answer, not left out of it.
    missing = [r for r in rows if r["direction"] == "MISSING ancestor"]
    assert [(r["label"], r["via"], r["depth"]) for r in missing] == [
        (
            "docs/workflow/roles/code-context/reports/retention-policy/packet-v001/"
            "handoff.manifest.json",
            "input_packets",
            1,
        )
    ]


def test_handoff_chain_says_which_input_is_missing(index: Path):
    rows = query(index, "handoff_chain", milestone="retention-policy")
    implementer = next(r for r in rows if r["role"] == "implementer")
    assert (
        "code-context/packet-v001 as ready_for_next_role (MISSING: no such packet)"
        in (implementer["inputs"])
    )
    architect = next(r for r in rows if r["role"] == "architect")
    assert "MISSING" not in (architect["inputs"] or "")


def test_reply_thread(index: Path):
    rows = query(index, "reply_thread", message_id="20260904-maria-ops-retention-scope")
    assert [(r["depth"], r["message_id"]) for r in rows] == [
        (0, "20260903-maria-ops-retention-kickoff"),
        (1, "20260903-claude-retention-ack"),
        (2, "20260904-maria-ops-retention-scope"),
        (3, "20260904-claude-retention-done"),
    ]


def test_cited_by(index: Path):
    rows = query(index, "cited_by", node="20260903-maria-ops-retention-question")
    got = {(r["field"], r["source_id"]) for r in rows}
    assert got == {
        ("derivative_of", "20260903-claude-retention-survey"),
        ("source_packet_id", "20260903-claude-retention-survey"),
        ("related_packet", "20260903-maria-ops-retention-kickoff"),
        ("visit_id", "20260903-maria-ops-retention-question-visit"),
    }
    tag_rows = query(index, "cited_by", node="retention")
    assert len(tag_rows) >= 5 and {r["field"] for r in tag_rows} == {"tags"}


def test_findings_by_check(index: Path):
    everything = query(index, "findings_by_check", severity="")
    assert sum(r["findings"] for r in everything) == sqlite_utils.Database(index)["findings"].count
    warnings = query(index, "findings_by_check", severity="warning")
    assert {r["check"] for r in warnings} == {"legacy_spelling"}


def test_provenance_coverage(index: Path):
    rows = {r["content_origin"]: r for r in query(index, "provenance_coverage")}
    assert rows["web"]["records"] == 2 and rows["web"]["missing_required"] == 1
    assert "20260911-codex-web-benchmarks (no source_refs)" in rows["web"]["records_missing"]
    assert rows["model_generated"]["missing_required"] == 0


def test_handoff_chain(index: Path):
    rows = query(index, "handoff_chain", milestone="retention-policy")
    assert [(r["step"], r["role"], r["packet_version"]) for r in rows] == [
        (0, "researcher", "packet-v001"),
        (0, "researcher", "packet-v002"),
        (1, "product-prd", "packet-v001"),
        (2, "architect", "packet-v001"),
        (3, "implementer", "packet-v001"),
    ]
    states = {r["role"]: r["lock_state"] for r in rows}
    assert states["architect"] == "drifted" and states["implementer"] == "unlocked"
    assert "architect/packet-v001 as ready_for_next_role" in rows[-1]["inputs"]


def test_full_text_search_finds_artifact_words(index: Path):
    artifacts, messages = fetch(
        index,
        "/sample/artifacts.json?_search=redirect&_shape=array",
        "/sample/messages.json?_search=scope&_shape=array",
    )
    assert [r["path"] for r in artifacts.json()] == [
        "datadrops/2026/20260908-gemini-retention-brief.md"
    ]
    assert "20260904-maria-ops-retention-scope" in {r["message_id"] for r in messages.json()}


def test_search_box_is_offered(index: Path):
    (page,) = fetch(index, "/sample/artifacts")
    assert 'name="_search"' in page.text


def test_hostile_text_is_escaped_everywhere(index: Path):
    from datasette.utils import tilde_encode

    row_path = tilde_encode(f"registry/messages/open/{XSS_ID}.json")
    pages = fetch(
        index,
        "/sample/messages",
        f"/sample/messages/{row_path}",
        "/sample/artifacts?_search=Probe&_all_columns=1",  # bodies whole, escaped
        "/sample/search_artifacts?words=Probe",  # and as passages
        f"/sample?sql=select+summary,+notes+from+messages+where+message_id='{XSS_ID}'",
        f"/sample/cited_by?node={XSS_ID}",
        f"/sample/-/lineage?node={XSS_ID}",
    )
    for page in pages:
        assert page.status_code == 200, page.url
        assert XSS not in page.text and 'onerror="alert' not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0].text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[1].text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[3].text


def test_lineage_page_draws_svg_without_scripts(index: Path):
    (page,) = fetch(index, "/sample/-/lineage?node=20260906-gemini-retention-summary")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    scripts = re.findall(r"<script>(.*?)</script>", page.text, re.S)
    assert scripts  # Datasette's own, each allowed by its hash and nothing else
    allowed = re.findall(r"'sha256-([^']+)'", csp)
    assert sorted(allowed) == sorted(
        base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() for body in scripts
    )
    svg = page.text[page.text.index("<svg") : page.text.index("</svg>")]
    assert "20260903-maria-ops-retention-question" in svg
    assert (
        "/sample/-/lineage?node=registry%2Fpackets%2F2026%2F20260908-gemini-retention-brief.json"
        in svg
    )
    assert "<script" not in svg


def test_a_record_reached_twice_has_one_box(index: Path):
    """The question packet's descendants reach the summary response twice (its
    answer, and a derivative of the survey that answered it): one box, two edges
    into it, and no box says "again"."""
    (page,) = fetch(index, "/sample/-/lineage?node=20260903-maria-ops-retention-question")
    assert page.status_code == 200
    svg = html.unescape(page.text[page.text.index("<svg") : page.text.index("</svg>")])
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    assert len(titles) == len(set(titles))  # one box a record
    assert "registry/responses/2026/20260906-gemini-retention-summary.json" in titles
    assert "(again)" not in svg
    boxes = svg.count("<rect ")
    edges = len(re.findall(r'<path d="M[^"]*" fill="none"', svg))
    assert edges > boxes - 1  # a tree of these boxes would have one edge fewer than boxes


def test_lineage_page_draws_what_does_not_resolve(index: Path):
    (page,) = fetch(index, "/sample/-/lineage?node=20260912-gemini-late-reply")
    assert page.status_code == 200
    svg = html.unescape(page.text[page.text.index("<svg") : page.text.index("</svg>")])
    assert "MISSING message" in svg and "20260911-maria-ops-summary-length" in svg
    assert "stroke-dasharray" in svg and "#dc2626" in svg  # dashed, red
    listed = page.text[page.text.index("Up: where it came from") :]
    assert "MISSING" in listed and "Nothing: this is an origin" not in listed


def test_lineage_page_of_unknown_node_is_404(index: Path):
    (page,) = fetch(index, "/sample/-/lineage?node=nothing-like-this")
    assert page.status_code == 404
    assert "Nothing in this index is named" in page.text and 'href="/sample"' in page.text


def test_lineage_page_without_a_node_or_with_a_huge_one_explains_itself(index: Path):
    (empty,) = fetch(index, "/sample/-/lineage")
    assert empty.status_code == 404 and "Name one: a record ID" in empty.text
    # A form asks for the name (no address to edit by hand); it sends ?node=.
    assert '<form class="labnote-node-form" action="/sample/-/lineage" method="get">' in empty.text
    assert 'name="node"' in empty.text and 'value=""' in empty.text
    (typo,) = fetch(index, "/sample/-/story?node=nothing-like-this")
    assert 'action="/sample/-/story"' in typo.text and 'value="nothing-like-this"' in typo.text
    (huge,) = fetch(index, "/sample/-/lineage?node=" + "x" * 5000)
    assert huge.status_code == 404 and "(5000 characters)" in huge.text
    assert "x" * 201 not in huge.text and 'value=""' in huge.text


def test_an_empty_search_is_no_search(index: Path):
    (page,) = fetch(index, "/sample/artifacts?_search=")
    assert page.status_code == 200


def test_the_plugin_leaves_other_databases_alone(tmp_path: Path):

    from datasette.app import Datasette

    other = tmp_path / "other.db"
    sqlite_utils.Database(other)["records"].insert({"file": "not-a-record", "x": 1})
    datasette = Datasette([str(other)])

    async def pages() -> tuple:
        await datasette.invoke_startup()
        table = await datasette.client.get("/other/records")
        lineage = await datasette.client.get("/other/-/lineage?node=not-a-record")
        return table, lineage

    table, lineage = asyncio.run(pages())
    assert table.status_code == 200 and "lineage graph" not in table.text
    assert lineage.status_code == 404


def test_row_page_links_to_lineage(index: Path):
    from datasette.utils import tilde_encode

    path = tilde_encode("registry/packets/2026/20260908-gemini-retention-brief.json")
    (page,) = fetch(index, f"/sample/records/{path}")
    assert 'class="labnote-lineage"' in page.text
    assert (
        "/sample/-/lineage?node=registry%2Fpackets%2F2026%2F20260908-gemini-retention-brief.json"
        in page.text
    )


def test_database_is_served_read_only(index: Path):
    (page,) = fetch(index, "/-/databases.json")
    assert [(d["name"], d["is_mutable"]) for d in page.json()] == [("sample", False)]


def test_every_visible_table_and_column_is_described(index: Path):
    metadata = load_metadata("sample")["databases"]["sample"]["tables"]
    db = sqlite_utils.Database(index)
    for name in db.table_names() + db.view_names():
        if name.endswith(("_fts", "_fts_data", "_fts_idx", "_fts_docsize", "_fts_config")):
            continue
        assert name in metadata, f"{name} has no metadata"
        if metadata[name].get("hidden"):
            continue
        assert metadata[name].get("description"), f"{name} has no description"
        if name in db.table_names():
            columns = {c.name for c in db[name].columns}
            described = set(metadata[name].get("columns", {}))
            assert columns <= described, f"{name}: {columns - described} undescribed"


def test_top_level_metadata_is_a_link_to_the_packaged_one():
    # One file, not two copies that could drift: the top level links to the package's.
    top = ROOT / "metadata.yml"
    assert top.is_symlink() and top.resolve() == (ROOT / "labnote_index" / "metadata.yml")


PACKET_DIR = "docs/workflow/roles/implementer/reports/retention-policy/packet-v001"


def test_every_name_the_cli_takes_the_queries_take(index: Path):
    by_dir = query(index, "provenance_lineage", node=PACKET_DIR)
    by_manifest = query(index, "provenance_lineage", node=f"{PACKET_DIR}/handoff.manifest.json")
    assert by_dir == by_manifest and len(by_dir) == 4
    cited = query(
        index, "cited_by", node="docs/workflow/roles/architect/reports/retention-policy/packet-v001"
    )
    assert [r["field"] for r in cited] == ["input_packets"]


def test_a_query_for_a_name_that_is_not_there_says_so(index: Path):
    (row,) = query(index, "provenance_lineage", node="no-such-record")
    assert row["direction"] == "No record, file or handoff packet is named 'no-such-record'"
    # Given nothing: no rows (a placeholder row would be counted as "1 row"); the
    # form and the query's description say what to give.
    assert query(index, "cited_by", node="") == []
    assert query(index, "provenance_lineage", node=" ") == []


def test_canned_queries_show_their_form_not_a_wall_of_sql(index: Path):
    (page,) = fetch(index, "/sample/provenance_lineage")
    body = page.text[page.text.index("<body") :]
    assert 'name="node"' in body and "_show_sql=1" in body
    assert "WITH RECURSIVE" not in body  # behind the "show" link


def test_query_results_link_records_and_packets_to_their_lineage(index: Path):
    (page,) = fetch(index, f"/sample/provenance_lineage?node={PACKET_DIR}")
    body = page.text[page.text.index("<table") :]
    assert body.count('class="labnote-lineage"') >= 3  # each node found


def test_tables_put_what_people_read_first(index: Path):
    (findings,) = fetch(index, "/sample/findings.json?_size=1")
    columns = findings.json()["columns"]
    assert columns[:6] == ["id", "severity", "check", "record_id", "message", "hint"]
    (packets,) = fetch(index, "/sample/packets.json?_size=1")
    columns = packets.json()["columns"]
    assert columns[:4] == ["file", "packet_id", "status", "topic"]
    assert columns[-4:] == ["record_type", "schema_version", "extra", "valid"]


def test_artifact_search_shows_the_passage_and_its_record(index: Path):
    rows = query(index, "search_artifacts", words="retention")
    assert rows and all("[" in r["passage"] and r["record_id"] for r in rows)
    assert query(index, "search_artifacts", words="") == []  # an empty search, no error


def test_index_pages_get_a_style_that_keeps_rows_on_the_first_screen(index: Path):
    # A static file of the plugin, served the Datasette way.
    sheet = "/-/static-plugins/labnote-index/labnote-index.css"
    (page, css) = fetch(index, "/sample/findings", sheet)
    assert sheet in page.text
    assert css.status_code == 200 and "column-descriptions" in css.text


def test_a_story_page_tells_a_records_whole_story(index: Path):
    (page,) = fetch(index, "/sample/-/story?node=20260912-gemini-late-reply")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert "MISSING" in text and "20260911-maria-ops-summary-length" in text  # cites, unresolved
    assert "reference_unresolved" in text and "fix: " in text  # its finding and the hint
    assert "20260912-gemini-late-reply-relay" in text  # the notification that cites it
    assert "<svg" in page.text and "Artifact" in text
    assert "script-src 'sha256-" in page.headers["content-security-policy"]


def test_a_story_page_of_a_handoff_packet_and_of_hostile_text(index: Path):
    (packet, probe) = fetch(
        index, f"/sample/-/story?node={PACKET_DIR}", f"/sample/-/story?node={XSS_ID}"
    )
    assert packet.status_code == 200 and "MISSING" in packet.text
    assert probe.status_code == 200
    assert XSS not in probe.text and html.escape(XSS) in probe.text


def test_record_rows_link_to_their_story(index: Path):
    (page,) = fetch(index, "/sample/packets")
    assert 'class="labnote-story"' in page.text


def test_findings_link_their_file_to_its_story(index: Path):
    (page,) = fetch(index, "/sample/findings")
    body = page.text[page.text.index("<table") :]
    assert body.count('class="labnote-story"') >= 7  # every finding on a record or packet


def test_row_pages_link_the_artifact(index: Path):
    from datasette.utils import tilde_encode

    packet = "registry/packets/2026/20260908-gemini-retention-brief.json"
    (page,) = fetch(index, f"/sample/packets/{tilde_encode(packet)}")
    assert page.status_code == 200
    artifact = "datadrops/2026/20260908-gemini-retention-brief.md"
    assert f'href="/sample/artifacts/{tilde_encode(artifact)}"' in page.text


def header_columns(page: Any) -> list[str]:
    table = page.text[page.text.index('<table class="rows-and-columns">') :]
    return re.findall(r'<th [^>]*data-column="([^"]+)"', table[: table.index("</thead>")])


def test_record_table_pages_hide_constant_columns_until_asked(index: Path):
    (packets, everything, records, json_page) = fetch(
        index,
        "/sample/packets",
        "/sample/packets?_all_columns=1&_sort=topic",
        "/sample/records",
        "/sample/packets.json?_size=1",
    )
    shown = header_columns(packets)
    assert "packet_id" in shown and "record_type" not in shown and "schema_version" not in shown
    assert "Show all columns (with record_type, schema_version, " in packets.text
    assert "_all_columns=1" in html.unescape(packets.text)
    assert {"record_type", "schema_version"} <= set(header_columns(everything))
    assert "record_type" in header_columns(records)  # where it tells rows apart
    assert "schema_version" in json_page.json()["columns"]  # the JSON API is whole


def test_hiding_one_more_column_keeps_the_hidden_ones_hidden(index: Path):
    (hidden, listed) = fetch(
        index, "/sample/packets?_nocol=status", "/sample/packets?_col=packet_id&_col=notes"
    )
    shown = header_columns(hidden)
    assert "packet_id" in shown and "status" not in shown and "notes" not in shown
    assert header_columns(listed) == ["file", "packet_id", "notes"]  # a list is what it says


def test_every_table_page_hides_only_columns_it_has_and_no_facet(index: Path):
    from labnote_index.web import HIDDEN_COLUMNS

    tables = described_tables()
    for table, hidden in HIDDEN_COLUMNS.items():
        (page, everything) = fetch(index, f"/sample/{table}", f"/sample/{table}?_all_columns=1")
        assert page.status_code == 200, (table, page.text[-500:])
        assert header_columns(page) and not set(hidden) & set(header_columns(page)), table
        assert set(hidden) <= set(header_columns(everything)), table
        assert f"Show all columns (with {', '.join(hidden)})" in page.text
        facets = tables[table].get("facets", [])
        assert not set(hidden) & set(facets), table  # a facet's column stays in sight


def test_a_url_a_record_holds_is_text_not_a_link(index: Path):
    from datasette.utils import tilde_encode

    pages = fetch(
        index,
        "/sample/messages",
        f"/sample/messages/{tilde_encode(f'registry/messages/open/{XSS_ID}.json')}",
        "/sample?sql=select+to_group+from+messages",
        "/sample?sql=select+to_group+as+path+from+messages+where+to_group+like+%27http%25%27",
    )
    for page in pages:
        assert page.status_code == 200
        assert html.escape(PHISH) in page.text  # shown...
        assert f'href="{html.escape(PHISH)}"' not in page.text  # ...never linked
    (source_refs,) = fetch(index, "/sample/source_refs?ref__startswith=https")
    urls = re.findall(r'<td class="col-ref type-str">([^<]*)</td>', source_refs.text)
    assert "https://datasette.io/" in urls  # a packet's sources, as text


def test_artifact_table_pages_leave_bodies_to_row_pages(index: Path):
    (page,) = fetch(index, "/sample/artifacts")
    assert "body" not in header_columns(page) and "sha256" in header_columns(page)


def test_a_plain_artifact_search_shows_passages(index: Path):
    (search, filtered) = fetch(
        index, "/sample/artifacts?_search=retention", "/sample/artifacts?_search=x&status=present"
    )
    assert search.status_code == 302
    assert search.headers["location"] == "/sample/search_artifacts?words=retention"
    assert filtered.status_code == 200  # a search with filters stays a table search


def test_row_pages_list_only_the_tables_that_link_to_them(index: Path):
    from datasette.utils import tilde_encode

    packet = "registry/packets/2026/20260908-gemini-retention-brief.json"
    (page,) = fetch(index, f"/sample/records/{tilde_encode(packet)}")
    links = page.text[page.text.index("Links from other tables") :]
    assert "from file in packets" in links
    assert not re.search(r">\s*0 rows</a>", links)
    assert "from file in messages" not in links


def test_columns_pages_sort_and_facet_on_are_indexed(index: Path):
    db = sqlite_utils.Database(index)
    for name, described in described_tables().items():
        if name not in db.table_names() or name == "findings":  # a view; a few rows
            continue
        table = db.table(name)
        leading = set(table.pks) | {i.columns[0] for i in table.indexes}
        wanted = [*described.get("facets", [])]
        wanted += [described[k] for k in ("sort", "sort_desc") if k in described]
        assert set(wanted) <= leading, f"{name}: {set(wanted) - leading} not indexed"


def test_counted_facets_are_datasettes_columnfacets_of_page(index: Path):
    """The counts kept for a whole table are those Datasette's column facet
    counts, with links made for each request; a filtered page is counted anew."""
    from labnote_index.web.facets import YES_NO
    from labnote_index.web.serve import make_datasette

    theirs = plain_datasette(index)
    ours = make_datasette(index)
    tables = described_tables()
    present = set(sqlite_utils.Database(index).table_names()) | {"findings"}  # findings: a view
    # changes is a comparison's (check --base), absent from a plain build.
    faceted = [n for n, t in tables.items() if t.get("facets") and (n in present or n != "changes")]
    assert {"records", "packets", "refs", "findings"} <= set(faceted)
    for table in faceted:
        queries = ("", "&_size=5", "&_facet_size=1")  # the last counted as asked
        for query in (f"?_extra=facet_results{more}" for more in queries):
            mine = facets_of_page(ours, f"/sample/{table}.json{query}")
            expected = facets_of_page(theirs, f"/sample/{table}.json{query}")
            for name, facet in expected.items():  # a flag reads yes or no, as its cells
                for value in facet["results"] if (table, name) in YES_NO else ():
                    value["label"] = "yes" if value["value"] else "no"
            assert mine == expected, (table, query)
            assert list(mine) == tables[table]["facets"]
            assert facets_of_page(ours, f"/sample/{table}.json{query}") == mine  # from memory
    # Each whole table's counts were kept (the first ask counted them), no more.
    from labnote_index.web.state import state_of

    kept = {(table, column) for _, table, column, _ in state_of(ours).facet_counts}
    assert kept == {(table, column) for table in faceted for column in tables[table]["facets"]}
    (page,) = fetch(index, "/sample/packets")
    assert 'id="facet-status"' in page.text and "(counted)" not in page.text
    # A filter: the counts are the filtered rows'.
    filtered = "/sample/packets.json?_extra=facet_results&status=answered"
    assert facets_of_page(ours, filtered) == facets_of_page(theirs, filtered)
    assert facets_of_page(ours, filtered)["status"]["results"][0]["count"] < len(
        list(sqlite_utils.Database(index)["packets"].rows)
    )


def test_counted_facets_of_a_database_that_can_change_follow_it(tmp_path: Path, index: Path):
    from datasette.app import Datasette

    from labnote_index.web.serve import SETTINGS, load_metadata

    db_path = tmp_path / "sample.db"
    shutil.copy(index, db_path)
    mutable = Datasette([str(db_path)], metadata=load_metadata("sample"), settings=SETTINGS)
    before = facets_of_page(mutable, "/sample/packets.json?_extra=facet_results")["status"]
    sqlite_utils.Database(db_path).execute(
        "DELETE FROM packets WHERE status = 'new'"
    ).connection.commit()
    after = facets_of_page(mutable, "/sample/packets.json?_extra=facet_results")["status"]
    assert "new" in [r["value"] for r in before["results"]]
    assert "new" not in [r["value"] for r in after["results"]]


def test_record_table_pages_look_up_no_labels_they_would_not_show(index: Path):
    """A record table's one foreign key is its key, shown as the link to its row;
    a table whose foreign keys are columns of their own shows their labels."""
    from datasette.app import Datasette

    from labnote_index.index.schema import RECORD_TABLES
    from labnote_index.web.serve import SETTINGS, load_metadata

    traced = Datasette(
        immutables=[str(index)],
        metadata=load_metadata("sample"),
        settings={**SETTINGS, "trace_debug": True},
    )

    async def run(path: str) -> Any:
        return await traced.client.get(path)

    for table in RECORD_TABLES:
        page = asyncio.run(run(f"/sample/{table}?_trace=1"))
        assert page.status_code == 200 and "labnote-story" in page.text
        assert "where file in" not in page.text, table  # the labels' query
    refs = asyncio.run(run("/sample/refs?_trace=1"))
    assert "where file in" in refs.text  # its files labelled with their record IDs


def test_a_server_answers_from_the_index_it_opened_after_a_rebuild():
    """Datasette's threads connect on first use: a thread that connects after a
    build replaced the file must still read the index the server opened."""
    import tempfile

    from bench.generate import generate
    from labnote_index.web.serve import SETTINGS, make_datasette, release

    with tempfile.TemporaryDirectory() as work:
        root, db_path = Path(work) / "repo", Path(work) / "index.db"
        generate(root, packets=12)
        build_index(root, db_path)
        count = sqlite_utils.Database(db_path)["packets"].count
        datasette = make_datasette(db_path)
        query = "/index.json?sql=select+count(*)+from+packets&_shape=array&n={}"

        async def counts(n: int) -> list[int]:
            pages = await asyncio.gather(*(datasette.client.get(query.format(i)) for i in range(n)))
            assert all(p.status_code == 200 for p in pages), pages[0].text
            return [page.json()[0]["count(*)"] for page in pages]

        async def run() -> tuple[list[int], list[int]]:
            first = await counts(1)  # one thread has connected
            shutil.rmtree(root)
            generate(root, packets=30)  # more packets, and a new file at db_path
            build_index(root, db_path, full=True)
            return first, await counts(12 * SETTINGS["num_sql_threads"])

        first, after = asyncio.run(run())
        assert sqlite_utils.Database(db_path)["packets"].count > count  # replaced
        assert first == [count] and set(after) == {count}, after
        assert len(list(Path(work).glob(".labnote-serve-*"))) == 1  # its own name for it
        release(datasette)
        assert list(Path(work).glob(".labnote-serve-*")) == []  # let go with the server


def _count_of(index: Path, url: str) -> int:
    path, _, query = html.unescape(url).partition("?")
    (page,) = fetch(index, f"{path}.json?{query}&_size=0")
    assert page.status_code == 200, (url, page.text)
    return page.json()["filtered_table_rows_count"]


def test_every_count_on_the_home_page_is_the_count_of_the_rows_it_links_to(index: Path):
    """The dashboard: what is broken, what is waiting, where things come from and
    the activity chart; following any count gives exactly that many rows."""
    (page,) = fetch(index, "/sample")
    text = page.text
    assert 'class="labnote-errors">7<' in text and 'class="labnote-warnings">1<' in text
    pairs = re.findall(r'<td class="labnote-n">(\d+)</td><td><a href="([^"]+)">', text)
    pairs += [
        (n, url)
        for url, n in re.findall(
            r'<td class="labnote-(?:error|warning)">\w+</td><td><a href="([^"]+)">[^<]+</a></td>'
            r'<td class="labnote-n">(\d+)</td>',
            text,
        )
    ]
    bars = re.findall(r'<a href="([^"]+)"><rect [^>]*><title>(\d+) ', text)
    pairs += [(n, url) for url, n in bars]
    assert len(pairs) >= 20 and bars
    for n, url in pairs:
        assert _count_of(index, url) == int(n), url


def test_the_index_holds_its_check_catalogue_and_findings_link_to_it(index: Path):
    (checks,) = fetch(index, "/sample/checks.json?_shape=array&_size=max")
    catalogue = {c["id"]: c for c in checks.json()}
    assert {"reference_unresolved", "schema_type", "status_transition"} <= set(catalogue)
    assert (
        catalogue["json_strict"]["fixable"] == 1 and catalogue["schema_type"]["scope"] == "record"
    )
    (page,) = fetch(index, "/sample/findings")
    assert '<a href="/sample/checks/reference_unresolved">' in page.text
    assert ">yes<" in page.text or ">no<" in page.text


def test_a_row_page_is_a_list_of_fields_with_what_cites_it(index: Path):
    packet = "registry~2Fpackets~2F2026~2F20260903-maria-ops-retention-question~2Ejson"
    (page,) = fetch(index, f"/sample/packets/{packet}")
    assert page.status_code == 200
    fields = re.findall(r'<tr><th scope="row">(\w+)</th>', page.text)
    assert fields[:3] == ["file", "packet_id", "status"] and "response_packet_id" in fields
    link = re.search(r'<a href="(/sample/cited_by\?node=[^"]+)">What cites it</a>', page.text)
    assert link
    (cited,) = fetch(
        index, html.unescape(link.group(1)).replace("cited_by?", "cited_by.json?_shape=array&")
    )
    assert {r["source_type"] for r in cited.json()} >= {"response", "visit"}


def test_record_search_is_ranked_marked_and_covers_every_searchable_table(sample_repo):
    """A plain search of a record table goes to search_records: the best match
    first (more of the words, in less text), each passage [marked], record text
    escaped; the query covers every record table with a full-text index."""
    from labnote_index.index.metadata import described_index
    from labnote_index.web import SEARCHED_TYPES

    packets = sample_repo.files("registry/packets/*/*.json")
    sample_repo.edit(packets[0], notes="zebra " + "plain words " * 30)
    sample_repo.edit(packets[1], notes="zebra zebra zebra <script>zebra</script>")
    db = sample_repo.index()
    db.close()
    (redirect,) = fetch(sample_repo.db_path, "/sample/packets?_search=zebra")
    assert redirect.status_code == 302
    assert redirect.headers["location"] == "/sample/search_records?words=zebra&type=packet"
    (found,) = fetch(
        sample_repo.db_path, "/sample/search_records.json?_shape=array&words=zebra&type=packet"
    )
    rows = found.json()
    assert [r["file"] for r in rows] == [packets[1], packets[0]]  # the denser match first
    assert all("[zebra]" in r["passage"] for r in rows)
    (page,) = fetch(sample_repo.db_path, "/sample/search_records?words=zebra&type=")
    assert "<script>[zebra]" not in page.text and "&lt;script&gt;[zebra]" in page.text
    sql = described_index()["databases"]["labnote"]["queries"]["search_records"]["sql"]
    assert SEARCHED_TYPES and all(f"{table}_fts" in sql for table in SEARCHED_TYPES)


def test_every_dashboard_count_is_its_links_rows_with_every_status_planted(repo, tmp_path):
    """Every status of every record type, and the look-alikes a count could
    leave out while its link does not: an archived packet that expects a
    response, a packet with no origin given, a blocked handoff packet."""
    import typing

    from labnote_index.format.models import MODELS
    from labnote_index.format.rules import RECORD_TYPES

    for name, model in MODELS.items():
        if "status" not in model.model_fields:
            continue  # a visit has none
        rt = RECORD_TYPES[name]
        source = repo.first(f"registry/{rt.directory}/**/*.json")
        data = repo.load(source)
        for status in typing.get_args(model.model_fields["status"].annotation):
            copy = dict(data, status=status)
            ident = data[rt.id_field]
            copy[rt.id_field] = f"{ident}-{status.replace('_', '-')}"
            repo.save(source.replace(ident, copy[rt.id_field]), copy)
    packet = repo.first("registry/packets/*/*.json")
    for n, extra in enumerate(
        [
            {"status": "archived", "response_expected": True, "response_packet_id": None},
            {"status": "new", "response_expected": True, "response_packet_id": None},
            {"content_origin": None},
        ]
    ):
        data = repo.load(packet) | extra | {"packet_id": f"20250301-ops-planted-{n}"}
        repo.save(f"registry/packets/2025/20250301-ops-planted-{n}.json", data)
    manifest = repo.first("docs/workflow/**/handoff.manifest.json")
    repo.edit(manifest, status="blocked")
    db = repo.index()
    db.close()
    (page,) = fetch(repo.db_path, f"/{repo.db_path.stem}")
    pairs = re.findall(r'<td class="labnote-n">(\d+)</td><td><a href="([^"]+)">', page.text)
    pairs += [
        (n, url) for url, n in re.findall(r'<a href="([^"]+)"><rect [^>]*><title>(\d+) ', page.text)
    ]
    assert len(pairs) >= 20
    assert any("content_origin__isnull" in url for _, url in pairs)
    counted = {url: int(n) for n, url in pairs}
    assert all(n > 0 for url, n in counted.items() if "packets_awaiting_response" in url)
    assert sum("packets_awaiting_response" in url for url in counted) == 1
    for url, n in counted.items():
        assert _count_of(repo.db_path, url) == n, url


def test_a_lock_state_is_the_drift_checks_definition(repo: Repo):
    """Drifted, in the handoff chain, is what handoff_lock_drift reports: a packet
    file the lock does not cover drifts it too, and a lock it holds to is locked."""
    repo = Repo(repo.root, repo.db_path.with_name("sample.db"))  # served as /sample

    def states() -> dict[str, str]:
        rows = query(repo.db_path, "handoff_chain", milestone="milestone-1")
        return {r["role"]: r["lock_state"] for r in rows}

    repo.index()
    assert states()["architect"] == "locked"
    packet = "docs/workflow/roles/architect/reports/milestone-1/packet-v001"
    repo.write(f"{packet}/notes.md", "# Added after the lock\n")
    drift = [f for f in findings_of(repo.index()) if f["check"] == "handoff_lock_drift"]
    assert [f["record_id"] for f in drift] == [packet]
    assert states()["architect"] == "drifted"


def test_a_published_page_names_the_repository_never_the_building_machines_path(
    sample_repo: Repo,
):
    """The database page says which repository and commit, not where it lay on
    the machine that built it; the data's licence is the repository's own."""
    sample_repo.index()
    pages = fetch(sample_repo.db_path, "/sample", "/sample/packets", "/")
    for page in pages:
        assert page.status_code == 200
        assert (
            str(sample_repo.root) not in page.text and str(sample_repo.root.parent) not in page.text
        )
        assert "Apache-2.0" not in page.text and "Data licence" not in page.text
    assert "from sample_repo" in pages[0].text
    sample_repo.write("LICENSE", "\n# MIT <b>License</b>\n\nCopyright (c) 2026 Lab\n")
    sample_repo.index()  # a licence is part of what an index was built from
    (home,) = fetch(sample_repo.db_path, "/sample")
    licence = "Data licence: MIT &lt;b&gt;License&lt;/b&gt; (the repository's LICENSE)"
    assert licence in home.text  # repository text, shown as text


def test_a_licence_file_that_is_a_symlink_is_never_read(sample_repo: Repo, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET first line\n")
    (sample_repo.root / "LICENSE").symlink_to(secret)
    sample_repo.index()
    (home,) = fetch(sample_repo.db_path, "/sample")
    assert "TOP SECRET" not in home.text and "Data licence" not in home.text


def test_every_page_the_home_page_too_says_how_long_it_may_be_cached(index: Path):
    for page in fetch(index, "/", "/sample", "/sample/packets"):
        assert page.status_code == 200
        assert page.headers.get("cache-control", "").startswith("max-age="), page.url


def test_the_fixable_facet_reads_as_its_cells_do(index: Path):
    from labnote_index.web.serve import make_datasette

    ours = make_datasette(index)
    for query in ("", "?severity=error", "?fixable=1"):
        facets = facets_of_page(ours, f"/sample/findings.json{query}")
        labels = {v["value"]: v["label"] for v in facets["fixable"]["results"]}
        assert labels and all(labels[v] == ("yes" if v else "no") for v in labels), query
    (page,) = fetch(index, "/sample/findings")
    facet = page.text.split('id="facet-fixable"', 1)[1].split("</ul>", 1)[0]
    assert ">yes</a>" in facet and ">no</a>" in facet and ">1</a>" not in facet


def test_an_unknown_table_says_which_and_leads_back(index: Path):
    page, other, data = fetch(
        index, "/sample/pakets", "/sample/~3Cscript~3E", "/sample/pakets.json"
    )
    assert page.status_code == 404
    assert "<h1>No table pakets</h1>" in page.text
    assert 'Did you mean <a href="/sample/packets">packets</a>?' in page.text
    assert 'href="/sample">Back to sample</a>' in page.text
    assert other.status_code == 404 and "<h1>No table &lt;script&gt;</h1>" in other.text
    assert data.status_code == 404 and data.json()["error"] == "Table not found"


def test_a_search_pages_through_every_match_and_says_how_many(tmp_path: Path):
    from bench.generate import generate

    root = tmp_path / "repo"
    generate(root, packets=230)
    db_path = tmp_path / "sample.db"
    build_index(root, db_path)
    total = (
        sqlite_utils.Database(db_path)
        .execute("SELECT count(*) FROM packets_fts WHERE packets_fts MATCH 'topic'")
        .fetchone()[0]
    )
    assert total > 200
    seen: list[tuple] = []
    for page in (1, 2, 3, 4):
        (answer,) = fetch(
            db_path,
            f"/sample/search_records.json?words=topic&type=packet&page={page}&_shape=objects",
        )
        rows = answer.json()["rows"]
        assert len(rows) == max(0, min(100, total - 100 * (page - 1))), page
        assert {r["matches"] for r in rows} <= {total}
        assert [r["match"] for r in rows] == list(
            range(100 * (page - 1) + 1, 100 * (page - 1) + 1 + len(rows))
        )
        seen += [(r["record_type"], r["record_id"]) for r in rows]
    assert len(seen) == len(set(seen)) == total  # every match once, across the pages
    (first,) = fetch(db_path, "/sample/search_artifacts.json?words=topic&page=&_shape=objects")
    assert first.status_code == 200  # an empty page is the first


def test_a_findings_record_is_a_link_to_its_story_and_identity_is_not_shown(index: Path):
    import re

    (page, every) = fetch(index, "/sample/findings", "/sample/findings?_all_columns=1")
    cells = re.findall(r'<td class="col-record_id[^"]*"[^>]*>(.*?)</td>', page.text, re.S)
    linked = [c for c in cells if 'class="labnote-record"' in c]
    assert linked and len(linked) == len([c for c in cells if c.strip() and "&nbsp;" not in c])
    record = next(c for c in linked if "registry%2F" in c)  # a record's: its file's story
    assert "/sample/-/story?node=registry%2F" in record
    packet = next(c for c in linked if "docs/workflow" in c)  # a packet's: its directory
    assert "node=docs%2Fworkflow%2F" in packet and "packet.lock.json" not in packet
    headers = re.findall(r'<th[^>]*data-column="([^"]+)"', page.text)
    assert "identity" not in headers and "subject" not in headers and "message" in headers
    assert "identity" in re.findall(r'<th[^>]*data-column="([^"]+)"', every.text)


def test_a_story_page_is_titled_as_a_story(index: Path):
    (page,) = fetch(index, "/sample/-/story?node=20260903-maria-ops-retention-question")
    assert "<title>Story of packet 20260903-maria-ops-retention-question</title>" in page.text
    (lineage,) = fetch(index, "/sample/-/lineage?node=20260903-maria-ops-retention-question")
    assert "<title>Lineage of packet 20260903-maria-ops-retention-question</title>" in lineage.text


def _home_pages(datasette: Any, *requests: tuple[str, dict[str, str]]) -> list[Any]:
    async def run() -> list[Any]:
        await datasette.invoke_startup()
        return [await datasette.client.get(path, cookies=cookies) for path, cookies in requests]

    return asyncio.run(run())


def test_an_index_address_is_the_plugins_home_and_with_a_query_datasettes_page(index: Path):
    """A bare /DB is the plugin's home (its dashboard, the tables, the SQL box, a
    CSP); with a query it is Datasette's own: ?sql= runs the SQL, ?_show_hidden=1
    lists every table, hidden ones too, with when the index was built."""
    home, query, listing, json_page = fetch(
        index,
        "/sample",
        "/sample?sql=select+count(*)+as+n+from+packets",
        "/sample?_show_hidden=1",
        "/sample.json",
    )
    assert home.status_code == 200 and "labnote-dashboard" in home.text
    assert "script-src 'self' 'sha256-" in home.headers["content-security-policy"]
    assert 'href="/sample?_show_hidden=1"' in home.text and 'name="sql"' in home.text
    assert 'rel="alternate"' in home.headers["link"] and "/sample.json" in home.headers["link"]
    assert "labnote-built" in home.text and "Datasette v0." in home.text
    assert query.status_code == 200 and "labnote-dashboard" not in query.text
    assert "content-security-policy" not in query.headers and ">n<" in query.text
    assert listing.status_code == 200 and "labnote-dashboard" not in listing.text
    assert "(hidden)" in listing.text and "labnote-built" in listing.text
    assert json_page.status_code == 200 and json_page.json()["database"] == "sample"


def test_an_index_home_lists_only_what_its_reader_may_see(index: Path, tmp_path: Path):
    """A table, view or query an actor may not see is not on its home page; what
    each actor sees is kept apart (root sees what the anonymous reader does not);
    a database the reader may not see is a 403."""
    from datasette.app import Datasette

    metadata = load_metadata("sample")
    tables = metadata["databases"]["sample"].setdefault("tables", {})
    tables["visits"] = {**tables.get("visits", {}), "allow": {"id": "root"}}
    tables["reply_chains"] = {"allow": {"id": "root"}}  # a view
    queries = metadata["databases"]["sample"]["queries"]
    queries["reply_thread"] = {**queries["reply_thread"], "allow": {"id": "root"}}
    datasette = Datasette(immutables=[str(index)], metadata=metadata)
    root = {"ds_actor": datasette.sign({"a": {"id": "root"}}, "actor")}
    anonymous, rooted, again = _home_pages(
        datasette, ("/sample", {}), ("/sample", root), ("/sample", {})
    )
    visits, thread, view = (
        'href="/sample/visits"',
        'href="/sample/reply_thread"',
        'href="/sample/reply_chains"',
    )
    assert anonymous.status_code == rooted.status_code == 200
    assert visits not in anonymous.text and thread not in anonymous.text
    assert view not in anonymous.text and 'href="/sample/packets"' in anonymous.text
    assert visits in rooted.text and thread in rooted.text and view in rooted.text
    assert again.text == anonymous.text

    metadata["databases"]["sample"]["allow"] = {"id": "root"}
    closed = Datasette(immutables=[str(index)], metadata=metadata)
    root = {"ds_actor": closed.sign({"a": {"id": "root"}}, "actor")}
    denied, allowed = _home_pages(closed, ("/sample", {}), ("/sample", root))
    assert denied.status_code == 403 and "labnote-dashboard" not in denied.text
    assert allowed.status_code == 200 and "labnote-dashboard" in allowed.text


def test_the_home_of_a_database_that_is_not_an_index_is_datasettes(tmp_path: Path):
    from datasette.app import Datasette

    other = tmp_path / "other.db"
    sqlite_utils.Database(other)["notes"].insert({"x": 1})
    home, plugin_page = _home_pages(Datasette([str(other)]), ("/other", {}), ("/other/-/home", {}))
    assert home.status_code == 200 and "notes" in home.text
    assert "labnote-dashboard" not in home.text and plugin_page.status_code == 404
