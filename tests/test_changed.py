"""index/changed.py: what changed since the index, found by a walk or asked of
git in a work tree. The differential test: after each change a person or git
makes (an edit, a new file, a deletion, a staged edit, a commit, an edit
reverted, a checkout of another commit, an ignored file, a nested repository),
the incremental build that asked git equals a full build of the same files.

Tests of: ``read/git.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils

from labnote_index.api import build as build_index
from labnote_index.read.git import WorkTreeState, looks_away, work_tree_state

from .helpers import Repo, content, git


def aged(repo: Repo, since: float = 0.0) -> None:
    """Every file changed after ``since`` made an hour old: a file changed
    within seconds of a build is looked at again whatever git says
    (record_state), which would hide what git's word alone decides."""
    an_hour_ago = time.time() - 3600
    for path in repo.root.rglob("*"):
        if path.lstat().st_mtime > since:
            os.utime(path, (an_hour_ago, an_hour_ago), follow_symlinks=False)


def built(repo: Repo) -> None:
    """A build of the repository as it is, the files changed in the last ten
    minutes aged first (``aged``; the others were, and ageing one changes its
    ctime, which a row git vouches for keeps as it was)."""
    aged(repo, since=time.time() - 600)
    build_index(repo.root, repo.db_path)


def committed(repo: Repo) -> Repo:
    """The repository made a work tree, every file aged first (``aged``)."""
    aged(repo)
    git(repo.root, "init", "-q")
    git(repo.root, "add", "-A")
    git(repo.root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "0")
    return repo


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", message)


def same_as_full(repo: Repo, tmp_path: Path) -> str | None:
    """Build incrementally, then in full into another file: the two agree; how
    the incremental build found what changed."""
    result = build_index(repo.root, repo.db_path)
    full = tmp_path / "full.db"
    full.unlink(missing_ok=True)
    build_index(repo.root, full, full=True)
    assert content(sqlite_utils.Database(repo.db_path)) == content(sqlite_utils.Database(full))
    return result.changes_from


def _packet(repo: Repo) -> str:
    return repo.first("registry/packets/*/*.json")


def _clean_index(repo: Repo) -> tuple[WorkTreeState, str, sqlite_utils.Database]:
    """A work tree built, git's state of it (nothing dirty), a packet, the index."""
    committed(repo)
    build_index(repo.root, repo.db_path)
    state = work_tree_state(repo.root)
    assert state is not None and state.dirty == ()
    return state, _packet(repo), sqlite_utils.Database(repo.db_path)


def _edit(repo: Repo) -> None:
    repo.edit(_packet(repo), notes="edited")


def _new_record(repo: Repo) -> None:
    source = _packet(repo)
    data = repo.load(source)
    data["packet_id"] = data["packet_id"] + "-copy"
    repo.save(str(Path(source).with_name(data["packet_id"] + ".json")), data)


def _delete(repo: Repo) -> None:
    (repo.root / repo.first("registry/messages/*/*.json")).unlink()


def _staged(repo: Repo) -> None:
    repo.edit(_packet(repo), notes="staged")
    git(repo.root, "add", "-A")


def _committed(repo: Repo) -> None:
    repo.edit(_packet(repo), notes="committed")
    commit(repo.root, "an edit")


def _ignored_record(repo: Repo) -> None:
    repo.write(".gitignore", "registry/packets/ignored-*.json\n")
    source = _packet(repo)
    data = repo.load(source)
    repo.save(str(Path(source).parent / "ignored-one.json"), data)  # indexed, though git ignores it


def _nested_repository(repo: Repo) -> None:
    nested = repo.root / "docs" / "vendored"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "notes.md").write_text("[a link](missing.md)\n")  # git does not look inside


def _nested_repository_removed(repo: Repo) -> None:
    _nested_repository(repo)
    built(repo)  # git names the directory: it is walked
    shutil.rmtree(repo.root / "docs" / "vendored")  # and then it is gone


def _markdown(repo: Repo) -> None:
    repo.write("docs/guide.md", "[the registry](../registry/README.md) [gone](nowhere.md)\n")


def _artifact(repo: Repo) -> Path:
    return repo.root / repo.load(_packet(repo))["path"]


def _artifact_edited(repo: Repo) -> None:
    _artifact(repo).write_text(_artifact(repo).read_text() + "\nEdited since.\n")


