"""Draw a lineage as SVG: ancestors above the record, descendants below.

Each record has one box: a record reached a second time (two packets derived
from one source, a thread that joins) gets a second edge to the box it has, not
a second box. The lineage's tree (each record where it was first reached) gives
each box its row, one further from the record for each branch; igraph's layered
(Sugiyama) layout orders the boxes in their rows to cross few edges, places each
edge's label as a vertex of its own, so no two labels share a place, and bends
the edges that pass a row. Every piece of record text goes through ``escape``:
nothing from the repository can become markup in the picture.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from ..queries.lineage import branches_in_order
from ..text import shown

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
MISSING_COLOUR = "#dc2626"
LINE_COLOUR = "#6b7280"
# Sizes in pixels: a character of the 10 px font is about 6 px wide.
CHAR = 6.0
MAX_CHARS = 44  # a longer label is cut, whole in the box's tooltip
ROW = 96  # from one row of boxes to the next
GAP = 24  # between boxes side by side
BOX_HEIGHT = 48
MARGIN = 16
LABEL_LINE = 12  # an edge label's lines, in the 48 px between two rows
LABEL_LINES = 3


@dataclass
class _Box:
    lines: list[str]
    tooltip: str
    url: str | None
    row: int  # 0 the record, negative above it, positive below
    parent: int | None  # index of the box it hangs from
    via: str = ""  # the fields of the edge to the parent
    style: str = "node"  # node, start, missing, more
    fill: str = "#ffffff"
    children: list[int] = field(default_factory=list)
    x: float = 0.0


def _cut(text: str, chars: int = MAX_CHARS) -> str:
    """A label that fits its box: a long one cut in the middle, since the end of
    an ID or a path is what tells two apart (``...-review-11-msg-07``)."""
    text = shown(text)  # control characters are not even XML
    if len(text) <= chars:
        return text
    head = (chars - 1) // 2
    return text[:head] + "…" + text[-(chars - 1 - head) :]


def _label_lines(via: str, chars: int) -> list[str]:
    """An edge's fields on as many lines of at most ``chars`` as the space between
    two rows holds (a field too long for one is cut in the middle, like a label)."""
    lines: list[str] = []
    for name in via.split(", ") if via else []:
        name = _cut(name, chars)
        if lines and len(lines[-1]) + 2 + len(name) <= chars:
            lines[-1] += ", " + name
        else:
            lines.append(name)
    if len(lines) > LABEL_LINES:  # the rest is in the record's own page
        lines[LABEL_LINES - 1 :] = [_cut(", ".join(lines[LABEL_LINES - 1 :]), chars)]
    return lines


@dataclass
class _Edge:
    """An edge beside the tree's: from box ``parent`` to the box a record
    reached again already has, with the fields that lead there."""

    parent: int
    box: int
    via: str
    up: bool  # among the ancestors: the edge runs from the record reached again


def _boxes(tree: dict[str, Any], url_for: Callable[[str], str]) -> tuple[list[_Box], list[_Edge]]:
    """The boxes of a lineage in drawing order, parents before their children, one
    a record; and the edges to a record reached again, which the tree leaves out."""

    def record_lines(node: dict[str, Any]) -> list[str]:
        status = [f"[{node['status']}]"] if node.get("status") else []
        return [str(node.get("kind") or "?"), _cut(str(node.get("label") or "?")), *status]

    start = _Box(
        record_lines(tree),
        tree["node"],
        url_for(tree["node"]),
        0,
        None,
        style="start",
        fill=KIND_COLOURS.get(tree.get("kind") or "", "#ffffff"),
    )
    boxes, edges = [start], []
    for direction, step in (("up", -1), ("down", 1)):
        parent_of = {id(b): 0 for b in tree.get(direction, [])}
        # Each record's box on this side (the record's own, on both): a record
        # both above and below it is in a cycle, and drawn on each side.
        placed = {tree["node"]: 0}
        for b in branches_in_order(tree.get(direction, [])):
            parent = parent_of[id(b)]
            row = boxes[parent].row + step
            via = ", ".join(b["via"])
            again = None if b.get("missing") else placed.get(b["node"])
            if again is not None:
                edges.append(_Edge(parent, again, via, up=step < 0))
                for child in b["children"]:
                    parent_of[id(child)] = again
                # The record's box may have come from a sighting that said less
                # (its repeat, met first): what is not drawn still leads on.
                owner = boxes[again]
                if b["more"] and not any(boxes[c].style == "more" for c in owner.children):
                    _add_more(boxes, again, b["more"], step)
                continue
            if b.get("missing"):
                box = _Box(
                    [f"MISSING {b['expected']}", _cut(str(b["label"])), f"({via})"],
                    f"not in the index: {b['label']}",
                    None,
                    row,
                    parent,
                    via,
                    style="missing",
                )
            else:
                box = _Box(
                    record_lines(b),
                    b["node"],
                    url_for(b["node"]),
                    row,
                    parent,
                    via,
                    fill=KIND_COLOURS.get(b.get("kind") or "", "#ffffff"),
                )
                placed[b["node"]] = len(boxes)
            boxes.append(box)
            boxes[parent].children.append(len(boxes) - 1)
            for child in b["children"]:
                parent_of[id(child)] = len(boxes) - 1
            if b["more"]:  # what is not drawn, leading on to the node's own lineage
                _add_more(boxes, len(boxes) - 1, b["more"], step)
        if tree.get(f"{direction}_more"):  # the start's own branches beyond the drawing
            _add_more(boxes, 0, tree[f"{direction}_more"], step)
    return boxes, edges


def _add_more(boxes: list[_Box], owner: int, count: int, step: int) -> None:
    """A "+N more" box below (or above) box ``owner``, leading on to its lineage."""
    box = boxes[owner]
    more = _Box([f"+{count} more"], box.tooltip, box.url, box.row + step, owner)
    more.style = "more"
    boxes.append(more)
    box.children.append(len(boxes) - 1)


@dataclass
class _Line:
    """One drawn edge, from the source to what derives from it (or answers it)."""

    source: int
    target: int
    via: str
    style: str  # node, missing, more: the style of the box the edge leads to


def _lines(boxes: list[_Box], edges: list[_Edge]) -> list[_Line]:
    """Every edge of the picture: the tree's (a box to the one it hangs from) and
    the ones to a record reached again. Arrows run as the tree's do: from a source
    to what derives from it, so an ancestor's edge runs into the box below it."""
    lines = []
    for n, box in enumerate(boxes[1:], 1):
        parent = box.parent or 0
        source, target = (n, parent) if box.row < boxes[parent].row else (parent, n)
        lines.append(_Line(source, target, box.via, box.style))
    for edge in edges:
        source, target = (edge.box, edge.parent) if edge.up else (edge.parent, edge.box)
        lines.append(_Line(source, target, edge.via, "node"))
    return lines


