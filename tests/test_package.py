"""The package as a stranger installs it: a built wheel in a fresh virtual environment.

An editable install finds its SQL checks, metadata and templates in the source
tree; a wheel must carry them. Everything here runs outside the source tree.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .helpers import ROOT, SAMPLE_REPO

pytestmark = pytest.mark.packaging


def run(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=check
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel built from this checkout."""
    work = tmp_path_factory.mktemp("wheel")
    # From a copy without what earlier builds left (setuptools' build/ keeps
    # files deleted since, which would be packaged again).
    source = work / "source"
    leftovers = shutil.ignore_patterns("build", "dist", ".venv", "*.egg-info", ".git", "*.db")
    shutil.copytree(ROOT, source, ignore=leftovers, symlinks=True)
    built = run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-deps",
        "-w",
        work / "dist",
        source,
        cwd=work,
    )
    # setuptools' warning about data folders missing from the packages configuration
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    wheels = list((work / "dist").glob("labnote_index-*.whl"))
    assert len(wheels) == 1
    run(sys.executable, "-m", "venv", work / "venv", cwd=work)
    run(work / "venv/bin/python", "-m", "pip", "install", "-q", wheels[0], cwd=work)
    return work


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_wheel_install_checks_a_repository(installed: Path):
    repo = installed / "sample_repo"
    shutil.copytree(SAMPLE_REPO, repo)
    done = run(installed / "venv/bin/labnote-index", "check", repo, cwd=installed, check=False)
    assert done.returncode == 1, done.stderr  # sample_repo's planted defects
    assert "[input_packet_unresolved]" in done.stdout
    transitions = run(installed / "venv/bin/labnote-index", "checks", cwd=installed).stdout
    assert "status_transition" in transitions  # checks/transitions/ is packaged too
    assert "schema_type" in transitions  # and validation.toml, with its generic query
    module = run(installed / "venv/bin/python", "-m", "labnote_index", "--help", cwd=installed)
    assert "Usage: labnote-index" in module.stdout


def test_wheel_install_serves_pages(installed: Path, tmp_path: Path):
    """An index of its own (this test needs no other to have run first), served."""
    repo = tmp_path / "sample_repo"
    shutil.copytree(SAMPLE_REPO, repo)
    db = tmp_path / "labnote.db"
    run(installed / "venv/bin/labnote-index", "build", repo, "--db", db, cwd=installed)
    port = free_port()
    server = subprocess.Popen(
        [str(installed / "venv/bin/labnote-index"), "serve", str(db), "--port", str(port)],
        cwd=installed,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}/labnote"
        page = None
        for _ in range(100):
            try:
                page = urllib.request.urlopen(f"{base}/findings", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert page is not None and "input_packet_unresolved" in page
        node = "registry/messages/open/20260912-gemini-late-reply.json"
        lineage = urllib.request.urlopen(f"{base}/-/lineage?node={node}", timeout=5).read()
        assert b"20260912-gemini-late-reply" in lineage  # the plugin's template
    finally:
        server.terminate()
        server.wait(10)
