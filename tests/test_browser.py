"""A person's path through the served index, in a real headless Chromium.

`labnote-index serve` runs as its own process on a free port; Debian's
chromium (installed by `make test`) is driven by Playwright.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from labnote_index.api import build as build_index

from .helpers import SAMPLE_REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serving(db_path: Path) -> Iterator[str]:
    """``labnote-index serve`` of ``db_path`` on a free port, until the generator
    is closed; its address."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "labnote_index", "serve", str(db_path), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/-/versions.json", timeout=1)
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                output = process.stdout.read().decode() if process.stdout else ""
                pytest.fail(f"labnote-index serve did not start:\n{output}")
            time.sleep(0.2)
    yield base
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db_path = tmp_path_factory.mktemp("browser") / "sample.db"
    build_index(SAMPLE_REPO, db_path)
    yield from serving(db_path)


@pytest.fixture(scope="module")
def generated_server(
    tmp_path_factory: pytest.TempPathFactory, generated_template: Path
) -> Iterator[str]:
    """A served index of a generated repository: IDs, visitor IDs and paths as
    long as a real repository's (the sample's are shorter)."""
    db_path = tmp_path_factory.mktemp("browser") / "generated.db"
    build_index(generated_template, db_path)
    yield from serving(db_path)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "chromium is missing: `make test` installs it (apt)"
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def test_newcomer_follows_orphans_and_lineage(server: str, browser, tmp_path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server + "/sample")
    # The database page: described, with the canned queries on it.
    assert "A LabNote repository indexed by labnote-index" in page.inner_text("body")
    page.get_by_role("link", name="Orphaned references", exact=True).click()
    page.wait_for_url("**/sample/orphaned_references")
    table = page.inner_text("table")
    assert "vector-search" in table and "20260911-maria-ops-summary-length" in table
    assert "Every reference whose target does not exist" in page.inner_text("body")
    page.screenshot(path=str(tmp_path / "orphans.png"))

    # A described table, then a record's row page, then its lineage picture.
    page.goto(server + "/sample/packets")
    assert "Packet records: a datadrop sent from one session to another" in page.inner_text("body")
    page.get_by_role(
        "link", name="registry/packets/2026/20260908-gemini-retention-brief.json"
    ).click()
    page.get_by_role("link", name="lineage graph").first.click()
    page.wait_for_selector("#lineage-graph svg")
    graph = page.inner_text("#lineage-graph")
    for ancestor in (
        "20260906-gemini-retention-summary",
        "20260905-claude-retention-followup",
        "20260903-maria-ops-retention-question",
    ):
        assert ancestor in graph
    page.screenshot(path=str(tmp_path / "lineage.png"), full_page=True)

    # Clicking a box follows that record's lineage.
    page.locator("#lineage-graph a", has_text="20260903-maria-ops-retention-question").first.click()
    page.wait_for_url(
        "**/-/lineage?node=registry%2Fpackets%2F2026%2F20260903-maria-ops-retention-question.json"
    )
    assert page.inner_text("h1").startswith(
        "Lineage of packet 20260903-maria-ops-retention-question"
    )
    assert (tmp_path / "lineage.png").stat().st_size > 10_000


def test_a_person_reads_findings_and_follows_a_missing_input(server: str, browser, tmp_path: Path):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + "/sample/findings")
    first = page.locator("table.rows-and-columns tbody tr").first
    for column in ("message", "hint"):
        box = first.locator(f"td.col-{column}").bounding_box()
        assert box and box["y"] + box["height"] <= 900 and box["x"] + box["width"] <= 1366, column
    page.screenshot(path=str(tmp_path / "findings.png"))

    # The implementer packet's lineage draws the input that was never written.
    packet = "docs/workflow/roles/implementer/reports/retention-policy/packet-v001"
    page.goto(server + f"/sample/-/lineage?node={packet}")
    page.wait_for_selector("#lineage-graph svg")
    assert "MISSING handoff_packet" in page.inner_text("#lineage-graph")
    assert "MISSING" in page.inner_text(".labnote-tree")
    page.screenshot(path=str(tmp_path / "missing.png"), full_page=True)
    assert errors == []  # the page's CSP lets Datasette's own script run

    # Artifact search shows the passage that matched and its record.
    page.goto(server + "/sample/search_artifacts?words=retention")
    table = page.inner_text("table")
    assert "[retention]" in table.lower() and "20260903-maria-ops-retention-question" in table


