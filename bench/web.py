"""Page latency of `labnote-index serve` on a built index, against its plain JSON endpoint.

Starts the server on this machine (127.0.0.1 only), then in one run:
1. each page kind, and every table page the index lists, once (the first
   request, not counted in the median), then a number of times, one request
   at a time, in rounds of one request of each kind: median latency, and its
   ratio to `/DB/packets.json?_size=1&_nofacet=1` on the same server;
2. a burst of concurrent mixed requests (bounded in number), and the same
   requests one after another: every answer 200, and the burst's wall time.

    python bench/web.py INDEX.db [--repeat 15] [--burst 200]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

from datasette.utils import tilde_encode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.servers import free_port, wait_until_up  # noqa: E402

# The target: each page's median within this many times the baseline's.
TARGET = 3.0


def get(url: str) -> tuple[int, float]:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, time.perf_counter() - start


def pages(db: Path) -> dict[str, str]:
    """One path of each page kind, for records that exist in this index."""
    conn = sqlite3.connect(db)
    packet = conn.execute("SELECT file FROM packets LIMIT 1 OFFSET 500").fetchone()[0]
    message = conn.execute(
        "SELECT source_file FROM refs WHERE field = 'reply_to' AND target_file IS NOT NULL "
        "LIMIT 1 OFFSET 200"
    ).fetchone()[0]
    conn.close()
    name = db.stem
    return {
        "baseline: packets.json?_size=1&_nofacet=1": f"/{name}/packets.json?_size=1&_nofacet=1",
        "home: the dashboard": f"/{name}",
        "table: packets": f"/{name}/packets",
        # Where a table page's time goes: its first row and its facets alone.
        "table: packets, 1 row": f"/{name}/packets?_size=1",
        "table: packets, 1 row, no facets": f"/{name}/packets?_size=1&_nofacet=1",
        "table: messages": f"/{name}/messages",
        "table: findings": f"/{name}/findings",
        "row: a packet": f"/{name}/records/{tilde_encode(packet)}",
        "lineage: a packet": f"/{name}/-/lineage?node={quote(packet)}",
        "story: a packet": f"/{name}/-/story?node={quote(packet)}",
        "story: a message in a thread": f"/{name}/-/story?node={quote(message)}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--burst", type=int, default=200)
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "labnote_index", "serve", str(args.db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base)
        kinds = pages(args.db)
        # Every table page the index lists (hidden tables aside), after the kinds above.
        with urllib.request.urlopen(f"{base}/{args.db.stem}.json", timeout=60) as response:
            listed = json.load(response)["tables"]
        for table in sorted(t["name"] for t in listed if not t["hidden"]):
            kinds.setdefault(f"table: {table}", f"/{args.db.stem}/{table}")
        times: dict[str, list[float]] = {label: [] for label in kinds}
        # The first request of each page, on a server that has answered none of
        # them: a table's facets are counted then, and kept (plugin/facets.py).
        first = {label: get(base + path)[1] for label, path in kinds.items()}
        # Round after round of every page kind, so that a machine slowing down
        # or speeding up during the run weighs on every kind alike.
        for _ in range(args.repeat):
            for label, path in kinds.items():
                times[label].append(get(base + path)[1])
        medians = {label: statistics.median(t) for label, t in times.items()}
        floor = medians["baseline: packets.json?_size=1&_nofacet=1"]
        print("| page | median s | × baseline | first request s |")
        print("| --- | ---: | ---: | ---: |")
        for label, median in medians.items():
            print(f"| {label} | {median:.3f} | {median / floor:.1f} | {first[label]:.3f} |")
        over = [label for label, median in medians.items() if median > TARGET * floor]
        print(
            f"\n{len(medians) - len(over)} of {len(medians)} pages within {TARGET:g}x "
            f"of the baseline" + (f"; not: {', '.join(over)}" if over else "")
        )
        mixed = [base + path for path in kinds.values()] * (args.burst // len(kinds) + 1)
        mixed = mixed[: args.burst]
        start = time.perf_counter()
        serial = [get(url)[0] for url in mixed]
        serial_s = time.perf_counter() - start
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.burst) as pool:
            burst = list(pool.map(lambda url: get(url)[0], mixed))
        burst_s = time.perf_counter() - start
        print(
            f"\n{len(mixed)} mixed requests: one after another {serial_s:.2f} s "
            f"({sum(s == 200 for s in serial)} answered 200); all at once {burst_s:.2f} s "
            f"({sum(s == 200 for s in burst)} answered 200)"
        )
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
