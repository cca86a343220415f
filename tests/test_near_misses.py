"""Near misses for every check: beside its planted defect, what must and must not
be reported (the boundary, NULL and missing fields, a legal look-alike, the same
fact reported once), and the configuration that turns it off or narrows it.

As ruff keeps a rule's cases with the exact output expected, the exact findings
of each case (check, severity, record, file, field, message, line) are kept as
snapshots (syrupy, tests/__snapshots__/): a change of wording or of count shows
in review. ``pytest tests/test_near_misses.py --snapshot-update`` writes them
anew after a deliberate change; read the diff before committing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from labnote_index.checks.catalogue import load_checks, run_checks
from labnote_index.read.settings import Settings

from .helpers import Repo, findings_of
from .test_checks import (
    PLANTED,
    _accepted_response,
    _answered_message,
    _committed_schema,
    _first_packet,
    _lock,
    _manifest,
    _tag,
)

if TYPE_CHECKING:
    import sqlite_utils

DEFAULTS = {c.id: c.severity for c in load_checks()}


def rows(db: sqlite_utils.Database) -> list[tuple[Any, ...]]:
    """A build's findings as the snapshots keep them: what a reviewer reads."""
    return sorted(
        (
            f["check"],
            f["severity"],
            f["record_type"] or "",
            f["record_id"] or "",
            f["file"],
            f["field"],
            f["message"],
            f["line"] or 0,
        )
        for f in findings_of(db)
    )


def _settings(check_id: str, **kwargs: Any) -> Settings | None:
    """Settings that leave every check as it is but turn ``check_id`` on, when it
    is off by default, as the planted defect's test does."""
    severity = dict(kwargs.pop("severity", {}))
    if DEFAULTS[check_id] == "off":
        severity.setdefault(check_id, "warning")
    return Settings(severity=severity, **kwargs) if severity or kwargs else None


@pytest.mark.parametrize(
    "check_id, plant", PLANTED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(PLANTED)]
)
def test_a_planted_defect_gives_exactly_these_findings(repo: Repo, check_id, plant, snapshot):
    """The whole list, not only the check's: a second check reporting the same
    fact, or a finding lost, changes it."""
    plant(repo)
    found = rows(repo.index(settings=_settings(check_id)))
    assert any(f[0] == check_id for f in found)
    assert found == snapshot


@pytest.mark.parametrize(
    "check_id, plant", PLANTED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(PLANTED)]
)
def test_configuration_narrows_exactly_that_check_on_exactly_that_file(repo: Repo, check_id, plant):
    """per-file-ignores for the check and its file drops those findings and no
    other; for another glob, or another check, it drops nothing; severity moves
    the check's findings and only them; off removes them."""
    damaged = plant(repo)
    db = repo.index(settings=_settings(check_id))
    every = rows(db)

    def with_settings(**kwargs: Any) -> list[tuple[Any, ...]]:
        run_checks(db, settings=_settings(check_id, **kwargs))
        return rows(db)

    ignored = with_settings(per_file_ignores={damaged: (check_id,)})
    assert ignored == [f for f in every if not (f[0] == check_id and f[4] == damaged)]
    assert len(ignored) < len(every)
    other = next(c for c in sorted(DEFAULTS) if c != check_id)
    assert with_settings(per_file_ignores={damaged: (other,)}) == [
        f for f in every if not (f[0] == other and f[4] == damaged)
    ]
    assert with_settings(per_file_ignores={"elsewhere/*": (check_id,)}) == every
    assert with_settings(per_file_ignores={damaged + "x": (check_id,)}) == every
    moved = "error" if DEFAULTS[check_id] != "error" else "warning"
    assert with_settings(severity={check_id: moved}) == sorted(
        (f[0], moved if f[0] == check_id else f[1], *f[2:]) for f in every
    )
    assert with_settings(severity={check_id: "off"}) == [f for f in every if f[0] != check_id]


# ---- hand-written near misses: (check, case, change). A case named legal-...
# must give no finding of its check at all; every case's findings are snapshots.


def _set(pattern: str, **changes: Any) -> Callable[[Repo], str]:
    return lambda r: r.edit(r.first(pattern), **changes)


def _accepted_tag(r: Repo, **changes: Any) -> str:
    return r.edit(_tag(r, "accepted"), **changes)


def _created(r: Repo, rel: str) -> str:
    return r.load(rel)["created_at"]


def _accepted_at(r: Repo, shift: str) -> str:
    """An accepted tag accepted when it was created, or a second before."""
    rel = _tag(r, "accepted")
    created = _created(r, rel)
    return r.edit(rel, accepted_at=created if shift == "same" else _one_second_before(created))


def _one_second_before(timestamp: str) -> str:
    from datetime import datetime, timedelta

    when = datetime.fromisoformat(timestamp.replace("Z", "+00:00")) - timedelta(seconds=1)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _same_day_late(r: Repo) -> str:
    rel = _first_packet(r)
    day = r.load(rel)["packet_id"][:8]
    return r.edit(rel, created_at=f"{day[:4]}-{day[4:6]}-{day[6:]}T23:59:59Z")


def _next_day(r: Repo) -> str:
    rel = _first_packet(r)
    day = r.load(rel)["packet_id"][:8]
    return r.edit(rel, created_at=f"{day[:4]}-{day[4:6]}-{int(day[6:]) + 1:02d}T00:00:00Z")


def _move_packet_to(r: Repo, new_dir: str) -> str:
    rel = _first_packet(r)
    return r.move(rel, f"{new_dir}/{rel.rsplit('/', 1)[1]}")


def _response_status(r: Repo, status: str, **changes: Any) -> str:
    return r.edit(_accepted_response(r), status=status, **changes)


def _second_version(r: Repo, status: str) -> str:
    """researcher's packet-v001 copied whole as packet-v002 (with ``status``)."""
    import shutil

    rel = _manifest("researcher")
    old = r.root / rel.rsplit("/", 1)[0]
    shutil.copytree(old, old.with_name("packet-v002"))
    newer = rel.replace("packet-v001", "packet-v002")
    (r.root / newer.replace("handoff.manifest.json", "packet.lock.json")).unlink(missing_ok=True)
    return r.edit(newer, packet_version="packet-v002", status=status)


def _superseded_with_newer(r: Repo) -> str:
    """researcher's packet-v001 superseded by a packet-v002 of its own."""
    _second_version(r, "draft")
    return r.edit(_manifest("researcher"), status="superseded")


