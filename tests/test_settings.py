"""read/settings.py: the configuration a repository declares (labnote-index.toml, or
pyproject.toml's [tool.labnote-index]) and the command line's overrides, read
into Settings (``configuration.py``: the settings a command runs under); every
wrong value refused with a message naming where, the key and what it must be."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from labnote_index.read.settings import (
    COMMAND_LINE,
    ConfigError,
    declared_config,
    load_settings,
)

KNOWN = {"reference_unresolved", "id_duplicate"}


def reader(**files: str) -> Callable[[str], bytes | None]:
    """A repository root holding these files (name -> text; "_" for "-" and "."):
    own -> labnote-index.toml, pyproject -> pyproject.toml."""
    names = {"own": "labnote-index.toml", "pyproject": "pyproject.toml"}
    held = {names[key]: text.encode() for key, text in files.items()}
    return held.get


def test_every_key_declared_is_what_the_settings_hold_and_say_where_from():
    toml = """
exclude = ["drafts/**"]
extend-exclude = ["old/**"]
severity = { id_duplicate = "warning" }
fail-on = "warning"
enforce-layout = true

[per-file-ignores]
"registry/legacy/*.json" = ["reference_unresolved"]
"""
    settings = load_settings(reader(own=toml), lambda: KNOWN)
    assert settings.exclude == ("drafts/**",)
    assert settings.extend_exclude == ("old/**",)
    assert settings.per_file_ignores == {"registry/legacy/*.json": ("reference_unresolved",)}
    assert settings.severity == {"id_duplicate": "warning"}
    assert settings.fail_on == "warning" and settings.enforce_layout is True
    assert settings.declared_in == "labnote-index.toml"
    assert settings.declared["fail-on"] == "warning" and len(settings.declared) == 6
    assert set(settings.sources.values()) == {"labnote-index.toml"} and len(settings.sources) == 6
    assert settings.ignored("reference_unresolved", "registry/legacy/a.json")
    assert not settings.ignored("id_duplicate", "registry/legacy/a.json")


def test_the_command_line_overrides_what_is_declared_and_says_so():
    settings = load_settings(
        reader(own='fail-on = "warning"\n'), lambda: KNOWN, {"fail-on": "error", "exclude": None}
    )
    assert settings.fail_on == "error" and settings.sources == {"fail-on": COMMAND_LINE}
    assert settings.exclude == ()  # None: not given
    with pytest.raises(ConfigError) as raised:
        load_settings(None, lambda: KNOWN, {"fail-on": "sometimes"})
    assert str(raised.value) == (
        "command line: fail-on must be one of error, warning, not 'sometimes'"
    )


def test_the_check_ids_are_asked_for_only_by_settings_that_name_a_check():
    """A configuration naming no check is settled without the catalogue (an
    unchanged repository's check parses none); one that names a check asks."""
    asked: list[int] = []

    def known() -> set[str]:
        asked.append(1)
        return KNOWN

    load_settings(reader(own='exclude = ["x/"]\nfail-on = "warning"\n'), known)
    assert asked == []
    load_settings(reader(own='severity = { id_duplicate = "off" }\n'), known)
    assert asked == [1]
    with pytest.raises(ConfigError, match="unknown check 'nope'"):
        load_settings(reader(own='[per-file-ignores]\n"a/*" = ["nope"]\n'), known)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("exclude = 5", "exclude must be a list of glob patterns"),
        ('exclude = ["a", 5]', "exclude must be a list of glob patterns"),
        ("per-file-ignores = 5", "per-file-ignores must be a table of glob = [check ids]"),
        (
            'per-file-ignores = { "a/*" = "id_duplicate" }',
            "per-file-ignores ['a/*'] must be a list of check ids",
        ),
        (
            'per-file-ignores = { "a/*" = ["id_duplicate", 5] }',
            "per-file-ignores ['a/*'] must be a list of check ids",
        ),
        (
            'per-file-ignores = { "a/*" = ["nope"] }',
            "per-file-ignores ['a/*'] names unknown check 'nope': see 'labnote-index checks'",
        ),
        (
            'severity = "warning"',
            "severity must be a table of check id = error, warning or off",
        ),
        (
            'severity = { nope = "off" }',
            "severity names unknown check 'nope': see 'labnote-index checks'",
        ),
        (
            'severity = { id_duplicate = "loud" }',
            "severity of 'id_duplicate' must be one of error, warning, off, not 'loud'",
        ),
        ('fail-on = "often"', "fail-on must be one of error, warning, not 'often'"),
        ('enforce-layout = "yes"', "enforce-layout must be true or false, not 'yes'"),
        (
            "colour = 1",
            "unknown key 'colour' (known: exclude, extend-exclude, per-file-ignores, "
            "severity, fail-on, enforce-layout): remove or correct it",
        ),
    ],
)
def test_a_wrong_value_is_refused_naming_the_file_the_key_and_what_it_must_be(
    toml: str, message: str
):
    with pytest.raises(ConfigError) as raised:
        load_settings(reader(own=toml), lambda: KNOWN)
    assert str(raised.value) == f"labnote-index.toml: {message}"
    with pytest.raises(ConfigError) as raised:
        load_settings(reader(pyproject="[tool.labnote-index]\n" + toml), lambda: KNOWN)
    assert str(raised.value) == f"pyproject.toml [tool.labnote-index]: {message}"


def test_which_file_says_and_which_says_nothing():
    # An own file that says nothing (comments only) gives way to pyproject.toml.
    found = declared_config(
        reader(own="# nothing yet\n", pyproject='[tool.labnote-index]\nfail-on = "warning"\n')
    )
    assert found == ("pyproject.toml [tool.labnote-index]", {"fail-on": "warning"})
    # A pyproject.toml whose tool is not a table, or has no section of ours, says nothing.
    assert declared_config(reader(pyproject='tool = "poetry"\n')) == (None, {})
    assert declared_config(reader(pyproject="[tool.ruff]\nline-length = 1\n")) == (None, {})
    with pytest.raises(ConfigError) as raised:
        declared_config(reader(pyproject='[tool]\nlabnote-index = "strict"\n'))
    assert (
        str(raised.value)
        == "pyproject.toml [tool.labnote-index]: [tool.labnote-index] must be a table"
    )
    with pytest.raises(ConfigError) as raised:
        declared_config(reader(own="fail-on = \n"))
    assert str(raised.value).startswith("labnote-index.toml: not valid TOML (")
    assert declared_config(reader()) == (None, {})


def test_an_exclude_pattern_may_end_with_a_slash():
    """A pattern "drafts/" names the directory drafts, as "drafts" does (the walk asks of a
    directory by its name, with no slash); only the slash is taken off."""
    excluded = load_settings(
        reader(own='exclude = ["drafts/", "old/X/"]'), lambda: KNOWN
    ).excluded()
    assert excluded is not None
    assert excluded("drafts") and excluded("old/X")
    assert not excluded("old") and not excluded("drafts2")
    assert load_settings(reader(), lambda: KNOWN).excluded() is None
