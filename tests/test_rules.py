"""format/rules.py: the format's rules as data, and the two small functions that
read a name (a visit's packet, a template's role). Their edges: the shortest
name that is one, the look-alikes that are not."""

from __future__ import annotations

import pytest

from labnote_index.format.rules import (
    LEVELS,
    RECORD_TYPES,
    SAFE_PATH_RE,
    SEVERITIES,
    template_role,
    visit_packet_id,
)


@pytest.mark.parametrize(
    "visit_id, packet_id",
    [
        ("20260101-claude-topic-visit", "20260101-claude-topic"),
        ("x-visit", "x"),  # the shortest visit ID that names a packet
        ("-visit", None),  # the suffix alone names none
        ("visit", None),
        ("20260101-claude-topic", None),
        ("20260101-claude-topic-visits", None),
        ("", None),
    ],
)
def test_a_visit_names_its_packet_by_its_suffix(visit_id: str, packet_id: str | None):
    assert visit_packet_id(visit_id) == packet_id


@pytest.mark.parametrize(
    "path, role",
    [
        ("docs/workflow/roles/architect/templates/handoff.manifest.json", "architect"),
        ("roles/architect/templates/handoff.manifest.json", "architect"),  # four parts: the least
        ("roles/architect/reports/handoff.manifest.json", None),  # not templates/
        ("roles/a/b/c.json", None),
        ("docs/workflow/people/architect/templates/handoff.manifest.json", None),  # not roles/
        ("architect/templates/handoff.manifest.json", None),  # too short to say
        ("templates/handoff.manifest.json", None),
        ("handoff.manifest.json", None),
    ],
)
def test_a_template_names_its_role_from_its_place(path: str, role: str | None):
    assert template_role(path) == role


def test_the_severity_vocabulary():
    assert SEVERITIES == ("error", "warning") and LEVELS == ("error", "warning", "off")


@pytest.mark.parametrize(
    "path, safe",
    [
        ("datadrops/2026/a.md", True),
        ("a..b.md", True),  # dots inside a name are no parent step
        ("../a.md", False),
        ("datadrops/../a.md", False),
        ("datadrops/..", False),
        ("/etc/passwd", False),
        ("a b.md", False),
        ("", False),
    ],
)
def test_safe_path_is_the_schemas(path: str, safe: bool):
    assert bool(SAFE_PATH_RE.fullmatch(path)) is safe


def test_every_record_type_is_named_once():
    names = [rt.name for rt in RECORD_TYPES.values()]
    assert len(names) == len(set(names)) == 7
    assert all(key == rt.name for key, rt in RECORD_TYPES.items())
