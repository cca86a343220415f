"""Benchmark labnote-index against its floors and a reference-style validator, in one run.

For each size it generates a repository (bench/generate.py), then runs each
step as its own process, measuring wall time and peak memory:

1. floors         records read and parsed; the same and every artifact they name
                  read (what any full build must do); every file stat'ed (what
                  any incremental build must do)
2. reference      per-file JSON Schema validation, jsonschema.validate() on each file
   jsonschema     the same with one compiled validator per schema (a kinder baseline)
3. full           labnote-index check REPO --full (a full build, then the checks),
                  with the default processes and with --jobs 1
4. incremental    labnote-index build REPO after one record changed; no-op: again
                  with nothing changed; hook: check REPO --cache FILE (the
                  pre-commit hook) after FILE changed, its cache primed
5. checks         the check catalogue alone, on the built index (in-process timing)

Then the targets, as ratios within this run, each met or not, and the
hostile shapes of bench/scaling.py at two sizes ten times apart.

Every step but the minutes-long reference runs --repeat times; the median is
reported (this machine's timings drift between runs). One more run of each
samples the memory all of the step's processes hold together (the sampling
itself takes CPU, so that run is not timed). Sizes over 20,000 packets skip
the validators (an hour) and run each step once.

    python bench/benchmark.py --packets 1000 10000 [--large] [--repeat 3]

--large adds 100,000 packets (about 435,000 records; minutes).
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
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCHEMAS = ROOT / "labnote_index" / "format" / "schemas"  # the v1 schemas, packaged
sys.path.insert(0, str(ROOT))

from bench.generate import generate  # noqa: E402


def default_jobs() -> int:
    """The processes labnote-index uses here, asked of it in a process of its own:
    importing it here would grow this process, and so the peak RSS that every
    child started from it reports."""
    code = "from labnote_index.index.parallel import default_jobs; print(default_jobs())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True).stdout)


@dataclass
class Measure:
    seconds: float
    peak_mb: float
    output: str
    total_mb: float = 0.0  # the most the process and its workers held at once (PSS), sampled
    spread: tuple[float, float] | None = None  # fastest and slowest of repeated runs

    def wall(self) -> str:
        if self.spread is None or self.spread[0] == self.spread[1]:
            return f"{self.seconds:.2f}"
        return f"{self.seconds:.2f} ({self.spread[0]:.2f}-{self.spread[1]:.2f})"


def _process_tree(root: int) -> list[int]:
    """root and its descendants, from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            parents.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += parents.get(pid, [])
    return tree


