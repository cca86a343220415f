"""Whether a directory is a LabNote repository's root, and where the repositories
are when it is not (the hint a gate pointed at the wrong directory gives)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import NotARepository, RepositoryError


def readable_directory(repo: Path) -> None:
    """That ``repo`` is a directory this process can list and enter."""
    if not repo.is_dir():
        raise RepositoryError(f"{repo} is not a directory: give the root of a LabNote repository")
    if not os.access(repo, os.R_OK | os.X_OK):
        raise RepositoryError(f"{repo} cannot be read: check its permissions")


def check_repository(repo: Path) -> None:
    """That ``repo`` can be read and is a LabNote repository's root (the errors a
    build gives, in its order)."""
    readable_directory(repo)
    is_a_repository(repo)


def is_a_repository(repo: Path) -> None:
    """A LabNote repository has registry/ or the handoff layout (docs/workflow/)
    at its root: a gate pointed one level too deep, at an empty directory or at
    a directory that merely holds repositories (/tmp) must not pass for one.
    Asked before anything is read."""
    if (repo / "registry").is_dir() or (repo / HANDOFF_ROOT).is_dir():
        return
    here = repo.resolve()
    above = next((p for p in here.parents if (p / "registry").is_dir()), None)
    below = repositories_below(here)
    if above is not None and above != here:
        hint = f": did you mean {above}?"
    elif below:
        more = f" and {len(below) - 3} more" if len(below) > 3 else ""
        hint = f"; repositories below it: {', '.join(map(str, below[:3]))}{more}"
    else:
        hint = ""
    raise NotARepository(
        f"{repo} is not a LabNote repository: it has no registry/ directory and no handoff "
        f"packet layout ({HANDOFF_ROOT}/ at its root, as in docs/workflow/roles/<role>/"
        f"reports/<milestone>/packet-vNNN/handoff.manifest.json); give the repository's "
        f"root{hint}"
    )


HANDOFF_ROOT = "docs/workflow"
# How far below a directory that is no repository the repositories in it are
# looked for (a bounded walk: the directory could be /tmp, or a home).
BELOW_DEPTH, BELOW_DIRECTORIES = 3, 5000


def repositories_below(root: Path) -> list[Path]:
    """The LabNote repositories a few levels below ``root`` (dot-directories and
    symlinks left out), breadth first, bounded in depth and in directories read."""
    found: list[Path] = []
    level, seen = [root], 0
    for _ in range(BELOW_DEPTH):
        deeper = []
        for directory in level:
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                    continue
                seen += 1
                if seen > BELOW_DIRECTORIES:
                    return found
                path = Path(entry.path)
                if (path / "registry").is_dir() or (path / HANDOFF_ROOT).is_dir():
                    found.append(path)
                else:
                    deeper.append(path)
        level = deeper
    return found
