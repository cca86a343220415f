"""A deployment directory: the indexes, their metadata and everything a stateless
Datasette replica needs to serve them, so that as many replicas as the readers
need run behind any load balancer, container platform or CDN.

What it writes:

- each index, named as ``serve`` names it (its repository's name when several);
- ``metadata.json``: the packaged metadata.yml for each (and the cross-repository
  queries when several);
- ``inspect-data.json``: ``datasette inspect``'s hashes and table counts, so that
  a replica starts without reading the databases through;
- ``wheels/`` and ``requirements.txt``: this package as a wheel and every
  dependency pinned to the version installed here;
- ``start.sh``: the one command a replica runs (``datasette serve`` with the
  indexes immutable, host and port from HOST and PORT);
- ``Dockerfile``: that command in a container, for platforms that run images.

The files never change under a running replica, so responses may be cached for
long (``default_cache_ttl``) by a CDN in front; ``/-/health`` answers load
balancers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..errors import PublishError
from ..index.organisation import ORGANISATION, index_names, merge_indexes
from ..index.tempfiles import new_tree
from .serve import SETTINGS, load_metadata

DISTRIBUTION = "labnote-index"
# A day: the indexes of a deployment never change; a new deployment is new files.
CACHE_TTL = 86400
DOCKERFILE = """\
# A replica of a labnote-index deployment: stateless, any number behind a load
# balancer. Built from this directory (labnote-index publish wrote it).
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir --find-links /app/wheels -r /app/requirements.txt
ENV HOST=0.0.0.0 PORT=8001
EXPOSE 8001
CMD ["sh", "/app/start.sh"]
"""


def start_command(names: Sequence[str]) -> list[str]:
    """The command a replica runs, from the deployment directory."""
    command = ["datasette", "serve"]
    served = [*names, ORGANISATION] if len(names) > 1 else list(names)
    for name in served:
        command += ["--immutable", f"{name}.db"]
    command += ["--metadata", "metadata.json", "--inspect-file", "inspect-data.json"]
    for key, value in {**SETTINGS, "default_cache_ttl": CACHE_TTL}.items():
        command += ["--setting", key, str(value).lower() if isinstance(value, bool) else str(value)]
    return command


def write_deployment(db_paths: Sequence[Path], out: Path) -> list[str]:
    """Write the deployment of these indexes into ``out`` (absent or empty); the
    names it serves them under."""
    if out.exists() and (not out.is_dir() or out.is_symlink() or any(out.iterdir())):
        raise PublishError(f"{out} is not an empty directory: give a new one with --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Written beside it, then renamed into place: a publish that fails half-way
    # leaves no half deployment (what a killed one leaves is cleared away like
    # a build's).
    with new_tree(out) as work:
        return _write(db_paths, work)


def _write(db_paths: Sequence[Path], out: Path) -> list[str]:
    names = index_names([Path(p) for p in db_paths])
    for path, name in zip(db_paths, names, strict=True):
        shutil.copyfile(path, out / f"{name}.db")
    served = list(names)
    if len(names) > 1:  # the cross-repository queries' database
        merge_indexes([(n, out / f"{n}.db") for n in names], out / f"{ORGANISATION}.db")
        served.append(ORGANISATION)
    (out / "metadata.json").write_text(json.dumps(load_metadata(*names), indent=2))
    inspect = subprocess.run(
        [
            sys.executable,
            "-m",
            "datasette",
            "inspect",
            *(f"{n}.db" for n in served),
            "--inspect-file",
            "inspect-data.json",
        ],
        cwd=out,
        capture_output=True,
        text=True,
    )
    if inspect.returncode != 0:
        raise PublishError(f"datasette inspect failed: {inspect.stderr.strip()}")
    wheel = _wheel(out / "wheels")
    (out / "requirements.txt").write_text(_requirements(wheel))
    command = " ".join(shlex.quote(part) for part in start_command(names))
    (out / "start.sh").write_text(
        "#!/bin/sh\n# One replica of this deployment: stateless; run as many as needed.\n"
        'cd "$(dirname "$0")"\n'
        f'exec {command} --host "${{HOST:-0.0.0.0}}" --port "${{PORT:-8001}}"\n'
    )
    os.chmod(out / "start.sh", 0o755)
    (out / "Dockerfile").write_text(DOCKERFILE)
    return names


def _requirements(wheel: Path) -> str:
    """This package at its version (from wheels/) and every distribution it needs,
    directly or through another (with the extras asked for, the markers judged
    for this Python and platform, as the replica's image is), pinned to the
    version installed here: a replica built next month runs the same code."""
    lines = [
        "# Written by labnote-index publish: this package and everything it needs, pinned.",
        f"{DISTRIBUTION}=={metadata.version(DISTRIBUTION)}  # wheels/{wheel.name}",
    ]
    needed = _needed(DISTRIBUTION)
    for key in sorted(needed):
        if key != canonicalize_name(DISTRIBUTION):
            lines.append(f"{needed[key].metadata['Name']}=={needed[key].version}")
    return "\n".join(lines) + "\n"


def _needed(root: str) -> dict[str, metadata.Distribution]:
    """Every installed distribution ``root`` needs, by canonical name: its
    requirements read with ``packaging``, followed a distribution (and extra)
    at a time, without recursion."""
    found: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    todo: list[tuple[str, str]] = [(root, "")]  # (distribution, extra asked of it)
    while todo:
        name, extra = todo.pop()
        key = canonicalize_name(name)
        if (key, extra) in done:
            continue
        done.add((key, extra))
        try:
            dist = found.get(key) or metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise PublishError(f"{name} is needed but not installed here: install it") from exc
        found[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is not None and not marker.evaluate({"extra": extra}):
                continue  # another platform's, or an extra not asked for
            if marker is None and extra:
                continue  # asked for without the extra already
            todo.append((requirement.name, ""))
            todo += [(requirement.name, e) for e in requirement.extras]
    return found


def _wheel(into: Path) -> Path:
    """A wheel of the installed labnote-index: built from its source tree when it
    is installed editable, else packed again from its installed files (a wheel
    is those files and their .dist-info)."""
    into.mkdir(parents=True, exist_ok=True)
    dist = metadata.distribution(DISTRIBUTION)
    source = _editable_source(dist) or _source_tree(dist)
    if source is not None:
        with tempfile.TemporaryDirectory(prefix="labnote-publish-") as tmp:
            # Built from a copy of what the wheel is made of: a build writes
            # build/ and *.egg-info beside its sources, never into the user's tree.
            copy = Path(tmp) / "source"
            copy.mkdir()
            for name in WHEEL_SOURCES:
                if (source / name).is_dir():
                    shutil.copytree(source / name, copy / name, ignore=_LEFT_OUT)
                elif (source / name).is_file():
                    shutil.copyfile(source / name, copy / name)
            built = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "--no-deps",
                    "--quiet",
                    "-w",
                    str(into),
                    str(copy),
                ],
                capture_output=True,
                text=True,
            )
        wheels = sorted(into.glob("labnote_index-*.whl"))
        if built.returncode != 0 or not wheels:
            raise PublishError(f"cannot build a wheel of {source}: {built.stderr.strip()}")
        return wheels[0]
    return _repack(dist, into)


# What a wheel of this package is built from, in its source tree.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "labnote_index")
_LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc")
# What an installer adds to a distribution's .dist-info of its own, about the
# machine it installed on (direct_url.json names the file or directory it came
# from): never part of a wheel.
INSTALLER_FILES = ("direct_url.json", "INSTALLER", "REQUESTED")


def _editable_source(dist: metadata.Distribution) -> Path | None:
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    info: dict[str, Any] = json.loads(text)
    if not info.get("dir_info", {}).get("editable"):
        return None
    url = info.get("url", "")
    return Path(url.removeprefix("file://")) if url.startswith("file://") else None


def _source_tree(dist: metadata.Distribution) -> Path | None:
    """The source tree a distribution's metadata was found in (an .egg-info in a
    checkout, as when run from it), which has no installed files to pack."""
    if any(str(f).endswith("RECORD") for f in dist.files or []):
        return None
    base = Path(str(dist.locate_file("")))
    return base if (base / "pyproject.toml").is_file() else None


def _repack(dist: metadata.Distribution, into: Path) -> Path:
    version = dist.version
    wheel = into / f"labnote_index-{version}-py3-none-any.whl"
    files = [f for f in dist.files or [] if not str(f).endswith((".pyc", "RECORD"))]
    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / wheel.name
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as archive:
            rows = []
            for f in files:
                name = str(f)
                if name.startswith("..") or "__pycache__" in name:
                    continue  # scripts and caches are made by pip on install
                if ".dist-info/" in name and name.rsplit("/", 1)[1] in INSTALLER_FILES:
                    continue  # the installing machine's, not the package's
                data = Path(str(dist.locate_file(f))).read_bytes()
                archive.writestr(name, data)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                rows.append(f"{name},sha256={digest.decode()},{len(data)}\n")
            record = next(str(f) for f in dist.files or [] if str(f).endswith("RECORD"))
            archive.writestr(record, "".join(rows) + f"{record},,\n")
        shutil.move(part, wheel)
    return wheel
