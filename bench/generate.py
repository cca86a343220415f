"""Generate a synthetic, valid LabNote repository of N packets.

Each packet comes with, in realistic proportions, a response, a message thread,
notifications, visits, visitors and tags, each with its Markdown artifact, and
every 25 packets a four-role handoff chain. A clean repository gives zero
findings; tests and the benchmark plant defects into it.

    python bench/generate.py OUT_DIR --packets 1000 [--seed 1] [--work-tree]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROLES = ["researcher", "product-prd", "architect", "implementer"]
TAGS = {
    "proposed": ["draft-idea", "needs-triage", "perf"],
    "accepted": ["registry-ops", "provenance", "handoff", "review"],
    "deprecated": ["old-format"],
}
FAMILIES = ["codex", "claude", "chatgpt", "gemini"]


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ymd(moment: datetime) -> str:
    return moment.strftime("%Y%m%d")


class Writer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.records = 0

    def json(self, rel: str, data: dict[str, Any]) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        self.records += rel.startswith("registry/")

    def text(self, rel: str, body: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")


def _provenance(origin: str, derivative_of: list[str], refs: list[str]) -> dict[str, Any]:
    return {
        "content_origin": origin,
        "source_refs": refs,
        "source_note": "origin could not be traced" if origin == "unknown" else "",
        "derivative_of": derivative_of,
        "provenance_coverage": "record_level",
    }


def commit_all(root: Path) -> None:
    """Make ``root`` a git work tree with every file committed, as a real
    repository is (git's own answers, such as what it ignores, then cost what
    they cost there)."""
    who = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], [*who, "commit", "-q", "-m", "generated"]):
        subprocess.run(["git", "-C", str(root), *args], check=True)


def generate(root: Path, packets: int, seed: int = 1, work_tree: bool = False) -> int:
    """Write a repository of ``packets`` packets under ``root`` (a git work tree,
    everything committed, with ``work_tree``); return the record count."""
    rng = random.Random(seed)
    out = Writer(Path(root))
    start = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    tag_time = start - timedelta(days=30)
    for status, slugs in TAGS.items():
        for slug in slugs:
            accepted = status == "accepted"
            out.json(
                f"registry/tags/{status}/{slug}.json",
                {
                    "record_type": "tag",
                    "schema_version": 1,
                    "tag_slug": slug,
                    "created_at": _ts(tag_time),
                    "display_name": slug.replace("-", " ").title(),
                    "status": status,
                    "scope": "registry",
                    "description": f"Work about {slug.replace('-', ' ')}.",
                    "created_by": "operator",
                    "accepted_by": "operator" if accepted else None,
                    "accepted_at": _ts(tag_time + timedelta(days=1)) if accepted else None,
                    "acceptance_basis": "operator_supplied" if accepted else None,
                    "notes": "",
                },
            )
    usable_tags = TAGS["proposed"] + TAGS["accepted"]
    visitors = []
    for i in range(max(2, packets // 20)):
        family = FAMILIES[i % len(FAMILIES)]
        moment = start + timedelta(hours=7 * i)
        visitor_id = f"{family}-{moment:%Y%m%d}-{moment:%H%M}-session-{i % 100:02d}"
        visitors.append((visitor_id, family))
        out.json(
            f"registry/visitors/{visitor_id}.json",
            {
                "record_type": "visitor",
                "schema_version": 1,
                "visitor_id": visitor_id,
                "created_at": _ts(moment),
                "session_family": family,
                "session_type": "review" if i % 2 else "research",
                "display_name": f"{family.title()} session {i}",
                "status": ["registered", "active", "dormant"][i % 3],
                "last_seen": _ts(moment + timedelta(days=2)),
                "profile_path": None,
                "notes": "",
            },
        )
    previous_response: str | None = None
    for i in range(packets):
        # Four packets a day between 09:00 and 15:00, so everything a packet
        # brings (answers +2h, visits +4h) still falls on the day its IDs name.
        moment = start + timedelta(days=i // 4, hours=2 * (i % 4), minutes=i % 60)
        year = moment.strftime("%Y")
        sender, sender_family = visitors[i % len(visitors)]
        receiver, _ = visitors[(i + 1) % len(visitors)]
        packet_id = f"{_ymd(moment)}-{sender_family}-topic-{i}"
        response_id = f"{_ymd(moment)}-{sender_family}-answer-{i}"
        has_response = i % 5 != 4
        derived = previous_response is not None and i % 3 == 0
        origin = "model_generated" if derived else rng.choice(["operator_authored", "web", "mixed"])
        refs = [f"https://example.org/source/{i}"] if origin in ("web", "mixed") else []
        packet_path = f"datadrops/{year}/{packet_id}.md"
        out.text(packet_path, f"# Packet {i}\n\nQuestion about topic {i}.\n")
        out.json(
            f"registry/packets/{year}/{packet_id}.json",
            {
                "record_type": "packet",
                "schema_version": 1,
                "packet_id": packet_id,
                "created_at": _ts(moment),
                "created_by": sender,
                "deposited_by": "operator",
                **_provenance(origin, [previous_response] if derived else [], refs),
                "source_session": sender,
                "target_session": receiver,
                "topic": f"topic-{i}",
                "status": "answered" if has_response else "new",
                "path": packet_path,
                "response_expected": True,
                "response_packet_id": response_id if has_response else None,
                "tags": rng.sample(usable_tags, 2),
                "notes": "",
            },
        )
        if has_response:
            answered = moment + timedelta(hours=2)
            response_path = f"responses/{year}/{response_id}.md"
            out.text(response_path, f"# Response {i}\n\nAnswer to packet {i}.\n")
            accepted = i % 2 == 0
            out.json(
                f"registry/responses/{year}/{response_id}.json",
                {
                    "record_type": "response",
                    "schema_version": 1,
                    "response_id": response_id,
                    "created_at": _ts(answered),
                    "created_by": receiver,
                    "deposited_by": "operator",
                    **_provenance("model_generated", [packet_id], []),
                    "responding_session": receiver,
                    "source_packet_id": packet_id,
                    "status": "accepted" if accepted else "pending_review",
                    "path": response_path,
                    "accepted_by": "operator" if accepted else None,
                    "decision_at": _ts(answered + timedelta(hours=1)) if accepted else None,
                    "tags": rng.sample(usable_tags, 1),
                    "notes": "",
                },
            )
            previous_response = response_id
        if i % 4 != 3:  # most packets start a thread (about 4 records a packet in all)
            _thread(out, i, moment, sender, receiver, packet_id)
        if i % 2 == 0:
            visit_id = f"{packet_id}-visit"
            signoff = f"responses/signoffs/{visit_id}.md"
            out.text(signoff, f"# Signoff for packet {i}\n")
            out.json(
                f"registry/visits/{year}/{visit_id}.json",
                {
                    "record_type": "visit",
                    "schema_version": 1,
                    "visit_id": visit_id,
                    "created_at": _ts(moment + timedelta(hours=4)),
                    "visitor_id": receiver,
                    "session_family": receiver.split("-")[0],
                    "checked_messages": True,
                    "answered_messages": i % 4 == 0,
                    "created_messages": False,
                    "relay_needed": False,
                    "signoff_path": signoff,
                    "notes": "",
                },
            )
        if i % 25 == 0:
            _handoff_chain(out, f"milestone-{i // 25 + 1}", moment)
    if work_tree:
        commit_all(Path(root))
    return out.records


def _thread(out: Writer, i: int, moment: datetime, sender: str, receiver: str, packet: str) -> None:
    """A question, its answer, and every other time a follow-up: a thread 2-3 deep."""
    depth = 3 if i % 2 else 2
    ids = [f"{_ymd(moment)}-{sender.split('-')[0]}-thread-{i}-{n}" for n in range(depth)]
    for n, message_id in enumerate(ids):
        last = n == depth - 1
        status = "open" if last else "answered"
        path = f"messages/{status}/{message_id}.md"
        out.text(path, f"# Message {n} of thread {i}\n\nAbout packet {packet}.\n")
        out.json(
            f"registry/messages/{status}/{message_id}.json",
            {
                "record_type": "message",
                "schema_version": 1,
                "message_id": message_id,
                "created_at": _ts(moment + timedelta(minutes=10 * (n + 1))),
                "from_visitor_id": sender if n % 2 == 0 else receiver,
                "to_visitor_id": receiver if n % 2 == 0 else sender,
                "to_group": None,
                "status": status,
                "path": path,
                "tags": [],
                "reply_to": ids[n - 1] if n else None,
                "reply_expected": not last,
                "response_message_id": None if last else ids[n + 1],
                "needs_human_relay": False,
                "related_packet": packet if n == 0 else None,
                "related_response": None,
                "summary": f"Thread {i}, message {n}.",
                "notes": "",
            },
        )
    if i % 3 == 0:
        notification_id = f"{_ymd(moment)}-{sender.split('-')[0]}-notice-{i}"
        path = f"notifications/open/{notification_id}.md"
        out.text(path, f"# Notice for thread {i}\n")
        out.json(
            f"registry/notifications/open/{notification_id}.json",
            {
                "record_type": "notification",
                "schema_version": 1,
                "notification_id": notification_id,
                "created_at": _ts(moment + timedelta(minutes=45)),
                "from_visitor_id": sender,
                "to_visitor_id": "operator",
                "message_id": ids[0],
                "status": "needed",
                "path": path,
                "needs_human_action": True,
                "summary": f"Relay thread {i} to the operator.",
                "notes": "",
            },
        )


def _handoff_chain(out: Writer, milestone: str, moment: datetime) -> None:
    """researcher -> product-prd -> architect -> implementer.

    Lightweight (draft) handoff, except the architect, whose packet is strict:
    ready_for_next_role with a packet.lock.json, consumed as such.
    """
    upstream: dict[str, Any] | None = None
    day = moment.strftime("%Y-%m-%d")
    for role in ROLES:
        strict = role == "architect"
        base = f"docs/workflow/roles/{role}/reports/{milestone}/packet-v001"
        out.text(f"{base}/report.md", f"# {role} report for {milestone}\n")
        status = "ready_for_next_role" if strict else "draft"
        manifest = {
            "schema_version": "0.1",
            "role": role,
            "milestone": milestone,
            "packet_version": "packet-v001",
            "status": status,
            "created_at": day,
            "updated_at": day,
            "summary": f"{role} output for {milestone}.",
            "documents": [{"path": "report.md", "type": "report", "required": True}],
            "input_packets": [upstream] if upstream else [],
            "source_scopes": [],
            "handoff_to": [],
            "open_questions": [],
            "blocked": False,
            "required_confirmations": [],
        }
        out.json(f"{base}/handoff.manifest.json", manifest)
        if strict:
            files = [
                {
                    "path": name,
                    "sha256": hashlib.sha256((out.root / base / name).read_bytes()).hexdigest(),
                }
                for name in ("handoff.manifest.json", "report.md")
            ]
            out.json(
                f"{base}/packet.lock.json",
                {
                    "schema_version": "0.1",
                    "role": role,
                    "milestone": milestone,
                    "packet_version": "packet-v001",
                    "status": status,
                    "files": files,
                },
            )
        upstream = {
            "role": role,
            "milestone": milestone,
            "packet_version": "packet-v001",
            "manifest": f"{base}/handoff.manifest.json",
            "status_at_consumption": status,
            "consumption_status": "accepted_as_input",
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--packets", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work-tree", action="store_true", help="git init and commit it all")
    args = parser.parse_args()
    count = generate(args.out, args.packets, args.seed, work_tree=args.work_tree)
    print(f"wrote {count} records under {args.out}")


if __name__ == "__main__":
    main()
