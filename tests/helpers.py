"""What the tests share besides fixtures: repositories on disk, indexes, runners."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from labnote_index.api import build as build_index
from labnote_index.progress import Progress
from labnote_index.web.serve import make_datasette

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_REPO = ROOT / "sample_repo"
# The project's own conformance fixtures (a repository root of their own).
CONFORMANCE = ROOT / "tests" / "conformance"
# ../shared is a reference beside the developers' checkout and CI's, never in a
# stranger's clone: tests that read it are extras that skip where it is absent.
SHARED = ROOT.parent / "shared"
# What labnote-index publish writes beside the indexes.
DEPLOYMENT_FILES = {
    "metadata.json",
    "inspect-data.json",
    "requirements.txt",
    "start.sh",
    "Dockerfile",
    "wheels",
}


def needs_shared(*parts: str) -> Path:
    """A path under ../shared, or a skip (with the reason) where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"extra: {path} is absent (../shared is not part of this project)")
    return path


class Repo:
    """A LabNote repository in a temporary directory, with helpers to damage it."""

    def __init__(self, root: Path, db_path: Path) -> None:
        self.root = root
        self.db_path = db_path

    def files(self, pattern: str) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.glob(pattern))

    def first(self, pattern: str) -> str:
        found = self.files(pattern)
        assert found, f"no file matches {pattern}"
        return found[0]

    def load(self, rel: str) -> dict[str, Any]:
        return json.loads((self.root / rel).read_text(encoding="utf-8"))

    def save(self, rel: str, data: dict[str, Any]) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    def edit(self, rel: str, **changes: Any) -> str:
        data = self.load(rel)
        data.update(changes)
        self.save(rel, data)
        return rel

    def write(self, rel: str, content: str | bytes) -> str:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return rel

    def save_copy(self, rel: str, new_rel: str) -> str:
        """A second file with the same content."""
        return self.write(new_rel, (self.root / rel).read_bytes())

    def move(self, rel: str, new_rel: str) -> str:
        target = self.root / new_rel
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.root / rel).rename(target)
        return new_rel

    def index(self, **kwargs: Any) -> sqlite_utils.Database:
        build_index(self.root, self.db_path, **kwargs)
        return sqlite_utils.Database(self.db_path)


def fetch(db_path: Path, *paths: str) -> list[Any]:
    """GET each path from one Datasette instance over the index; the responses."""

    async def run() -> list[Any]:
        ds = make_datasette(db_path)
        return [await ds.client.get(path) for path in paths]

    return asyncio.run(run())


def described_tables() -> dict[str, Any]:
    """metadata.yml's tables, as written (``serve`` makes their facets counted ones)."""
    from labnote_index.index.metadata import METADATA_DATABASE, described_index

    return described_index()["databases"][METADATA_DATABASE]["tables"]


def plain_datasette(db_path: Path) -> Any:
    """Datasette over an index with metadata.yml as written: Datasette's own
    column facets, where ``serve`` has the plugin's counted ones."""
    from datasette.app import Datasette

    from labnote_index.index.metadata import METADATA_DATABASE, described_index
    from labnote_index.web.serve import SETTINGS

    plain = described_index()
    plain["databases"] = {db_path.stem: plain["databases"][METADATA_DATABASE]}
    return Datasette(immutables=[str(db_path)], metadata=plain, settings=SETTINGS)


def facets_of_page(datasette: Any, path: str) -> dict[str, Any]:
    """A page's facets, as its JSON gives them (the link that removes one aside)."""

    async def run() -> Any:
        return await datasette.client.get(path)

    response = asyncio.run(run())
    assert response.status_code == 200, response.text
    return {
        name: {k: v for k, v in facet.items() if k != "toggle_url"}
        for name, facet in response.json()["facet_results"].items()
    }


def everything_stored(db_path: Path) -> str:
    """Every text value of every table of the index, joined."""
    conn = sqlite3.connect(db_path)
    tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    values = []
    for table in tables:
        for row in conn.execute(f"SELECT * FROM [{table}]"):
            values += [v for v in row if isinstance(v, str)]
    return "\n".join(values)