def _superseded_newest(r: Repo) -> str:
    """packet-v002 superseded while packet-v001 is the only other: no newer one."""
    return _second_version(r, "superseded")


def _input(r: Repo, **changes: Any) -> str:
    rel = _manifest("product-prd")
    data = r.load(rel)
    data["input_packets"][0].update(changes)
    r.save(rel, data)
    return rel


def _named_reply(r: Repo) -> tuple[str, dict[str, Any], str]:
    """The first message whose response_message_id names a reply: its file, its
    data and the reply's file."""
    messages = r.files("registry/messages/*/*.json")
    by_id = {r.load(f)["message_id"]: f for f in messages}
    for rel in messages:
        data = r.load(rel)
        if data.get("response_message_id") in by_id:
            return rel, data, by_id[data["response_message_id"]]
    raise AssertionError("no message names a response_message_id")


def _reply_back(r: Repo, reply_to: str | None) -> str:
    """A message whose response_message_id names a reply; that reply's reply_to."""
    rel, data, target = _named_reply(r)
    r.edit(target, reply_to=data["message_id"] if reply_to == "self" else reply_to)
    return rel


def _same_id_other_type(r: Repo) -> str:
    """A response given a packet's ID: IDs are unique per type, not across types."""
    packet_id = r.load(_first_packet(r))["packet_id"]
    rel = r.first("registry/responses/*/*.json")
    data = r.load(rel)
    old = data["response_id"]
    r.edit(rel, response_id=packet_id)
    return r.move(rel, rel.replace(old, packet_id))


def _copies(r: Repo, n: int) -> str:
    rel = _first_packet(r)
    data = r.load(rel)
    for k in range(n):
        r.save(rel.replace(".json", f"-copy{k}.json"), data)
    return rel


def _duplicate_beside_another_type(r: Repo) -> str:
    """A duplicated packet ID that a response has too: the response is no copy."""
    _copies(r, 1)
    return _same_id_other_type(r)


def _groups_in_two_types(r: Repo) -> str:
    """Two duplicated packet IDs, and one of them duplicated as a response too:
    each copy names the files of its own group, of its own type."""
    packets = r.files("registry/packets/*/*.json")[:2]
    for rel in packets:
        r.save_copy(rel, rel.replace(".json", "-copy.json"))
    _same_id_other_type(r)
    response = next(
        f
        for f in r.files("registry/responses/*/*.json")
        if r.load(f)["response_id"] == r.load(packets[0])["packet_id"]
    )
    return r.save_copy(response, response.replace(".json", "-copy.json"))


def _packet_symlink(r: Repo) -> str:
    """A symlink among a packet's files: never followed, a file that cannot be read."""
    import os

    rel = _manifest("researcher")
    os.symlink("report.md", r.root / rel.replace("handoff.manifest.json", "alias.md"))
    return rel


def _two_without_ids(r: Repo) -> str:
    """Two packets that lack packet_id: schema errors, not duplicates of each other."""
    rel = _first_packet(r)
    data = r.load(rel)
    del data["packet_id"]
    r.save(rel, data)
    return r.save_copy(rel, rel.replace(".json", "-b.json"))


def _manifest_without_handoff_to(r: Repo, **changes: Any) -> str:
    rel = _manifest("researcher")
    data = r.load(rel)
    del data["handoff_to"]
    r.save(rel, data | changes)
    return rel


def _duplicate_twice(r: Repo) -> str:
    rel = _first_packet(r)
    data = r.load(rel)
    for n in (2, 3):
        r.save(rel.replace(".json", f"-copy{n}.json"), data)
    return rel


NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("timestamp_order", "legal-equal", lambda r: _accepted_at(r, "same")),
    ("timestamp_order", "one-second-before", lambda r: _accepted_at(r, "before")),
    ("timestamp_order", "legal-null", lambda r: _accepted_tag(r, accepted_at=None)),
    ("location_id_date", "legal-last-second-of-the-day", _same_day_late),
    ("location_id_date", "next-day", _next_day),
    ("location_year_dir", "legal-not-a-year-directory",
     lambda r: _move_packet_to(r, "registry/packets/x")),
    ("response_decision", "empty-accepted-by", lambda r: _response_status(r, "accepted",
                                                                          accepted_by="")),
    ("response_decision", "rejected-without-decision",
     lambda r: _response_status(r, "rejected", decision_at=None)),
    ("response_decision", "legal-pending-without-decision",
     lambda r: _response_status(r, "pending_review", accepted_by=None, decision_at=None)),
    ("answered_without_response", "legal-in-review",
     _set("registry/packets/*/*.json", status="in_review")),
    ("handoff_superseded", "legal-newer-exists", _superseded_with_newer),
    ("handoff_superseded", "newest-superseded", _superseded_newest),
    ("input_packet_status", "null", lambda r: _input(r, status_at_consumption=None)),
    ("input_packet_status", "legal-draft", lambda r: _input(r, status_at_consumption="draft")),
    ("input_packet_status", "not-a-status", lambda r: _input(r, status_at_consumption="done")),
    ("reply_not_reciprocal", "legal-replies-back", lambda r: _reply_back(r, "self")),
    ("reply_not_reciprocal", "reply-to-null", lambda r: _reply_back(r, None)),
    ("duplicate_id", "legal-same-id-other-type", _same_id_other_type),
    ("duplicate_id", "three-copies-each-once", _duplicate_twice),
    ("duplicate_id", "six-copies-five-named", lambda r: _copies(r, 5)),
    ("duplicate_id", "five-copies-all-named", lambda r: _copies(r, 4)),
    ("duplicate_id", "two-groups-and-another-type", _groups_in_two_types),
    ("file_unreadable", "a-symlink-among-a-packets-files", _packet_symlink),
    ("duplicate_id", "beside-the-same-id-of-another-type", _duplicate_beside_another_type),
    ("duplicate_id", "legal-two-without-ids", _two_without_ids),
    ("reference_unresolved", "id-of-another-type",
     lambda r: r.edit(_answered_message(r), reply_to=r.load(_first_packet(r))["packet_id"])),
    ("tag_unresolved", "legal-deprecated-is-not-unresolved",
     lambda r: r.edit(_first_packet(r), tags=["old-format"])),
    ("tag_unresolved", "each-use-once", lambda r: r.edit(_first_packet(r),
                                                          tags=["no-such", "no-such"])),
    ("stray_file", "legal-registry-readme", lambda r: r.write("registry/README.md", "# R\n")),
    ("markdown_link_missing", "legal-directory-and-fragment",
     lambda r: r.write("docs/notes.md", "[d](workflow/) [f](workflow/README.md#top)\n")
     and r.write("docs/workflow/README.md", "# W\n")),
    ("markdown_link_missing", "legal-code-span", lambda r: r.write("docs/notes.md",
                                                                   "`[x](gone.md)`\n")),
    ("markdown_link_outside", "legal-up-to-the-root",
     lambda r: r.write("docs/notes.md", "[top](../README.md)\n") and r.write("README.md", "x\n")),
    ("accepted_tag", "legal-proposed-without-acceptance",
     lambda r: r.edit(_tag(r, "proposed"), accepted_by=None, accepted_at=None)),
    ("message_recipient", "legal-group-instead",
     lambda r: r.edit(_answered_message(r), to_visitor_id=None, to_group="ops")),
    ("handoff_schema", "return-to-names-no-role",
     lambda r: _manifest_without_handoff_to(r, return_to="")),
    ("handoff_schema", "return-to-blank", lambda r: _manifest_without_handoff_to(r,
                                                                                return_to="  ")),
    ("handoff_schema", "legal-return-to-a-role",
     lambda r: _manifest_without_handoff_to(r, return_to="workflow-orchestrator")),
    ("handoff_schema", "placeholder-date",
     lambda r: r.edit(_manifest("researcher"), created_at="YYYY-MM-DD")),
    ("handoff_schema", "placeholder-in-an-input-path",
     lambda r: _input(r, manifest="docs/workflow/roles/researcher/reports/<milestone>/"
                                  "packet-v001/handoff.manifest.json")),
    ("handoff_schema", "legal-angle-brackets-in-prose",
     lambda r: r.edit(_manifest("researcher"), summary="Compares a <= b, and x > y.")),
    ("provenance", "legal-operator-authored-without-sources",
     _set("registry/packets/*/*.json", content_origin="operator_authored", source_refs=[])),
]  # fmt: skip


