"""Benchmark labnote-index against the floor and a reference-style validator, in one run.

For each size it generates a repository (bench/generate.py), then runs each
step as its own process, measuring wall time and that process's peak RSS:

1. floor          walk registry/, read and JSON-parse every record, nothing else
2. reference      per-file JSON Schema validation, jsonschema.validate() on each file
   jsonschema     the same with one compiled validator per schema (a kinder baseline)
3. full           labnote-index check REPO (a full build, then the checks)
4. incremental    labnote-index build REPO after one record changed
5. checks         the check catalogue alone, on the built index (in-process timing)

    python bench/benchmark.py --packets 1000 10000 [--markdown BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCHEMAS = ROOT.parent / "shared" / "labnote" / "schemas"
sys.path.insert(0, str(ROOT))

from bench.generate import generate  # noqa: E402


@dataclass
class Measure:
    seconds: float
    peak_mb: float
    output: str


def run(args: list[str]) -> Measure:
    """Run a command to completion; its wall time and its own peak RSS."""
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    output = process.stdout.read().decode() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed with status {status}")
    return Measure(seconds, usage.ru_maxrss / 1024, output)  # ru_maxrss is in KiB on Linux


def warm(repo: Path) -> None:
    """Read every file of the repository once."""
    for top, _, files in os.walk(repo):
        for name in files:
            with open(os.path.join(top, name), "rb") as handle:
                while handle.read(1 << 20):
                    pass


def touch_one_record(repo: Path) -> Path:
    path = sorted((repo / "registry" / "packets").rglob("*.json"))[len(os.listdir(repo)) % 7]
    data = json.loads(path.read_text())
    data["notes"] = "edited for the incremental benchmark"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def bench(packets: int, work: Path) -> dict[str, Measure | int]:
    repo = work / f"repo-{packets}"
    records = generate(repo, packets)
    db = work / f"index-{packets}.db"
    py = sys.executable
    cli = [py, "-m", "labnote_index"]
    # Every step reads from a warm page cache, with nothing left to write back:
    # the generator's writes would otherwise slow whichever step comes first.
    os.sync()
    warm(repo)
    results: dict[str, Measure | int] = {"records": records}
    results["floor"] = run([py, str(HERE / "steps.py"), "floor", str(repo)])
    steps = [py, str(HERE / "steps.py")]
    results["jsonschema"] = run([*steps, "jsonschema", str(repo), str(SCHEMAS)])
    results["full"] = run([*cli, "check", str(repo), "--db", str(db), "--format", "json"])
    os.sync()  # the new index is on disk before the incremental build copies it
    findings = json.loads(results["full"].output)  # type: ignore[union-attr]
    if findings:
        raise SystemExit(f"the generated repository should be clean: {findings[:3]}")
    touch_one_record(repo)
    results["incremental"] = run([*cli, "build", str(repo), "--db", str(db)])
    results["checks"] = run([py, str(HERE / "steps.py"), "checks", str(db)])
    # Last: minutes of CPU on a shared machine slow whatever runs after them.
    results["reference"] = run([*steps, "jsonschema-per-file", str(repo), str(SCHEMAS)])
    return results


def report(all_results: dict[int, dict[str, Measure | int]]) -> str:
    lines = [
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}.",
        "",
        "| packets | records | step | wall s | peak RSS MB |",
        "| ---: | ---: | --- | ---: | ---: |",
    ]
    for packets, r in all_results.items():
        for step in ("floor", "reference", "jsonschema", "full", "incremental"):
            m = r[step]
            assert isinstance(m, Measure)
            lines.append(
                f"| {packets} | {r['records']} | {step} | {m.seconds:.2f} | {m.peak_mb:.0f} |"
            )
        checks = r["checks"]
        assert isinstance(checks, Measure)
        lines.append(
            f"| {packets} | {r['records']} | checks (catalogue only) | "
            f"{float(checks.output):.2f} | |"
        )
    lines += [
        "",
        "| packets | full / floor | reference / full | jsonschema / full | incremental / full |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for packets, r in all_results.items():
        m = {k: r[k] for k in ("floor", "reference", "jsonschema", "full", "incremental")}
        full = m["full"].seconds  # type: ignore[union-attr]
        lines.append(
            f"| {packets} | {full / m['floor'].seconds:.1f} | "  # type: ignore[union-attr]
            f"{m['reference'].seconds / full:.1f} | "  # type: ignore[union-attr]
            f"{m['jsonschema'].seconds / full:.1f} | "  # type: ignore[union-attr]
            f"{m['incremental'].seconds / full:.2f} |"  # type: ignore[union-attr]
        )
    sizes = list(all_results)
    if len(sizes) > 1:
        small, big = all_results[sizes[0]], all_results[sizes[-1]]
        growth = big["full"].peak_mb / small["full"].peak_mb  # type: ignore[union-attr]
        scale = big["records"] / small["records"]  # type: ignore[operator]
        lines += [
            "",
            f"Peak RSS of the full build grew {growth:.2f}x for {scale:.1f}x the records.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, nargs="+", default=[1000])
    parser.add_argument("--keep", type=Path, help="keep repositories and indexes here")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="labnote-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = {n: bench(n, work) for n in args.packets}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(report(results))


if __name__ == "__main__":
    main()