def _layout(
    boxes: list[_Box], lines: list[_Line], top: int
) -> tuple[list[float], list[tuple[float, float] | None], list[list[tuple[float, float]]]]:
    """A layered (Sugiyama) layout by igraph: the x of every box's slot, where each
    edge's label goes, and the bends of each edge, in slots and layers.

    Rows of boxes are the even layers; each labelled edge has a vertex of its own
    in the odd layer just above the box it leads down into, so the layout places
    labels as it places boxes, never two in one place. An edge within one row
    runs down to its vertex in the layer under the row and back up."""
    import igraph  # type: ignore[import-untyped]  # the web pages only: a check never draws

    graph = igraph.Graph(directed=True)
    layers = [2 * (b.row - top) for b in boxes]
    pieces: list[list[int]] = []  # each line's vertices, from its upper box down
    pairs: list[tuple[int, int]] = []
    for line in lines:
        upper, lower = sorted((line.source, line.target), key=lambda i: boxes[i].row)
        chain = [upper]
        if boxes[upper].row == boxes[lower].row:
            chain.append(len(layers))
            layers.append(layers[lower] + 1)
        elif line.via:
            chain.append(len(layers))
            layers.append(layers[lower] - 1)
        chain.append(lower)
        pieces.append(chain)
        pairs.extend(zip(chain, chain[1:], strict=False))
    graph.add_vertices(len(layers))
    graph.add_edges(pairs)
    layout = graph.layout_sugiyama(layers=layers, hgap=1, vgap=1)
    coords = [list(c) for c in layout.coords]
    routing = [[list(p) for p in bends] for bends in layout.edge_routing]
    # igraph's coordinates (the average of Brandes and Köpf's four alignments) can
    # bring two vertices of a layer closer than hgap: keep its order in each layer
    # and push each vertex (a bend of a long edge is one too) right of the one
    # before it, one sweep a layer.
    in_layer: dict[float, list[list[float]]] = {}
    for point in [*coords, *(p for bends in routing for p in bends)]:
        in_layer.setdefault(point[1], []).append(point)
    for members in in_layer.values():
        members.sort(key=lambda p: p[0])  # stable: igraph's order where x ties
        for before, point in zip(members, members[1:], strict=False):
            point[0] = max(point[0], before[0] + 1)
    left = min(members[0][0] for members in in_layer.values())
    xs = [coords[i][0] - left for i in range(len(boxes))]
    labels: list[tuple[float, float] | None] = []
    bends: list[list[tuple[float, float]]] = []
    k = 0  # the igraph edge each piece starts at
    for line, chain in zip(lines, pieces, strict=True):
        points: list[tuple[float, float]] = []
        label = None
        for b in chain[1:]:
            points.extend((x - left, y) for x, y in routing[k])
            if b >= len(boxes):  # the label's vertex: the edge runs through it
                label = (coords[b][0] - left, coords[b][1])
                points.append(label)
            k += 1
        if line.source != chain[0]:  # drawn from the source
            points.reverse()
        labels.append(label)
        bends.append(points)
    return xs, labels, bends


