"""No secret in the index (#23, security first): a symlink into .git or onto a
dot-file, a file git ignores, a hard-linked record or view. Each is reported;
its content is never stored, searchable or printed.

Tests of: ``read/git.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from labnote_index.cli import cli
from labnote_index.read.git import git_ignored

from .helpers import Repo, everything_stored, findings_of, git

PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"
TOKEN = "AUTHORIZATION: basic c2VjcmV0LXRva2Vu"


def point_artifact(repo: Repo, target: str) -> str:
    """Make the packet's artifact a symlink to ``target`` (relative to it)."""
    artifact = repo.load(PACKET)["path"]
    path = repo.root / artifact
    path.unlink()
    path.symlink_to(target)
    return artifact


@pytest.mark.parametrize(
    "secret, target",
    [
        (".git/config", "../../.git/config"),
        (".env", "../../.env"),
        ("tools/.cache/token.md", "../../tools/.cache/token.md"),
    ],
    ids=["git-config", "dot-file", "dot-directory"],
)
def test_a_symlink_into_git_or_a_dot_path_is_reported_never_stored(
    sample_repo: Repo, secret: str, target: str
):
    sample_repo.write(secret, f'[http "https://github.com/"]\n\textraheader = {TOKEN}\n')
    artifact = point_artifact(sample_repo, target)
    db = sample_repo.index()
    row = db["artifacts"].get(artifact)
    assert (row["status"], row["body"], row["sha256"]) == ("hidden", None, None)
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)
    found = [f for f in findings_of(db) if f["check"] == "artifact_path" and f["file"] == PACKET]
    assert found and "dot-directory" in found[0]["message"]
    # Named directly, a file in a dot-directory is no more inside; a dot-file
    # is (the walk reads them too), and only a Markdown or text body is stored.
    sample_repo.edit(PACKET, path=secret)
    db = sample_repo.index()
    status = db["artifacts"].get(secret)["status"]
    assert status == ("ok" if secret == ".env" else "hidden")
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)


def test_a_file_git_ignores_is_reported_never_stored(sample_repo: Repo):
    root = sample_repo.root
    git(root, "init", "-q")
    sample_repo.write(".gitignore", "secrets/\n")
    sample_repo.write("secrets/notes.md", f"{TOKEN}\n")
    artifact = point_artifact(sample_repo, "../../secrets/notes.md")
    other = sample_repo.load("registry/packets/2026/20260905-claude-retention-followup.json")
    db = sample_repo.index()
    assert db["artifacts"].get(artifact)["status"] == "ignored"
    assert db["artifacts"].get(other["path"])["body"]  # the rest are read as before
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)
    found = [f for f in findings_of(db) if f["check"] == "artifact_path" and f["file"] == PACKET]
    assert found and "ignored by git" in found[0]["message"]


def test_a_tracked_file_an_ignore_rule_matches_is_read(sample_repo: Repo):
    """git never ignores a tracked file, whatever .gitignore says: it is part of
    the repository (the ignore rules are asked first alone, then the index takes
    back what is tracked; an untracked file beside it stays ignored)."""
    root = sample_repo.root
    git(root, "init", "-q")
    sample_repo.write(".gitignore", "notes/\n")
    sample_repo.write("notes/tracked.md", "kept on purpose\n")
    sample_repo.write("notes/untracked.md", f"{TOKEN}\n")
    git(root, "add", "-f", "notes/tracked.md")
    tracked = point_artifact(sample_repo, "../../notes/tracked.md")
    ignored = git_ignored(root, ["notes/tracked.md", "notes/untracked.md", "registry/README.md"])
    assert ignored == {"notes/untracked.md"}
    db = sample_repo.index()
    assert db["artifacts"].get(tracked)["status"] != "ignored"
    assert "kept on purpose" in db["artifacts"].get(tracked)["body"]


def test_git_is_asked_batch_by_batch_and_each_batch_keeps_its_answer(
    sample_repo: Repo, monkeypatch
):
    """Artifacts are looked at and git asked a batch at a time: an ignored file
    named directly, one reached through a symlink, each in a batch of its own,
    and the files around them read as ever."""
    from labnote_index.index import files

    root = sample_repo.root
    git(root, "init", "-q")
    sample_repo.write(".gitignore", "secrets/\n")
    sample_repo.write("secrets/notes.md", f"{TOKEN}\n")
    sample_repo.write("secrets/direct.md", f"{TOKEN}\n")
    linked = point_artifact(sample_repo, "../../secrets/notes.md")
    direct = "registry/packets/2026/20260905-claude-retention-followup.json"
    sample_repo.edit(direct, path="secrets/direct.md")
    monkeypatch.setattr(files, "IGNORE_BATCH", 1)
    monkeypatch.setattr(files, "INSERT_BATCH", 1)
    db = sample_repo.index()
    statuses = {row["path"]: row["status"] for row in db["artifacts"].rows}
    assert statuses.pop(linked) == statuses.pop("secrets/direct.md") == "ignored"
    assert "ignored" not in statuses.values() and list(statuses.values()).count("ok") > 20
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)


