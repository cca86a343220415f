"""Tests of: ``read/markdown.py`` (where each link is, and what it names) and
``index/markdown_files.py`` (how Markdown files are read once, and how a
record's Markdown artifact gives its links and its row) and
``index/link_targets.py`` (what each link's target is on disk now)."""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path

import pytest

from labnote_index.index.files import MAX_ARTIFACT_BODY
from labnote_index.read.markdown import _TEXT_BOUND, link_path, links, resolved

from .helpers import Repo, findings_of, git


def found(text: str, source: str = "docs/notes.md") -> list[tuple[int, int, str, str | None]]:
    return [tuple(link) for link in links(source, text)]  # type: ignore[misc]


def test_each_link_is_at_its_opening_bracket_nested_brackets_counted():
    text = "See [a [b] c](x.md) and [[d] [e]](y.md#part) or [f](z.md).\n"
    assert found(text) == [
        (1, 5, "x.md", "docs/x.md"),
        (1, 25, "y.md#part", "docs/y.md"),
        (1, 49, "z.md", "docs/z.md"),
    ]


def test_brackets_nested_two_deep_are_counted_each():
    assert found("[a [[b]] c](x.md)\n") == [(1, 1, "x.md", "docs/x.md")]


def test_a_reference_use_does_not_stop_the_links_after_it():
    """A link made from a reference has no destination of its own in the block;
    the links after it, to other targets, are still found."""
    text = "[ref][r] and [one](x.md) and [two](y.md)\n\n[r]: x.md\n"
    targets = [(line, target) for line, _, _, target in found(text)]
    assert targets == [(1, "docs/x.md"), (1, "docs/y.md"), (3, "docs/x.md")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Text.\n\n[unused]: gone.md\n", []),  # a definition no link uses is no link
        ("![a picture][p]\n\n[p]: gone.png\n", []),  # an image is not a link
        ("`[r][r]` in code\n\n[r]: gone.md\n", []),  # nor is a code span
        ("[a][r] and [b][r]\n\n[r]: x.md\n", [(3, 1, "x.md", "docs/x.md")]),  # once
        ("[A][R], [r][] and [r]\n\n[r]: x.md\n", [(3, 1, "x.md", "docs/x.md")]),
        ("[a][r]\n\n[r]: x.md\n[s]: y.md\n", [(3, 1, "x.md", "docs/x.md")]),
    ],
    ids=["unused", "image", "code-span", "used-twice", "full-collapsed-shortcut", "one-of-two"],
)
def test_a_definition_is_a_link_where_a_link_uses_it(text: str, expected: list):
    """A reference definition is reported, once and at itself, where a link
    uses it (by its label, in any case, in any of the three forms); one that no
    link uses renders as nothing in CommonMark, and is no link."""
    assert found(text) == expected


def test_a_link_on_a_later_line_of_a_paragraph_has_that_lines_column():
    text = "# Title\n\nFirst line of the paragraph\nthen [a link](../up.md) here\n"
    assert found(text) == [(4, 6, "../up.md", "up.md")]


def test_the_same_target_twice_is_two_links_each_where_it_is():
    text = "[one](x.md) and [two](x.md)\n\n[by reference][r] and [three](x.md)\n\n[r]: x.md\n"
    assert found(text) == [
        (1, 1, "x.md", "docs/x.md"),
        (1, 17, "x.md", "docs/x.md"),
        (3, 23, "x.md", "docs/x.md"),  # the reference's use is its definition's
        (5, 1, "x.md", "docs/x.md"),
    ]


@pytest.mark.parametrize("length, column", [(_TEXT_BOUND - 1, 1), (_TEXT_BOUND, None)])
def test_a_links_text_is_looked_back_over_a_bounded_stretch(length: int, column: int | None):
    """The "[" is found up to _TEXT_BOUND characters before the "]"; past it, the
    link is placed at its "]" (a bound that keeps a file of links linear)."""
    text = "[" + "a" * length + "](x.md)\n"
    (link,) = found(text)
    assert link[1] == (column if column is not None else length + 2)