def _researcher(**changes: Any) -> Callable[[Repo], str]:
    """An edit of researcher's packet (not locked: its edits drift no lock)."""
    return lambda r: r.edit(_manifest("researcher"), **changes)


def _entry(rel_of: Callable[[], str], array: str, n: int, **changes: Any) -> Callable[[Repo], str]:
    """An edit of entry ``n`` of a manifest's or lock's array (a value None drops it)."""

    def change(r: Repo) -> str:
        rel = rel_of()
        data = r.load(rel)
        entry = data[array][n]
        entry.update(changes)
        r.save(rel, data)
        return rel

    return change


def _document(path: Any, required: bool = True) -> Callable[[Repo], str]:
    return _entry(lambda: _manifest("researcher"), "documents", 0, path=path, required=required)


def _loose_manifest(r: Repo) -> str:
    """A manifest outside the roles/<role>/reports/<milestone>/packet-vNNN/ layout."""
    return r.save_copy(_manifest("researcher"), "docs/workflow/loose/handoff.manifest.json")


def _lock_alone(r: Repo) -> str:
    (r.root / _manifest("architect")).unlink()
    return _lock()


def _subdirectory_document(r: Repo) -> str:
    packet = _manifest("researcher").rsplit("/", 1)[0]
    r.write(f"{packet}/sub/doc.md", "# doc\n")
    r.write(f"{packet}/notes..md", "# dots\n")
    data = r.load(_manifest("researcher"))
    data["documents"] = [
        {"path": "sub/doc.md", "type": "report", "required": True},
        {"path": "notes..md", "type": "report", "required": True},
    ]
    r.save(_manifest("researcher"), data)
    return _manifest("researcher")


def _ready(r: Repo, **changes: Any) -> str:
    return r.edit(_manifest("researcher"), status="ready_for_next_role", **changes)


def _locked_file_gone(r: Repo) -> str:
    (r.root / _lock().replace("packet.lock.json", "report.md")).unlink()
    return _lock()


def _prd_input(**changes: Any) -> Callable[[Repo], str]:
    return _entry(lambda: _manifest("product-prd"), "input_packets", 0, **changes)


def _cited_created(field: str, source: str, target: str, when: Callable[[str], str]):
    """The first ``source`` record (a glob) whose ``field`` names a ``target``
    record (type, ID field, glob): that record's created_at made ``when(the
    source's created_at)``."""
    target_glob, id_field = target.split(":")

    def change(r: Repo) -> str:
        by_id = {r.load(f)[id_field]: f for f in r.files(target_glob)}
        for rel in r.files(source):
            data = r.load(rel)
            if data.get(field) in by_id:
                r.edit(by_id[data[field]], created_at=when(data["created_at"]))
                return rel
        raise AssertionError(f"no {source} whose {field} names a record")

    return change


def _a_second_later(timestamp: str) -> str:
    from datetime import datetime, timedelta

    when = datetime.fromisoformat(timestamp.replace("Z", "+00:00")) + timedelta(seconds=1)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


PACKETS, MESSAGES = "registry/packets/*/*.json:packet_id", "registry/messages/*/*.json:message_id"
CAUSAL_NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("causal_order", "legal-response-at-the-packets-second",
     _cited_created("source_packet_id", "registry/responses/*/*.json", PACKETS, lambda t: t)),
    ("causal_order", "response-a-second-before-its-packet",
     _cited_created("source_packet_id", "registry/responses/*/*.json", PACKETS,
                    _a_second_later)),
    ("causal_order", "reply-a-second-before-its-message",
     _cited_created("reply_to", "registry/messages/*/*.json", MESSAGES, _a_second_later)),
    ("causal_order", "notification-before-its-message",
     _cited_created("message_id", "registry/notifications/*/*.json", MESSAGES,
                    _a_second_later)),
    ("causal_order", "legal-a-time-julianday-cannot-read",
     _cited_created("reply_to", "registry/messages/*/*.json", MESSAGES, lambda t: "soon")),
]  # fmt: skip
NEAR_MISSES += CAUSAL_NEAR_MISSES


def _visit_id(r: Repo, visit_id: str) -> str:
    rel = r.first("registry/visits/*/*.json")
    return r.edit(rel, visit_id=visit_id)


def _archived_message_artifact_left(r: Repo) -> str:
    """An archived message (a status several types share) moved into its bucket,
    its artifact left in the old one: one finding, for the message alone."""
    rel = _answered_message(r)
    moved = r.move(rel, rel.replace("/answered/", "/archived/"))
    return r.edit(moved, status="archived")