def lineage_svg(tree: dict[str, Any], url_for: Callable[[str], str]) -> str:
    """The SVG of a lineage tree, each record's box a link made by ``url_for``."""
    boxes, edges = _boxes(tree, url_for)
    lines = _lines(boxes, edges)
    longest = max(len(text) for text in [*(s for b in boxes for s in b.lines), "x" * 17])
    width = longest * CHAR + 16
    vias = [_label_lines(line.via, longest) for line in lines]
    slot = width + GAP
    top = min(b.row for b in boxes)
    rows = max(b.row for b in boxes) - top + 1
    xs, labels, bends = _layout(boxes, lines, top)
    for box, x in zip(boxes, xs, strict=True):
        box.x = MARGIN + x * slot

    def y(box: _Box) -> float:
        return MARGIN + (box.row - top) * ROW

    def at(point: tuple[float, float]) -> tuple[float, float]:
        """A point of the layout (slots, layers) in pixels: the middle of its slot."""
        return MARGIN + point[0] * slot + width / 2, MARGIN + point[1] * ROW / 2 + BOX_HEIGHT / 2

    right = max([*xs, *(p[0] for bend in bends for p in bend)])  # labels are on bends
    svg_width = MARGIN * 2 + right * slot + width
    # A label under the last row (an edge within it) makes the picture taller.
    lowest = max([(rows - 1) * 2, *(p[1] for bend in bends for p in bend)])
    svg_height = MARGIN * 2 + lowest * ROW / 2 + BOX_HEIGHT
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{svg_width:.0f}" '
        f'height="{svg_height:.0f}" viewBox="0 0 {svg_width:.0f} {svg_height:.0f}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="10" role="img">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{LINE_COLOUR}"/>'
        "</marker></defs>",
    ]
    texts: list[str] = []
    for line, via, label, bend in zip(lines, vias, labels, bends, strict=True):  # under the boxes
        source, target = boxes[line.source], boxes[line.target]
        x1, x2 = source.x + width / 2, target.x + width / 2
        # Out of the side facing the target: within one row, the bottom of both.
        y1 = y(source) + (0 if target.row < source.row else BOX_HEIGHT)
        y2 = y(target) + (BOX_HEIGHT if target.row <= source.row else 0)
        points = [(x1, y1), *(at(p) for p in bend), (x2, y2)]
        # Each step a curve that leaves and meets its points upright.
        path = f"M{x1:.1f},{y1:.1f}" + "".join(
            f" C{a[0]:.1f},{(a[1] + b[1]) / 2:.1f} {b[0]:.1f},{(a[1] + b[1]) / 2:.1f} "
            f"{b[0]:.1f},{b[1]:.1f}"
            for a, b in zip(points, points[1:], strict=False)
        )
        place = at(label) if label else (0.0, 0.0)
        dash = ' stroke-dasharray="5,3"' if line.style in ("missing", "more") else ""
        colour = MISSING_COLOUR if line.style == "missing" else LINE_COLOUR
        out.append(
            f'<path d="{path}" fill="none" stroke="{colour}"{dash} marker-end="url(#arrow)"/>'
        )
        # Over every line, white round it, so a line crossing it does not hide it.
        first = place[1] + 4 - (len(via) - 1) * LABEL_LINE / 2
        texts.extend(
            f'<text x="{place[0]:.1f}" y="{first + n * LABEL_LINE:.1f}" text-anchor="middle" '
            'fill="#374151" stroke="#ffffff" stroke-width="3" '
            f'paint-order="stroke">{escape(text)}</text>'
            for n, text in enumerate(via)
        )
    out.extend(texts)
    for box in boxes:
        out.append(_box_svg(box, y(box), width))
    out.append("</svg>")
    return "\n".join(out)


def _box_svg(box: _Box, top: float, width: float) -> str:
    x = box.x
    title = f"<title>{escape(shown(box.tooltip))}</title>"
    if box.style == "more":
        text = escape(box.lines[0])
        shape = (
            f'<text x="{x + width / 2:.1f}" y="{top + BOX_HEIGHT / 2 + 4:.1f}" '
            f'text-anchor="middle">{text}</text>'
        )
    else:
        stroke = {
            "start": 'stroke="#111827" stroke-width="2.5"',
            "missing": f'stroke="{MISSING_COLOUR}" stroke-dasharray="5,3"',
        }.get(box.style, 'stroke="#374151"')
        fill = "#ffffff" if box.style == "missing" else box.fill
        colour = ' fill="#b91c1c"' if box.style == "missing" else ""
        step = BOX_HEIGHT / (len(box.lines) + 1)
        lines = "".join(
            f'<text x="{x + width / 2:.1f}" y="{top + step * (n + 1) + 3:.1f}" '
            f'text-anchor="middle"{colour}>{escape(line)}</text>'
            for n, line in enumerate(box.lines)
        )
        shape = (
            f'<rect x="{x:.1f}" y="{top:.1f}" width="{width:.1f}" height="{BOX_HEIGHT}" '
            f'rx="6" fill="{fill}" {stroke}/>{lines}'
        )
    # The record the picture is of: the page scrolls it into view when it opens.
    where = ' id="labnote-start"' if box.style == "start" else ""
    if box.url is None:
        return f"<g{where}>{title}{shape}</g>"
    return f'<a{where} href="{escape(box.url)}" target="_top">{title}{shape}</a>'