def _artifact_deleted(repo: Repo) -> None:
    _artifact(repo).unlink()


def _artifact_made_a_symlink(repo: Repo) -> None:
    """Replaced by a symlink to another file inside: git names the path (a link now)."""
    artifact = _artifact(repo)
    artifact.unlink()
    artifact.symlink_to("../../README.md")


def _artifact_a_symlink_whose_target_changed(repo: Repo) -> None:
    """A committed symlink, its target edited: git names the target, never the link."""
    artifact = _artifact(repo)
    artifact.rename(artifact.with_name("real.md"))
    artifact.symlink_to("real.md")
    commit(repo.root, "a symlinked artifact")
    built(repo)
    artifact.with_name("real.md").write_text("# Changed behind the link\n")


def _artifact_behind_a_symlinked_directory(repo: Repo) -> None:
    """A committed symlink to a directory (alias -> datadrops/2025), an artifact
    named through it; then the file behind it is edited, and a Markdown file's
    link target through it deleted: git names datadrops/2025/..., never
    alias/... (it never looks beyond a symlink)."""
    packet = _packet(repo)
    name = Path(repo.load(packet)["path"]).name
    (repo.root / "alias").symlink_to(Path(repo.load(packet)["path"]).parent)
    repo.edit(packet, path=f"alias/{name}")
    other = sorted(p.name for p in _artifact(repo).resolve().parent.glob("*.md") if p.name != name)
    repo.write("docs/through.md", f"[a file](../alias/{other[0]})\n")
    commit(repo.root, "an alias")
    built(repo)
    _artifact(repo).resolve().write_text("# Changed behind the directory link\n")
    (_artifact(repo).resolve().parent / other[0]).unlink()


def _artifact_appears_where_git_ignores(repo: Repo) -> None:
    """A record names an artifact that is not there; then it appears where git
    ignores it: git names nothing (it lists no ignored file)."""
    packet = _packet(repo)
    repo.edit(packet, path="datadrops/private/later.md")
    repo.write(".gitignore", "datadrops/private/\n")
    commit(repo.root, "an artifact to come")
    built(repo)
    repo.write("datadrops/private/later.md", "# Here now, and ignored\n")


def _artifact_in_a_nested_repository_edited(repo: Repo) -> None:
    """An artifact inside a nested repository (git status names its directory,
    "drafts/", never a file in it), then edited."""
    repo.edit(_packet(repo), path="drafts/notes.md")
    commit(repo.root, "an artifact in another repository")
    repo.write("drafts/notes.md", "# Draft\n")
    git(repo.root / "drafts", "init", "-q")
    built(repo)
    repo.write("drafts/notes.md", "# Draft, edited: a different size\n")


def _link_target_deleted(repo: Repo) -> None:
    repo.write("docs/links.md", "[readme](../README.md) [guide](guide.md)\n")
    repo.write("docs/guide.md", "# Guide\n")
    commit(repo.root, "links")
    built(repo)
    (repo.root / "docs/guide.md").unlink()


def _link_target_restored(repo: Repo) -> None:
    repo.write("docs/links.md", "[guide](guide.md)\n")
    commit(repo.root, "a link to nothing")
    built(repo)
    repo.write("docs/guide.md", "# Guide\n")  # untracked: git names it


def _packet_file(repo: Repo) -> Path:
    return next((repo.root / "docs/workflow").rglob("report.md"))


def _packet_file_edited(repo: Repo) -> None:
    _packet_file(repo).write_text("# Edited since it was locked\n")


def _packet_file_added_and_committed(repo: Repo) -> None:
    (_packet_file(repo).parent / "extra.md").write_text("# One more\n")
    commit(repo.root, "a packet file")


def _packet_file_made_a_symlink(repo: Repo) -> None:
    report = _packet_file(repo)
    report.unlink()
    report.symlink_to("../../../../../../../README.md")


def _packet_fifo_removed(repo: Repo) -> None:
    """A FIFO in a packet directory (listed as an error by a walk), then removed:
    git, which never lists a FIFO, names nothing; the directory is walked for its
    error row. (One made where git names nothing is the walk's to find: README.)"""
    fifo = _packet_file(repo).parent / "pipe"
    os.mkfifo(fifo)
    build_index(repo.root, repo.db_path, full=True)
    assert sqlite_utils.Database(repo.db_path)["handoff_files"].count_where("error IS NOT NULL")
    fifo.unlink()


