"""The shape of one problem found in one file."""

from __future__ import annotations

from typing import NamedTuple


class Problem(NamedTuple):
    """One problem of one file: the field (dotted; "" for the file as a whole),
    its kind, and what is wrong in plain words. The one shape every reader,
    validator and loader uses."""

    field: str
    error_type: str
    message: str
