"""The package's layout: its folders follow the data, and none imports a later one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "labnote_index"
README = PACKAGE.parent / "README.md"

# The pipeline, first to last. A module may import modules of its own step or of
# the steps before it, never one after it. A folder is a step; the few modules at
# the top of the package are named here.
STEPS: list[tuple[str, set[str]]] = [
    ("utilities", {"errors", "text", "progress", "interrupts", "lazy", "choices"}),
    ("format", set()),
    ("read", set()),
    ("index", set()),
    ("checks", set()),
    ("queries", set()),
    ("output", set()),
    ("compare", set()),
    ("repair", set()),
    ("web", set()),
    ("façade", {"api", "configuration", "results", "watch"}),
    ("command line", {"cli", "cli_sites", "command", "__main__", "__init__"}),
]
FOLDERS = [name for name, modules in STEPS if not modules]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = rel.parts[:-1] if rel.parts[-1] == "__init__" and len(rel.parts) > 1 else rel.parts
    return ".".join(parts)


def step_of(module: str) -> int:
    top = module.split(".")[0]
    for n, (name, modules) in enumerate(STEPS):
        if top in modules or (not modules and top == name):
            return n
    raise AssertionError(f"{module} belongs to no step of STEPS")


def imported(path: Path, source: str | None = None) -> set[str]:
    """The package modules a file imports (at the top or inside a function)."""
    # The package the file is in, for relative imports.
    here = list(path.parent.relative_to(PACKAGE).parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
            if target:
                found.add(".".join(target))
            else:  # from . import a, b (at the top of the package)
                found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labnote_index."):
            found.add(node.module.removeprefix("labnote_index."))
        elif isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("labnote_index.")
                for a in node.names
                if a.name.startswith("labnote_index.")
            }
        elif (  # lazy.module("labnote_index.x"): an import all the same, made later
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "module"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "lazy"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("labnote_index.")
        ):
            found.add(str(node.args[0].value).removeprefix("labnote_index."))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_folders_are_the_pipeline_steps():
    """`ls labnote_index` shows the steps: every folder of Python is one, and
    every step is a folder; nothing else sits at the top but the named modules."""
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(FOLDERS)
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == {m for _, modules in STEPS for m in modules}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_imports_a_later_step(path: Path):
    mine = step_of(module_name(path))
    for target in imported(path):
        assert step_of(target) <= mine, f"{module_name(path)} imports {target}, a later step"


def test_the_readme_lists_the_folders_in_order():
    """The README's Development section names the folders in the pipeline's order."""
    section = README.read_text().split("## Development", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)/` \|", section, flags=re.M)
    assert listed == FOLDERS


def test_a_later_import_is_caught():
    """The import reader sees relative and absolute imports of later steps."""
    place = PACKAGE / "read" / "example.py"  # never written: only its place is used
    source = (
        "from ..web import serve\nimport labnote_index.repair.repairs\nfrom . import paths\n"
        "pages = lazy.module('labnote_index.web.pages')\n"
    )
    found = imported(place, source)
    assert found == {"web", "repair.repairs", "read", "web.pages"}
    assert max(step_of(t) for t in found) > step_of("read")


def test_no_folder_hides_a_function_of_the_facade():
    """Importing a sub-package sets it on the package: a folder named like a
    function of the façade (``fix``) would replace ``labnote_index.fix``."""
    import importlib

    import labnote_index

    for path in MODULES:
        name = module_name(path)
        if name not in ("__init__", "__main__"):
            importlib.import_module(f"labnote_index.{name}")
    for name in labnote_index.__all__:
        value = getattr(labnote_index, name)
        assert not isinstance(value, type(labnote_index)), f"labnote_index.{name} is a module"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_every_public_definition_says_what_it_is(path: Path):
    """A docstring on every public function, class and method."""
    tree = ast.parse(path.read_text())
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    missing = []
    for node in tree.body:
        if isinstance(node, kinds) and not node.name.startswith("_"):
            inner = (
                [m for m in node.body if isinstance(m, kinds)]
                if isinstance(node, ast.ClassDef)
                else []
            )
            for item in [node, *inner]:
                if not item.name.startswith("_") and ast.get_docstring(item) is None:
                    missing.append(item.name)
    assert missing == []


# Each piece of knowledge has one home; these scans catch a second one appearing.
def _calls(path: Path, dotted: str) -> bool:
    module, _, name = dotted.rpartition(".")
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            value = node.func.value
            if node.func.attr == name and isinstance(value, ast.Name) and value.id == module:
                return True
    return False


def test_files_are_renamed_into_place_in_the_three_places_that_own_it():
    """The index (writing: atomic_database), files and directories written whole
    (tempfiles: replace_file, new_tree) and fix's repairs through directory
    descriptors: nowhere else."""
    homes = {"index/writing.py", "index/tempfiles.py", "repair/repairs.py"}
    found = {
        path.relative_to(PACKAGE).as_posix()
        for path in MODULES
        if _calls(path, "os.replace") or _calls(path, "os.rename")
    }
    assert found == homes


def test_an_index_is_opened_in_one_place():
    """index_file.as_database opens every index (no sqlite-utils plugin run on it,
    a read-only URI that survives a '?' in a directory's name): no other module
    makes a sqlite_utils.Database or spells a SQLite URI of its own."""
    found = {
        path.relative_to(PACKAGE).as_posix()
        for path in MODULES
        if _calls(path, "sqlite_utils.Database") or "mode=ro" in path.read_text()
    }
    assert found == {"index/index_file.py"}


def test_containment_is_decided_in_one_place():
    """Whether a real path is inside the repository: paths.real_place only (and
    path_inside over it). Each spelling of a containment test of its own: a
    prefix test on a real root, commonpath, a relative path's leading "..",
    is_relative_to."""
    spellings = ("+ os.sep)", "os.path.commonpath", 'startswith("..")', "is_relative_to(")
    found = {
        path.relative_to(PACKAGE).as_posix()
        for path in MODULES
        if any(spelling in path.read_text() for spelling in spellings)
    }
    # publish.py reads an installed wheel's file list ("../../bin/..." are scripts), no repository.
    assert found == {"read/paths.py", "web/publish.py"}


def test_every_error_class_is_in_errors_and_exported():
    import labnote_index
    from labnote_index import errors

    classes = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.LabnoteError)
    }
    assert classes <= set(labnote_index.__all__)
    for path in MODULES:
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                assert not bases & classes, f"{path.name}: {node.name} belongs in errors.py"


def test_the_severity_vocabulary_is_spelled_once():
    """error, warning (and off) are format.rules' words; every other layer reads them."""
    import typing

    from labnote_index import api
    from labnote_index.format.rules import LEVELS, SEVERITIES

    assert typing.get_args(api.Severity) == SEVERITIES and (*SEVERITIES, "off") == LEVELS
    spelled = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if '("error", "warning"' in text and path.name != "rules.py":
            spelled.append(path.relative_to(PACKAGE).as_posix())
    assert spelled == []


def test_path_inside_names_what_the_walk_would_read(tmp_path: Path):
    from labnote_index.read.paths import path_inside

    root = tmp_path / "repo"
    (root / "registry").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "registry" / "a.json").write_text("{}")
    (root / "via-link").symlink_to(root / "registry")
    (root / "to-git").symlink_to(root / ".git")
    assert path_inside(root / "registry" / "a.json", root) == "registry/a.json"
    assert path_inside(root / "via-link" / "a.json", root) == "registry/a.json"
    assert path_inside(root, root) == ""
    assert path_inside(root / "to-git", root) is None  # a dot-directory is not inside
    assert path_inside(tmp_path, root) is None
    assert path_inside(tmp_path / "repo2", root) is None  # a shared prefix is not inside


