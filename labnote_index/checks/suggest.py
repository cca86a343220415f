"""'Did you mean': the existing ID nearest to one that names nothing.

An ID that differs from an existing one by case, surrounding whitespace, a
confusable letter (0/o, 1/l/I) or one or two edits within one place (a letter
wrong, missing, doubled, two swapped) is named in the finding's hint, and by
``lineage`` and the story page for an unknown name. No pairs of all IDs are
compared: an ID is looked up by its normal form, then compared with the few
names of about its length that sort next to it, forwards and backwards (a slip
leaves a name beside the one it meant in one of the two orders).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils


_CONFUSABLE = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "_": "-"})
MAX_EDITS = 2
NEIGHBOURS = 4  # names compared on each side of where a name would sort, each order
# Checks whose findings name an ID (their message's first quoted value) that names nothing.
SUGGESTING = ("reference_unresolved", "derivative_unresolved", "tag_unresolved")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def _normal(name: str) -> str:
    return name.strip().casefold().translate(_CONFUSABLE)


class Names:
    """Existing names, found again by normal form, or by a typing slip."""

    def __init__(self, names: Iterable[str]) -> None:
        self.by_normal: dict[str, str] = {}
        # By length, sorted forwards and by their reversed text: a slip near the
        # end leaves a name beside its neighbours in the first order, one near the
        # beginning in the second, so a few neighbours each way are all compared.
        forwards: dict[int, list[tuple[str, str]]] = defaultdict(list)
        backwards: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for name in set(names):
            normal = _normal(name)
            self.by_normal.setdefault(normal, name)
            forwards[len(normal)].append((normal, name))
            backwards[len(normal)].append((normal[::-1], name))
        self.forwards = {n: sorted(v) for n, v in forwards.items()}
        self.backwards = {n: sorted(v) for n, v in backwards.items()}

    def nearest(self, wanted: str) -> str | None:
        """The existing name ``wanted`` nearly is (see ``suggest``), or None."""
        normal = _normal(wanted)
        same = self.by_normal.get(normal)
        if same is not None:
            return same if same != wanted else None
        lengths = range(len(normal) - MAX_EDITS, len(normal) + MAX_EDITS + 1)
        for length in sorted(lengths, key=lambda n: abs(n - len(normal))):
            for order, key in ((self.forwards, normal), (self.backwards, normal[::-1])):
                names = order.get(length, [])
                at = bisect_left(names, (key, ""))
                for other, name in names[max(0, at - NEIGHBOURS) : at + NEIGHBOURS]:
                    if _slip(key, other):
                        return name
        return None


def _slip(a: str, b: str) -> bool:
    """Whether a and b differ only inside one window of at most MAX_EDITS characters
    (a letter wrong, missing, doubled or two swapped: how IDs are mistyped): their
    common beginning and end leave no more than that, on either side."""
    if a == b or abs(len(a) - len(b)) > MAX_EDITS:
        return False
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return max(len(a), len(b)) - start - end <= MAX_EDITS


def record_names(db: sqlite_utils.Database, tags_only: bool = False) -> Names:
    """The IDs of the index's records (of its tags only, with ``tags_only``)."""
    sql = "SELECT record_id FROM records WHERE record_id IS NOT NULL"
    sql += " AND record_type = 'tag'" if tags_only else ""
    return Names(r["record_id"] for r in db.query(sql))


def suggest(db: sqlite_utils.Database, findings: list[dict[str, Any]]) -> None:
    """Name the nearest existing ID in the hint of each finding about an ID that
    names nothing, where there is one."""
    wanted = [f for f in findings if f["check"] in SUGGESTING]
    if not wanted:
        return
    ids, tags = record_names(db), record_names(db, tags_only=True)
    for f in wanted:
        quoted = _QUOTED.search(f.get("message") or "")
        if quoted is None:
            continue
        missing = quoted.group(1).replace("''", "'")
        near = (tags if f["check"] == "tag_unresolved" else ids).nearest(missing)
        if near is not None:
            f["hint"] = f"did you mean {near!r}? correct the ID; otherwise: {f['hint']}"
