"""json_strict's fix: strip a UTF-8 byte order mark (nothing else: a key given
twice, a number out of range or a lone surrogate is a person's decision)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..read.parse import UTF8_BOM
from .fixing import Refusal, Repair, read_file

if TYPE_CHECKING:
    import sqlite_utils


def plan(db: sqlite_utils.Database, repo: Path) -> Iterator[Repair | Refusal]:
    """The repairs json_strict's findings call for, and the ones it refuses."""
    for row in db.query(
        "SELECT DISTINCT file FROM validation_errors WHERE error_type = 'encoding_bom'"
    ):
        raw = read_file(repo, row["file"])
        if raw.startswith(UTF8_BOM):
            content = raw[len(UTF8_BOM) :]
            yield Repair("json_strict", row["file"], row["file"], content, raw)