@pytest.mark.parametrize(
    "raw, path",
    [
        ("x.md", "x.md"),
        ("  x.md  ", "x.md"),
        ("x.md#one#two", "x.md"),
        ("#anchor", None),
        ("", None),
        ("   ", None),
        ("mailto:someone@example.org", None),
        ("https://example.org/x.md", None),
        ("C:notes.md", "C:notes.md"),  # one letter is no scheme
        ("#", None),
    ],
)
def test_link_path_keeps_the_path_of_a_repository_link(raw: str, path: str | None):
    assert link_path(raw) == path


@pytest.mark.parametrize(
    "directory, path, expected",
    [
        ("docs", "x.md", "docs/x.md"),
        ("docs", "../x.md", "x.md"),
        ("docs", "..", ""),
        ("docs", "../..", None),
        ("", "..", None),
        ("", "../x.md", None),
        ("", ".", ""),
        ("docs", ".", "docs"),
        ("docs", "", "docs"),
        ("docs/a", "./b/../c.md", "docs/a/c.md"),
        ("docs", "/etc/passwd", None),
        ("docs", "..x.md", "docs/..x.md"),  # a name starting with dots stays inside
    ],
)
def test_resolved_normalises_and_refuses_what_leaves(directory, path, expected):
    assert resolved(directory, path) == expected


# A record's Markdown artifact: read once (index/markdown_files.py), its hash,
# links and artifact row all from that read, never read again.

PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"


def _artifact_state(repo: Repo, artifact: str) -> tuple[str | None, str | None, list[str]]:
    """The artifact's sha256 in ``files`` and ``artifacts``, and the targets of its links."""
    db = repo.index()
    in_files = db["files"].get(artifact)["sha256"]
    in_artifacts = db["artifacts"].get(artifact)["sha256"]
    targets = [
        row["raw_target"]
        for row in db["markdown_links"].rows_where("source_file = ?", [artifact], order_by="line")
    ]
    return in_files, in_artifacts, targets


def test_an_artifacts_reference_definition_is_a_link(sample_repo: Repo):
    artifact = sample_repo.load(PACKET)["path"]
    sample_repo.write(artifact, "# Notes\n\nSee the [spec].\n\n[spec]: gone-spec.md\n")
    in_files, in_artifacts, targets = _artifact_state(sample_repo, artifact)
    assert in_files == in_artifacts is not None
    assert targets == ["gone-spec.md"]
    found = [f for f in findings_of(sample_repo.index()) if f["file"] == artifact]
    assert [f["check"] for f in found] == ["markdown_link_missing"]


def test_an_artifact_too_big_to_keep_is_read_for_its_links(sample_repo: Repo):
    artifact = sample_repo.load(PACKET)["path"]
    body = "x" * (MAX_ARTIFACT_BODY + 10) + "\n\n[far](far-away.md)\n"
    sample_repo.write(artifact, body)
    in_files, in_artifacts, targets = _artifact_state(sample_repo, artifact)
    assert in_files == in_artifacts is not None
    assert targets == ["far-away.md"]


def test_a_hard_linked_artifact_is_hashed_its_links_never_read(sample_repo: Repo, tmp_path):
    artifact = sample_repo.load(PACKET)["path"]
    outside = tmp_path / "outside.md"
    outside.write_text("[secret](gone-secret.md)\n")
    (sample_repo.root / artifact).unlink()
    (sample_repo.root / artifact).hardlink_to(outside)
    in_files, in_artifacts, targets = _artifact_state(sample_repo, artifact)
    assert in_files == in_artifacts is not None
    assert targets == []


def test_an_artifact_git_ignores_is_neither_hashed_nor_read(sample_repo: Repo):
    artifact = sample_repo.load(PACKET)["path"]
    git(sample_repo.root, "init", "-q")
    sample_repo.write(".gitignore", f"/{artifact}\n")
    sample_repo.write(artifact, "[secret](gone-secret.md)\n")
    in_files, in_artifacts, targets = _artifact_state(sample_repo, artifact)
    assert (in_files, in_artifacts, targets) == (None, None, [])