def _view_gone(r: Repo) -> str:
    """One committed view deleted while the others are there."""
    from labnote_index.index.registry_views import render_views, write_views

    write_views(render_views(r.index()), r.root / "registry")
    (r.root / "registry/visit_registry.csv").unlink()
    return "registry/visit_registry.csv"


def _views_then_unreadable(r: Repo, *also: str) -> str:
    """Views committed; then one packet (and tag) made unreadable and the records
    named in ``also`` (a packet, a tag) edited after."""
    from labnote_index.index.registry_views import render_views, write_views

    write_views(render_views(r.index()), r.root / "registry")
    packets, tags = r.files("registry/packets/*/*.json"), r.files("registry/tags/*/*.json")
    r.write(packets[0], '{"record_type": "packet",')
    r.write(tags[0], "{")
    if "packet" in also:
        r.edit(packets[1], notes="edited after the views were generated")
    if "tag" in also:
        r.edit(tags[1], description="edited after the views were generated")
    return "registry/packet_registry.csv"


def _reply_back_elsewhere(r: Repo) -> str:
    """A message's response_message_id names a reply whose reply_to names another."""
    rel, _, target = _named_reply(r)
    other = next(
        r.load(f)["message_id"]
        for f in r.files("registry/messages/*/*.json")
        if f not in (rel, target)
    )
    r.edit(target, reply_to=other)
    return rel


def _response_link_to_null(r: Repo) -> str:
    """A packet names a response whose source_packet_id is null."""
    packet = next(
        f for f in r.files("registry/packets/*/*.json") if r.load(f)["response_packet_id"]
    )
    response_id = r.load(packet)["response_packet_id"]
    response = next(
        f for f in r.files("registry/responses/*/*.json") if r.load(f)["response_id"] == response_id
    )
    r.edit(response, source_packet_id=None)
    return packet


MORE_NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("id_grammar", "a-visit-id-reported-once", lambda r: _visit_id(r, "BAD ID")),
    ("id_grammar", "visit-without-its-suffix", lambda r: _visit_id(r, "20250301-claude-topic-1")),
    ("lifecycle_bucket", "a-shared-status-reported-for-its-type", _archived_message_artifact_left),
    ("view_stale", "one-view-missing", _view_gone),
    ("view_stale", "legal-unreadable-records-rows-as-committed", _views_then_unreadable),
    ("view_stale", "a-packet-edited-beside-an-unreadable-one",
     lambda r: _views_then_unreadable(r, "packet")),
    ("view_stale", "a-tag-edited-beside-an-unreadable-one",
     lambda r: _views_then_unreadable(r, "tag")),
    ("view_stale", "legal-no-views-committed", _set("registry/packets/*/*.json", notes="x")),
    ("reply_not_reciprocal", "replies-to-another", _reply_back_elsewhere),
    ("response_link_mismatch", "source-null", _response_link_to_null),
    ("response_decision", "legal-accepted-with-both",
     lambda r: _response_status(r, "accepted", accepted_by="maria",
                                decision_at="2025-03-02T09:00:00Z")),
    ("markdown_link_missing", "two-links-one-missing",
     lambda r: r.write("docs/notes.md", "[a](gone.md) and [b](workflow/)\n")),
    ("location_filename", "legal-stem-is-the-id", _set("registry/packets/*/*.json", notes="x")),
]  # fmt: skip
NEAR_MISSES += MORE_NEAR_MISSES


def _template(r: Repo, path: Any) -> str:
    """A role's packet template, its first document's path ``path``."""
    rel = "docs/workflow/roles/researcher/templates/handoff.manifest.json"
    data = r.load(_manifest("researcher"))
    data.update(milestone="template", created_at="YYYY-MM-DD", updated_at="YYYY-MM-DD")
    data["documents"][0]["path"] = path
    r.save(rel, data)
    return rel


def _supersede_beside(r: Repo, where: str) -> str:
    """researcher/milestone-1/packet-v001 superseded; a packet-v002 only in ``where``."""
    import shutil

    rel = _manifest("researcher")
    old = r.root / rel.rsplit("/", 1)[0]
    new = r.root / where
    shutil.copytree(old, new)
    role, milestone, version = where.split("/")[-4], where.split("/")[-2], where.split("/")[-1]
    r.edit(f"{where}/handoff.manifest.json", role=role, milestone=milestone,
           packet_version=version)  # fmt: skip
    return r.edit(rel, status="superseded")


def _uncovered_packet_file(r: Repo) -> str:
    return r.write(_lock().replace("packet.lock.json", "notes.md"), "added after the lock\n")


def _later_reply_named(r: Repo) -> str:
    """A message names its reply (response_message_id), created a second later:
    a cause before its effect, as it should be."""
    rel, data, reply = _named_reply(r)
    r.edit(reply, created_at=_a_second_later(data["created_at"]))
    return rel


def _bad_suffix_and_another_problem(r: Repo) -> str:
    rel = r.first("registry/visits/*/*.json")
    return r.edit(rel, visit_id="20250301-claude-topic-1", relay_needed="no")


ROLES = "docs/workflow/roles"


def _derivative_orphan(r: Repo) -> str:
    rel = _first_packet(r)
    return r.edit(rel, content_origin="model_generated", derivative_of=["20250301-gone"])


def _response_message_orphan(r: Repo) -> str:
    return r.edit(_answered_message(r), response_message_id="20250301-gone-reply")


def _dated_tag_slug(r: Repo) -> str:
    """A tag whose slug happens to begin like a date: no ID date to agree with."""
    rel = _tag(r, "accepted")
    data = r.load(rel)
    moved = rel.rsplit("/", 1)[0] + "/20240101-retro.json"
    r.save(moved, dict(data, tag_slug="20240101-retro"))
    (r.root / rel).unlink()
    return moved


def _tag_among_packets(r: Repo) -> str:
    rel = _tag(r, "accepted")
    return r.move(rel, "registry/packets/2025/" + rel.rsplit("/", 1)[1])


def _input_field(**changes: Any) -> Callable[[Repo], str]:
    return _prd_input(**changes)


