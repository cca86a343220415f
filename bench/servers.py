"""Starting a server for a measurement or a screenshot: a free port, and
waiting until it answers (bench/web.py, bench/replicas.py, docs/screenshots.py)."""

from __future__ import annotations

import socket
import time
import urllib.request


def free_port() -> int:
    """A port nothing listens on now (on loopback)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(base: str, path: str = "/-/versions.json", seconds: float = 30) -> None:
    """Until the server at ``base`` answers ``path``; TimeoutError after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(base + path, timeout=1)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{base} did not answer within {seconds} s") from None
            time.sleep(0.1)