CHANGES: list[tuple[str, Callable[[Repo], None]]] = [
    ("edit", _edit),
    ("new-record", _new_record),
    ("delete", _delete),
    ("staged", _staged),
    ("committed", _committed),
    ("ignored", _ignored_record),
    ("nested-repository", _nested_repository),
    ("nested-repository-removed", _nested_repository_removed),
    ("markdown", _markdown),
    ("artifact-edited", _artifact_edited),
    ("artifact-deleted", _artifact_deleted),
    ("artifact-made-a-symlink", _artifact_made_a_symlink),
    ("artifact-symlink-target-changed", _artifact_a_symlink_whose_target_changed),
    ("behind-a-symlinked-directory", _artifact_behind_a_symlinked_directory),
    ("artifact-appears-ignored", _artifact_appears_where_git_ignores),
    ("artifact-in-a-nested-repository", _artifact_in_a_nested_repository_edited),
    ("link-target-deleted", _link_target_deleted),
    ("link-target-restored", _link_target_restored),
    ("packet-file-edited", _packet_file_edited),
    ("packet-file-added-and-committed", _packet_file_added_and_committed),
    ("packet-file-made-a-symlink", _packet_file_made_a_symlink),
    ("packet-fifo-removed", _packet_fifo_removed),
]


@pytest.mark.parametrize("name, change", CHANGES, ids=[n for n, _ in CHANGES])
def test_asking_git_finds_what_a_full_build_finds(repo: Repo, tmp_path: Path, name, change):
    committed(repo)
    assert same_as_full(repo, tmp_path) is None  # the first build: in full
    assert same_as_full(repo, tmp_path) == "git"  # nothing changed, and git said so
    change(repo)
    assert same_as_full(repo, tmp_path) == "git"
    assert same_as_full(repo, tmp_path) == "git"  # and again, with nothing changed since


def test_an_edit_reverted_and_a_checkout_are_seen(repo: Repo, tmp_path: Path):
    committed(repo)
    build_index(repo.root, repo.db_path)
    packet = _packet(repo)
    original = (repo.root / packet).read_bytes()
    repo.edit(packet, notes="for a while")
    assert same_as_full(repo, tmp_path) == "git"
    (repo.root / packet).write_bytes(original)  # back as HEAD has it: git calls it clean
    assert same_as_full(repo, tmp_path) == "git"
    assert repo.load(packet).get("notes") != "for a while"
    first = git(repo.root, "rev-parse", "HEAD").strip()
    _committed(repo)
    _new_record(repo)
    commit(repo.root, "another")
    assert same_as_full(repo, tmp_path) == "git"
    git(repo.root, "checkout", "-q", first)  # HEAD moves back: the difference is looked at
    assert same_as_full(repo, tmp_path) == "git"


def test_git_is_not_asked_where_it_cannot_answer_for_every_file(repo: Repo, tmp_path: Path):
    assert work_tree_state(repo.root) is None  # not a work tree: the walk
    committed(repo)
    build_index(repo.root, repo.db_path)
    git(repo.root, "update-index", "--assume-unchanged", _packet(repo))
    assert looks_away(repo.root) is True
    repo.edit(_packet(repo), notes="git was told to look away")
    assert same_as_full(repo, tmp_path) == "walk"  # the edit is still found
    git(repo.root, "update-index", "--no-assume-unchanged", _packet(repo))
    assert looks_away(repo.root) is False


def test_a_repository_below_the_top_of_the_work_tree(tmp_path: Path, generated_template: Path):
    top = tmp_path / "work"
    root = top / "labnote"
    shutil.copytree(generated_template, root)
    (top / "README.md").write_text("elsewhere\n")
    repo = committed(Repo(top, tmp_path / "unused.db"))
    inner = Repo(root, tmp_path / "index.db")
    build_index(inner.root, inner.db_path)
    state = work_tree_state(inner.root)
    assert state is not None and state.dirty == ()
    (top / "README.md").write_text("changed, outside the repository\n")
    _edit(inner)
    state = work_tree_state(inner.root)
    assert state is not None and state.dirty == (_packet(inner),)  # relative to it, its own
    assert same_as_full(inner, tmp_path) == "git"
    assert repo.root == top