def test_when_git_cannot_tell_an_artifact_it_may_ignore_is_never_read(sample_repo: Repo):
    """The ignore rules match a file, and git cannot say whether it is tracked
    (its index is damaged): the file is taken as ignored, its content never
    read, and the files the rules do not match are read as ever."""
    root = sample_repo.root
    git(root, "init", "-q")
    sample_repo.write(".gitignore", "secrets/\n")
    sample_repo.write("secrets/notes.md", f"{TOKEN}\n")
    artifact = point_artifact(sample_repo, "../../secrets/notes.md")
    (root / ".git" / "index").write_bytes(b"DIRC not an index")
    assert git_ignored(root, ["secrets/notes.md", "registry/README.md"]) == {"secrets/notes.md"}
    db = sample_repo.index()
    assert db["artifacts"].get(artifact)["status"] == "ignored"
    other = sample_repo.load("registry/packets/2026/20260905-claude-retention-followup.json")
    assert db["artifacts"].get(other["path"])["status"] == "ok"
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)


def test_a_file_swapped_for_a_symlink_after_its_look_is_never_read(sample_repo: Repo, tmp_path):
    """Artifacts are looked at (lstat) a batch before they are read: one that
    becomes a symlink to a file outside in between is refused, not followed."""
    from labnote_index.index.files import _looked_at, _read
    from labnote_index.read.paths import Sandbox

    artifact = sample_repo.load(PACKET)["path"]
    outside = tmp_path / "outside.md"
    outside.write_text(f"{TOKEN}\n")
    sandbox = Sandbox(sample_repo.root)
    row, key = _looked_at(sandbox, artifact)
    assert key is not None and not key.is_link
    (sample_repo.root / artifact).unlink()
    (sample_repo.root / artifact).symlink_to(outside)
    _read(sandbox, row, key, ignored=False)
    assert (row["status"], row["body"], row["sha256"]) == ("unreadable", None, None)


def test_git_is_asked_about_every_artifact_of_a_batch_whatever_comes_before(
    sample_repo: Repo,
):
    """A missing artifact first, then one at the repository's root that git
    ignores: the second is asked about and ignored."""
    from labnote_index.index.files import ArtifactWriter, _looked_at
    from labnote_index.read.paths import Sandbox

    git(sample_repo.root, "init", "-q")
    sample_repo.write(".gitignore", "secret-notes.md\n")
    sample_repo.write("secret-notes.md", f"{TOKEN}\n")
    sandbox = Sandbox(sample_repo.root)
    looked = [_looked_at(sandbox, path) for path in ("notes/gone.md", "secret-notes.md")]
    assert looked[0][1] is None and looked[1][1] is not None
    assert ArtifactWriter(sandbox, ask_git=True)._ignored(looked) == {"secret-notes.md"}


def test_git_is_asked_about_this_repository_only(sample_repo: Repo, tmp_path, monkeypatch):
    # A hook runs with GIT_DIR set: it must not point the ignore test elsewhere.
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(sample_repo.root, "init", "-q")
    sample_repo.write(".gitignore", "secrets/\n")
    sample_repo.write("secrets/notes.md", f"{TOKEN}\n")
    artifact = point_artifact(sample_repo, "../../secrets/notes.md")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    db = sample_repo.index()
    assert db["artifacts"].get(artifact)["status"] == "ignored"


def test_a_hard_linked_record_is_reported_never_read(sample_repo: Repo, tmp_path: Path):
    outside = tmp_path / "outside.json"
    data = sample_repo.load(PACKET)
    data["notes"] = TOKEN
    outside.write_text(json.dumps(data))
    (sample_repo.root / PACKET).unlink()
    (sample_repo.root / PACKET).hardlink_to(outside)
    db = sample_repo.index()
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)
    found = [f for f in findings_of(db) if f["file"] == PACKET]
    assert [f["check"] for f in found] == ["file_unreadable"]
    assert "hard link" in found[0]["message"]


