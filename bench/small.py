"""A LabNote-sized repository: labnote-index beside a plain script doing the
upstream work, and where labnote-index's time goes.

The plain script (``plain``, below, run as a script of its own) does what the
upstream CI does on a small repository: a JSON Schema validation of every
registry record against the contract's schemas (Python's jsonschema, as the
upstream validator), and a regeneration of the CSV views (every record's
fields, a CSV for each record type). Both sides run as fresh processes, as a
CI step or a hook runs them, interleaved, each timed several times in one run.

    python bench/small.py [REPO] [--repeat 7] [--base DIR]      (REPO: sample_repo)

Python writes its bytecode caches as a user's machine does (a
PYTHONDONTWRITEBYTECODE in the environment is dropped: without the caches
every import compiles its source again, which the installed jsonschema of the
plain script never does), and every command runs once before timing starts.
``--base DIR`` (a checkout of another revision, e.g. a ``git worktree``) times
its labnote-index commands beside this one's, interleaved: an A/B in one run.
Each command runs next to its base's, the two swapped every round (run after
the other, one side was 6-9% slower in an A/A run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Both plain scripts end by writing a CSV of each record type, sorted by ID.
_WRITE_CSV = """
for record_type, records in rows.items():
    records.sort(key=lambda r: str(r.get(f"{record_type}_id")))
    fields = sorted({k for r in records for k in r})
    with open(out / f"{record_type}s.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        for r in records:
            cells = {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in r.items()}
            writer.writerow(cells)
"""

# The plain script: read every record, validate it, write the CSV views.
PLAIN = (
    """
import csv, json, sys
from pathlib import Path
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
repo, out, schemas = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
resources = [
    (p.name, Resource.from_contents(json.loads(p.read_text()))) for p in schemas.glob("*.json")
]
registry = Registry().with_resources(resources)
validators = {
    name[: -len(".schema.json")]: Draft202012Validator(resource.contents, registry=registry)
    for name, resource in resources
}
rows, problems = {}, 0
for path in sorted((repo / "registry").rglob("*.json")):
    if "schemas" in path.parts:
        continue
    record = json.loads(path.read_bytes())
    validator = validators.get(record.get("record_type"))
    if validator is None:
        problems += 1
        continue
    problems += sum(1 for _ in validator.iter_errors(record))
    rows.setdefault(record["record_type"], []).append(record)
"""
    + _WRITE_CSV
    + 'print(problems, "problems")\n'
)

# The plain view generator alone (the upstream generator's work, no validation).
PLAIN_VIEWS = (
    """
import csv, json, sys
from pathlib import Path
repo, out = Path(sys.argv[1]), Path(sys.argv[2])
rows = {}
for path in sorted((repo / "registry").rglob("*.json")):
    if "schemas" in path.parts:
        continue
    record = json.loads(path.read_bytes())
    rows.setdefault(record.get("record_type"), []).append(record)
"""
    + _WRITE_CSV
)


def timed(command: list[str], env: dict[str, str]) -> float:
    # Run from / : "python -m" puts the working directory first on sys.path, where a
    # checkout's package would shadow the one PYTHONPATH names.
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


# The imports worth naming (cumulative: each includes what it imports).
NAMED_IMPORTS = {
    "labnote_index.cli",
    "labnote_index.index.rows",
    "labnote_index.format.models",
    "labnote_index.format.handoff",
    "labnote_index.checks.catalogue",
    "sqlite_utils",
    "pydantic",
    "click",
    "jsonschema_rs",
}


def import_costs(repo: Path, env: dict[str, str]) -> list[tuple[str, float]]:
    """The named imports of one ``check --no-db`` (python -X importtime), seconds."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "labnote_index", "check", str(repo), "--no-db"],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
    )
    costs = {}
    for line in run.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[1].isdigit() and parts[2] in NAMED_IMPORTS:
            costs[parts[2]] = int(parts[1]) / 1e6
    return sorted(costs.items(), key=lambda kv: -kv[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", type=Path, default=ROOT / "sample_repo")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--base", type=Path, help="another checkout to time beside this one")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    work = Path(tempfile.mkdtemp(prefix="labnote-small-"))
    try:
        repo = work / "repo"
        shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".labnote-index-cache"))
        # The same files in a git work tree, as a user's repository is: a check
        # asks git what changed.
        work_tree = work / "work-tree"
        shutil.copytree(repo, work_tree)
        for git_args in (
            ["init", "-q"],
            ["add", "-A"],
            ["-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "0"],
        ):
            subprocess.run(["git", "-C", str(work_tree), *git_args], check=True)
        (work / "out").mkdir()
        plain = work / "plain.py"
        plain.write_text(PLAIN)
        plain_views = work / "plain_views.py"
        plain_views.write_text(PLAIN_VIEWS)
        schemas = ROOT / "labnote_index" / "format" / "schemas"
        me = [sys.executable, "-m", "labnote_index"]
        commands = {
            "plain script: validate every record, write the CSV views": [
                sys.executable,
                str(plain),
                str(repo),
                str(work / "out"),
                str(schemas),
            ],
            "plain view generator: write the CSV views (no validation)": [
                sys.executable,
                str(plain_views),
                str(repo),
                str(work / "out"),
            ],
            "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
            "labnote-index check --no-db": [*me, "check", str(repo), "--no-db"],
            "labnote-index check --cache, warm": [*me, "check", str(repo), "--cache"],
            "labnote-index check --cache, warm, in a git work tree": [
                *me,
                "check",
                str(work_tree),
                "--cache",
            ],
            "labnote-index views --check": [*me, "views", str(repo), "--check"],
            "labnote-index check --help (imports only)": [*me, "check", "--help"],
        }
        runs = {name: (command, env) for name, command in commands.items()}
        # Each command beside its base's, their order swapped every round: one
        # always run after the other paid for its place (6-9% in an A/A run,
        # a revision timed against a checkout of itself).
        groups = [[name] for name in commands]
        if args.base is not None:
            # A copy of its own: the two would otherwise rebuild each other's cache.
            base_repo, base_work_tree = work / "repo-base", work / "work-tree-base"
            shutil.copytree(repo, base_repo)
            shutil.copytree(work_tree, base_work_tree)
            own = {str(repo): str(base_repo), str(work_tree): str(base_work_tree)}
            base_env = {**env, "PYTHONPATH": str(args.base.resolve())}
            for group, (name, command) in zip(groups, commands.items(), strict=True):
                if name.startswith("labnote-index"):
                    on_base = [own.get(part, part) for part in command]
                    group.append(f"{name} (base: {args.base.name})")
                    runs[group[-1]] = (on_base, base_env)
        # A file changed within two seconds of a build is compared by content by
        # every later one (read/paths.RACY_NS): the copies are left to age first,
        # as a user's files have, so that the cache is made of settled files.
        time.sleep(2.5)
        for command, run_env in runs.values():  # bytecode caches written, the cache made
            timed(command, run_env)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for round_ in range(args.repeat):
            for group in groups:
                for name in group if round_ % 2 == 0 else group[::-1]:
                    command, run_env = runs[name]
                    times[name].append(timed(command, run_env))
        plain_median, views_median = (statistics.median(times[n]) for n in list(commands)[:2])
        order = ", each beside its base, the two swapped every round" if args.base else ""
        print(f"{args.repo.name}: medians of {args.repeat} runs, interleaved{order}\n")
        print("| command | median s | x the plain script | x the plain view generator |")
        print("| --- | ---: | ---: | ---: |")
        for name in (name for group in groups for name in group):  # each beside its base
            median = statistics.median(times[name])
            ratios = f"{median / plain_median:.2f} | {median / views_median:.2f}"
            print(f"| {name} | {median:.3f} | {ratios} |")
        print("\nThe largest imports (python -X importtime, cumulative):\n")
        for name, seconds in import_costs(repo, env):
            print(f"- {name}: {seconds:.3f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
