"""checks/fixing.py: what a check's fix plans, and the helpers its planners
share: an edit of only the JSON tokens a repair is about, a move that never
replaces, a file read never through a symlink."""

from __future__ import annotations

from pathlib import Path

import pytest

from labnote_index.checks.fixing import Refusal, Repair, read_file, renamed, token_edit


def test_an_edit_changes_its_tokens_and_refuses_to_change_another_value():
    raw = b'{"a": 1, "visitor_family": "x", "b": [1, {"c": "}"}]}'
    edited = token_edit(raw, keys={"visitor_family": "session_family"})
    assert edited == b'{"a": 1, "session_family": "x", "b": [1, {"c": "}"}]}'
    assert token_edit(b'{"p": 1, "p": 2}', values={"p": 3}) == "p is written more than once"
    assert token_edit(b"[1]", values={"p": 3}) == "not one JSON object"
    first = token_edit(b'{\n  "a": 1\n}', first={"record_type": "visit"})
    assert first == b'{\n  "record_type": "visit",\n  "a": 1\n}'
    assert token_edit(b"{}", first={"record_type": "tag"}) == b'{"record_type": "tag"}'
    assert token_edit(b'{"a": 1}', values={"a": 2}) == b'{"a": 2}'


def test_an_edit_keeps_a_byte_order_mark_and_every_other_byte():
    raw = b'\xef\xbb\xbf{\n  "date": "2026-01-01T00:00:00Z",   "x": 1e400\n}\n'
    edited = token_edit(raw, keys={"date": "created_at"})
    assert edited == raw.replace(b'"date"', b'"created_at"')


def test_a_move_never_replaces(tmp_path: Path):
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "b.json").write_text("{}")
    assert renamed("c", "a.json", "new.json", tmp_path) == Repair("c", "a.json", "new.json")
    taken = renamed("c", "a.json", "b.json", tmp_path)
    assert taken == Refusal("c", "a.json", "b.json exists already")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")  # a link is something there
    assert isinstance(renamed("c", "a.json", "dangling", tmp_path), Refusal)


def test_a_planner_never_reads_through_a_symlink(tmp_path: Path):
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": 1}')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "plain.json").write_text("{}")
    (repo / "link.json").symlink_to(outside)
    assert read_file(repo, "plain.json") == b"{}"
    with pytest.raises(OSError):
        read_file(repo, "link.json")
    (repo / "dir").mkdir()
    with pytest.raises(OSError):
        read_file(repo, "dir")  # not a regular file


def test_a_repair_describes_its_moves_its_diff_and_what_it_left():
    """Moves of the files it takes along first, its own move, the diff from its
    content now (undecodable bytes shown, never raised on) to the new, then what
    it left and why; a control character of a name is shown escaped."""
    repair = Repair(
        "legacy_spelling",
        "registry/a\x1b.json",
        "registry/b.json",
        content=b'{"x": 2}\n',
        before=b'{"x": 1}\xff\n',
        also=[("artifacts/a.md", "artifacts/b.md")],
        notes=["the date was kept"],
    )
    assert repair.describe().splitlines() == [
        "rename artifacts/a.md -> artifacts/b.md",
        "rename registry/a\\x1b.json -> registry/b.json",
        "--- a/registry/a\\x1b.json",
        "+++ b/registry/b.json",
        "@@ -1 +1 @@",
        '-{"x": 1}\ufffd',
        '+{"x": 2}',
        "left: the date was kept",
    ]
    unmoved = Repair("json_strict", "registry/c.json", "registry/c.json", content=b"{}\n")
    assert unmoved.describe() == "--- a/registry/c.json\n+++ b/registry/c.json\n@@ -0,0 +1 @@\n+{}"
    assert Repair("x", "f", "f").describe() == ""
    # Undecodable new bytes are shown too; a newline added at the end is a
    # change; a line's own trailing spaces and letters are kept.
    edge = Repair("x", "f", "f", content=b"a \nbX\n\xfe\n", before=b"a \nbX")
    assert edge.describe().splitlines()[2:] == ["@@ -1,2 +1,3 @@", " a ", "-bX", "+bX", "+\ufffd"]