def test_a_markdown_file_no_record_names_is_hashed_and_read(sample_repo: Repo):
    text = "[gone](gone-doc.md)\n"
    sample_repo.write("docs/notes.md", text)
    db = sample_repo.index()
    assert db["files"].get("docs/notes.md")["sha256"] == sha256(text.encode()).hexdigest()
    links = list(db["markdown_links"].rows_where("source_file = ?", ["docs/notes.md"]))
    assert [row["raw_target"] for row in links] == ["gone-doc.md"]


def test_every_artifacts_links_are_kept_and_bad_utf8_is_replaced(sample_repo: Repo):
    first = sample_repo.load(PACKET)["path"]
    other = sample_repo.load("registry/packets/2026/20260905-claude-retention-followup.json")
    sample_repo.write(first, "[one](gone-one.md)\n")
    sample_repo.write(other["path"], b"\xff\xfe not UTF-8 [two](gone-two.md)\n")
    sample_repo.write("docs/bytes.md", b"\xff [three](gone-three.md)\n")
    db = sample_repo.index()
    targets = {row["raw_target"] for row in db["markdown_links"].rows}
    assert {"gone-one.md", "gone-two.md", "gone-three.md"} <= targets
    assert "\ufffd" in db["artifacts"].get(other["path"])["body"]


def test_a_markdown_file_gone_before_its_hash_is_an_error_and_the_rest_are_hashed(
    sample_repo: Repo,
):
    """Listed, then gone before the refresh reads it: its files row says so, and
    the files after it are still hashed."""
    from labnote_index.index.markdown_files import refresh_markdown_links
    from labnote_index.read.paths import Sandbox

    sample_repo.write("docs/a-gone.md", "[x](gone.md)\n")
    sample_repo.write("docs/b-kept.md", "kept\n")
    db = sample_repo.index()
    with db.conn:
        names = ["docs/a-gone.md", "docs/b-kept.md"]
        db.execute("UPDATE files SET sha256 = NULL WHERE path IN (?, ?)", names)
        db.execute("DELETE FROM markdown_links")
    (sample_repo.root / "docs/a-gone.md").unlink()
    refresh_markdown_links(db, Sandbox(sample_repo.root))
    gone, kept = db["files"].get("docs/a-gone.md"), db["files"].get("docs/b-kept.md")
    assert gone["sha256"] is None and "missing" in gone["error"]
    assert kept["sha256"] == sha256(b"kept\n").hexdigest() and kept["error"] is None


def test_a_link_target_row_says_what_the_target_is_now_and_follows_nothing_out(tmp_path: Path):
    from labnote_index.index.link_targets import link_target_row
    from labnote_index.read.paths import Sandbox

    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "docs").mkdir(parents=True)
    outside.mkdir()
    (root / "docs" / "a.md").write_text("a\n")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "dangling.md").symlink_to(root / "gone.md")
    (root / "docs" / "to_a.md").symlink_to(root / "docs" / "a.md")
    sandbox = Sandbox(root)
    row = link_target_row(sandbox, "docs/a.md")
    ctime = (root / "docs" / "a.md").lstat().st_ctime_ns
    assert row == {"path": "docs/a.md", "dir": "docs", "status": "ok", "regular_file": 1} | {
        "ctime_ns": ctime
    }
    assert link_target_row(sandbox, "top.md")["dir"] == ""
    assert link_target_row(sandbox, "docs")["status"] == "ok"  # a directory is a target
    assert link_target_row(sandbox, "docs")["regular_file"] == 0
    assert (
        link_target_row(sandbox, "docs/to_a.md")["regular_file"] == 0
    )  # a symlink: looked at again
    assert link_target_row(sandbox, "docs/to_a.md")["status"] == "ok"
    assert link_target_row(sandbox, "missing.md")["status"] == "missing"
    assert link_target_row(sandbox, "dangling.md")["status"] == "missing"
    assert link_target_row(sandbox, "out/x.md")["status"] == "escapes"  # never looked at there
    assert link_target_row(sandbox, "docs/.GIT/config")["status"] == "git"
    assert link_target_row(sandbox, "nul\x00.md")["status"] == "missing"