def test_git_is_started_in_its_own_modules():
    """read/git.py runs git for the work tree; compare/git.py reads revisions (its
    cat-file batch); nothing else starts git (paths.py held the runner before)."""
    found = {
        path.relative_to(PACKAGE).as_posix()
        for path in MODULES
        if '["git"' in path.read_text() or "run_git(" in path.read_text()
    }
    assert found == {"read/git.py", "compare/git.py"}


def test_every_check_documents_itself_whole():
    """Every check, of an index and of two revisions, says what it protects, how
    to repair it, one case it reports and one legal look-alike it passes; and
    ``checks NAME`` prints all of it (the check's documentation is its header)."""
    from labnote_index.checks.catalogue import catalogue
    from labnote_index.output.report import check_text

    lacking = [
        f"{c.id}: {key}"
        for c in catalogue()
        for key in ("protects", "repair", "reported", "passes")
        if not getattr(c, key).strip()
    ]
    assert lacking == []
    for c in catalogue():
        text = check_text(c)
        assert f"reported: {c.reported}" in text and f"passes: {c.passes}" in text
        assert c.reported != c.passes


def test_the_comparison_owns_its_tables():
    """What check --base writes into the head index (changes, absent_findings, the
    findings' baseline, build_info's base) is made and cleared by compare/; the
    build forgets it through the hook the façade hands it (index.build.Derived)."""
    spellings = ("absent_findings", '"changes"', "baseline", "key = 'base'")
    found = {
        f"{path.relative_to(PACKAGE).as_posix()}: {spelling}"
        for path in MODULES
        if path.parent.name in ("index", "read", "format")
        for spelling in spellings
        if spelling in path.read_text()
    }
    assert found == set()


