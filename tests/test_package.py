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

from .helpers import DEPLOYMENT_FILES, ROOT, SAMPLE_REPO

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


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def test_a_published_deployment_runs_as_three_identical_replicas(installed: Path, tmp_path: Path):
    """publish, then as a platform would: the Dockerfile's install command in a
    fresh virtual environment, its start command three times on loopback ports,
    a bounded burst of requests round-robin. Every replica answers the same,
    with cache headers fit for a CDN, and /-/health answers load balancers."""
    import concurrent.futures
    import json

    bin_ = installed / "venv/bin"
    for name in ("alpha", "beta"):
        shutil.copytree(SAMPLE_REPO, tmp_path / name)
        run(
            bin_ / "labnote-index",
            "build",
            tmp_path / name,
            "--db",
            tmp_path / f"{name}.db",
            cwd=tmp_path,
        )
    out = tmp_path / "deploy"
    run(
        bin_ / "labnote-index",
        "publish",
        tmp_path / "alpha.db",
        tmp_path / "beta.db",
        "--out",
        out,
        cwd=tmp_path,
    )
    # The two indexes and their organisation index (the cross-repository queries').
    served = {"alpha.db", "beta.db", "organisation.db"}
    assert {p.name for p in out.iterdir()} == {*served, *DEPLOYMENT_FILES}
    # The Dockerfile's commands, not its image (no registry here to pull a base from).
    dockerfile = (out / "Dockerfile").read_text().splitlines()
    (install,) = [line[4:] for line in dockerfile if line.startswith("RUN ")]
    venv = tmp_path / "replica-venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    command = install.replace("/app", str(out)).split()
    assert command[:2] == ["pip", "install"]
    run(venv / "bin/python", "-m", *command, cwd=out)
    # Every distribution the replica has is pinned, to the version publish ran with.
    pinned = {
        line.split("  #")[0].strip().lower().replace("_", "-")
        for line in (out / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    }
    frozen = run(venv / "bin/python", "-m", "pip", "freeze", "--all", cwd=out).stdout.lower()
    have = {line.replace("_", "-") for line in frozen.splitlines() if "==" in line}
    assert have <= pinned, have - pinned
    assert {"anyio", "h11", "mdurl"} <= {line.split("==")[0] for line in pinned}
    # The wheel carries nothing of the machine that installed it.
    import zipfile

    (wheel,) = (out / "wheels").glob("labnote_index-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert not [n for n in names if n.endswith(("direct_url.json", "/INSTALLER", "/REQUESTED"))]
        for name in names:
            assert str(installed).encode() not in archive.read(name), name
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    ports = [free_port() for _ in range(3)]
    replicas = [
        subprocess.Popen(
            ["sh", str(out / "start.sh")],
            cwd=tmp_path,
            env={**env, "HOST": "127.0.0.1", "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for port in ports
    ]
    try:
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        for base in bases:
            for _ in range(150):
                if _alive(base) and _get(base + "/-/health")[0] == 200:
                    break
                time.sleep(0.2)
            else:
                pytest.fail("a replica did not come up")
        paths = [
            "/organisation/every_finding.json?_shape=array",
            "/alpha/findings.json?_shape=array&_size=max",
            "/beta/packets.json?_shape=array&_col=topic",
            "/alpha/-/story?node=registry/packets/2026/20260903-maria-ops-retention-question.json",
            "/alpha",
        ]
        jobs = [(bases[n % 3], paths[n % len(paths)]) for n in range(60)]
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(lambda job: (job, _get(job[0] + job[1])), jobs))
        by_path: dict[str, set[bytes]] = {}
        for (base, path), (status, headers, body) in answers:
            assert status == 200, (path, body[:300])
            # A page names the address it was asked at (behind a load balancer,
            # the same for every replica): that aside, the bytes must agree.
            body = body.replace(base.encode(), b"")
            assert "max-age=86400" in headers.get("cache-control", ""), (path, headers)
            if path.endswith("/alpha"):
                body = body.split(b"Queries took")[0]  # the footer times the page
            by_path.setdefault(path, set()).add(body)
        differing = {path: len(b) for path, b in by_path.items() if len(b) != 1}
        if differing:
            import difflib

            path = next(iter(differing))
            a, b = sorted(by_path[path])[:2]
            diff = difflib.unified_diff(a.decode().splitlines(), b.decode().splitlines(), n=0)
            pytest.fail(f"replicas disagree on {differing}: " + "\n".join(list(diff)[:12]))
        findings = json.loads(next(iter(by_path[paths[0]])))
        assert {f["repository"] for f in findings} == {"alpha", "beta"}
        # The site's home (the plugin's own page, organisation.db among its
        # databases) is cached for as long as every other page.
        status, headers, home = _get(bases[1] + "/")
        assert status == 200 and "max-age=86400" in headers.get("cache-control", ""), headers
        assert b'href="/organisation"' in home and b'href="/alpha"' in home
        status, headers, body = _get(bases[0] + "/-/health")
        assert json.loads(body) == {"ok": True, "indexes": {"alpha": "ok", "beta": "ok"}}
        assert headers.get("cache-control") == "no-store"
    finally:
        for replica in replicas:
            replica.terminate()
            replica.wait(10)


def _alive(base: str) -> bool:
    try:
        return _get(base + "/-/health")[0] in (200, 503)
    except OSError:
        return False


def test_publishing_from_an_editable_install_leaves_the_source_tree_as_it_was(tmp_path: Path):
    """This checkout is installed editable: its wheel is built from a copy, so no
    build/ or *.egg-info appears in the source tree."""
    import labnote_index as li

    db = tmp_path / "sample.db"
    li.build(SAMPLE_REPO, db)
    before = sorted(p.name for p in ROOT.iterdir())
    li.publish([db], tmp_path / "deploy")
    assert sorted(p.name for p in ROOT.iterdir()) == before
    assert list((tmp_path / "deploy" / "wheels").glob("labnote_index-*.whl"))
