"""Read the schemas a repository commits (``registry/schemas/``), as its contract.

Only ``<record type>.schema.json`` and ``common.schema.json`` are read, each a
regular file inside the repository: a symlink is refused, never followed.
"""

from __future__ import annotations

import os

from ..format.contract import COMMON, SCHEMA_DIR, CommittedSchema, Contract, contract_of
from ..format.rules import RECORD_TYPES
from .parse import read_error, read_record_file
from .paths import Sandbox

_NAMES = {f"{name}.schema.json": name for name in (*RECORD_TYPES, COMMON)}


def read_contract(sandbox: Sandbox) -> Contract:
    """The contract of the repository in ``sandbox``: its committed schemas where
    they differ from the packaged ones, the packaged ones elsewhere."""
    committed: dict[str, CommittedSchema] = {}
    directory = sandbox.path(SCHEMA_DIR)
    if not os.path.isdir(directory) or not sandbox.dir_inside(SCHEMA_DIR):
        return contract_of(committed)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return contract_of(committed)
    for entry in entries:
        name = _NAMES.get(entry.name)
        if name is None:
            continue
        if entry.is_symlink():
            why = "is a symlink (never followed)"
            committed[name] = CommittedSchema(sha256="", error=why)
            continue
        try:
            parsed = read_record_file(entry.path)
        except OSError as exc:
            committed[name] = CommittedSchema(sha256="", error=f"cannot be read: {read_error(exc)}")
            continue
        error = f"cannot be read as JSON: {parsed.error}" if parsed.error else None
        committed[name] = CommittedSchema(sha256=parsed.sha256, value=parsed.data, error=error)
    return contract_of(committed)
