"""text.py: record text made safe to print, and counts in plain English."""

from __future__ import annotations

import pytest

from labnote_index.text import Lines, as_text, findings_phrase, parent_dir, plural, shown


@pytest.mark.parametrize(
    "value, text",
    [
        (None, ""),
        ("plain", "plain"),
        ("two\nlines", "two\\nlines"),
        ("\x1b[31mred", "\\x1b[31mred"),  # an escape sequence never reaches a terminal
        ("::error::forged", "::error::forged"),  # one line: it starts no command of its own
        ("a\u202eb", "a\\u202eb"),  # a bidirectional override, shown
        ("é ✓", "é ✓"),  # printable text is left alone
        (12, "12"),
    ],
)
def test_shown_is_one_line_that_cannot_act_on_a_terminal(value: object, text: str):
    assert shown(value) == text
    assert "\n" not in shown(value) and "\x1b" not in shown(value)


def test_plural_and_the_findings_phrase():
    assert plural(1, "file") == "1 file" and plural(0, "file") == "0 files"
    assert plural(2, "query", "queries") == "2 queries"
    assert findings_phrase(0, 0, 0) == "no findings"
    assert findings_phrase(1, 0, 1) == "1 error and 0 warnings in 1 file"
    assert findings_phrase(0, 2, 3) == "0 errors and 2 warnings in 3 files"


@pytest.mark.parametrize(
    "path, parent", [("a/b/c.json", "a/b"), ("c.json", ""), ("a/", "a"), ("", "")]
)
def test_parent_dir(path: str, parent: str):
    assert parent_dir(path) == parent


def test_as_text_keeps_strings_and_writes_the_rest_as_json():
    assert as_text(None) is None and as_text("x") == "x"
    assert as_text(["a", 1]) == '["a", 1]' and as_text(True) == "true"


def test_lines_are_found_by_offset():
    lines = Lines("ab\ncd\n\nef")
    assert lines(0) == (1, 1) and lines(1) == (1, 2)
    assert lines(3) == (2, 1) and lines(6) == (3, 1) and lines(7) == (4, 1)