def _covered_by_another_lock(r: Repo) -> str:
    """notes.md in two locked packets, covered by one lock only: the other's is
    uncovered, whatever the first lock says."""
    import hashlib
    import shutil

    first = _lock().rsplit("/", 1)[0]
    second = first.replace("packet-v001", "packet-v002")
    shutil.copytree(r.root / first, r.root / second)
    r.write(f"{first}/notes.md", "notes\n")
    r.write(f"{second}/notes.md", "notes\n")
    r.edit(f"{second}/handoff.manifest.json", packet_version="packet-v002")
    lock = r.load(f"{second}/packet.lock.json")
    lock["packet_version"] = "packet-v002"
    names = ["handoff.manifest.json", "report.md", "notes.md"]
    lock["files"] = [
        {"path": n, "sha256": hashlib.sha256((r.root / second / n).read_bytes()).hexdigest()}
        for n in names
    ]
    r.save(f"{second}/packet.lock.json", lock)
    return f"{first}/packet.lock.json"


def _message_in_a_year_directory(r: Repo) -> str:
    rel = _answered_message(r)
    return r.move(rel, "registry/messages/1999/" + rel.rsplit("/", 1)[1])


def _shared_artifact(r: Repo) -> str:
    """Two packets name one artifact file: no hard link, one file."""
    first, second = r.files("registry/packets/*/*.json")[:2]
    return r.edit(second, path=r.load(first)["path"])


def _self_derived(r: Repo) -> str:
    rel = _first_packet(r)
    own = r.load(rel)["packet_id"]
    return r.edit(rel, content_origin="model_generated", derivative_of=[own], source_refs=[])


def _diamond(r: Repo) -> str:
    """Two packets derived from one: a shared source is no cycle."""
    first, second, third = r.files("registry/packets/*/*.json")[:3]
    source = r.load(first)["packet_id"]
    for rel in (second, third):
        r.edit(rel, content_origin="model_generated", derivative_of=[source], source_refs=[])
    return second


def _derived_from_response(r: Repo) -> str:
    response = r.load(r.first("registry/responses/*/*.json"))["response_id"]
    rel = r.files("registry/packets/*/*.json")[-1]
    return r.edit(rel, content_origin="model_generated", derivative_of=[response], source_refs=[])


def _self_reply(r: Repo) -> str:
    rel = _answered_message(r)
    return r.edit(rel, reply_to=r.load(rel)["message_id"])


def _self_input(r: Repo) -> str:
    rel = _manifest("researcher")
    data = r.load(rel)
    entry = {
        "role": "researcher",
        "milestone": data["milestone"],
        "packet_version": data["packet_version"],
        "manifest": rel,
        "status_at_consumption": "draft",
        "consumption_status": "accepted_as_input",
    }
    return r.edit(rel, input_packets=[entry])


def _crlf(r: Repo) -> str:
    rel = _first_packet(r)
    text = (r.root / rel).read_text().replace("\n", "\r\n")
    return r.write(rel, text)


def _both_spellings(r: Repo) -> str:
    rel = r.first("registry/visits/*/*.json")
    data = r.load(rel)
    data["visitor_family"] = data["session_family"]
    r.save(rel, data)
    return rel


def _cited_unreadable_twice(r: Repo) -> str:
    """Two replies cite one message that cannot be read: each citer once."""
    by_id = {r.load(f)["message_id"]: f for f in r.files("registry/messages/*/*.json")}
    reply = next(f for f in by_id.values() if r.load(f).get("reply_to") in by_id)
    cited_id = r.load(reply)["reply_to"]
    other = next(f for f in by_id.values() if f not in (reply, by_id[cited_id]))
    r.edit(other, reply_to=cited_id)
    cited = r.root / by_id[cited_id]
    cited.write_bytes(cited.read_bytes()[:40])
    return reply


SCHEMA_NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("artifact_hard_link", "legal-two-records-one-artifact", _shared_artifact),
    ("artifact_location", "legal-in-a-sub-directory-of-its-prefix",
     lambda r: r.edit(_first_packet(r), path=r.move(r.load(_first_packet(r))["path"],
                                                    "datadrops/2025/sub/moved.md"))),
    ("artifact_path", "legal-null-is-schema-types", _set("registry/packets/*/*.json", path=None)),
    ("derivation_cycle", "derived-from-itself", _self_derived),
    ("derivation_cycle", "legal-a-shared-source", _diamond),
    ("derivative_unresolved", "legal-derived-from-a-response", _derived_from_response),
    ("derivative_unresolved", "two-missing-each-once",
     _set("registry/packets/*/*.json", content_origin="model_generated",
          derivative_of=["20250301-gone-a", "20250301-gone-b"], source_refs=[])),
    ("handoff_status", "legal-blocked", _researcher(status="blocked", blocked=True)),
    ("handoff_status", "empty", _researcher(status="")),
    ("input_packet_cycle", "consumes-itself", _self_input),
    ("json_strict", "legal-crlf-line-endings", _crlf),
    ("legacy_spelling", "both-spellings", _both_spellings),
    ("location_directory", "loose-in-registry",
     lambda r: r.move(_first_packet(r), "registry/" + _first_packet(r).rsplit("/", 1)[1])),
    ("record_type_unknown", "null", _set("registry/packets/*/*.json", record_type=None)),
    ("reference_unreadable", "two-citers-each-once", _cited_unreadable_twice),
    ("reply_cycle", "replies-to-itself", _self_reply),
    ("schema_enum", "wrong-case", _set("registry/packets/*/*.json", status="New")),
    ("schema_required", "legal-null-where-required-is-schema-types",
     _set("registry/packets/*/*.json", topic=None)),
    ("schema_type", "a-string-for-a-list", _set("registry/packets/*/*.json", tags="perf")),
    ("schema_unknown_field", "legal-a-legacy-field-is-legacy-spellings",
     lambda r: _both_spellings(r) and None),
    ("slug_grammar", "trailing-hyphen", _set("registry/packets/*/*.json", topic="bad-")),
    ("tag_deprecated", "legal-a-proposed-tag",
     lambda r: r.edit(_first_packet(r), tags=[r.load(_tag(r, "proposed"))["tag_slug"]])),
    ("timestamp_format", "date-only", _set("registry/packets/*/*.json", created_at="2025-03-01")),
    ("visitor_id_grammar", "upper-case",
     _set("registry/visitors/*.json", visitor_id="Claude-20250301-0900-x-01")),
]  # fmt: skip
NEAR_MISSES += SCHEMA_NEAR_MISSES


