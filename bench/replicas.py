"""Requests per second for one replica of a published deployment and for three,
round-robin on loopback ports, in one run (ratios, not numbers across runs).

    .venv/bin/python bench/replicas.py [--packets 1000] [--requests 600] [--clients 12]

It generates a repository (bench/generate.py), builds and publishes its index
(`labnote-index publish`), starts the deployment's start.sh once, then three
times, and sends the same bounded burst of requests to each set: a table page
as JSON, a filtered findings page, a story page and the home page.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.generate import generate  # noqa: E402
from bench.servers import free_port, wait_until_up  # noqa: E402

PATHS = [
    "/repo/packets.json?_shape=array",
    "/repo/findings.json?_shape=array&severity=error",
    "/repo",
    "/repo/messages?status=open",
]


def start(out: Path, n: int) -> tuple[list[subprocess.Popen], list[str]]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    ports = [free_port() for _ in range(n)]
    replicas = [
        subprocess.Popen(
            ["sh", str(out / "start.sh")],
            env={**env, "HOST": "127.0.0.1", "PORT": str(p)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for p in ports
    ]
    bases = [f"http://127.0.0.1:{p}" for p in ports]
    for base in bases:
        wait_until_up(base, "/-/health")
    return replicas, bases


def burst(bases: list[str], requests: int, clients: int) -> float:
    """Requests per second for ``requests`` requests, round-robin over ``bases``."""
    jobs = [bases[n % len(bases)] + PATHS[n % len(PATHS)] for n in range(requests)]

    def fetch(url: str) -> int:
        with urllib.request.urlopen(url, timeout=60) as answer:
            answer.read()
            return answer.status

    for url in jobs[: len(bases) * len(PATHS)]:
        fetch(url)  # each page once first: what a replica caches is warm
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        statuses = list(pool.map(fetch, jobs))
    seconds = time.perf_counter() - started
    assert all(s == 200 for s in statuses)
    return requests / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--clients", type=int, default=12)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="labnote-replicas-"))
    generate(work / "repo", args.packets)
    cli = [sys.executable, "-m", "labnote_index"]
    subprocess.run(
        [*cli, "build", str(work / "repo"), "--db", str(work / "repo.db")],
        check=True,
        capture_output=True,
    )
    out = work / "deploy"
    subprocess.run(
        [*cli, "publish", str(work / "repo.db"), "--out", str(out)], check=True, capture_output=True
    )
    rows = []
    for n in (1, 3):
        replicas, bases = start(out, n)
        try:
            rows.append((n, burst(bases, args.requests, args.clients)))
        finally:
            for r in replicas:
                r.terminate()
                r.wait(10)
    print(
        f"{os.cpu_count()} cores; {args.packets} packets; {args.requests} requests from "
        f"{args.clients} clients, round-robin over {', '.join(PATHS)}\n"
    )
    print("| replicas | requests per second | against one |")
    print("| ---: | ---: | ---: |")
    for n, rate in rows:
        print(f"| {n} | {rate:.0f} | {rate / rows[0][1]:.2f} |")


if __name__ == "__main__":
    main()