def test_a_person_opens_a_story_from_a_packets_row(server: str, browser, tmp_path: Path):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(server + "/sample/packets")
    page.locator("a.labnote-story").first.click()
    page.wait_for_url("**/-/story?node=*")
    body = page.inner_text("body")
    for part in ("Findings", "Cites", "Cited by", "Lineage", "Fields"):
        assert part in body
    page.screenshot(path=str(tmp_path / "story.png"), full_page=True)


def test_a_person_sorts_and_hides_columns_with_the_column_menu(
    server: str, browser, tmp_path: Path
):
    """Datasette's table.js works on the table the plugin writes: its column
    menu sorts and hides, and what a record table hides stays hidden."""
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(server + "/sample/packets")
    for column in ("packet_id", "status", "topic"):  # what tells packets apart, in sight
        box = page.locator(f"th.col-{column}").bounding_box()
        assert box and box["x"] + box["width"] <= 1366 and box["y"] <= 900, column
    page.locator("th.col-status svg.dropdown-menu-icon").click()
    page.get_by_role("link", name="Sort descending").click()
    page.wait_for_url("**/sample/packets?_sort_desc=status")
    statuses = page.locator("tbody td.col-status").all_inner_texts()
    assert statuses == sorted(statuses, reverse=True) and len(statuses) > 1
    page.locator("th.col-topic svg.dropdown-menu-icon").click()
    page.get_by_role("link", name="Hide this column").click()
    page.wait_for_url("**_nocol=topic*")
    shown = page.locator("thead th").evaluate_all("ths => ths.map(th => th.dataset.column)")
    assert "topic" not in shown and "status" in shown and "record_type" not in shown
    page.screenshot(path=str(tmp_path / "packets.png"))


def first_screen_text(page) -> str:
    """The text a person sees without scrolling."""
    return page.evaluate(
        """() => { const seen = [];
        for (const el of document.querySelectorAll('body *')) {
          if (el.children.length) continue;
          const r = el.getBoundingClientRect();
          if (r.bottom > 0 && r.top < window.innerHeight && r.width && r.height)
            seen.push(el.textContent.trim()); }
        return seen.join(' '); }"""
    )


