"""The library façade, as a Python user holds it (the README's example runs here).

Tests of: ``results.py``, ``errors.py``, ``progress.py``, ``lazy.py``, ``choices.py``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import sqlite_utils

import labnote_index as li

from .helpers import ROOT, SAMPLE_REPO, git


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- python-example:start -->\n", 1)[1].split(
        "<!-- python-example:end -->"
    )[0]
    return block.removeprefix("```python\n").rsplit("```", 1)[0]


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    shutil.copytree(SAMPLE_REPO, tmp_path / "sample_repo")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example(), "README.md", "exec"), {})
    printed = out.getvalue()
    assert "7 errors and 1 warning in 8 files" in printed
    assert "fails CI: True" in printed
    assert "reply_to registry/messages/open/20260912-gemini-late-reply.json ->" in printed
    assert "error: no index at no-such.db" in printed


def test_check_a_repository_leaves_no_index_unless_asked(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = li.check(SAMPLE_REPO)
    assert {f.check for f in found} >= {"provenance", "input_packet_unresolved"}
    assert os.listdir(tmp_path) == []
    kept = li.check(SAMPLE_REPO, db=tmp_path / "kept.db")
    assert kept == found and li.findings(tmp_path / "kept.db") == found


def test_typed_errors_name_the_problem(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(li.NotAnIndex):
        li.build(SAMPLE_REPO, tmp_path / "notes.txt")
    with pytest.raises(li.NoIndex):
        li.orphans(tmp_path / "absent.db")
    with pytest.raises(li.RepositoryError):
        li.build(tmp_path / "nowhere", tmp_path / "x.db")
    assert all(
        issubclass(e, li.LabnoteError)
        for e in (li.NotAnIndex, li.NoIndex, li.RepositoryError, li.RevisionNotFound)
    )


def test_diff_and_transitions_from_python(tmp_path: Path):
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    packet = root / "registry/packets/2026/20260911-codex-web-benchmarks.json"
    packet.write_text(packet.read_text().replace('"status": "new"', '"status": "archived"'))
    changes = li.diff(root, "main")
    assert [(c.change, c.before, c.after) for c in changes if c.change == "status"] == [
        ("status", "new", "archived")
    ]
    with pytest.raises(li.RevisionNotFound):
        li.diff(root, "no-such-branch")
    found = li.check(root, base="main")
    assert "status_transition" not in {f.check for f in found}  # new -> archived is legal


def test_progress_is_told_the_total_and_each_file(tmp_path: Path):
    class Counting(li.Progress):
        def __init__(self) -> None:
            self.total, self.done, self.finished = 0, 0, False

        def start(self, total: int) -> None:
            self.total = total

        def advance(self, done: int) -> None:
            self.done += done

        def finish(self) -> None:
            self.finished = True

    progress = Counting()
    result = li.build(SAMPLE_REPO, tmp_path / "s.db", progress=progress)
    assert progress.total == progress.done == result.files and progress.finished


def test_the_facade_refuses_what_the_cli_refuses(sample_repo, tmp_path: Path):
    """Typed errors naming the argument (a bare ValueError from tuple.index, or
    silence, before), and the CLI's defaults."""
    import labnote_index as li
    from labnote_index.errors import InvalidArgument, LabnoteError

    db = tmp_path / "i.db"
    li.build(sample_repo.root, db)
    found = li.findings(db)
    for call, name in (
        (lambda: li.fails(found, "warn"), "fail_on"),
        (lambda: li.lineage(db, "20260903-maria-ops-retention-question", "sideways"), "direction"),
        (lambda: li.fix(sample_repo.root, checks=["nope"]), "checks"),
        (lambda: li.build(sample_repo.root, db, jobs=0), "jobs"),
        (lambda: li.check(sample_repo.root, jobs=-1), "jobs"),
    ):
        with pytest.raises(InvalidArgument, match=name) as raised:
            call()
        assert isinstance(raised.value, LabnoteError) and isinstance(raised.value, ValueError)
    tree = li.lineage(db, "20260903-maria-ops-retention-question")
    assert "up" in tree and "down" in tree  # both ways, as the CLI


def test_the_package_ships_its_types():
    from importlib.resources import files

    assert files("labnote_index").joinpath("py.typed").is_file()


def test_an_index_made_for_one_check_goes_without_what_only_browsing_uses(repo, tmp_path):
    browsed = li.build(repo.root, tmp_path / "browsed.db")
    checked = li.build(repo.root, tmp_path / "checked.db", browsable=False)
    assert checked.findings == browsed.findings
    assert li.findings(tmp_path / "checked.db") == li.findings(tmp_path / "browsed.db")
    tables = {
        name: set(sqlite_utils.Database(tmp_path / name).table_names())
        for name in ("browsed.db", "checked.db")
    }
    assert "artifacts_fts" in tables["browsed.db"] and "artifacts_fts" not in tables["checked.db"]
    assert tables["checked.db"] == {t for t in tables["browsed.db"] if "_fts" not in t}


# What each entry point may load before it runs anything: a module here is the
# whole build (sqlite-utils, pydantic) or the web (Datasette) loaded for nothing.
HEAVY = ("sqlite_utils", "pydantic", "datasette", "labnote_index.index.build", "jsonschema_rs")


