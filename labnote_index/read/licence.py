"""The licence a repository declares for its content: its LICENSE file's title.

What a published site says of its data is the repository's own licence, never
the tool's. Read as every file is: a regular file inside, never a symlink, and
only its first few kilobytes.
"""

from __future__ import annotations

import os

from .parse import open_regular
from .paths import Sandbox

LICENCE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING")
_HEAD_BYTES = 4096
_TITLE_CHARS = 120


def declared_licence(sandbox: Sandbox) -> dict[str, str] | None:
    """The repository's licence file and its title (its first line of text), or
    None when it has none at its root."""
    for name in LICENCE_FILES:
        try:
            fd, st = open_regular(sandbox.path(name), follow=False)
        except OSError:
            continue  # none, a symlink (which may lead outside), or not a file
        try:
            if st.st_nlink != 1:
                continue  # a second name may be a file outside
            head = os.read(fd, _HEAD_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        finally:
            os.close(fd)
        lines = (line.strip().lstrip("#").strip() for line in head.splitlines())
        title = next((line for line in lines if line), "")
        return {"file": name, "title": title[:_TITLE_CHARS]}
    return None