def test_views_check_never_prints_a_hard_linked_view(sample_repo: Repo, tmp_path: Path):
    outside = tmp_path / "INDEX.md"
    outside.write_text(f"# Registry Index\n\n{TOKEN}\n")
    index = sample_repo.root / "registry/INDEX.md"
    index.unlink()
    index.hardlink_to(outside)
    result = CliRunner().invoke(cli, ["views", str(sample_repo.root), "--check"])
    assert result.exit_code == 2
    assert "hard link" in result.output and "c2VjcmV0" not in result.output
    result = CliRunner().invoke(cli, ["views", str(sample_repo.root)])
    assert result.exit_code == 2 and outside.read_text().endswith(f"{TOKEN}\n")


# Output and arguments (#23, 17 and 19)


def test_orphans_csv_keeps_escape_sequences_exactly(sample_repo: Repo, tmp_path: Path):
    late = "registry/messages/open/20260912-gemini-late-reply.json"
    sample_repo.edit(late, reply_to="20260101-x-\x1b[31mred")
    done = subprocess.run(
        [sys.executable, "-m", "labnote_index", "orphans", str(sample_repo.root)]
        + ["--db", str(tmp_path / "o.db"), "--format", "csv"],
        capture_output=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert b"20260101-x-\x1b[31mred" in done.stdout


def test_lineage_of_a_name_that_is_not_utf8_is_one_line_and_exit_2(sample_repo: Repo):
    sample_repo.index()
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"labnote_index", b"lineage", b"\xff\xfe-x"]
        + [b"--db", bytes(sample_repo.db_path)],
        capture_output=True,
    )
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr and b"not valid UTF-8" in done.stderr


def test_when_git_cannot_tell_the_loader_reads_no_markdown_file_it_may_ignore(
    sample_repo: Repo, monkeypatch: pytest.MonkeyPatch
):
    """The loader reads Markdown files as it reads the records only where git
    said it does not ignore them. Where git could not tell it (its answer None,
    as when check-ignore fails), none is read then: an artifact git ignores is
    left to the artifact refresh, which asks git again and never reads it."""
    import labnote_index.index.markdown_files as markdown_module

    root = sample_repo.root
    git(root, "init", "-q")
    sample_repo.write(".gitignore", "secrets/\n")
    sample_repo.write("secrets/notes.md", f"{TOKEN}\n")
    sample_repo.edit(PACKET, path="secrets/notes.md")
    asked: list[list[str]] = []

    def cannot_tell(root: Path, paths: list[str]) -> None:
        asked.append(paths)
        return None

    monkeypatch.setattr(markdown_module, "git_ignored", cannot_tell)
    db = sample_repo.index(jobs=1)
    assert asked and "secrets/notes.md" in asked[0]  # the loader did ask
    assert db["artifacts"].get("secrets/notes.md")["status"] == "ignored"
    assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)
    other = sample_repo.load("registry/packets/2026/20260905-claude-retention-followup.json")
    assert db["artifacts"].get(other["path"])["body"]  # read after, as before
    assert db["files"].get(other["path"])["sha256"]


LINKED_SECRET = f"{TOKEN}\n\n[key](https://example.com/?t=c2VjcmV0)\n[note](c2VjcmV0.md)\n"


@pytest.mark.parametrize("git_answers", [True, False], ids=["git-tells", "git-cannot-tell"])
def test_a_markdown_file_git_ignores_that_no_record_names_is_never_read(
    sample_repo: Repo, monkeypatch: pytest.MonkeyPatch, git_answers: bool
):
    """A Markdown file git ignores (or may: git could not tell) that is no
    artifact is never hashed, nor its links stored, by a full build or by the
    incremental ones after it; a file beside it that git does not ignore is
    read, and so is a tracked one an ignore rule matches."""
    import labnote_index.index.markdown_files as markdown_module

    root = sample_repo.root
    git(root, "init", "-q")
    sample_repo.write(".gitignore", "secrets/\nnotes/kept.md\n")
    sample_repo.write("secrets/notes.md", LINKED_SECRET)
    sample_repo.write("notes/plain.md", "[there](there.md)\n")
    sample_repo.write("notes/kept.md", "[tracked](tracked.md)\n")
    git(root, "add", "-f", "notes/kept.md")
    if not git_answers:
        monkeypatch.setattr(markdown_module, "git_ignored", lambda root, paths: None)
    for full in (True, False):
        db = sample_repo.index(full=full, jobs=1)
        assert db["files"].get("secrets/notes.md")["sha256"] is None
        assert "c2VjcmV0" not in everything_stored(sample_repo.db_path)
        linked = {r["source_file"] for r in db.query("SELECT source_file FROM markdown_links")}
        assert "secrets/notes.md" not in linked
        if git_answers:  # read where git says it does not ignore them
            assert {"notes/plain.md", "notes/kept.md"} <= linked
            assert db["files"].get("notes/plain.md")["sha256"]
        sample_repo.write("notes/plain.md", "[there](there.md)\n[again](again.md)\n")