def findings_of(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    return list(db.query("SELECT * FROM findings ORDER BY file, [check]"))


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.org",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


# Bad record files of every kind, and what the error row says of each.
BAD_INPUTS = {
    "malformed": (b'{"record_type": "packet",', "malformed JSON"),
    "array": (b"[1, 2]", "an array, not an object"),
    "string": (b'"packet"', "a string, not an object"),
    "empty": (b"", "file is empty"),
    "invalid-utf8": (b'{"record_type": "packet", "notes": "\xff\xfe"}', "not valid UTF-8"),
    "nan": (b'{"record_type": "packet", "schema_version": NaN}', "NaN"),
    "infinity": (b'{"record_type": "packet", "schema_version": -Infinity}', "Infinity"),
}


def signals_as_usual() -> None:
    """A child's Ctrl-C and SIGTERM at their defaults, whatever the runner set.

    A process started with SIGINT ignored (as a test runner's worker may be, and
    a child inherits it) gets no KeyboardInterrupt at all: a test that interrupts
    a child gives it this as ``preexec_fn``, so the signal always lands."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def cli_as(prefix: list[str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI, run in a process of its own (with ``prefix``, e.g. as nobody)."""
    command = [*prefix, sys.executable, "-m", "labnote_index", *[str(a) for a in args]]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT)


def open_copy(source: Path, root: Path) -> Path:
    """A copy of a repository that anybody may read (as a clone usually is)."""
    shutil.copytree(source, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


class Calls(Progress):
    """A progress that calls ``advance`` (and remembers the totals it was told)."""

    def __init__(self, advance: Callable[[int], None]) -> None:
        self.totals: list[int] = []
        self.on_advance = advance

    def start(self, total: int) -> None:
        self.totals.append(total)

    def advance(self, done: int) -> None:
        self.on_advance(done)


def not_when_built(table: str) -> str:
    """The WHERE clause that leaves out when and where a build ran (build_info's
    'built' and 'written' rows, and what git said as it started, 'work_tree':
    two builds of the same repository differ in them and nothing else)."""
    where = " WHERE key NOT IN ('built', 'written', 'work_tree')"
    return where if table == "build_info" else ""


def compared(table: str, columns: Sequence[str]) -> list[str]:
    """The columns two builds of the same files agree on: all but a file's change
    time (files, artifacts, handoff_files), which is kept only once it is older
    than the racy window (RACY_NS), and which two builds a moment apart may
    straddle (on a slow or loaded machine)."""
    return [c for c in columns if c != "ctime_ns"]


def content(db: sqlite_utils.Database) -> dict[str, list[tuple]]:
    """Every table's rows, order and row ids aside (FTS shadow tables checked apart,
    and when and where the build ran: build_info's 'built' and 'written' rows)."""
    tables = {}
    for name in db.table_names():
        if "_fts" in name:
            continue
        columns = compared(name, [c.name for c in db[name].columns if c.name != "id"])
        rows = db.execute(
            f"SELECT {', '.join(f'[{c}]' for c in columns)} FROM [{name}]{not_when_built(name)}"
        )
        tables[name] = sorted(tuple(row) for row in rows.fetchall())
    return tables


def write_keys(target: sqlite_utils.Database, items: Sequence[str], advance: object) -> None:
    """A writer for run_sharded (module-level: workers started by spawn import it):
    one build_info row per item, naming the process that wrote it. An item
    "after:PATH" waits (up to 30 s) for PATH to appear, and says whether it did."""
    for item in items:
        if item == "boom":
            raise ValueError(f"a bug in a writer: {item}")
        if item == "die":
            os._exit(3)  # as if killed
        if item == "wait":
            time.sleep(600)  # a share that takes long: the build is killed meanwhile
    rows = [{"key": item, "value": os.getpid()} for item in items]
    for row in rows:
        if row["key"].startswith("after:"):  # this share waits for a file to appear
            flag, waited = Path(row["key"][len("after:") :]), 0.0
            while not flag.exists() and waited < 30:
                time.sleep(0.01)
                waited += 0.01
            row["value"] = "after" if flag.exists() else "never"
    target["build_info"].insert_all(rows)


def assert_every_problem_is_a_finding(db: sqlite_utils.Database) -> None:
    """Every validation_errors row is reported by some check (validation_checks)."""
    problems = {(r["file"], r["field"], r["message"]) for r in db["validation_errors"].rows}
    found = {(r["file"], r["field"], r["message"]) for r in db["findings"].rows}
    assert problems <= found, problems - found


def run_diff(repo: Repo, *extra: str) -> Any:
    """``labnote-index diff`` of a history repository against its ``base`` tag."""
    from click.testing import CliRunner

    from labnote_index.cli import cli

    args = ["diff", str(repo.root), "--base", "base", "--db", str(repo.db_path), *extra]
    return CliRunner().invoke(cli, args)
