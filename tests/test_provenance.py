"""output/provenance.py and `labnote-index export`: the index as W3C PROV, read
back with the same library."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner
from prov.model import ProvDerivation, ProvDocument, ProvEntity, ProvInfluence, ProvUsage

import labnote_index as li
from labnote_index.cli import cli

from .helpers import Repo

READABLE = {"prov-json": "json", "prov-xml": "xml", "prov-o": "rdf"}


def exported(db: Path, fmt: str = "prov-json", node: str | None = None) -> ProvDocument:
    text = li.export(db, fmt, node)
    kwargs = {"rdf_format": "turtle"} if fmt == "prov-o" else {}
    return ProvDocument.deserialize(content=text, format=READABLE[fmt], **kwargs)


def of(document: ProvDocument, kind: type) -> list:
    return [r for r in document.get_records() if isinstance(r, kind)]


@pytest.mark.parametrize("fmt", sorted(READABLE))
def test_every_node_and_edge_of_the_index_reads_back(sample_repo: Repo, fmt: str):
    db = sample_repo.index()
    document = exported(sample_repo.db_path, fmt)
    nodes = db.execute("SELECT count(*) FROM lineage_nodes").fetchone()[0]
    assert len(of(document, ProvEntity)) == nodes
    derived = db.execute(
        "SELECT count(DISTINCT child || ' ' || parent || ' ' || field) FROM lineage_edges "
        "WHERE field IN ('derivative_of', 'reply_to', 'response_message_id', 'message_id')"
    ).fetchone()[0]
    assert derived and len(of(document, ProvDerivation)) == derived
    consumed = db.execute(
        "SELECT count(*) FROM lineage_edges WHERE field = 'input_packets'"
    ).fetchone()[0]
    answered = db.execute(
        "SELECT count(DISTINCT child || ' ' || parent) FROM lineage_edges "
        "WHERE field IN ('source_packet_id', 'response_packet_id')"
    ).fetchone()[0]
    assert len(of(document, ProvUsage)) == consumed + answered
    assert of(document, ProvInfluence) or fmt == "prov-xml"  # related_* and visits


def test_a_missing_reference_is_said_never_a_relation(sample_repo: Repo):
    db = sample_repo.index()
    missing = list(db.query("SELECT node, field, missing_id FROM lineage_missing"))
    assert missing
    document = exported(sample_repo.db_path)
    entities = {str(e.get_attribute("labnote:file").pop()): e for e in of(document, ProvEntity)}
    for row in missing:
        said = {str(v) for v in entities[row["node"]].get_attribute("labnote:missing")}
        assert f"{row['field']} -> {row['missing_id']}" in said
    named = {str(e.identifier) for e in of(document, ProvEntity)}
    for relation in document.get_records():
        for _, value in relation.formal_attributes:
            assert (
                value is None
                or str(value) in named
                or "answering" in str(value)
                or "handing-off" in str(value)
            )


def test_one_lineage_is_that_records_ancestors_and_descendants(sample_repo: Repo):
    sample_repo.index()
    tree = li.lineage(sample_repo.db_path, "20260905-claude-retention-followup")
    document = exported(sample_repo.db_path, node="20260905-claude-retention-followup")
    files = {str(e.get_attribute("labnote:file").pop()) for e in of(document, ProvEntity)}

    def walk(branches: list) -> set[str]:
        found = set()
        for b in branches:
            if b["node"] and not b["missing"]:
                found |= {b["node"]} | walk(b["children"])
        return found

    assert files == {tree["node"]} | walk(tree.get("up", [])) | walk(tree.get("down", []))
    assert len(files) < sqlite_utils.Database(sample_repo.db_path)["records"].count


def test_hostile_text_survives_as_text(sample_repo: Repo):
    packet = sample_repo.first("registry/packets/*/*.json")
    sample_repo.edit(packet, status='<script>"&</script>')
    sample_repo.index()
    for fmt in READABLE:
        document = exported(sample_repo.db_path, fmt)
        statuses = {
            str(v) for e in of(document, ProvEntity) for v in e.get_attribute("labnote:status")
        }
        assert '<script>"&</script>' in statuses, fmt


def test_export_command_writes_each_format(sample_repo: Repo):
    runner = CliRunner()
    built = runner.invoke(cli, ["export", str(sample_repo.root), "--db", str(sample_repo.db_path)])
    assert built.exit_code == 0, built.output
    assert '"wasDerivedFrom"' in built.stdout
    provn = runner.invoke(cli, ["export", "--db", str(sample_repo.db_path), "--format", "prov-n"])
    assert provn.stdout.startswith("document") and "wasDerivedFrom(" in provn.stdout
    unknown = runner.invoke(
        cli, ["export", "--db", str(sample_repo.db_path), "--node", "no-such-record"]
    )
    assert unknown.exit_code == 2 and "no record ID" in unknown.output