LAST_NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("causal_order", "legal-a-message-names-its-later-reply", _later_reply_named),
    ("handoff_directory", "version-null", _researcher(packet_version=None)),
    ("handoff_document_path", "template-empty", lambda r: _template(r, "")),
    ("handoff_document_path", "template-null", lambda r: _template(r, None)),
    ("handoff_document_path", "template-absolute", lambda r: _template(r, "/etc/passwd")),
    ("handoff_document_path", "template-dot-dot", lambda r: _template(r, "..")),
    ("handoff_document_path", "template-up", lambda r: _template(r, "../x.md")),
    ("handoff_document_path", "template-inside-up", lambda r: _template(r, "a/../../x.md")),
    ("handoff_document_path", "template-ends-up", lambda r: _template(r, "a/..")),
    ("handoff_document_path", "legal-template-document", lambda r: _template(r, "plan.md")),
    ("handoff_lock_drift", "a-file-the-lock-does-not-cover", _uncovered_packet_file),
    ("handoff_lock_mismatch", "manifest-milestone-null",
     lambda r: r.edit(_manifest("architect"), milestone=None)),
    ("handoff_lock_mismatch", "manifest-version-null",
     lambda r: r.edit(_manifest("architect"), packet_version=None)),
    ("handoff_superseded", "newer-only-in-another-milestone",
     lambda r: _supersede_beside(r, f"{ROLES}/researcher/reports/milestone-2/packet-v002")),
    ("handoff_superseded", "newer-only-of-another-role",
     lambda r: _supersede_beside(r, f"{ROLES}/reviewer/reports/milestone-1/packet-v002")),
    ("id_grammar", "visit-without-its-suffix-beside-another-problem",
     _bad_suffix_and_another_problem),
    ("input_packet_mismatch", "upstream-role-null", _researcher(role=None)),
    ("input_packet_mismatch", "input-milestone-null", _prd_input(milestone=None)),
    ("input_packet_mismatch", "upstream-version-null", _researcher(packet_version=None)),
    ("input_packet_unresolved", "manifest-null", _prd_input(manifest=None)),
    ("input_packet_mismatch", "input-version-null", _prd_input(packet_version=None)),
    ("location_year_dir", "legal-a-message-in-a-year-named-directory",
     _message_in_a_year_directory),
    ("handoff_lock_drift", "covered-by-another-lock-only", _covered_by_another_lock),
    ("location_id_date", "legal-a-tag-slug-that-looks-dated", _dated_tag_slug),
    ("location_nesting", "legal-a-tag-among-packets-is-location-directorys", _tag_among_packets),
    ("location_year_dir", "legal-created-at-unreadable",
     _set("registry/packets/*/*.json", created_at="soon")),
    ("reference_unresolved", "legal-a-derivative-orphan-is-derivative-unresolveds",
     _derivative_orphan),
    ("reply_not_reciprocal", "legal-an-orphan-is-reference-unresolveds", _response_message_orphan),
    ("response_decision", "accepted-by-null",
     lambda r: _response_status(r, "accepted", accepted_by=None)),
]  # fmt: skip
NEAR_MISSES += LAST_NEAR_MISSES


HANDOFF_NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("handoff_directory", "role-disagrees", _researcher(role="architect")),
    ("handoff_directory", "role-null", _researcher(role=None)),
    ("handoff_directory", "version-disagrees", _researcher(packet_version="packet-v002")),
    ("handoff_directory", "milestone-null", _researcher(milestone=None)),
    ("handoff_directory", "not-at-the-layout", _loose_manifest),
    ("handoff_lock_mismatch", "milestone-disagrees", lambda r: r.edit(_lock(), milestone="m9")),
    ("handoff_lock_mismatch", "version-disagrees",
     lambda r: r.edit(_lock(), packet_version="packet-v002")),
    ("handoff_lock_mismatch", "role-null", lambda r: r.edit(_lock(), role=None)),
    ("handoff_lock_mismatch", "lock-alone", _lock_alone),
    ("handoff_ready_blocked", "blocked-null", lambda r: _ready(r, blocked=None)),
    ("handoff_ready_blocked", "legal-draft-blocked", _researcher(blocked=True)),
    ("handoff_document_missing", "legal-not-required", _document("absent.md", required=False)),
    ("handoff_document_missing", "required-and-absent", _document("absent.md")),
    ("handoff_document_missing", "legal-outside-is-document-paths", _document("../x.md")),
    ("handoff_document_path", "empty", _document("")),
    ("handoff_document_path", "dot-dot", _document("..")),
    ("handoff_document_path", "ends-in-dot-dot", _document("sub/..")),
    ("handoff_document_path", "dot-dot-inside", _document("sub/../../x.md")),
    ("handoff_document_path", "absolute", _document("/etc/passwd")),
    ("handoff_document_path", "null", _document(None)),
    ("handoff_document_path", "legal-sub-directory-and-dots-in-a-name", _subdirectory_document),
    ("handoff_unknown_field", "in-an-input", _prd_input(priority="high")),
    ("handoff_unknown_field", "in-a-lock", lambda r: r.edit(_lock(), signed_by="x")),
    ("input_packet_consumption", "null", _prd_input(consumption_status=None)),
    ("input_packet_consumption", "rejected", _prd_input(consumption_status="rejected")),
    ("input_packet_lock", "ready-upstream-without-lock",
     lambda r: _ready(r) and _prd_input(status_at_consumption="ready_for_next_role")(r)),
    ("input_packet_lock", "legal-unresolved-is-unresolveds",
     _prd_input(status_at_consumption="ready_for_next_role", manifest="docs/none.json")),
    ("input_packet_mismatch", "milestone-disagrees", _prd_input(milestone="milestone-2")),
    ("input_packet_mismatch", "role-null", _prd_input(role=None)),
    ("handoff_lock_drift", "recorded-null", _entry(_lock, "files", 1, sha256=None)),
    ("handoff_lock_drift", "locked-file-gone", _locked_file_gone),
    ("handoff_lock_missing", "legal-draft-without-lock", _researcher(status="draft")),
]  # fmt: skip
NEAR_MISSES += HANDOFF_NEAR_MISSES


def _schema_set(name: str, pointer: str, value: Any) -> Callable[[Repo], str]:
    """Commit the packaged schema of ``name`` with one value set (a dotted path)."""

    def change(schema: dict[str, Any]) -> None:
        *parents, last = pointer.split(".")
        for key in parents:
            schema = schema[key]
        schema[last] = value

    return lambda r: _committed_schema(r, name, change)


