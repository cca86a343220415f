"""Draw a lineage tree as SVG with Graphviz.

Graphviz lays the graph out; every label and tooltip is escaped before it
reaches dot, and dot escapes text again when it writes SVG, so record content
can never become markup in the picture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import graphviz

from ..provenance import branches_in_order

KIND_COLOURS = {
    "packet": "#dbeafe",
    "response": "#dcfce7",
    "message": "#fef9c3",
    "notification": "#fde68a",
    "visit": "#e9d5ff",
    "visitor": "#fbcfe8",
    "tag": "#e5e7eb",
    "handoff_packet": "#fed7aa",
}


class GraphvizMissing(Exception):
    pass


def _label(node: dict[str, Any]) -> str:
    status = f"\n[{node['status']}]" if node.get("status") else ""
    text = f"{node['kind']}\n{node['label']}{status}"
    # Backslashes would start Graphviz escapes (\N, \G); newlines become \n.
    return graphviz.escape(text).replace("\n", r"\n")


def _missing_node(dot: graphviz.Digraph, branch: dict[str, Any], n: int) -> str:
    """A node for a reference that names nothing: dashed, red, with the raw ID and field."""
    name = f"missing{n}_{id(branch)}"
    text = f"MISSING {branch['expected']}\n{branch['label']}\n({', '.join(branch['via'])})"
    dot.node(
        name,
        label=graphviz.escape(text).replace("\n", r"\n"),
        style="rounded,dashed",
        color="#dc2626",
        fontcolor="#b91c1c",
        tooltip=graphviz.escape(f"not in the index: {branch['label']}"),
    )
    return name


def lineage_svg(tree: dict[str, Any], url_for: Callable[[str], str]) -> str:
    """The SVG of a lineage tree: ancestors above the record, descendants below."""
    dot = graphviz.Digraph("lineage", format="svg")
    dot.attr(rankdir="TB", bgcolor="transparent", fontname="Helvetica")
    dot.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="10")
    dot.attr("edge", fontname="Helvetica", fontsize="8", color="#6b7280")
    ids: dict[str, str] = {}

    def node_id(node: dict[str, Any], start: bool = False) -> str:
        if node["node"] not in ids:
            ids[node["node"]] = f"n{len(ids)}"
            dot.node(
                ids[node["node"]],
                label=_label(node),
                URL=url_for(node["node"]),
                target="_top",
                tooltip=graphviz.escape(node["node"]),
                fillcolor=KIND_COLOURS.get(node.get("kind") or "", "#ffffff"),
                penwidth="2.5" if start else "1",
            )
        return ids[node["node"]]

    root = node_id(tree, start=True)

    for direction, upward in (("up", True), ("down", False)):
        parents = {id(b): root for b in tree.get(direction, [])}
        for b in branches_in_order(tree.get(direction, [])):
            other = _missing_node(dot, b, len(ids)) if b.get("missing") else node_id(b)
            via = graphviz.escape(", ".join(b["via"]))
            parent_id = parents[id(b)]
            if upward:
                dot.edge(other, parent_id, label=via)
            else:
                dot.edge(parent_id, other, label=via)
            for child in b["children"]:
                parents[id(child)] = other
            if b["more"]:  # what is not drawn, as a dashed "+N more" leading on
                more = f"{other}_more"
                label = f"+{b['more']} more"
                dot.node(more, label=label, shape="plaintext", URL=url_for(b["node"]))
                ends = (more, other) if upward else (other, more)
                dot.edge(*ends, style="dashed")
    try:
        svg = dot.pipe(encoding="utf-8")
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizMissing(
            "Graphviz is not installed, so the lineage cannot be drawn: "
            "install it with 'apt-get install graphviz' (the list below still shows it)"
        ) from exc
    return svg[svg.index("<svg") :]
