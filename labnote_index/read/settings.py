"""The configuration a repository gives labnote-index, as linters take theirs.

Read from ``labnote-index.toml`` at the repository root or, failing that, from
``[tool.labnote-index]`` in its ``pyproject.toml`` (ruff's order): which paths to
leave out of the index, which checks to ignore for which files, each check's
severity, what fails a check run, and whether the layout rules apply outside
``registry/``. Command-line options win over the file; ``isolated`` ignores it.

A configuration file is part of the repository it governs, written by the same
hands as the records: with ``check --base`` the base revision's configuration
governs both sides, so that a change cannot switch off the checks that judge it
(the change itself is reported by the ``config_changed`` transition check).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..format.rules import LEVELS, SEVERITIES

OWN_FILE = "labnote-index.toml"
PYPROJECT = "pyproject.toml"
CONFIG_FILES = (OWN_FILE, PYPROJECT)  # looked for in this order: the first that says wins
FAIL_ON = SEVERITIES
KEYS = ("exclude", "extend-exclude", "per-file-ignores", "severity", "fail-on", "enforce-layout")
DEFAULT = "default"
COMMAND_LINE = "command line"
WORKING_TREE = "working tree"


@dataclass(frozen=True)
class Settings:
    """The effective settings, each with where it came from (``sources``)."""

    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    severity: Mapping[str, str] = field(default_factory=dict)
    fail_on: str = "error"
    enforce_layout: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)
    # The repository's configuration as written (key -> value), for comparisons.
    declared: Mapping[str, Any] = field(default_factory=dict)
    declared_in: str | None = None
    # Where the file was read: the working tree, a git revision, or none (isolated).
    origin: str = WORKING_TREE

    def excluded(self) -> Callable[[str], bool] | None:
        """A test of a repository-relative path (file or directory) against
        exclude and extend-exclude, or None when nothing is excluded."""
        patterns = self.exclude + self.extend_exclude
        if not patterns:
            return None
        return lambda path: any(fnmatch.fnmatchcase(path, p.rstrip("/")) for p in patterns)

    def ignored(self, check: str, file: str | None) -> bool:
        """Whether per-file-ignores drops this check's findings on ``file``."""
        return file is not None and any(
            check in checks and fnmatch.fnmatchcase(file, glob)
            for glob, checks in self.per_file_ignores.items()
        )

    def as_dict(self) -> dict[str, Any]:
        """The settings under the configuration's own key names."""
        return {
            "exclude": list(self.exclude),
            "extend-exclude": list(self.extend_exclude),
            "per-file-ignores": {k: list(v) for k, v in self.per_file_ignores.items()},
            "severity": dict(self.severity),
            "fail-on": self.fail_on,
            "enforce-layout": self.enforce_layout,
        }

    def show(self) -> str:
        """Each effective setting and where it came from, one per line (for --show-settings)."""
        lines = [f"configuration file: {self.declared_in or '(none)'} ({self.origin})"]
        for key, value in self.as_dict().items():
            lines.append(f"{key} = {json.dumps(value)}  # {self.sources.get(key, DEFAULT)}")
        return "\n".join(lines)


def declared_config(read: Callable[[str], bytes | None]) -> tuple[str | None, dict[str, Any]]:
    """The configuration a repository declares, with the file it is in: ``read``
    gives a root file's bytes (or None), from a work tree or a git revision."""
    for name in CONFIG_FILES:
        raw = read(name)
        if raw is None:
            continue
        import tomllib  # only for a file there: 4-5 ms of a small repository's check

        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{name}: not valid TOML ({exc}): correct it") from exc
        if name == OWN_FILE and not data:
            continue  # says nothing (empty, or comments only): the next file may
        if name == PYPROJECT:
            tool = data.get("tool")
            section = tool.get("labnote-index") if isinstance(tool, dict) else None
            if section is None:
                continue
            name = f"{PYPROJECT} [tool.labnote-index]"
            data = section
        if not isinstance(data, dict):
            raise ConfigError(f"{name}: [tool.labnote-index] must be a table")
        return name, data
    return None, {}