# The repository's committed schemas (registry/schemas/): what may and may not govern.
CONTRACT_NEAR_MISSES: list[tuple[str, str, Callable[[Repo], object]]] = [
    ("committed_schema", "legal-equal-to-the-packaged", _schema_set("tag", "type", "object")),
    ("committed_schema", "common-not-json",
     lambda r: r.write("registry/schemas/common.schema.json", "{")),
    ("committed_schema", "a-remote-ref", _schema_set("tag", "$ref", "https://example.org/x")),
    ("committed_schema", "legal-a-schema-of-no-record-type",
     lambda r: r.write("registry/schemas/extra.schema.json", "{")),
    ("schema_pattern", "legal-a-pattern-every-value-matches",
     _schema_set("packet", "properties.notes.pattern", "^")),
    ("schema_pattern", "legal-a-pattern-on-a-null-value",
     _schema_set("response", "properties.accepted_by.pattern", "^[^#]")),
    ("schema_pattern", "a-format-the-contract-does-not-name",
     _schema_set("packet", "properties.notes.format", "email")),
    ("slug_grammar", "legal-a-committed-common-alone-governs-no-type",
     _schema_set("common", "$defs.slug.pattern", "^[a-z]+$")),
    ("slug_grammar", "a-committed-common-slug-pattern-with-the-tag-schema",
     lambda r: _schema_set("common", "$defs.slug.pattern", "^[a-z]+$")(r)
     and _schema_set("tag", "type", "object")(r)),
    ("schema_unknown_field", "legal-a-field-the-committed-schema-adds",
     lambda r: _committed_schema(
         r, "packet", lambda s: s["properties"].update(priority={"type": "string"})
     ) and r.edit(r.first("registry/packets/*/*.json"), priority="high")),
]  # fmt: skip
NEAR_MISSES += CONTRACT_NEAR_MISSES


@pytest.mark.parametrize(
    "check_id, case, change", NEAR_MISSES, ids=[f"{c}-{n}" for c, n, _ in NEAR_MISSES]
)
def test_near_miss(repo: Repo, check_id: str, case: str, change, snapshot):
    assert check_id in DEFAULTS, f"no check {check_id}"
    change(repo)
    found = rows(repo.index(settings=_settings(check_id)))
    if case.startswith("legal-"):
        assert [f for f in found if f[0] == check_id] == [], found
    else:
        assert [f for f in found if f[0] == check_id], f"{check_id} did not fire: {found}"
    assert found == snapshot


LAYOUT_CHECKS = {
    c.id for c in load_checks() if c.id.startswith(("location_", "artifact_location", "lifecycle"))
}


@pytest.mark.parametrize("check_id", sorted(LAYOUT_CHECKS))
def test_the_layout_rules_bind_outside_registry_only_when_enforced(repo: Repo, check_id, snapshot):
    """A record named alone from outside registry/ (build REPO FILE): its place is
    judged only with enforce-layout, by every layout rule that applies to it (a
    case a check's name selects: -k CHECK runs it)."""
    rel = _first_packet(repo)
    data = repo.load(rel)
    old_artifact = data["path"]
    repo.move(old_artifact, "notes/elsewhere.md")
    outside = "notes/2024/misnamed.json"
    repo.save(outside, dict(data, path="notes/elsewhere.md", status="archived"))
    if check_id == "lifecycle_bucket":  # a bucket type: a message out of its bucket
        message = repo.load(_answered_message(repo))
        repo.save(outside, dict(message, status="closed"))
    loose = rows(repo.index(files=[outside]))
    assert [f for f in loose if f[0] in LAYOUT_CHECKS] == []
    enforced = rows(repo.index(files=[outside], enforce_layout=True))
    assert {f[0] for f in enforced} & LAYOUT_CHECKS  # some layout rule applies
    assert [f for f in enforced if f[0] == check_id] == snapshot


# ---- transition checks: each illegal change of two revisions, its exact findings


def _transition_rows(repo: Repo) -> list[tuple[Any, ...]]:
    from labnote_index import check

    transitions = {c.id for c in load_checks("checks/transitions")}
    return sorted(
        (f.check, f.severity, f.record_type or "", f.record_id or "", f.file, f.field, f.message,
         f.line or 0)
        for f in check(repo.root, db=repo.db_path, base="base")
        if f.check in transitions
    )  # fmt: skip


def _transition_cases() -> list[tuple[str, str, Callable[[Repo], object]]]:
    from .test_revisions import ILLEGAL, M1, P5, _manifest_status, _new_tag

    legal = [
        ("status_transition", "legal-forward", lambda r: r.edit(P5, status="in_review")),
        ("record_moved", "legal-moved-with-its-status",
         lambda r: r.edit(r.move(M1, M1.replace("/answered/", "/closed/")), status="closed")),
        ("tag_created_accepted", "legal-proposed", lambda r: _new_tag(r, "proposed", None)),
        ("handoff_status_backwards", "legal-forward",
         lambda r: _manifest_status(
             r, "docs/workflow/roles/researcher/reports/retention-policy/packet-v002",
             "ready_for_next_role")),
    ]  # fmt: skip
    return [(c, f"illegal-{i}", change) for i, (c, change) in enumerate(ILLEGAL)] + legal


def _base_config(text: str, then: Callable[[Repo], object]) -> Callable[[Repo], object]:
    """The base revision with ``text`` as its labnote-index.toml, then ``then``."""
    from .helpers import git

    def change(r: Repo) -> object:
        r.write("labnote-index.toml", text)
        git(r.root, "add", "-A")
        git(r.root, "commit", "-q", "-m", "configuration")
        git(r.root, "tag", "-f", "base")
        return then(r)

    return change


def _config(text: str) -> Callable[[Repo], object]:
    return lambda r: r.write("labnote-index.toml", text)


def _config_in_pyproject(r: Repo) -> object:
    (r.root / "labnote-index.toml").unlink()
    return r.write("pyproject.toml", '[tool.labnote-index]\nfail-on = "error"\n')


CONFIG_CASES = [
    ("config_changed", "value-changed",
     _base_config('fail-on = "error"\n', _config('fail-on = "warning"\n'))),
    ("config_changed", "key-removed",
     _base_config('fail-on = "error"\n', _config("# nothing\n"))),
    ("config_changed", "one-of-two-keys",
     _base_config('fail-on = "error"\nenforce-layout = false\n',
                  _config('fail-on = "error"\nenforce-layout = true\n'))),
    ("config_changed", "a-table-changed",
     _base_config('severity = {legacy_spelling = "warning"}\n',
                  _config('severity = {legacy_spelling = "error"}\n'))),
    ("config_changed", "legal-unchanged-in-another-file",
     _base_config('fail-on = "error"\n', _config_in_pyproject)),
    ("config_changed", "legal-comment-added",
     _base_config('fail-on = "error"\n', _config('# the gate\nfail-on = "error"\n'))),
]  # fmt: skip


