"""Mutation testing of the checks' SQL: each mutant is one small change of the
kind a real bug makes, and the tests must notice it (a failing test kills it).

Mutations, each applied alone to one check file under labnote_index/checks/:

- a comparison flipped: ``<`` / ``<=``, ``>`` / ``>=``, ``=`` / ``!=``
- NULL handling: ``IS NOT`` made ``!=``, ``IS`` made ``=``
- ``EXISTS`` / ``NOT EXISTS``, ``IN`` / ``NOT IN``
- one conjunct of a ``WHERE`` or ``ON`` dropped (made ``1``)
- one ``UNION ALL`` branch dropped
- a ``coalesce(a, b)`` made ``a``
- a whole number moved by one (a boundary)

A mutant is first put to the cases of the snapshot tests: every planted defect
(tests/test_checks.py) and every near miss (tests/test_near_misses.py) is built
once into an index, and a mutant whose query gives other rows than the
original's on any of them (record type and ID, file, field, message, line: what the
snapshots hold) is killed by those tests, without running them again. A mutant
that changes no case's rows, and every mutant of a transition check, runs the
tests that name its check (``-k CHECK``, over the check suites), and with
``--thorough`` a survivor runs the suites that hold every check (planted
defects, near misses, transitions) whole. What no
test kills is listed with its file, line and mutation; a mutant that cannot
change any answer is named with why in ``mutation/equivalent.txt`` (``file:line:column:
mutation  # why``) and not counted as a survivor.

    python mutation/sql_mutants.py [--check ID ...] [--jobs N] [--list] [--thorough]

The working tree's file is changed while its mutant runs and restored after
(also on Ctrl-C); run it on a clean checkout.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "labnote_index" / "checks"
EQUIVALENT = Path(__file__).resolve().parent / "equivalent.txt"
# The suites whose tests name the check they hold (run first, -k CHECK), and
# those that hold every check (run whole for a mutant the first leave alive).
WHOLE = ["tests/test_near_misses.py", "tests/test_checks.py", "tests/test_revisions.py"]
THOROUGH = False  # --thorough: a mutant the named tests leave alive runs WHOLE too
SUITES = [
    "tests/test_checks.py",
    "tests/test_near_misses.py",
    "tests/test_revisions.py",
    "tests/test_real_shapes.py",
    "tests/test_handoff.py",
    "tests/test_conformance.py",
    "tests/test_finding_identity.py",
    "tests/test_mislead.py",
    "tests/test_views.py",
]
STOP_WORDS = {
    "AND", "OR", "UNION", "ORDER", "GROUP", "HAVING", "LIMIT", "WINDOW", "SELECT", "FROM",
    "WHERE", "JOIN", "LEFT", "INNER", "CROSS", "ON", "THEN", "WHEN", "ELSE", "END", "WITH",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|<=|>=|!=|==|<>|\|\||'(?:[^']|'')*'|\S")


@dataclass(frozen=True)
class Mutant:
    """One mutation of one check file."""

    path: Path
    line: int
    column: int
    what: str
    text: str  # the file's whole text, mutated

    @property
    def check(self) -> str:
        return self.path.stem

    @property
    def name(self) -> str:
        where = f"{self.path.relative_to(ROOT).as_posix()}:{self.line}:{self.column}"
        return f"{where}:{self.what}"


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int
    depth: int  # parentheses open before it


def _tokens(sql: str) -> list[_Token]:
    """The SQL's tokens (comments left out), each with its parenthesis depth."""
    out, depth = [], 0
    body = re.sub(r"--[^\n]*", lambda m: " " * len(m.group()), sql)  # keep offsets
    for m in _WORD.finditer(body):
        text = m.group()
        if text == ")":
            depth -= 1
        out.append(_Token(text, m.start(), m.end(), depth))
        if text == "(":
            depth += 1
    return out


def _line(sql: str, offset: int) -> int:
    return sql.count("\n", 0, offset) + 1


def _replace(sql: str, start: int, end: int, new: str) -> str:
    return sql[:start] + new + sql[end:]


def _extent(tokens: list[_Token], first: int) -> int:
    """Where an expression that begins at token ``first`` ends (exclusive offset):
    at the next stop word of its depth, or where its depth closes."""
    depth = tokens[first].depth
    end = tokens[first].end
    for tok in tokens[first:]:
        if tok.depth < depth or (tok.depth == depth and tok.text == ")"):
            break
        if tok.depth == depth and tok.text.upper() in STOP_WORDS and tok is not tokens[first]:
            break
        if tok.depth == depth and tok.text == ",":
            break
        end = tok.end
    return end


FLIPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "=": "!=", "!=": "=", "<>": "="}


def mutants(path: Path) -> Iterator[Mutant]:
    """Every mutant of one check file, in file order."""
    sql = path.read_text(encoding="utf-8")
    tokens = _tokens(sql)
    words = [t.text.upper() for t in tokens]

    def make(start: int, end: int, new: str, what: str) -> Mutant:
        column = start - sql.rfind("\n", 0, start)
        return Mutant(path, _line(sql, start), column, what, _replace(sql, start, end, new))

    for i, tok in enumerate(tokens):
        word, nxt = words[i], words[i + 1] if i + 1 < len(words) else ""
        prev = words[i - 1] if i else ""
        if tok.text in FLIPS:
            yield make(tok.start, tok.end, FLIPS[tok.text], f"{tok.text} -> {FLIPS[tok.text]}")
        elif word == "IS" and nxt == "NOT":
            yield make(tok.start, tokens[i + 1].end, "!=", "IS NOT -> !=")
        elif word == "IS" and nxt != "NOT":
            yield make(tok.start, tok.end, "=", "IS -> =")
        elif word == "EXISTS" and prev == "NOT":
            yield make(tokens[i - 1].start, tok.end, "EXISTS", "NOT EXISTS -> EXISTS")
        elif word == "EXISTS":
            yield make(tok.start, tok.end, "NOT EXISTS", "EXISTS -> NOT EXISTS")
        elif word == "IN" and prev == "NOT":
            yield make(tokens[i - 1].start, tok.end, "IN", "NOT IN -> IN")
        elif word == "IN" and nxt == "(":
            yield make(tok.start, tok.end, "NOT IN", "IN -> NOT IN")
        elif word in ("AND", "WHERE", "ON") and i + 1 < len(tokens):
            end = _extent(tokens, i + 1)
            if end > tokens[i + 1].start:
                yield make(tokens[i + 1].start, end, "1", f"{word} conjunct dropped")
        elif word == "UNION" and nxt == "ALL":
            # The branch after it, to the next UNION of its depth or where it closes.
            depth, end = tok.depth, len(sql)
            for later in tokens[i + 2 :]:
                if later.depth < depth or (
                    later.depth == depth and later.text.upper() in ("UNION", "ORDER")
                ):
                    end = later.start
                    break
                if later.depth == depth and later.text == ")":
                    end = later.start
                    break
            yield make(tok.start, end, " ", "UNION ALL branch dropped")
        elif word == "COALESCE" and nxt == "(":
            first = i + 2
            end = _extent(tokens, first)
            close = next(
                (t for t in tokens[first:] if t.depth == tok.depth and t.text == ")"), None
            )
            if close is not None:
                inner = sql[tokens[first].start : end]
                yield make(tok.start, close.end, f"({inner})", "coalesce(a, b) -> a")
        elif tok.text.isdigit() and prev != "SELECT":  # EXISTS (SELECT 1 ...): any value
            yield make(tok.start, tok.end, str(int(tok.text) + 1), f"{tok.text} -> +1")


def all_mutants(checks: list[str] | None = None) -> list[Mutant]:
    files = sorted(CHECKS.glob("*.sql")) + sorted(CHECKS.glob("*/*.sql"))
    chosen = [f for f in files if checks is None or f.stem in checks]
    return [m for f in chosen for m in mutants(f)]


def equivalent() -> dict[str, str]:
    """The mutants named as equivalent, with why."""
    if not EQUIVALENT.is_file():
        return {}
    found = {}
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition("  # ")
            found[name.strip()] = why.strip()
    return found


def _pytest(tree: Path, *args: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args],
        cwd=tree, capture_output=True, text=True, env=env,
    )  # fmt: skip
    return done.returncode