def test_what_git_said_is_kept_with_what_changed_during_the_build(repo: Repo):
    committed(repo)
    build_index(repo.root, repo.db_path)
    row = sqlite_utils.Database(repo.db_path)["build_info"].get("work_tree")["value"]
    head, dirty, _ = json.loads(row)
    assert head == git(repo.root, "rev-parse", "HEAD").strip() and dirty == []


def test_a_file_changed_as_the_build_ran_is_looked_at_next_time(repo: Repo):
    """A file changed after git was asked and before (or as) it was read may
    have been read in either state: it is kept among the paths to look at."""
    from labnote_index.index.changed import record_state

    state, packet, db = _clean_index(repo)
    mtime = db.execute("SELECT mtime_ns FROM files WHERE path = ?", [packet]).fetchone()[0]
    old = db.execute("SELECT max(mtime_ns) FROM files WHERE path != ?", [packet]).fetchone()[0]
    later = max(mtime, old) + 10_000_000_000  # ten seconds after every file's time
    db.execute("UPDATE files SET mtime_ns = ? WHERE path = ?", [later, packet])
    record_state(db, state, started_ns=later)
    _, dirty, _ = json.loads(db["build_info"].get("work_tree")["value"])
    assert dirty == [packet]  # changed as the build ran; the rest is older than the window
    record_state(db, None, started_ns=later)
    assert db["build_info"].count_where("key = 'work_tree'") == 0