ARCHITECT = "docs/workflow/roles/architect/reports/retention-policy/packet-v001"
SUPERSEDED = "docs/workflow/roles/researcher/reports/retention-policy/packet-v001"


def _unlink(rel: str) -> Callable[[Repo], object]:
    def change(r: Repo) -> object:
        (r.root / rel).unlink()
        return rel

    return change


def _symlinked_packet_file(r: Repo) -> object:
    """A frozen packet's document replaced by a symlink: no hash now (NULL)."""
    import os

    target = r.root / f"{ARCHITECT}/architecture.md"
    target.unlink()
    os.symlink("decisions.md", target)
    return f"{ARCHITECT}/architecture.md"


def _deleted_beside_its_id(r: Repo) -> object:
    """A message deleted while a packet has its ID: a record of its type is gone."""
    from .test_revisions import M7

    gone = r.load(M7)["message_id"]
    (r.root / M7).unlink()
    from .test_revisions import P1

    data = r.load(P1)
    return r.save(f"registry/packets/2026/{gone}.json", dict(data, packet_id=gone))


def _moved_renamed_with_status(r: Repo) -> object:
    """A message closed into its bucket and renamed on the way: a move to report."""
    from .test_revisions import M1

    moved = r.move(M1, M1.replace("/answered/", "/closed/").replace(".json", "-x.json"))
    return r.edit(moved, status="closed")


def _moved_to_another_type_dir(r: Repo) -> object:
    from .test_revisions import M1

    moved = r.move(M1, M1.replace("registry/messages/answered/", "registry/notifications/closed/"))
    return r.edit(moved, status="closed")


def _new_accepted_tag(slug_of: Callable[[Repo], str], basis: str | None) -> Callable:
    def change(r: Repo) -> object:
        data = r.load("registry/tags/accepted/evaluation.json")
        slug = slug_of(r)
        data.update(tag_slug=slug, status="accepted", acceptance_basis=basis)
        return r.save(f"registry/tags/accepted/{slug}.json", data)

    return change


def _a_message_id(r: Repo) -> str:
    from .test_revisions import M7

    return r.load(M7)["message_id"]


def _at_base(setup: Callable[[Repo], object], then: Callable[[Repo], object]) -> Callable:
    """``setup`` committed as the base revision, then ``then`` in the working tree."""
    from .helpers import git

    def change(r: Repo) -> object:
        setup(r)
        git(r.root, "add", "-A")
        git(r.root, "commit", "-q", "-m", "base")
        git(r.root, "tag", "-f", "base")
        return then(r)

    return change


NO_ID = "registry/packets/2026/no-id.json"


def _packet_without_id(r: Repo) -> object:
    from .test_revisions import P1

    data = r.load(P1)
    del data["packet_id"]
    return r.save(NO_ID, data)


def _moved_bucket(status: str | None) -> Callable[[Repo], object]:
    """The answered message moved into the closed bucket, its status ``status``."""

    def change(r: Repo) -> object:
        from .test_revisions import M1

        moved = r.move(M1, M1.replace("/answered/", "/closed/"))
        return r.edit(moved, status=status)

    return change


IMMUTABLE_CASES = [
    ("record_deleted", "legal-a-record-without-an-id-deleted",
     _at_base(_packet_without_id, _unlink(NO_ID))),
    ("record_moved", "to-another-bucket-without-a-status-change", _moved_bucket("answered")),
    ("record_moved", "legal-moved-as-its-status-is-removed", _moved_bucket(None)),
    ("status_transition", "status-removed",
     lambda r: r.edit("registry/packets/2026/20260911-codex-web-benchmarks.json", status=None)),
    ("tag_created_accepted", "basis-null", _new_accepted_tag(lambda r: "fresh", None)),
    ("tag_created_accepted", "named-like-a-base-message",
     _new_accepted_tag(_a_message_id, "operator_approved_promotion")),
    ("tag_created_accepted", "legal-supplied", _new_accepted_tag(lambda r: "fresh",
                                                                 "operator_supplied")),
    ("visit_changed", "legal-a-packet-edited",
     lambda r: r.edit("registry/packets/2026/20260911-codex-web-benchmarks.json", notes="x")),
    ("handoff_immutable", "a-file-removed", _unlink(f"{ARCHITECT}/decisions.md")),
    ("handoff_immutable", "a-file-added",
     lambda r: r.write(f"{ARCHITECT}/notes.md", "added after the handoff\n")),
    ("handoff_immutable", "a-file-now-a-symlink", _symlinked_packet_file),
    ("handoff_immutable", "a-file-removed-that-another-packet-has",
     _unlink(f"{SUPERSEDED}/evidence-map.md")),
    ("handoff_immutable", "a-file-added-that-another-packet-has",
     lambda r: r.write(f"{ARCHITECT}/prd.md", "# the PRD, copied in\n")),
    ("handoff_immutable", "a-superseded-packets-file-added",
     lambda r: r.write(f"{SUPERSEDED}/late.md", "late\n")),
    ("handoff_immutable", "legal-a-draft-packet-edited",
     lambda r: r.write("docs/workflow/roles/product-prd/reports/retention-policy/packet-v001/"
                       "prd.md", "# rewritten while a draft\n")),
    ("record_deleted", "deleted-beside-its-id-in-another-type", _deleted_beside_its_id),
    ("record_moved", "closed-and-renamed", _moved_renamed_with_status),
    ("record_moved", "into-another-types-directory", _moved_to_another_type_dir),
]  # fmt: skip


TRANSITION_CASES = _transition_cases() + CONFIG_CASES + IMMUTABLE_CASES


@pytest.mark.parametrize(
    "check_id, case, change", TRANSITION_CASES, ids=[f"{c}-{n}" for c, n, _ in TRANSITION_CASES]
)
def test_a_transition_gives_exactly_these_findings(history: Repo, check_id, case, change, snapshot):
    """Each reported once, with its record, field and message: a join that
    matched more rows, or a message reworded, changes the snapshot."""
    change(history)
    found = _transition_rows(history)
    if case.startswith("legal-"):
        assert [f for f in found if f[0] == check_id] == [], found
    else:
        assert [f for f in found if f[0] == check_id], found
    assert found == snapshot