class Cases:
    """The snapshot tests' cases, each built once into an index, and each check's
    original rows on them."""

    def __init__(self, work: Path) -> None:
        sys.path.insert(0, str(ROOT))
        from bench.generate import generate
        from tests.helpers import Repo
        from tests.test_checks import PLANTED
        from tests.test_near_misses import NEAR_MISSES

        template = work / "template"
        generate(template, packets=12)
        self.indexes: list[Path] = []
        changes = [plant for _, plant in PLANTED] + [change for _, _, change in NEAR_MISSES]
        for n, change in enumerate(changes):
            root = work / f"case-{n}"
            shutil.copytree(template, root, symlinks=True)
            repo = Repo(root, work / f"case-{n}.db")
            change(repo)
            repo.index().close()
            self.indexes.append(repo.db_path)
        self._original: dict[tuple[str, str], list[list[tuple]]] = {}

    def rows(self, sql: str, params: dict[str, str]) -> list[list[tuple]] | None:
        """Each case's rows of a query (None when it does not run: a syntax error
        is noticed by any test)."""
        import sqlite3

        found = []
        for index in self.indexes:
            conn = sqlite3.connect(index)
            conn.row_factory = sqlite3.Row
            try:
                picked = ("record_type", "record_id", "file", "field", "message", "line")
                answer = [
                    tuple(row[k] if k in row.keys() else None for k in picked)  # noqa: SIM118
                    for row in conn.execute(sql, params)
                ]
                found.append(sorted(answer, key=lambda t: [(v is None, str(v)) for v in t]))
            except sqlite3.Error:
                return None
            finally:
                conn.close()
        return found

    def changed(self, mutant: Mutant) -> bool:
        """Whether the mutant's query answers otherwise on any case, for any check
        its file is (the generic validation query is fourteen checks)."""
        from labnote_index.checks.catalogue import load_checks

        generic = mutant.path.parent.name == "generic"
        for check in load_checks():
            if (bool(check.params) != generic) or (not generic and check.id != mutant.check):
                continue
            params = dict(check.params)
            if check.id not in self._original:
                self._original[check.id] = self.rows(check.sql, params) or []
            mutated = self.rows(mutant.text, params)
            if mutated is None or mutated != self._original[check.id]:
                return True
        return False


def killed(mutant: Mutant, tree: Path) -> bool:
    """Whether the tests notice ``mutant``, run in a copy of the project ``tree``."""
    target = tree / mutant.path.relative_to(ROOT)
    original = target.read_text(encoding="utf-8")
    target.write_text(mutant.text, encoding="utf-8")
    try:
        suites = [s for s in SUITES if (tree / s).exists()]
        first = _pytest(tree, *suites, "-k", mutant.check)
        if first not in (0, 5):  # failed: killed (5: no test has its name)
            return True
        return THOROUGH and _pytest(tree, *WHOLE) != 0
    finally:
        target.write_text(original, encoding="utf-8")


def _copy() -> Path:
    """A copy of the project to mutate (the working tree is never changed)."""
    tree = Path(tempfile.mkdtemp(prefix="labnote-mutants-")) / "tree"
    ignore = shutil.ignore_patterns(".venv", ".git", "*.db", "__pycache__", "build", "bench/out")
    shutil.copytree(ROOT, tree, ignore=ignore, symlinks=True)
    return tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", nargs="+", help="only the mutants of these checks")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument(
        "--thorough", action="store_true", help="run the whole check suites for a survivor"
    )
    args = parser.parse_args()
    global THOROUGH
    THOROUGH = args.thorough
    found = all_mutants(args.check)
    if args.list:
        for m in found:
            print(m.name)
        return 0
    known = equivalent()
    cases_dir = Path(tempfile.mkdtemp(prefix="labnote-mutant-cases-"))
    print("building the snapshot tests' cases ...", flush=True)
    cases = Cases(cases_dir)
    on_cases = [m for m in found if m.path.parent in (CHECKS, CHECKS / "generic")]
    by_cases = {m.name for m in on_cases if m.name not in known and cases.changed(m)}
    print(f"{len(by_cases)} mutants killed by the snapshot tests' cases", flush=True)
    shutil.rmtree(cases_dir, ignore_errors=True)
    trees = [_copy() for _ in range(max(1, args.jobs))]
    free = list(trees)
    survivors: list[Mutant] = []

    def run(m: Mutant) -> tuple[Mutant, bool]:
        tree = free.pop()
        try:
            return m, killed(m, tree)
        finally:
            free.append(tree)

    try:
        to_run = [m for m in found if m.name not in known and m.name not in by_cases]
        with concurrent.futures.ThreadPoolExecutor(len(trees)) as pool:
            for n, (m, dead) in enumerate(pool.map(run, to_run), 1):
                print(f"[{n}/{len(to_run)}] {'killed  ' if dead else 'SURVIVED'} {m.name}",
                      flush=True)  # fmt: skip
                if not dead:
                    survivors.append(m)
    finally:
        for tree in trees:
            shutil.rmtree(tree.parent, ignore_errors=True)
    equivalents = [m for m in found if m.name in known]
    print(
        f"\n{len(found)} mutants: {len(found) - len(equivalents) - len(survivors)} killed, "
        f"{len(equivalents)} equivalent (mutation/equivalent.txt), {len(survivors)} survived"
    )
    for m in survivors:
        print(f"  survived: {m.name}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
