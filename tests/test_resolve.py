"""index/resolve.py: references resolved in SQL, and the chunked delete every
incremental build runs (a bounded number of SQL variables a statement)."""

from __future__ import annotations

import sqlite_utils

from labnote_index.index.resolve import delete_in


def test_delete_in_deletes_exactly_the_values_named_however_many():
    db = sqlite_utils.Database(memory=True)
    db["t"].insert_all(({"id": n, "v": f"v{n}"} for n in range(2_400)), pk="id")
    named = [f"v{n}" for n in range(0, 2_400, 2)] + ["absent"]  # 1,201 values: three chunks
    delete_in(db, "t", "v", named)
    left = {r["v"] for r in db["t"].rows}
    assert left == {f"v{n}" for n in range(1, 2_400, 2)}
    delete_in(db, "t", "v", sorted(left))  # 1,200 more, every one of them
    assert db["t"].count == 0
    delete_in(db, "t", "v", [])  # nothing named: nothing asked