def test_a_file_put_back_after_a_full_build_read_it_is_not_kept_stale(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A full build asks git beside its walk and waits for the answer before
    it reads: a file read, then put back as HEAD has it before git looked at
    it, would be called clean, and the next build would keep what was read
    (its stored times, an hour old, do not say it changed as the build ran).
    Here git looks only once the file was read, or half a second later, when
    the walk has looked at the file already: its row keeps the times of the
    file read (paths.as_read), not the walk's, which are those of the edit."""
    import threading

    from labnote_index.index import build, rows

    committed(repo)
    packet = _packet(repo)
    as_head_has_it = (repo.root / packet).read_bytes()
    repo.edit(packet, notes="not as HEAD has it")
    aged(repo, since=time.time() - 600)
    read, asked, was_read = rows.read_record_file, build.git_state, threading.Event()

    def reading(path: str, follow: bool = True) -> object:
        parsed = read(path, follow)
        if path.endswith(packet):
            was_read.set()
        return parsed

    def git_state(*args: object) -> object:
        was_read.wait(timeout=0.5)  # the build waits for git first: no read comes
        (repo.root / packet).write_bytes(as_head_has_it)
        return asked(*args)

    monkeypatch.setattr(rows, "read_record_file", reading)
    monkeypatch.setattr(build, "git_state", git_state)
    build_index(repo.root, repo.db_path, full=True, jobs=1)
    monkeypatch.undo()
    assert repo.load(packet).get("notes") != "not as HEAD has it"
    assert same_as_full(repo, tmp_path) == "git"


def test_paths_named_are_found_as_the_walk_finds_them_and_once(repo: Repo):
    """discover_named: what the walk finds of these paths, each once, however
    they were named (a file twice, a file below a directory named too, a
    directory below another), and nothing the walk would leave out."""
    from labnote_index.read.discover import discover, discover_named

    repo.write("notes/a.md", "[x](y.md)\n")
    repo.write("notes/sub/b.md", "text\n")
    repo.write(".hidden/c.md", "never walked\n")
    repo.write("notes/notes.txt", "not listed: no .md, outside the registry\n")
    walked = [f for f in discover(repo.root) if f.path.startswith(("notes/", ".hidden/"))]
    named = discover_named(
        repo.root,
        [
            "notes/a.md",
            "notes/a.md",
            "notes/sub/b.md",
            ".hidden/c.md",
            "notes/notes.txt",
            "gone.md",
        ],
        ["notes/", "notes/sub/"],
    )
    assert list(named) == walked
    assert [f.path for f in named] == ["notes/a.md", "notes/sub/b.md"]
    packet = _packet(repo)
    assert [f.path for f in discover_named(repo.root, [packet])] == [packet]
    excluded = discover_named(repo.root, [packet], excluded=lambda p: p == "registry/packets")
    assert list(excluded) == []
    # Beyond a symlinked directory, which the walk never follows: not found,
    # named as a file or as a directory to walk, as the walk does not find it.
    (repo.root / "alias").symlink_to("notes")
    beyond = discover_named(repo.root, ["alias/a.md", "alias"], ["alias/sub/"])
    assert list(beyond) == [f for f in discover(repo.root) if f.path.startswith("alias")]
    assert [f.path for f in discover_named(repo.root, ["notes/a.md"], ["notes/sub/"])] == [
        "notes/a.md",
        "notes/sub/b.md",
    ]


@pytest.mark.parametrize("kind", ["markdown", "packet file"])
def test_a_file_that_changed_as_it_was_read_is_read_again_by_the_next_build(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
):
    """A file replaced between the walk's look and its read (another inode; here
    by a copy of itself, as HEAD has it, after git looked) is an error row, said
    to be read again by the next build: git, calling it clean, does not name it,
    and its stored times are the walk's, too old to say it changed as the build
    ran; so the row itself marks it for the next build."""
    from labnote_index.read import parse

    packet_dir = "docs/workflow/roles/architect/reports/milestone-1/packet-v001"
    path = repo.write("notes/n.md", "[x](y.md)\n") if kind == "markdown" else None
    path = path or repo.write(f"{packet_dir}/table.csv", "a,b\n")
    broken = repo.write("registry/packets/2025/broken.json", "{")  # an error of another kind
    committed(repo)
    full = str(repo.root / path)
    real, replaced = parse.open_regular, []

    def replaced_first(where: str | Path, follow: bool = True):
        if str(where) == full and not replaced:
            replaced.append(where)
            shutil.copy2(full, full + ".copy")
            os.replace(full + ".copy", full)  # the same bytes and times, another inode
        return real(where, follow)

    monkeypatch.setattr(parse, "open_regular", replaced_first)
    build_index(repo.root, repo.db_path, full=True, jobs=1)
    monkeypatch.undo()
    assert replaced, f"{path} was not read"
    stored = sqlite_utils.Database(repo.db_path)
    table = "files" if kind == "markdown" else "handoff_files"
    errors = stored.execute(
        f"SELECT path, error FROM {table} WHERE error IS NOT NULL AND path != ?", [broken]
    ).fetchall()
    assert errors == [
        (
            path.rsplit("/", 1)[-1] if table == "handoff_files" else path,
            parse.read_error(parse.NotTheFileSeen()),
        )
    ]
    assert stored["files"].get(broken)["error"]
    _, dirty, _ = json.loads(stored["build_info"].get("work_tree")["value"])
    # Named for the next build; a packet directory with an error row is looked
    # at every build, and the broken record is as it was.
    assert dirty == ([path] if kind == "markdown" else [])
    assert same_as_full(repo, tmp_path) == "git"


def test_git_asked_early_answers_the_first_question_of_its_root(repo: Repo, tmp_path: Path):
    """status_asked_early: git asked as a command starts answers the build's
    question of the same root (said by asked_ns, when git was asked), once; a
    question of another root is asked of git anew."""
    from labnote_index.read.git import status_asked_early

    committed(repo)
    other = Repo(tmp_path / "other", tmp_path / "other.db")
    shutil.copytree(repo.root, other.root, symlinks=True)  # a work tree too (its .git)
    before = time.time_ns()
    with status_asked_early(repo.root / "registry" / ".."):  # the same root, spelt otherwise
        entered = time.time_ns()
        mine = work_tree_state(repo.root)
        again = work_tree_state(repo.root)
        theirs = work_tree_state(other.root)
    assert mine is not None and again is not None and theirs is not None
    assert before <= mine.asked_ns <= entered  # the answer to the early question
    assert again.asked_ns > entered and theirs.asked_ns > entered  # asked anew
    assert mine == again  # the same answer: nothing changed between


def test_work_for_the_wait_is_done_only_while_git_status_runs(repo: Repo):
    """work_tree_state enters ``meanwhile`` only while git status is still
    running: not when it has exited already (a small repository's, asked
    early), yes when it has not (held here by SIGSTOP, resumed by the block)."""
    import signal
    import threading

    from labnote_index.read import git as read_git

    committed(repo)
    entered: list[str] = []

    class Recorder:
        def __init__(self, asked: read_git._Asked | None = None) -> None:
            self.asked = asked

        def __enter__(self) -> None:
            entered.append("entered")
            if self.asked is not None:
                os.kill(self.asked.status.pid, signal.SIGCONT)

        def __exit__(self, *exc: object) -> None:
            return None

    with read_git.status_asked_early(repo.root):
        asked = read_git._ASKED_EARLY[os.path.realpath(repo.root)]
        asked.status.wait()  # exited (its output is small: the pipe holds it)
        assert work_tree_state(repo.root, Recorder()) is not None
    assert entered == []
    for _attempt in range(10):  # again, in the rare case git was done before its stop
        with read_git.status_asked_early(repo.root):
            asked = read_git._ASKED_EARLY[os.path.realpath(repo.root)]
            os.kill(asked.status.pid, signal.SIGSTOP)
            if asked.status.poll() is not None:
                continue  # exited already (a stopped one is not: poll says None)
            # Resumed regardless after a while: a failure is a failure, not a hang.
            later = threading.Timer(20, os.kill, [asked.status.pid, signal.SIGCONT])
            later.start()
            try:
                state = work_tree_state(repo.root, Recorder(asked))
            finally:
                later.cancel()
            break
    assert state is not None and entered == ["entered"]


def test_git_asked_early_and_not_answered_is_stopped(repo: Repo):
    """A question no build took (the command failed first, or built nothing)
    is stopped and waited for at the block's end, never answered later: a
    build after it asks git itself."""
    from labnote_index.read import git as read_git

    committed(repo)
    with read_git.status_asked_early(repo.root):
        asked = read_git._ASKED_EARLY[os.path.realpath(repo.root)]
    assert read_git._ASKED_EARLY == {}
    assert asked.where.returncode is not None and asked.status.returncode is not None
    after = time.time_ns()
    state = work_tree_state(repo.root)
    assert state is not None and state.asked_ns >= after


def test_a_file_changed_after_git_was_asked_early_is_looked_at_next_time(repo: Repo):
    """The files the build read changed since git was asked, where that was
    before the build started (asked early): what git said of them may be out
    of date, so they are kept among the paths to look at."""
    from labnote_index.index.changed import record_state

    state, packet, db = _clean_index(repo)
    newest = db.execute("SELECT max(mtime_ns) FROM files").fetchone()[0]
    asked = newest + 10_000_000_000  # git asked ten seconds after every file's time
    changed = asked + 1_000_000_000  # the file changed a second after git was asked,
    started = asked + 20_000_000_000  # and the build started long after, then read it
    db.execute("UPDATE files SET mtime_ns = ? WHERE path = ?", [changed, packet])
    early = WorkTreeState(state.head, state.dirty, state.index_stat, asked)
    record_state(db, early, started_ns=started)
    _, dirty, _ = json.loads(db["build_info"].get("work_tree")["value"])
    assert dirty == [packet]
    record_state(db, WorkTreeState(state.head, state.dirty, state.index_stat), started_ns=started)
    _, dirty, _ = json.loads(db["build_info"].get("work_tree")["value"])
    assert dirty == []  # asked as the build started: the change came before it


def test_a_question_git_cannot_answer_is_not_left_running(repo: Repo):
    """Not a work tree: rev-parse fails, and the status asked beside it is
    stopped there and then, not left for the block's end (or for ever)."""
    from labnote_index.read import git as read_git

    with read_git.status_asked_early(repo.root):
        asked = read_git._ASKED_EARLY[os.path.realpath(repo.root)]
        assert work_tree_state(repo.root) is None
        assert asked.where.returncode not in (None, 0) and asked.status.returncode is not None


def test_git_is_asked_without_writing_its_index(repo: Repo):
    """git status, asked without its optional lock, never writes git's index
    (nor holds its index.lock, on which a git command of the user's beside it
    would fail): a file touched since it was added, its content the same, is
    refreshed by the user's own git, not by a build."""
    committed(repo)
    index = repo.root / ".git" / "index"
    os.utime(repo.root / _packet(repo))  # git's stat data of it out of date
    before = index.stat()
    with_state = work_tree_state(repo.root)
    assert with_state is not None and with_state.dirty == ()
    build_index(repo.root, repo.db_path)
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not (repo.root / ".git" / "index.lock").exists()
    git(repo.root, "status")  # the user's git refreshes it
    assert index.stat().st_mtime_ns != before.st_mtime_ns