def _pss_mb(pid: int) -> float:
    """Proportional set size: shared pages split among the processes sharing them,
    so that the sum over processes is the memory they hold together."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run(args: list[str], sample: bool = False, env: dict[str, str] | None = None) -> Measure:
    """Run a command to completion: its wall time, the peak RSS of the largest of its
    processes (wait4 reports the most of the process and its children), and, with
    ``sample``, the most memory all its processes held at once (sampled every 20 ms;
    the sampling costs CPU, so a sampled run's time is not one to report); ``env``,
    the environment it runs in (default, this one)."""
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    total = [0.0]
    finished = threading.Event()

    def sampler() -> None:
        while not finished.wait(0.02):
            held = sum(_pss_mb(pid) for pid in _process_tree(process.pid))
            total[0] = max(total[0], held)

    thread = threading.Thread(target=sampler, daemon=True)
    if sample:
        thread.start()
    output = process.stdout.read().decode() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    finished.set()
    if sample:
        thread.join()
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed with status {status}")
    # ru_maxrss is in KiB on Linux
    return Measure(seconds, usage.ru_maxrss / 1024, output, total[0])


def warm(repo: Path) -> None:
    """Read every file of the repository once."""
    for top, _, files in os.walk(repo):
        for name in files:
            with open(os.path.join(top, name), "rb") as handle:
                while handle.read(1 << 20):
                    pass


def phases(build: list[str], repo: Path, work: Path) -> dict[str, float]:
    """Where an incremental build's time goes (one more run, after one edit): the
    seconds of each phase the build reports (LABNOTE_INDEX_PHASES), and the
    rest of the wall time, which is the interpreter starting and importing."""
    out = work / "phases.json"
    warm(repo)
    touch_one_record(repo, 9)
    start = time.perf_counter()
    env = {**os.environ, "LABNOTE_INDEX_PHASES": str(out)}
    subprocess.run(build, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    seen = json.loads(out.read_text())
    return {"start-up and imports": wall - sum(seen.values()), **seen, "wall": wall}


def touch_one_record(repo: Path, n: int, edit: int | None = None) -> Path:
    """Edit the n-th record of a few (its notes say which ``edit`` this is)."""
    path = sorted((repo / "registry" / "packets").rglob("*.json"))[n * 7]
    data = json.loads(path.read_text())
    data["notes"] = f"edited for the incremental benchmark ({n}, {edit})"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def median(measures: list[Measure]) -> Measure:
    """The median wall time; the largest peak RSS seen."""
    ordered = sorted(measures, key=lambda m: m.seconds)
    middle = ordered[len(ordered) // 2]
    spread = (ordered[0].seconds, ordered[-1].seconds)
    return Measure(middle.seconds, max(m.peak_mb for m in measures), middle.output, spread=spread)


STEPS = [
    "floor",
    "floor_artifacts",
    "stat_walk",
    "reference",
    "jsonschema",
    "full",
    "full_1",
    "incremental",
    "hook",
    "noop",
]
LABELS = {
    "floor": "floor: records read and parsed",
    "floor_artifacts": "floor: records and their artifacts read",
    "stat_walk": "floor: every file stat'ed",
    "reference": "reference (per-file `jsonschema.validate()`)",
    "jsonschema": "jsonschema (compiled once)",
    "full": "full build + check, {jobs} processes",
    "full_1": "full build + check, 1 process",
    "incremental": "incremental build after one edit",
    "hook": "hook after one edit (check --cache FILE)",
    "noop": "build with nothing changed",
}
# Above this many packets the validators (minutes at 10,000) are not run.
VALIDATED_UP_TO = 20_000
# Targets: (name, step, floor step, most times the floor).
TARGETS = [
    ("full build, default processes", "full", "floor_artifacts", 3.0),
    ("full build, one process", "full_1", "floor_artifacts", 4.5),
    ("incremental build after one edit", "incremental", "stat_walk", 2.0),
    ("hook after one edit", "hook", "stat_walk", 2.0),
    ("build with nothing changed", "noop", "stat_walk", 2.0),
]
MEMORY_TARGET_MB = 250


def bench(packets: int, work: Path, repeat: int, work_tree: bool = True) -> dict[str, Any]:
    repo = work / f"repo-{packets}"
    records = generate(repo, packets, work_tree=work_tree)
    db = work / f"index-{packets}.db"
    py = sys.executable
    cli = [py, "-m", "labnote_index"]
    steps = [py, str(HERE / "steps.py")]
    validated = packets <= VALIDATED_UP_TO
    repeat = repeat if validated else 1
    # Every step reads from a warm page cache, with nothing left to write back:
    # the generator's writes would otherwise slow whichever step comes first.
    os.sync()
    warm(repo)
    results: dict[str, Any] = {"records": records}

    def runs(args: list[str], before: Any = None) -> Measure:
        measures = []
        for n in range(repeat + 1):
            warm(repo)  # this machine reclaims page cache: read everything again
            if before:
                before(n)
            measures.append(run(args, sample=n == repeat))  # memory from one more run
            os.sync()  # what one run wrote is on disk before the next starts
        timed = median(measures[:-1])
        timed.total_mb = measures[-1].total_mb
        return timed

    full = [*cli, "check", str(repo), "--db", str(db), "--full", "--format", "json"]
    results["floor"] = runs([*steps, "floor", str(repo)])
    results["floor_artifacts"] = runs([*steps, "floor-artifacts", str(repo)])
    results["stat_walk"] = runs([*steps, "stat-walk", str(repo)])
    if validated:
        results["jsonschema"] = runs([*steps, "jsonschema", str(repo), str(SCHEMAS)])
    results["full_1"] = runs([*full, "--jobs", "1"])
    results["full"] = runs(full)
    findings = json.loads(results["full"].output)
    if findings:
        raise SystemExit(f"the generated repository should be clean: {findings[:3]}")
    build = [*cli, "build", str(repo), "--db", str(db)]
    results["incremental"] = runs(build, before=lambda n: touch_one_record(repo, n))
    results["phases"] = phases(build, repo, work)
    # The pre-commit hook: its cache primed by a first run, then one record
    # edited and staged before each run (the same record, a new edit each time).
    edited = touch_one_record(repo, 0)
    hook = [*cli, "check", str(repo), "--cache", str(edited.relative_to(repo))]
    run(hook)
    results["hook"] = runs(hook, before=lambda n: touch_one_record(repo, 0, n))
    shutil.rmtree(repo / ".labnote-index-cache")
    results["noop"] = runs(build)
    catalogue = sorted(float(run([*steps, "checks", str(db)]).output) for _ in range(repeat))
    results["checks"] = catalogue[repeat // 2]
    # Last: minutes of CPU on a shared machine slow whatever runs after them.
    if validated:
        results["reference"] = run([*steps, "jsonschema-per-file", str(repo), str(SCHEMAS)])
    return results


def report(all_results: dict[int, dict[str, Any]], repeat: int) -> str:
    jobs = default_jobs()
    lines = [
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}; labnote-index uses {jobs} processes "
        f"by default here. Median of {repeat} runs (the reference and sizes over "
        f"{VALIDATED_UP_TO} packets: one run).",
        "",
        "| packets | records | step | wall s, median (fastest-slowest) "
        "| peak RSS MB, largest process | peak PSS MB, all processes |",
        "| ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for packets, r in all_results.items():
        for step in STEPS:
            if step not in r:
                continue
            m = r[step]
            label = LABELS[step].format(jobs=jobs)
            lines.append(
                f"| {packets} | {r['records']} | {label} | {m.wall()} | {m.peak_mb:.0f} "
                f"| {f'{m.total_mb:.0f}' if m.total_mb else 'not sampled'} |"
            )
        lines.append(
            f"| {packets} | {r['records']} | check catalogue alone | {r['checks']:.2f} | | |"
        )
    lines += ["", "| packets | target | ratio | most | met |", "| ---: | --- | ---: | ---: | --- |"]
    for packets, r in all_results.items():
        for name, step, floor, most in TARGETS:
            ratio = r[step].seconds / r[floor].seconds
            lines.append(
                f"| {packets} | {name} / {LABELS[floor]} | {ratio:.1f} | {most} "
                f"| {'met' if ratio <= most else 'not met'} |"
            )
        peak = max(r[step].total_mb for step in ("full", "full_1"))
        lines.append(
            f"| {packets} | peak memory of a full build, all processes (MB) | {peak:.0f} "
            f"| {MEMORY_TARGET_MB} | {'met' if peak < MEMORY_TARGET_MB else 'not met'} |"
        )
        if "reference" in r:
            lines.append(
                f"| {packets} | reference / full build (how much faster) "
                f"| {r['reference'].seconds / r['full'].seconds:.1f} | | |"
            )
    lines += [
        "",
        "Where an incremental build after one edit spends its time (one run, seconds):",
        "",
    ]
    names = list(next(iter(all_results.values()))["phases"])
    lines += ["| packets | " + " | ".join(names) + " |", "| ---: |" + " ---: |" * len(names)]
    for packets, r in all_results.items():
        cells = " | ".join(f"{r['phases'].get(n, 0):.2f}" for n in names)
        lines.append(f"| {packets} | {cells} |")
    sizes = list(all_results)
    if len(sizes) > 1:
        first, last = all_results[sizes[0]], all_results[sizes[-1]]
        for step in ("full", "full_1"):
            before = first[step].seconds / first["floor_artifacts"].seconds
            after = last[step].seconds / last["floor_artifacts"].seconds
            lines.append(
                f"\n{LABELS[step].format(jobs=jobs)} / floor: {before:.1f} at {sizes[0]} packets, "
                f"{after:.1f} at {sizes[-1]} ({'no worse' if after <= before * 1.1 else 'worse'})."
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--large", action="store_true", help="also 100,000 packets")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each quick step")
    parser.add_argument("--keep", type=Path, help="keep repositories and indexes here")
    parser.add_argument(
        "--no-scaling", action="store_true", help="leave out bench/scaling.py's shapes"
    )
    parser.add_argument(
        "--work-tree",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the repository is a git work tree, all committed, as real ones are (default)",
    )
    args = parser.parse_args()
    sizes = [*args.packets, *([100_000] if args.large else [])]
    work = args.keep or Path(tempfile.mkdtemp(prefix="labnote-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = {}
        for n in sizes:
            results[n] = bench(n, work, args.repeat, args.work_tree)
            if args.keep:  # a large size is minutes of work: keep each as it comes
                (work / "results.md").write_text(report(results, args.repeat))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(report(results, args.repeat))
    if not args.no_scaling:
        from bench.scaling import table

        print("\nHostile shapes (bench/scaling.py), build + check at two sizes:\n")
        print(table(1000, 10000))


if __name__ == "__main__":
    main()
