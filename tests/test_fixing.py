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


def test_an_edit_writes_exactly_its_tokens_where_they_go():
    """Several members put first, after an opening with no space (a space between
    them) or with a line break (the same break between them); an object with only
    space in it; space before the object; a key renamed and its value written
    anew in one member; a value outside ASCII written as itself; a key another
    does not edit may be written twice; a file with a byte order mark keeps it."""
    two = {"record_type": "visit", "schema_version": 1}
    tight = token_edit(b'{"a":1}', first=two)
    assert tight == b'{"record_type": "visit", "schema_version": 1, "a":1}'
    broken = token_edit(b'{\n  "a": 1\n}', first=two)
    assert broken == b'{\n  "record_type": "visit",\n  "schema_version": 1,\n  "a": 1\n}'
    assert token_edit(b"{ }", first={"x": 1}) == b'{"x": 1 }'
    assert token_edit(b"{}", first=two) == b'{"record_type": "visit", "schema_version": 1}'
    nested = token_edit(b'{\n  "a": {"b": 1}\n}', first={"x": 1})  # the first brace opens it
    assert nested == b'{\n  "x": 1,\n  "a": {"b": 1}\n}'
    assert token_edit(b'  {"a":1}', first={"x": 1}) == b'  {"x": 1, "a":1}'
    both = token_edit(b'{"a": 1, "c": 3}', keys={"a": "b"}, values={"a": 2})
    assert both == b'{"b": 2, "c": 3}'
    assert token_edit(b'{"a": 1}', values={"a": "\u00e9"}) == '{"a": "\u00e9"}'.encode()
    assert token_edit(b'{"a": 1}', keys={"a": "\u00e9"}) == '{"\u00e9": 1}'.encode()
    assert token_edit(b'{"b":1,"b":2,"c":1}', values={"c": 0}) == b'{"b":1,"b":2,"c":0}'
    assert token_edit(b'{"a": 1}', values={"z": 0}) == b'{"a": 1}'  # nothing to edit
    assert token_edit(b"\xef\xbb\xbf{}", first={"x": 1}) == b'\xef\xbb\xbf{"x": 1}'
    swapped = token_edit(b'{"a": 1, "b": 2}', keys={"a": "b", "b": "a"})
    assert swapped == b'{"b": 1, "a": 2}'


def test_an_edit_is_refused_where_it_would_write_a_key_twice():
    """Every key edited and written twice is named, in order; a key added first, or
    renamed, onto one already written would leave the file with two (read back as
    the last, the same values: only the count of keys tells)."""
    twice = b'{"b": 1, "b": 2, "a": 1, "a": 2}'
    assert token_edit(twice, values={"b": 0}, keys={"a": "z"}) == "a, b is written more than once"
    assert token_edit(twice, keys={"b": "y"}) == "b is written more than once"
    assert token_edit(b'{"a": 1}', first={"a": 5}) == "a would be written twice"
    assert token_edit(b'{"a": 1, "b": 2}', keys={"a": "b"}) == "b would be written twice"
    assert token_edit(b'{"b":1,"b":2,"c":1}', first={"b": 0}) == "b would be written twice"
    assert token_edit(b'{"a": 1} x', values={"a": 2}) == "not one JSON object"
    assert token_edit(b'{"a": "\xff"}', values={"a": 2}) == "not valid UTF-8"
    # One object to the token reader, but not JSON (a file may have changed since
    # it was indexed, and a planner may not parse it first): refused, never raised.
    nan = token_edit(b'{"a": 1, "n": NaN}', keys={"a": "b"})
    assert nan == "malformed JSON: NaN is not valid JSON (JSON has no NaN or Infinity)"
    # A value JSON cannot hold is read back as something else (or not at all).
    infinite = token_edit(b'{"a": 1}', values={"a": float("inf")})
    assert infinite == "the edit would change more than its field"
    listed = token_edit(b'{"a": 1}', values={"a": ("x",)})  # read back as a list
    assert listed == "the edit would change more than its field"
    lone = token_edit(b'{"a": 1}', values={"a": "\udcff"})  # a record's escape, never raised
    assert lone == "a value UTF-8 cannot hold"
    clashes = token_edit(b'{"a": 1, "b": 2, "c": 3, "d": 4}', keys={"a": "b", "c": "d"})
    assert clashes == "b, d would be written twice"


def test_a_move_is_refused_where_its_target_cannot_be_examined(tmp_path: Path):
    """A target under a file (not a directory) is not 'free': the move is refused,
    naming the target and why."""
    (tmp_path / "a.json").write_text("{}")
    refused = renamed("c", "b.json", "a.json/x.json", tmp_path)
    assert refused == Refusal("c", "b.json", "a.json/x.json cannot be examined (Not a directory)")