def test_the_web_layer_uses_datasettes_public_api():
    """No private Datasette attribute is touched and no state is hung on its
    object: databases come and go through add_database and remove_database, the
    plugin's state lives in web/state.py (a weak map beside each instance)."""
    private = re.compile(r"\b(?:datasette|ds|db|database|old|fresh)\._[a-z]\w*")
    found = []
    for path in sorted((PACKAGE / "web").glob("*.py")):
        text = path.read_text()
        for spelling in ("__dict__", ".databases =", "databases[", "setattr(datasette"):
            if spelling in text:
                found.append(f"{path.name}: {spelling}")
        found += [f"{path.name}: {m.group()}" for m in private.finditer(text)]
    assert found == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_is_over_600_lines(path: Path):
    """One job a module: past 600 lines a module holds two (split it by job)."""
    lines = len(path.read_text().splitlines())
    assert lines <= 600, f"{module_name(path)} has {lines} lines"


def _mirrored(path: Path, tests: dict[str, str]) -> bool:
    """Whether a module's tests can be found from its name: tests/test_<name>.py
    (a package's __init__: its folder's name), or a test file whose docstring
    names the module's path ("Tests of: ``read/git.py``")."""
    rel = path.relative_to(PACKAGE)
    stem = rel.parent.name if rel.name == "__init__.py" else rel.stem
    return f"test_{stem}.py" in tests or any(f"``{rel.as_posix()}``" in d for d in tests.values())


def test_every_module_has_tests_named_after_it():
    """A newcomer finds a module's tests from its name (#36): a test file named
    after it, or one that says it tests it (the concern files stay)."""
    import ast

    tests = {
        p.name: ast.get_docstring(ast.parse(p.read_text())) or ""
        for p in (PACKAGE.parent / "tests").glob("test_*.py")
    }
    # The package's own __init__ and __main__ are the façade's and the command
    # line's (test_api, test_cli); an empty file (a folder's __init__) holds nothing.
    modules = [
        p
        for p in MODULES
        if p.relative_to(PACKAGE).as_posix() not in ("__init__.py", "__main__.py")
        and p.read_text().strip()
    ]
    lacking = {p.relative_to(PACKAGE).as_posix() for p in modules if not _mirrored(p, tests)}
    assert lacking == set()