@pytest.mark.parametrize(
    "code",
    [
        "import labnote_index",
        "import labnote_index.cli",
        "from labnote_index.cli import cli; cli.main(['check', '--help'], standalone_mode=False)",
        "from labnote_index.cli import cli; cli.main(['--version'], standalone_mode=False)",
    ],
)
def test_an_entry_point_loads_nothing_it_does_not_run(code: str):
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert run.stdout.splitlines()[-1].strip() == ""


def test_views_without_an_index_loads_neither_sqlite_utils_nor_the_models():
    """views REPO (--check) reads the records from the files: the index's
    libraries are not loaded for it (with --db they are: it builds one), nor
    difflib (current views are not diffed) nor tempfile (it writes nothing)."""
    loaded = (*HEAVY, "difflib", "tempfile")
    probe = (
        "import sys\nfrom labnote_index.cli import cli\n"
        "for extra in ([], ['--db', sys.argv[2]]):\n"
        "    try:\n"
        "        cli.main(['views', sys.argv[1], '--check', *extra], standalone_mode=False)\n"
        "    except SystemExit as exc:\n"
        f"        print(exc.code, *(m for m in {loaded!r} if m in sys.modules))\n"
    )
    with tempfile.TemporaryDirectory() as work:
        run = subprocess.run(
            [sys.executable, "-c", probe, str(SAMPLE_REPO), f"{work}/i.db"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
    said = [line for line in run.stdout.splitlines() if "views are current" not in line]
    without, with_db = said
    assert without == "0"
    assert with_db.startswith("0 sqlite_utils pydantic")


@pytest.mark.parametrize("work_tree", [False, True], ids=["directory", "work-tree"])
def test_a_check_of_an_unchanged_repository_loads_neither_sqlite_utils_nor_the_models(
    tmp_path: Path, work_tree: bool
):
    """check --cache, the repository unchanged since the cache was built: the
    index's state and findings are read on a plain sqlite3 connection, and no
    record is parsed, so neither sqlite-utils nor pydantic is loaded (about
    0.1 s of a small repository's check), nor tomllib where no configuration
    file or check catalogue is read (5 ms); the first run, which builds, loads
    both. In a work tree with a core to spare, what a build that reads needs
    is imported as git answers when git is slow to (build.py, read/git.py):
    there the check runs with --jobs 1, which imports nothing meanwhile."""
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPO, repo, ignore=shutil.ignore_patterns(".labnote-index-cache"))
    if work_tree:
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "0")
    past = 1_000_000_000  # every file older than the racy window, as a user's are
    for path in repo.rglob("*"):
        os.utime(path, (past, past), follow_symlinks=False)
    probe = (
        "import sys\nfrom labnote_index.cli import cli\n"
        "try:\n"
        "    args = ['check', sys.argv[1], '--cache', '--format', 'json', *sys.argv[2:]]\n"
        "    cli.main(args, standalone_mode=False)\n"
        "except SystemExit as exc:\n"
        "    loaded = ('sqlite_utils', 'pydantic', 'tomllib')\n"
        "    print(exc.code, *(m for m in loaded if m in sys.modules))\n"
    )
    jobs = ["--jobs", "1"] if work_tree else []
    said = []
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, "-c", probe, str(repo), *jobs],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        said.append(run.stdout.splitlines())
    (first, *found_first), (second, *found_second) = (lines[::-1] for lines in said)
    # Built: sample_repo has errors; the catalogue was read (its validation.toml).
    assert first == "1 sqlite_utils pydantic tomllib"
    assert found_first == found_second  # the same findings, read from the cache
    assert second == "1"  # no TOML read: the repository has no configuration file


def test_imported_meanwhile_imports_in_a_thread_and_is_done_at_the_block_end(
    tmp_path: Path, monkeypatch
):
    """imported_meanwhile imports in a thread started as its block begins, and
    the block's end waits for it: after the block the module is whole, and no
    thread is left taking the GIL. Held by an event the module's body waits on
    (set inside the block): no timing. A module that fails is left to its
    importer."""
    import threading

    from labnote_index.lazy import imported_meanwhile

    (tmp_path / "slow_to_import_mod.py").write_text(
        "import builtins\nbuiltins._labnote_test_gate.wait(30)\nDONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    gate = threading.Event()
    monkeypatch.setattr("builtins._labnote_test_gate", gate, raising=False)
    before = threading.active_count()
    try:
        with imported_meanwhile(["slow_to_import_mod", "no_such_module_at_all"]):
            assert threading.active_count() == before + 1  # importing, in a thread
            gate.set()
    finally:
        gate.set()
    assert threading.active_count() == before
    assert "no_such_module_at_all" not in sys.modules  # failed: left to its importer
    assert "slow_to_import_mod" in sys.modules and sys.modules["slow_to_import_mod"].DONE
    monkeypatch.delitem(sys.modules, "slow_to_import_mod")


def test_every_name_of_the_facade_is_there_when_read():
    import labnote_index.api as api

    for name in li.__all__:
        assert getattr(li, name) is not None, name
    assert li.check is api.check and li.BuildResult.__name__ == "BuildResult"
    assert set(li.__all__) <= set(dir(li))
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        li.nothing_here  # noqa: B018
    # A command loads the library when it runs: the CLI's api is the façade's.
    from labnote_index import cli

    assert cli.api.check is api.check
