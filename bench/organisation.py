"""An organisation's repositories: N generated repositories of about R records,
each indexed alone, then merged into one organisation index, and served.

In one run, each step in a process of its own (python -m labnote_index):
1. the organisation index merged in full (``merge``, no index merged before);
2. one record edited in one repository, that repository indexed again
   (incrementally, as a hook or CI would), and the merge run again (it copies
   only the changed index);
3. ``serve`` of every index together: the time until it answers (it merges the
   indexes as it starts), then the site home page (first request, and the
   median of the next ones) and one cross-repository query over all of them.

    python bench/organisation.py [--repositories 50] [--records 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.generate import generate  # noqa: E402
from bench.servers import free_port, wait_until_up  # noqa: E402

# bench/generate.py writes about 4.35 records a packet.
RECORDS_A_PACKET = 4.35


def cli(*args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "labnote_index", *args], capture_output=True, text=True
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
    return time.perf_counter() - start


def get(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        if response.status != 200:
            raise SystemExit(f"{url}: HTTP {response.status}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repositories", type=int, default=50)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="labnote-org-"))
    packets = max(1, round(args.records / RECORDS_A_PACKET))
    dbs, records = [], 0
    for n in range(args.repositories):
        repo = work / f"repo-{n:02}"
        records += generate(repo, packets=packets, seed=n + 1)
        dbs.append(work / f"repo-{n:02}.db")
        cli("build", str(repo), "--db", str(dbs[-1]))
    org = work / "org.db"
    rows = [("merge, in full", cli("merge", *map(str, dbs), "--db", str(org)))]
    repo = work / "repo-00"
    edited = sorted((repo / "registry" / "packets").rglob("*.json"))[0]
    data = json.loads(edited.read_text())
    data["notes"] = "edited for the benchmark"
    edited.write_text(json.dumps(data, indent=2))
    rows.append(
        (
            "one repository indexed again after one edit",
            cli("build", str(repo), "--db", str(dbs[0])),
        )
    )
    rows.append(
        ("merge after that edit (one index copied)", cli("merge", *map(str, dbs), "--db", str(org)))
    )
    port = free_port()
    start = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "labnote_index", "serve", *map(str, dbs), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base, seconds=600)
        rows.append(("serve: started and answering (merged at start)", time.perf_counter() - start))
        rows.append(("site home, first request", get(base + "/")))
        rows.append(
            ("site home, median", statistics.median(get(base + "/") for _ in range(args.repeat)))
        )
        query = base + "/organisation/every_finding.json?_shape=array&_size=max"
        rows.append(
            (
                "every finding, all repositories",
                statistics.median(get(query) for _ in range(args.repeat)),
            )
        )
    finally:
        server.terminate()
        server.wait()
    print(f"{args.repositories} repositories, {records} records in all; median of {args.repeat}\n")
    print("| step | seconds |")
    print("| --- | ---: |")
    for step, seconds in rows:
        print(f"| {step} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