def working_tree_reader(repo: Path) -> Callable[[str], bytes | None]:
    """Reads a configuration file at the root of a work tree: a regular file's
    bytes, None when there is none; a symlink there could lead anywhere, and is
    refused naming it (ConfigError), never silently passed over."""

    def read(name: str) -> bytes | None:
        path = repo / name
        if path.is_symlink():
            raise symlinked(name)
        if not path.is_file():
            return None
        return path.read_bytes()

    return read


def symlinked(name: str) -> ConfigError:
    """The refusal of a configuration file that is a symlink."""
    return ConfigError(
        f"{name} is a symlink: the configuration is read only from a regular file at "
        "the repository's root (a link could lead anywhere): put the file itself there"
    )


def load_settings(
    read: Callable[[str], bytes | None] | None,
    known_checks: Callable[[], Container[str]],
    overrides: Mapping[str, Any] | None = None,
    origin: str = WORKING_TREE,
) -> Settings:
    """The effective settings: the declared configuration (none when ``read`` is
    None: --isolated), then ``overrides`` from the command line (None values are
    not given). An unknown key, check id or value is a ConfigError naming it.
    ``known_checks`` gives the check ids, asked only of settings that name a
    check (the catalogue is not read for a configuration that names none)."""
    where, declared = declared_config(read) if read is not None else (None, {})
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, value in declared.items():
        if key not in KEYS:
            raise ConfigError(
                f"{where}: unknown key {key!r} (known: {', '.join(KEYS)}): remove or correct it"
            )
        values[key], sources[key] = _valid(where or "", key, value, known_checks), where or ""
    for key, value in (overrides or {}).items():
        if value is not None:
            values[key] = _valid(COMMAND_LINE, key, value, known_checks)
            sources[key] = COMMAND_LINE
    return Settings(
        exclude=tuple(values.get("exclude", ())),
        extend_exclude=tuple(values.get("extend-exclude", ())),
        per_file_ignores={k: tuple(v) for k, v in values.get("per-file-ignores", {}).items()},
        severity=dict(values.get("severity", {})),
        fail_on=values.get("fail-on", "error"),
        enforce_layout=values.get("enforce-layout", False),
        sources=sources,
        declared=declared,
        declared_in=where,
        origin=origin,
    )


def _valid(where: str, key: str, value: Any, known_checks: Callable[[], Container[str]]) -> Any:
    def fail(what: str) -> ConfigError:
        return ConfigError(f"{where}: {key} {what}")

    def check_ids(ids: Any, context: str) -> list[str]:
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise fail(f"{context}must be a list of check ids")
        for check in ids:
            if check not in known_checks():
                raise fail(f"{context}names unknown check {check!r}: see 'labnote-index checks'")
        return ids

    if key in ("exclude", "extend-exclude"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail("must be a list of glob patterns")
        return value
    if key == "per-file-ignores":
        if not isinstance(value, dict):
            raise fail("must be a table of glob = [check ids]")
        return {glob: check_ids(ids, f"[{glob!r}] ") for glob, ids in value.items()}
    if key == "severity":
        if not isinstance(value, dict):
            raise fail("must be a table of check id = error, warning or off")
        for check, level in value.items():
            if check not in known_checks():
                raise fail(f"names unknown check {check!r}: see 'labnote-index checks'")
            if level not in LEVELS:
                raise fail(f"of {check!r} must be one of {', '.join(LEVELS)}, not {level!r}")
        return value
    if key == "fail-on":
        if value not in FAIL_ON:
            raise fail(f"must be one of {', '.join(FAIL_ON)}, not {value!r}")
        return value
    if not isinstance(value, bool):  # enforce-layout
        raise fail(f"must be true or false, not {value!r}")
    return value
