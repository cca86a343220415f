"""read/markdown.py: where each link is, and what it names."""

from __future__ import annotations

import pytest

from labnote_index.read.markdown import _TEXT_BOUND, link_path, links, resolved


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