def test_the_home_page_answers_what_is_broken_and_waiting(server: str, browser, tmp_path: Path):
    """At 1400x1000 the first screen says how many errors and warnings there are,
    what is waiting, and where things come from; each count is a link."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server + "/sample")
    seen = first_screen_text(page)
    assert "7" in page.inner_text(".labnote-errors") and "1" in page.inner_text(".labnote-warnings")
    for words in ("What is broken", "What is waiting", "Where things come from"):
        assert words in seen, words
    assert "open messages" in seen and "orphaned references" in seen
    # A check's count leads to its findings.
    with page.expect_navigation():
        page.click("text=reference_unresolved")
    assert "/sample/findings?" in page.url and "check=reference_unresolved" in page.url
    assert page.locator("table.rows-and-columns tbody tr").count() == 1
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + "/sample")
    assert page.locator("svg.labnote-chart rect").count() > 3  # the activity chart
    page.screenshot(path=str(tmp_path / "home.png"))
    # The SQL box is Datasette's editor (its scripts run under the page's CSP),
    # and running it is Datasette's query page at the same address.
    page.wait_for_selector(".CodeMirror")
    with page.expect_navigation():
        page.click("input[value='Run SQL']")
    assert "?sql=" in page.url and page.locator("table.rows-and-columns tbody tr").count() == 8
    assert errors == []
    page.close()


def test_findings_open_errors_first(server: str, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server + "/sample/findings")
    severities = page.locator("td.col-severity").all_inner_texts()
    assert severities == sorted(severities)  # error before warning
    assert set(page.locator("td.col-fixable").all_inner_texts()) <= {"yes", "no"}
    # It opens on the severity, not on an id column (a row number, no fact): the
    # severity is the link to the finding's own page, where it is plain text.
    headers = page.locator("table.rows-and-columns th:visible").all_inner_texts()
    assert headers[0].startswith("severity"), headers
    assert page.locator("td.col-id:visible").count() == 0
    links = page.locator("td.col-severity a")
    assert links.count() == len(severities)
    href = links.first.get_attribute("href")
    assert href and href.startswith("/sample/findings/")
    links.first.click()
    page.wait_for_url("**" + href)
    assert (
        page.locator("a.labnote-finding").first.evaluate("a => getComputedStyle(a).pointerEvents")
        == "none"
    )
    page.close()


PHONE_PAGES = {
    "the site's home": ("/", "Databases"),
    "home": ("/sample", "What is broken"),
    "findings": ("/sample/findings", "findings"),
    "packets": ("/sample/packets", "packets"),
    # Their "show all columns" action names many hidden columns: a long menu.
    "handoff packets": ("/sample/handoff_packets", "handoff_packets"),
    "input packets": ("/sample/input_packets", "input_packets"),
    "a row": (
        "/sample/packets/registry~2Fpackets~2F2026~2F20260903-maria-ops-retention-question~2Ejson",
        "packet_id",
    ),
    "a story": ("/sample/-/story?node=20260903-maria-ops-retention-question", "Answered by"),
    "a handoff story": (
        "/sample/-/story?node=docs/workflow/roles/implementer/reports/retention-policy/packet-v001",
        "implementer",
    ),
    "a handoff row": (
        "/sample/handoff_packets/docs~2Fworkflow~2Froles~2Farchitect~2Freports~2Fretention-policy"
        "~2Fpacket-v001",
        "architect",
    ),
    "a query": ("/sample/handoff_chain?milestone=retention-policy", "MISSING"),
    "a lineage": ("/sample/-/lineage?node=20260903-maria-ops-retention-question", "Lineage"),
    "no such table": ("/sample/pakets", "No table pakets"),
    "the checks": ("/sample/checks", "protects"),
}


@pytest.mark.parametrize("name", PHONE_PAGES)
def test_the_pages_fit_a_phone(server: str, browser, name: str):
    """At phone width (390 px, and a small phone's 320) the page itself never
    scrolls sideways (a wide table, a table's schema, scroll inside their own box)."""
    path, words = PHONE_PAGES[name]
    for width in (390, 320):
        page = browser.new_page(viewport={"width": width, "height": 844}, is_mobile=True)
        page.goto(server + path)
        # Against the screen's width: a phone widens its layout viewport (and
        # window.innerWidth with it) to a page wider than the screen.
        overflow = page.evaluate("document.documentElement.scrollWidth") - width
        assert overflow <= 1, f"{name} at {width} px: {overflow} px of sideways scroll"
        assert words in page.inner_text("body")
        page.close()


def test_record_tables_show_ten_rows_a_line_each(server: str, browser):
    """packets at 1400x1000: every one of sample_repo's ten packets on the first
    screen, each row one line (IDs whole, with their story and lineage links),
    list fields as lists, no sideways scroll of the page."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server + "/sample/packets")
    rows = page.locator("table.rows-and-columns tbody tr")
    assert rows.count() == 10
    bottoms = [b["y"] + b["height"] for b in (r.bounding_box() for r in rows.all())]
    assert max(bottoms) <= 1000, "a packet row is below the first screen"
    heights = {round(r.bounding_box()["height"]) for r in rows.all()}
    assert max(heights) < 40, f"rows of {heights} px: a cell wraps"
    assert "[]" not in page.locator("td.col-derivative_of").all_inner_texts()
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    page.close()


# (fixture, index, table): a generated repository's tables; the findings of the
# sample's planted defects (a generated repository has none).
WIDE_TABLES = [
    *(
        ("generated_server", "generated", table)
        for table in (
            "records",
            "packets",
            "responses",
            "messages",
            "notifications",
            "visits",
            "visitors",
            "tags",
            "handoff_packets",
            "input_packets",
            "artifacts",
        )
    ),
    ("server", "sample", "findings"),
    ("server", "sample", "packets"),
    ("server", "sample", "messages"),
]


@pytest.mark.parametrize(("served", "index", "table"), WIDE_TABLES)
def test_a_table_of_real_sized_values_fits_the_screen(
    request: pytest.FixtureRequest, browser, served: str, index: str, table: str
):
    """At 1400x1000, on a generated repository's values (IDs, visitor IDs and
    paths of real length) and the sample's longest: the table is no wider than
    its box (no sideways scroll, of the page or the table); each row of a record
    table is one line (a finding's message and hint wrap)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(request.getfixturevalue(served) + f"/{index}/{table}")
    widths = page.evaluate(
        "(() => { const t = document.querySelector('table.rows-and-columns');"
        " return t ? [t.scrollWidth, t.parentElement.clientWidth] : null })()"
    )
    assert widths is not None, f"{table}: no table"
    assert widths[0] <= widths[1] + 1, f"{table} is {widths[0]} px wide in {widths[1]} px"
    rows = page.locator("table.rows-and-columns tbody tr")
    assert rows.count() > 1
    if table != "findings":
        heights = {round(r.bounding_box()["height"]) for r in rows.all()[:50]}
        assert max(heights) < 40, f"{table}: rows of {heights} px: a cell wraps"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    page.close()


@pytest.mark.parametrize(
    "table", [table for served, _, table in WIDE_TABLES if served == "generated_server"]
)
def test_a_table_and_its_first_row_of_real_sized_values_fit_a_phone(
    generated_server: str, browser, table: str
):
    """At 390 px on a generated repository's values (the sample's are shorter):
    a table page and the page of its first row never scroll sideways."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    page.goto(generated_server + f"/generated/{table}")
    row = page.locator("table.rows-and-columns tbody tr td a").first.get_attribute("href")
    assert row, f"{table}: no row link"
    for path in (f"/generated/{table}", row):
        page.goto(generated_server + path)
        overflow = page.evaluate("document.documentElement.scrollWidth") - 390
        assert overflow <= 1, f"{path} at 390 px: {overflow} px of sideways scroll"
    page.close()


@pytest.mark.parametrize("width", [1400, 390])
def test_a_cut_cell_keeps_what_tells_it_apart(server: str, browser, width: int):
    """A long name is cut in the middle, its end in view; a MISSING marker is never
    cut away (the handoff chain's inputs), at desktop and phone width."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(server + "/sample/handoff_chain?milestone=retention-policy")
    inputs = page.locator("td.col-inputs", has_text="MISSING").first
    assert inputs.is_visible()
    visible = inputs.evaluate(
        "td => { const r = document.createRange(); r.selectNodeContents(td);"
        " const box = td.getBoundingClientRect(), text = r.getBoundingClientRect();"
        " return text.right <= box.right + 1 && text.bottom <= box.bottom + 1; }"
    )
    assert visible, "the inputs cell is cut: its MISSING marker is out of sight"
    page.goto(server + "/sample/messages")
    name = page.locator("td .labnote-name").first
    whole = name.get_attribute("title") or ""
    assert len(whole) > 24
    tail = name.locator(".labnote-tail")
    cell = name.locator("xpath=ancestor::td")
    tail_box, cell_box = tail.bounding_box(), cell.bounding_box()
    assert (
        tail_box
        and cell_box
        and tail_box["x"] + tail_box["width"] <= cell_box["x"] + cell_box["width"] + 1
    )
    assert whole.endswith(tail.inner_text())
    assert whole in page.inner_text("table").replace("\u2026", "")  # copied as one line


def test_a_lineage_page_without_a_node_asks_for_one(server: str, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(server + "/sample/-/lineage")
    page.get_by_label("Record ID, record file or handoff packet directory").fill(
        "20260903-maria-ops-retention-question"
    )
    page.get_by_role("button", name="Show its lineage").click()
    page.wait_for_url("**/-/lineage?node=20260903-maria-ops-retention-question")
    assert page.inner_text("h1").startswith(
        "Lineage of packet 20260903-maria-ops-retention-question"
    )
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("table", ["packets", "findings", "handoff_packets"])
def test_column_descriptions_show_whole_lines(server: str, browser, width: int, table: str):
    """The column-description box shows whole lines and scrolls to the rest: no
    line of a name (dt) or of its description (dd) is cut through the middle by
    the box's lower edge."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(server + f"/sample/{table}")
    shown, cut, scrolls = page.evaluate(
        """() => { const d = document.querySelector('dl.column-descriptions');
        const s = getComputedStyle(d), box = d.getBoundingClientRect();
        const top = box.top + d.clientTop + parseFloat(s.paddingTop);
        const bottom = box.top + d.clientTop + d.clientHeight - parseFloat(s.paddingBottom);
        const walker = document.createTreeWalker(d, NodeFilter.SHOW_TEXT);
        const range = document.createRange();
        let shown = 0; const cut = [];
        while (walker.nextNode()) {
          if (!walker.currentNode.textContent.trim()) continue;
          range.selectNodeContents(walker.currentNode);
          for (const r of range.getClientRects()) {
            if (r.bottom <= bottom + 1 && r.top >= top - 1) shown += 1;
            else if (r.top < bottom - 1 && r.bottom > bottom + 1) cut.push(r.top);
          }
        }
        return [shown, cut, d.scrollHeight > d.clientHeight]; }"""
    )
    assert cut == [], f"{table} at {width} px: a line cut at the box's edge"
    assert shown >= 2
    assert scrolls  # the rest is there, a scroll away
    page.close()


def test_the_activity_chart_opens_on_its_latest_weeks_on_a_phone(server: str, browser):
    """At phone width the chart is wider than its box: it opens at its right end,
    the latest weeks, where the sample's bars are (it opened on empty weeks)."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + "/sample")
    box = page.locator(".labnote-activity")
    left, width, client = box.evaluate("b => [b.scrollLeft, b.scrollWidth, b.clientWidth]")
    assert width > client, "the chart fits: this page cannot tell"
    assert left + client >= width - 1
    outer = box.bounding_box()
    assert outer
    shown = [
        r
        for r in (rect.bounding_box() for rect in page.locator(".labnote-activity rect").all())
        if r
        and r["width"]
        and outer["x"] <= r["x"]
        and r["x"] + r["width"] <= outer["x"] + outer["width"]
    ]
    assert len(shown) >= 3 and errors == []
    page.close()


@pytest.mark.parametrize("path", ["/sample/-/lineage?node=", "/sample/-/story?node="])
def test_a_lineage_picture_opens_on_its_record(server: str, browser, path: str):
    """A picture wider than its box opens with the record it is of in view (it
    opened at its left edge, the record off-screen), at phone width."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + path + "20260905-claude-retention-followup")
    box = page.locator(".labnote-graph").first
    start = page.locator("#labnote-start")
    widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert widths[0] > widths[1], "the picture fits: this page cannot tell"
    outer, inner = box.bounding_box(), start.bounding_box()
    assert outer and inner
    assert (
        outer["x"] - 1 <= inner["x"]
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
    )
    assert errors == []  # the policy lets the page's own script run, nothing else


def test_a_lineage_picture_s_labels_and_boxes_never_overlap(server: str, browser):
    """The layout places each edge's label as it places the boxes: as the browser
    draws them (real text widths), no label overlaps a box or another label (they
    ran into each other: `source_packet_id derivative_of`)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server + "/sample/-/lineage?node=20260903-maria-ops-retention-question")
    graph = page.locator(".labnote-graph svg").first
    drawn = graph.evaluate(
        """svg => [...svg.querySelectorAll('rect, text[paint-order="stroke"]')].map(e => {
            const b = e.getBBox(); return [e.tagName, b.x, b.y, b.width, b.height]; })"""
    )
    labels = [d for d in drawn if d[0] == "text"]
    assert len(labels) >= 8 and sum(d[0] == "rect" for d in drawn) >= 8
    for i, (_, x, y, w, h) in enumerate(drawn):
        for _, x2, y2, w2, h2 in drawn[i + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, (drawn[i], x2, y2)
    page.close()
